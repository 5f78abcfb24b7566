"""WordSegmenter: Chinese word segmentation as one estimator (raw text <-> word lists)."""

import sys
from numbers import Integral, Real

from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compile_notice import compile_notice
from .._crf import LinearChainCRF
from .._kernels import compile_helper
from .._persistence import VersionedPickleMixin
from .._sklearn_compat import Interval, StrOptions, _fit_context
from ..feature_extraction._featurizer import SequenceFeaturizer
from ..metrics import segmentation_scores
from ._segment import segment_texts
from ._tags import words_to_tags

__all__ = ["WordSegmenter"]


class WordSegmenter(VersionedPickleMixin, BaseEstimator):
    """Chinese word segmentation: a :class:`SequenceFeaturizer` and a
    :class:`LinearChainCRF` behind a words-in, words-out interface.

    ``fit(X, y)`` takes raw sentences ``X`` (``str``) and their words ``y``
    (lists of ``str`` that join to the sentence); ``predict(X)`` returns word
    lists; ``score(X, y)`` is the word F1 of the SIGHAN bakeoffs. The
    defaults are the settings tuned on a split of the SIGHAN 2008 SXU
    training data (README: "Word segmentation"), not on any test set.

    Parameters
    ----------
    tags : {"BB2B3MES", "BMES"}, default="BB2B3MES"
        Character tag set: Zhao et al.'s six tags (the 2nd and 3rd characters
        of a word tagged apart) or the usual four.
    c2 : float, default=0.3
        L2 strength of the CRF (chosen on a split of SXU's training data).
    dictionary : "train", None or iterable of str, default="train"
        Words for the dictionary-match features: the training words
        (jackknifed while fitting, see ``dictionary_folds``), none, or the
        given words (an external lexicon; add the training words yourself if
        you want both).
    dictionary_folds : int, default=2
        See :class:`SequenceFeaturizer`: while fitting, a sentence sees only
        dictionary words that also occur in another fold of the training
        text, as new text will. Two halves leave more training words unknown
        to the dictionary a sentence sees than ten folds would (new text has
        new words too), so the model trusts the dictionary less; that won on
        a split of SXU's training data.
    accessor_variety : int or None, default=5
        Accessor-variety features of the n-grams up to this length, from the
        training text plus ``unlabeled_text``.
    accessor_variety_folds : int or "auto", default="auto"
        See :class:`SequenceFeaturizer`: while fitting, a sentence reads the
        statistics of the other (contiguous) folds of the training text plus
        ``unlabeled_text``, as new text reads the training text's; 1 turns
        this off. "auto": 10 without ``unlabeled_text``; 1 with it, which is
        meant to be the text you will segment: that text then counts its own
        contexts, and so should the training text.
    adjacent_pmi : bool or "auto", default="auto"
        Features of the pointwise mutual information of each character with
        its neighbours (see :class:`SequenceFeaturizer`), from the training
        text plus ``unlabeled_text``, jackknifed as the accessor variety is.
        "auto": on with ``unlabeled_text`` (where they helped), off without
        it (where they cost F1 on the tuning split).
    unlabeled_text : list of str, default=None
        Raw text that only adds to the accessor-variety and PMI statistics,
        e.g. the text you will segment (allowed in the SIGHAN closed track).
    char_classes : bool, default=True
        Character-class features (digits with Chinese numerals, date units,
        Latin, punctuation), normalised-character bigrams and reduplication.
    merge_runs : bool, default=True
        Never split inside a run of digits or of Latin letters.
    oov_model : bool or "auto", default="auto"
        Also train a CRF on the character features alone (no dictionary, no
        accessor variety or PMI), which finds more new words, and take its
        words outside the training vocabulary where the main model splits
        them unsurely (:func:`skcrf.segmentation.adopt_new_words`): the
        dictionary makes the main model cut new words into known pieces, and
        this raises OOV recall at the same F1. "auto": on without
        ``unlabeled_text``; off with it, where the main model's statistics
        already come from the text to segment and the character model's
        proposals cost F1. Off as well when the main model has none of those
        features. The second model makes ``fit`` about half as long again.
    oov_threshold : float, default=0.8
        A main-model word start inside a proposed new word is kept when its
        probability is at least this: lower adopts fewer new words (higher
        F1 on known words), higher more (higher OOV recall).
    max_iter, tol, n_jobs, verbose
        As in :class:`LinearChainCRF`.

    Attributes
    ----------
    featurizer_ : SequenceFeaturizer
    crf_ : LinearChainCRF
    oov_featurizer_, oov_crf_ : SequenceFeaturizer, LinearChainCRF or None
        The character-feature model of ``oov_model`` (None when off).
    train_words_ : frozenset of str
        The training vocabulary (for OOV statistics).

    Notes
    -----
    Input text may not contain whitespace in ``fit`` (the words must join to
    the sentence). In ``predict``, whitespace separates words: each
    whitespace-free piece is segmented and the whitespace is dropped.
    Characters outside the Basic Multilingual Plane are ordinary characters.

    Examples
    --------
    >>> from skcrf import WordSegmenter
    >>> from skcrf.datasets import load_sample_cws
    >>> sents = load_sample_cws()[:300]
    >>> seg = WordSegmenter().fit(["".join(s) for s in sents], sents)
    >>> seg.predict(["上海浦东开发与法制建设同步"])  # 300 sentences: 同步 unseen
    [['上海', '浦东', '开发', '与', '法制', '建设', '同', '步']]
    """

    _parameter_constraints = {
        "tags": [StrOptions({"BB2B3MES", "BMES"})],
        "c2": [Interval(Real, 0, None, closed="left")],
        "dictionary": [None, StrOptions({"train"}), "array-like", set, frozenset],
        "dictionary_folds": [Interval(Integral, 1, None, closed="left")],
        "accessor_variety": [None, Interval(Integral, 2, 8, closed="both")],
        "accessor_variety_folds": [StrOptions({"auto"}),
                                   Interval(Integral, 1, None, closed="left")],
        "adjacent_pmi": ["boolean", StrOptions({"auto"})],
        "unlabeled_text": [None, "array-like"],
        "char_classes": ["boolean"],
        "merge_runs": ["boolean"],
        "oov_model": ["boolean", StrOptions({"auto"})],
        "oov_threshold": [Interval(Real, 0, 1, closed="both")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_jobs": [None, Integral],
        "verbose": ["verbose"],
    }

    def __init__(self, *, tags="BB2B3MES", c2=0.3, dictionary="train",
                 dictionary_folds=2, accessor_variety=5, accessor_variety_folds="auto",
                 adjacent_pmi="auto", unlabeled_text=None,
                 char_classes=True, merge_runs=True, oov_model="auto", oov_threshold=0.8,
                 max_iter=1000, tol=1e-5, n_jobs=None, verbose=0):
        self.tags = tags
        self.c2 = c2
        self.dictionary = dictionary
        self.dictionary_folds = dictionary_folds
        self.accessor_variety = accessor_variety
        self.accessor_variety_folds = accessor_variety_folds
        self.adjacent_pmi = adjacent_pmi
        self.unlabeled_text = unlabeled_text
        self.char_classes = char_classes
        self.merge_runs = merge_runs
        self.oov_model = oov_model
        self.oov_threshold = oov_threshold
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn from raw sentences ``X`` and their words ``y``."""
        X = _check_text(X, "X", allow_space=False)
        if not X:
            raise ValueError("X is empty: need at least one sentence to fit.")
        if isinstance(y, (str, bytes)) or not hasattr(y, "__len__") or len(y) != len(X):
            raise ValueError(f"y must be a list of {len(X)} word lists (one per sentence).")
        tags = []
        for i, (x, words) in enumerate(zip(X, y)):
            if isinstance(words, str) or not hasattr(words, "__iter__"):
                raise TypeError(f"y[{i}] must be a list of words, got {type(words).__name__}.")
            words = list(words)
            try:
                t = words_to_tags(words, self.tags)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"y[{i}]: {exc}") from None
            if "".join(words) != x:
                raise ValueError(f"y[{i}] does not spell X[{i}]: the words join to "
                                 f"{''.join(words)[:30]!r}, the sentence is {x[:30]!r}.")
            tags.append(t)
        train_words = frozenset(w for words in y for w in words)
        if self.dictionary == "train":
            dictionary = sorted(train_words)
        elif self.dictionary is None:
            dictionary = None
        else:
            dictionary = [w for w in self.dictionary]
            bad = [w for w in dictionary if not isinstance(w, str)]
            if bad:
                raise TypeError(f"dictionary entries must be str, got {bad[0]!r}.")
            if not any(dictionary):
                raise ValueError("dictionary is empty; pass None for no dictionary "
                                 "features.")
        av_folds = self.accessor_variety_folds
        if av_folds == "auto":
            av_folds = 10 if self.unlabeled_text is None else 1
        pmi = self.adjacent_pmi
        if pmi == "auto":
            pmi = self.unlabeled_text is not None
        featurizer = SequenceFeaturizer(
            dictionary=dictionary, dictionary_folds=self.dictionary_folds,
            accessor_variety=self.accessor_variety,
            accessor_variety_folds=av_folds, adjacent_pmi=pmi,
            unlabeled_text=self.unlabeled_text, char_classes=self.char_classes)
        oov_featurizer = oov_crf = None
        oov_model = self.oov_model
        if oov_model == "auto":
            oov_model = self.unlabeled_text is None
        oov_model = oov_model and (dictionary is not None
                                   or self.accessor_variety is not None or pmi)
        say = self._progress
        # the featurisation kernels compile on first use too: say so (once)
        with compile_notice(sys.stderr if self.verbose else None):
            say(f"featurising {len(X):,} sentences")
            S = featurizer.fit_transform(X)
            if compile_helper.running("fit"):
                # a first run, the CRF's kernels still compiling in a helper
                # process: compile the featurisation's transform path (what
                # predict runs) now, in the time this process would wait
                featurizer.transform(X[:1])
            say(f"training the CRF ({featurizer.n_features_out_:,} features)")
            crf = self._crf().fit(S, tags)
            del S
            if oov_model:
                oov_featurizer = SequenceFeaturizer(dictionary=None, accessor_variety=None,
                                                    adjacent_pmi=False,
                                                    char_classes=self.char_classes)
                say("training the OOV model (character features only)")
                oov_crf = self._crf().fit(oov_featurizer.fit_transform(X), tags)
        self.featurizer_ = featurizer
        self.crf_ = crf
        self.oov_featurizer_ = oov_featurizer
        self.oov_crf_ = oov_crf
        self.train_words_ = train_words
        # words never proposed as new: the training words and the user's dictionary
        self.known_words_ = (train_words if dictionary is None or isinstance(self.dictionary, str)
                             else train_words | frozenset(dictionary))
        return self

    def _progress(self, message):
        if self.verbose:
            print(f"WordSegmenter: {message} ...", file=sys.stderr, flush=True)

    def _crf(self):
        return LinearChainCRF(c2=self.c2, constraints=self.tags, max_iter=self.max_iter,
                              tol=self.tol, n_jobs=self.n_jobs, verbose=self.verbose)

    def predict(self, X):
        """Words of each sentence (a list of lists of ``str``)."""
        check_is_fitted(self)
        X = _check_text(X, "X", allow_space=True)
        features = {}

        def tag(pieces):
            features["S"] = S = self.featurizer_.transform(pieces)
            return self.crf_.predict(S)

        oov = getattr(self, "oov_crf_", None)
        return segment_texts(
            X, tag,
            oov_tag=None if oov is None else
            (lambda pieces: oov.predict(self.oov_featurizer_.transform(pieces))),
            marginals=lambda need: self.crf_.predict_marginals(features["S"][need]),
            known_words=getattr(self, "known_words_", frozenset()),
            classes=list(self.crf_.classes_),
            threshold=self.oov_threshold, merge=self.merge_runs)

    def score(self, X, y):
        """Word F1 (a predicted word is right when its span equals a gold word's)."""
        return segmentation_scores(list(y), self.predict(X))["f1"]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags


def _check_text(X, what, allow_space):
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
        raise TypeError(f"{what} must be a list of sentences (str), got "
                        f"{type(X).__name__}.")
    X = list(X)
    for i, x in enumerate(X):
        if not isinstance(x, str):
            raise TypeError(f"{what}[{i}] is a {type(x).__name__}, not a str.")
        if not allow_space and any(c.isspace() for c in x):
            p = next(k for k, c in enumerate(x) if c.isspace())
            raise ValueError(f"{what}[{i}] has whitespace at position {p}: training "
                             "sentences are given without spaces, their words in y.")
    return X
