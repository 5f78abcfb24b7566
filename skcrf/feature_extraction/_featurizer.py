"""SequenceFeaturizer: raw sequences (text or tokens) -> Sequences.

The featurizer turns its parameters into template objects (:mod:`._templates`
and the Chinese word-segmentation templates), reads the input into unit ids
(:mod:`._units`), and fits a :class:`~._vocabulary.FittedVocabulary`: every
template instance hashed to a 64-bit key in compiled code, keys numbered
into columns. ``transform`` looks keys up in the vocabulary's hash table.
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._persistence import VersionedPickleMixin
from .._sequences import Sequences
from .._sklearn_compat import Interval, StrOptions, _fit_context
from ._accessor_variety import AccessorVariety
from ._char_classes import char_type, word_shape
from ._crfpp import parse_template
from ._dictionary import DictionaryMatches, DictionaryWords
from ._pmi import AdjacentPMI
from ._sources import WORD_ATTRS, WORD_FLAGS
from ._template_set import TemplateSet
from ._templates import Window, check_offset
from ._units import read_units
from ._vocabulary import FittedVocabulary

__all__ = ["SequenceFeaturizer", "char_type", "word_shape"]


class SequenceFeaturizer(VersionedPickleMixin, TransformerMixin, BaseEstimator,
                         auto_wrap_output_keys=None):
    """Turn raw sequences into CRF features (a :class:`Sequences`).

    A sequence is a ``str`` (its units are characters: Chinese word
    segmentation) or a list of tokens, each a ``str`` or a tuple of ``str``
    columns such as ``(word, pos)`` (NER, chunking). Every template below is
    evaluated in compiled code over integer ids; features are binary.

    Parameters
    ----------
    unit_offsets : tuple of int, default=(-2, -1, 0, 1, 2)
        One feature per offset: the unit at ``t + offset`` (``C[-1]=上``).
        Positions outside the sequence are padding units (``<s-1>``, ``</s+1>``).
    ngram_offsets : tuple of (int, int), default=((-2, -1), (-1, 0), (0, 1), (1, 2), (-1, 1))
        Pairs of offsets: the two units together (``C[-1]C[0]=上海``); the
        default includes the skip pair (-1, +1).
    char_type_offsets : tuple of int, default=(-1, 0, 1)
        Type of the unit at each offset: digit, latin, punct, cjk or other
        (full-width forms as their ASCII counterparts); for word tokens the
        common type of their characters, or ``mixed``.
    dictionary : iterable of str, default=None
        Words (character input only). At each position, features "a
        dictionary word of length k begins / ends / passes through here",
        for every match (not greedy maximum matching).
    dictionary_max_len : int, default=6
        Lengths from this one up share one feature (``dict_begin_len6``).
    dictionary_words : bool, default=False
        Also the dictionary words themselves as features (lexicalised, as
        pkuseg does): at each position, the word of each length 2 to
        ``dictionary_max_len`` that starts there and the one that ends there
        (``w_begin2=上海``). Each word gets its own weights.
    dictionary_folds : int, default=2
        Jackknifed dictionary features while fitting: the training sequences
        are split into this many contiguous blocks (folds; contiguous so that
        a document's recurring names fall in one), and a sequence sees only dictionary
        words that also occur in another fold. With a dictionary of the
        training words, a training sentence then sees its rare words missing
        as new text will, instead of a dictionary that knows every word (which
        teaches the model to trust it blindly). 1 turns it off. ``transform``
        always uses the whole dictionary. Two halves leave more words unknown
        to the dictionary a sentence sees than many folds would, so the model
        trusts the dictionary less (the better choice on a split of SXU's
        training data).
    accessor_variety : int or None, default=None
        Character input: features from the accessor variety (distinct left /
        right neighbours, Feng et al. 2004) of the n-grams of length 2 to this
        one that start and end at each position, computed on the training
        text plus ``unlabeled_text``.
    adjacent_pmi : bool, default=False
        Character input: features from the pointwise mutual information of
        each character with the one before and the one after (binned, with
        how often the pair occurs), computed on the training text plus
        ``unlabeled_text``: high inside words, low across boundaries.
    accessor_variety_folds : int, default=1
        Jackknifed statistics (accessor variety and adjacent PMI) while
        fitting, as ``dictionary_folds`` does for the dictionary: a training
        sequence reads the statistics of the other contiguous folds (plus
        ``unlabeled_text``), so that a word seen only in its own document
        looks as unknown as a new word will. 1: every sequence reads the
        statistics of all the training text.
    unlabeled_text : list of str, default=None
        More raw text for the accessor-variety and PMI statistics (e.g. the
        text to be segmented later).
    template : str, default=None
        CRF++ templates instead of the ones above: a path to a CRF++ template
        file, or its text (``U01:%x[-1,0]/%x[0,1]`` lines; see
        :func:`skcrf.feature_extraction._crfpp.parse_template`). Features are then exactly what
        CRF++ would expand, named as CRF++ names them; the template
        parameters above (offsets, types, word shape, bias, ...) are not used.
    char_classes : bool, default=False
        Character input: word-segmentation classes of the characters at
        ``char_type_offsets`` and of the three around each position together
        (digits with Chinese numerals, date units 年月日, Latin letters,
        punctuation, other), bigrams of normalised characters (full-width
        folded, digits and Latin letters by class: ``２００７年`` and ``1998年``
        share ``00年``), and reduplication (the character equals the next / the
        one after).
    word_shape : bool or "auto", default="auto"
        Word features of the unit (first column): lowercase form, prefixes
        and suffixes of length 1-3, shape (``Xxxxx``, ``dd``, ``X.X.``) and
        title / upper / has-digit flags. "auto": on for token input, off for
        character input.
    columns : tuple of int, default=None
        Token columns the unit and n-gram templates apply to (``None``: all).
        Word shape and unit types use the first column.
    bias : bool, default=True
        A constant feature on every token.
    min_freq : int, default=1
        Drop features seen fewer than ``min_freq`` times in ``fit``.
        Features unseen in ``fit`` are ignored by ``transform``.

    Notes
    -----
    The output is a :class:`Sequences`, not a table, so the featurizer opts
    out of scikit-learn's ``set_output``: a ``Pipeline`` works under
    ``sklearn.set_config(transform_output="pandas")``.

    The fitted featurizer keeps, per feature, its key and what its template
    read (as codes into a table of the strings of the kept features only),
    so ``get_feature_names_out`` can name columns; it keeps no other
    training text.

    Attributes
    ----------
    input_kind_ : {"chars", "tokens"}
    n_columns_ : int
    n_features_out_ : int
    feature_counts_ : ndarray of shape (n_features,)
        Occurrences of each feature in the training data.

    Examples
    --------
    >>> from skcrf import SequenceFeaturizer
    >>> f = SequenceFeaturizer(unit_offsets=(0,), ngram_offsets=((-1, 0),),
    ...                        char_type_offsets=(), bias=False)
    >>> X = f.fit_transform(["上海", "海上"])
    >>> sorted(f.get_feature_names_out()[X[0][1].indices])
    ['C[-1]C[0]=上海', 'C[0]=海']
    """

    _parameter_constraints = {
        "unit_offsets": [tuple, list],
        "ngram_offsets": [tuple, list],
        "char_type_offsets": [tuple, list],
        "dictionary": [None, "array-like", set, frozenset, dict],
        "dictionary_max_len": [Interval(Integral, 1, None, closed="left")],
        "dictionary_words": ["boolean"],
        "dictionary_folds": [Interval(Integral, 1, None, closed="left")],
        "accessor_variety": [None, Interval(Integral, 2, 8, closed="both")],
        "accessor_variety_folds": [Interval(Integral, 1, None, closed="left")],
        "adjacent_pmi": ["boolean"],
        "unlabeled_text": [None, "array-like"],
        "char_classes": ["boolean"],
        "template": [None, str],
        "word_shape": ["boolean", StrOptions({"auto"})],
        "columns": [None, tuple, list],
        "bias": ["boolean"],
        "min_freq": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        unit_offsets=(-2, -1, 0, 1, 2),
        ngram_offsets=((-2, -1), (-1, 0), (0, 1), (1, 2), (-1, 1)),
        char_type_offsets=(-1, 0, 1),
        dictionary=None,
        dictionary_max_len=6,
        dictionary_words=False,
        dictionary_folds=2,
        accessor_variety=None,
        accessor_variety_folds=1,
        adjacent_pmi=False,
        unlabeled_text=None,
        char_classes=False,
        template=None,
        word_shape="auto",
        columns=None,
        bias=True,
        min_freq=1,
    ):
        self.unit_offsets = unit_offsets
        self.ngram_offsets = ngram_offsets
        self.char_type_offsets = char_type_offsets
        self.dictionary = dictionary
        self.dictionary_max_len = dictionary_max_len
        self.dictionary_words = dictionary_words
        self.dictionary_folds = dictionary_folds
        self.accessor_variety = accessor_variety
        self.accessor_variety_folds = accessor_variety_folds
        self.adjacent_pmi = adjacent_pmi
        self.unlabeled_text = unlabeled_text
        self.char_classes = char_classes
        self.template = template
        self.word_shape = word_shape
        self.columns = columns
        self.bias = bias
        self.min_freq = min_freq

    # ------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the feature vocabulary of ``X``."""
        self._fit_transform(X, keep=False)
        return self

    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the features of ``X``."""
        self._validate_params()
        return self._fit_transform(X, keep=True)

    def _fit_transform(self, X, keep):
        units = read_units(X)
        if units.n_sequences == 0:
            raise ValueError("X is empty: need at least one sequence to fit.")
        vocab, indptr, indices = FittedVocabulary.fit(self._make_templates(units), units,
                                                      self.min_freq)
        vocab.first = None                  # (only merging needs first positions)
        self._vocabulary_ = vocab
        if not keep:
            return None
        return self._csr_sequences(indptr, indices, units)

    # --------------------------------------------------- fitted attributes
    @property
    def input_kind_(self):
        """``"chars"`` or ``"tokens"``: what ``fit`` saw."""
        return self._vocabulary_.input_kind

    @property
    def n_columns_(self):
        """Columns per token (1 for character input)."""
        return self._vocabulary_.n_columns

    @property
    def n_features_out_(self):
        """Number of output columns (features)."""
        return self._vocabulary_.n_features

    @property
    def feature_counts_(self):
        """Occurrences of each feature in the training data."""
        return self._vocabulary_.counts

    # ------------------------------------------------------ transform
    def transform(self, X):
        """Features of ``X`` as a :class:`Sequences`; unseen features are ignored."""
        check_is_fitted(self)
        vocab = self._vocabulary_
        units = read_units(X, expect_kind=vocab.input_kind, expect_columns=vocab.n_columns)
        indptr, indices = vocab.transform(units)
        return self._csr_sequences(indptr, indices, units)

    def _csr_sequences(self, indptr, indices, units):
        # binary features: the indices only (Sequences.X is built if asked for)
        return Sequences._from_binary_csr(indptr, indices, self.n_features_out_,
                                          units.lengths)

    def get_feature_names_out(self, input_features=None):
        """Readable names of the output columns (``"C[-1]C[0]=上海"``, ``"dict_begin_len3"``)."""
        check_is_fitted(self)
        return np.asarray(self._vocabulary_.feature_names(), dtype=object)

    def __setstate__(self, state):
        # pickles of skcrf 0.1.0 before the FittedVocabulary: five attributes
        if "_vocab_keys_" in state:
            state["_vocabulary_"] = FittedVocabulary(
                state.pop("_templates_"), state.pop("input_kind_"), state.pop("n_columns_"),
                state.pop("_vocab_keys_"), state.pop("feature_counts_"),
                state.pop("_feature_slots_"), state.pop("_feature_codes_"),
                state.pop("_feature_strings_"))
            state.pop("n_features_out_", None)
            state.pop("_lookup_table", None)
        super().__setstate__(state)

    # ------------------------------------------------------ templates
    def _make_templates(self, units):
        """The templates that the parameters describe, checked against ``units``."""
        if self.template is not None:
            return TemplateSet(parse_template(self.template, n_columns=units.n_columns))
        shape = self.word_shape
        if shape == "auto":
            shape = units.kind == "tokens"
        if self.dictionary is not None and units.kind != "chars":
            raise ValueError(
                "dictionary features need character input (each sequence a str); "
                "got token sequences."
            )
        columns = (tuple(range(units.n_columns)) if self.columns is None
                   else tuple(self.columns))
        for c in columns:
            if not isinstance(c, Integral) or not 0 <= c < units.n_columns:
                raise ValueError(
                    f"columns={self.columns!r}: column {c!r} does not exist; the "
                    f"tokens have {units.n_columns} column(s)."
                )
        unit_offsets = [check_offset(o, "unit_offsets") for o in self.unit_offsets]
        pairs = []
        for pair in self.ngram_offsets:
            if not hasattr(pair, "__len__") or len(pair) != 2:
                raise ValueError(f"ngram_offsets: {pair!r} is not a pair of offsets.")
            pairs.append((check_offset(pair[0], "ngram_offsets"),
                          check_offset(pair[1], "ngram_offsets")))
        type_offsets = [check_offset(o, "char_type_offsets") for o in self.char_type_offsets]

        sep = "" if units.kind == "chars" else "|"
        tpls = []
        for c in columns:
            lab = "C" if c == 0 else f"C{c}"
            col = ("col", int(c))
            tpls += [Window([(col, o)], [f"{lab}[{o}]=", 0]) for o in unit_offsets]
            tpls += [Window([(col, a), (col, b)], [f"{lab}[{a}]{lab}[{b}]=", 0, sep, 1])
                     for a, b in pairs]
        tpls += [Window([(("type",), o)], [f"T[{o}]=", 0]) for o in type_offsets]
        if shape:
            tpls += [Window([(("attr", a), 0)], [f"{a}=", 0]) for a in WORD_ATTRS]
            tpls += [Window([(("flag", f), 0)], [f]) for f in WORD_FLAGS]
        if self.char_classes:
            tpls += _class_templates(units, type_offsets)
        if self.dictionary is not None:
            words = list(self.dictionary)
            tpls.append(DictionaryMatches(words, self.dictionary_max_len,
                                          folds=self.dictionary_folds))
            if self.dictionary_words:
                tpls.append(DictionaryWords(words, max_len=max(2, self.dictionary_max_len),
                                            folds=self.dictionary_folds))
        if self.accessor_variety is not None:
            tpls.append(self._accessor_variety(units))
        if self.adjacent_pmi:
            tpls.append(self._adjacent_pmi(units))
        if self.bias:
            tpls.append(Window([], ["bias"]))
        return TemplateSet(tpls)

    def _statistics_text(self, units, what):
        """The training text (code points per sequence) and the unlabeled text
        that unsupervised statistics are counted on."""
        if units.kind != "chars":
            raise ValueError(f"{what} needs character input (each sequence a str); "
                             "got token sequences.")
        extra = [] if self.unlabeled_text is None else list(self.unlabeled_text)
        bad = [t for t in extra if not isinstance(t, str)]
        if bad:
            raise TypeError(f"unlabeled_text must hold str, got {type(bad[0]).__name__}.")
        cps = units.ids[0]
        texts = [cps[units.offsets[i]:units.offsets[i + 1]] for i in range(units.n_sequences)]
        return texts, extra

    def _accessor_variety(self, units):
        texts, extra = self._statistics_text(units, "accessor_variety")
        return AccessorVariety(texts, extra, max_n=self.accessor_variety,
                               folds=self.accessor_variety_folds)

    def _adjacent_pmi(self, units):
        texts, extra = self._statistics_text(units, "adjacent_pmi")
        return AdjacentPMI(texts, extra, folds=self.accessor_variety_folds)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags


def _class_templates(units, type_offsets):
    """The ``char_classes`` templates (character input)."""
    if units.kind != "chars":
        raise ValueError("char_classes needs character input (each sequence a str).")
    cls, norm = ("class",), ("norm",)
    out = [Window([(cls, o)], [f"K[{o}]=", 0]) for o in type_offsets]
    out.append(Window([(cls, -1), (cls, 0), (cls, 1)], ["K[-1]K[0]K[1]=", 0, "", 1, "", 2]))
    out += [Window([(norm, a), (norm, b)], [f"N[{a}]N[{b}]=", 0, "", 1])
            for a, b in ((-1, 0), (0, 1))]
    # reduplication, each read at offset 0: absent (not a padding read) where
    # the other character is outside the sentence
    out += [Window([(("same", 1), 0)], ["C[0]=C[1]"]),
            Window([(("same", 2), 0)], ["C[0]=C[2]"]),
            Window([(("same", -1), 0)], ["C[-1]=C[0]"])]
    return out
