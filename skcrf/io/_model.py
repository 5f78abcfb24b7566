"""A model file, ready to tag: the runtime of the command line.

:class:`Model` holds what a model file holds — the fitted vocabulary, the
weights, the labels and, for a word segmenter, its OOV model — and tags and
segments through the same functions as the estimators
(:mod:`skcrf._inference`, :mod:`skcrf.segmentation._segment`). It imports
NumPy only: small inputs are featurised and decoded with NumPy alone (engine
``"numpy"``), larger ones with the compiled kernels, loaded on first use.
"""


from .._arrays import ONE, KernelArrays, Weights
from .._inference import marginals, predict_indices, topk_sequences, viterbi
from .._numpy_inference import MAX_TOKENS
from ..exceptions import ModelFileError
from ..feature_extraction._units import read_units
from ..segmentation._segment import segment_texts
from ._model_file import read_model_file
from ._validation import check_known_words, check_part, check_segmenter, check_top

__all__ = ["Model", "read_model"]


class Model:
    """A model file, ready to tag: NumPy, and Numba when it pays (no scikit-learn).

    Attributes
    ----------
    kind : {"tagger", "segmenter"}
    labels : list
        The labels, in the weights' column order.
    vocabulary : FittedVocabulary
    weights : Weights
    decoding : {"viterbi", "marginal"}
    oov : Model or None
        A segmenter's OOV model.
    known_words : frozenset of str or None
        The words a segmenter's OOV model never proposes as new.
    meta : dict
        The file's metadata.
    """

    def __init__(self, meta, arrays, path="<model>", declared=None):
        if declared is None:
            declared = sum(a.nbytes for a in arrays.values())
        check_top(path, meta)
        self.meta = meta
        self.kind = meta["kind"]
        self._build_part(meta, arrays, "", path, declared)
        self.segmenter = meta.get("segmenter")
        self.oov = self.known_words = None
        if self.kind == "segmenter":
            self.oov_threshold, self.merge_runs = check_segmenter(path, self.segmenter)
        oov_arrays = [k for k in arrays if k.startswith("oov.")]
        if "oov_model" in meta:
            self.oov = Model.__new__(Model)
            self.oov.kind, self.oov.meta, self.oov.segmenter = "tagger", meta, None
            self.oov.oov = self.oov.known_words = None
            self.oov._build_part(meta["oov_model"], arrays, "oov.", path, declared)
            self.known_words = check_known_words(path, arrays)
        elif oov_arrays or "known_words" in arrays:
            raise ModelFileError(f"{path}: entry {(oov_arrays or ['known_words'])[0]!r}: "
                                 "the file has no OOV model.")

    def _build_part(self, meta, arrays, prefix, path, declared):
        labels, vocab, (W, A, start, end), decoding = check_part(
            path, meta, arrays, prefix, declared)
        self.labels = labels
        self.vocabulary = vocab
        self.featurizer_meta = meta["featurizer"]
        self.crf_meta = meta["crf"]
        self.decoding = decoding
        self.weights = Weights.from_arrays(W, A, start, end)
        self._numpy_tokens = 0           # tokens tagged by the NumPy engine so far

    # ------------------------------------------------------------ properties
    @property
    def input_kind(self):
        return self.vocabulary.input_kind

    @property
    def n_columns(self):
        return self.vocabulary.n_columns

    @property
    def n_features(self):
        return self.vocabulary.n_features

    def feature_names(self):
        return self.vocabulary.feature_names()

    # --------------------------------------------------------------- tagging
    def arrays(self, X, engine="numba"):
        """Kernel arrays of raw sequences (characters or token tuples).

        ``engine="numpy"`` computes them with NumPy alone (every template
        must have a NumPy version: ``self.vocabulary.templates.has_numpy``)."""
        units = read_units(X, expect_kind=self.input_kind, expect_columns=self.n_columns)
        if engine == "numpy":
            indptr, indices = self.vocabulary.transform_numpy(units)
        else:
            indptr, indices = self.vocabulary.transform(units)
        return KernelArrays(indptr, indices, ONE, units.offsets)

    def _engine(self, X, engine, decoding="viterbi"):
        """The engine for ``X``: "auto" is NumPy for this model's first
        ``MAX_TOKENS`` units when its templates and decoding allow (below that,
        Numba's start-up costs more than NumPy's lower throughput saves), then
        Numba."""
        if engine not in ("auto", "numpy", "numba"):
            raise ValueError(f"engine must be 'auto', 'numpy' or 'numba', got {engine!r}.")
        has_numpy = self.vocabulary.templates.has_numpy
        if engine == "numpy" and decoding != "viterbi":
            raise ValueError("engine='numpy' decodes with Viterbi only; this model "
                             f"decodes with {decoding!r}: use engine='numba'.")
        if engine == "numpy" and not has_numpy:
            raise ValueError("this model's templates have no NumPy version; "
                             "use engine='numba'.")
        if engine != "auto":
            return engine
        if decoding != "viterbi" or not has_numpy:
            return "numba"
        n_units = sum(map(len, X))
        if self._numpy_tokens + n_units > MAX_TOKENS:
            self._numpy_tokens = MAX_TOKENS + 1     # Numba from now on
            return "numba"
        self._numpy_tokens += n_units
        return "numpy"

    def _labelled(self, idx, offsets):
        labels = [self.labels[i] for i in idx.tolist()]
        return [labels[offsets[s]:offsets[s + 1]] for s in range(offsets.size - 1)]

    def predict(self, X, n_threads=1, engine="auto"):
        """Label lists of raw sequences.

        ``engine``: ``"numba"`` (the compiled kernels, ``n_threads`` of
        them), ``"numpy"`` (one thread, no Numba: no start-up cost; the
        same labels), or ``"auto"`` (see :meth:`_engine`).
        """
        X = list(X)
        engine = self._engine(X, engine, self.decoding)
        arrays = self.arrays(X, engine)
        idx = predict_indices(arrays, self.weights, self.decoding, n_threads, engine)
        return self._labelled(idx, arrays.offsets)

    def predict_with_probabilities(self, X, n_threads=1, engine="auto"):
        """``(labels, sequence log-probability, marginals)`` per sequence
        (Viterbi labels; ``engine`` as in :meth:`predict`)."""
        X = list(X)
        engine = self._engine(X, engine)
        arrays = self.arrays(X, engine)
        idx, score = viterbi(arrays, self.weights, n_threads, engine)
        P, log_z = marginals(arrays, self.weights, n_threads, engine)
        off = arrays.offsets
        return [(labels, float(score[s] - log_z[s]), P[off[s]:off[s + 1]])
                for s, labels in enumerate(self._labelled(idx, off))]

    def marginals(self, X, n_threads=1):
        """Node marginals of raw sequences: a (length, n_labels) array each."""
        arrays = self.arrays(list(X))
        P, _ = marginals(arrays, self.weights, n_threads)
        off = arrays.offsets
        return [P[off[s]:off[s + 1]] for s in range(off.size - 1)]

    def topk(self, X, k, n_threads=1):
        """The k best label sequences of each input: lists of ``(labels, log_prob)``."""
        return topk_sequences(self.arrays(list(X)), self.weights, k, n_threads,
                              labels=self.labels)

    def segment(self, texts, n_threads=1):
        """Word lists of raw sentences (segmenter models), as
        ``WordSegmenter.predict`` gives them (its OOV model included)."""
        if self.kind != "segmenter":
            raise ValueError("segment() needs a word segmenter model; this model is a "
                             "tagger.")
        texts = list(texts)
        pieces = {}

        def tag(p):
            pieces["p"] = p
            return self.predict(p, n_threads)

        oov = self.oov
        return segment_texts(
            texts, tag,
            oov_tag=None if oov is None else (lambda p: oov.predict(p, n_threads)),
            marginals=lambda need: self.marginals([pieces["p"][k] for k in need], n_threads),
            known_words=self.known_words or (), classes=self.labels,
            threshold=self.oov_threshold, merge=self.merge_runs)


def read_model(path):
    """The :class:`Model` in a model file (no scikit-learn imported).

    Safe to call on a file from a stranger: the file is read as arrays and
    JSON only, and everything in it is checked (:mod:`._validation`) before
    it is used; a malformed file raises :class:`~skcrf.exceptions.ModelFileError`
    naming the file and the entry."""
    meta, arrays, declared = read_model_file(path)
    return Model(meta, arrays, path, declared)
