"""python-crfsuite's API with skcrf underneath: a drop-in for ``pycrfsuite``.

Code written for python-crfsuite runs unchanged with either::

    import skcrf.compat.pycrfsuite as pycrfsuite
    # or, for a package that imports pycrfsuite itself:
    import sys, skcrf.compat.pycrfsuite
    sys.modules["pycrfsuite"] = skcrf.compat.pycrfsuite

:class:`Tagger` opens CRFsuite model files (those python-crfsuite's
``Trainer`` writes, and those packages ship) and tags as CRFsuite does;
:class:`Trainer` trains with skcrf's L-BFGS (CRFsuite's objective, the same
optimum) and writes a CRFsuite model file that python-crfsuite (or any other
CRFsuite binding) opens; :class:`ItemSequence` turns items into attributes
by python-crfsuite's rules. Only the L-BFGS algorithm exists here:
``Trainer.select`` names what it does not have.
"""

import contextlib
import re
import struct
import sys
from collections import namedtuple
from fractions import Fraction

import numpy as np

from ..exceptions import ModelFileError
from ._crfsuite_model import CRFsuiteModel, _Attributes
from ._items import item_attributes

__all__ = ["ItemSequence", "Tagger", "Trainer", "BaseTrainer", "CRFSuiteError",
           "ParsedDump", "TrainLogParser", "LabelScore", "CRFSUITE_VERSION"]

#: the CRFsuite version whose files and behaviour this module follows
CRFSUITE_VERSION = "0.12"


class CRFSuiteError(Exception):
    """An error in training (python-crfsuite's name for it)."""


class ItemSequence:
    """Items turned into attributes once, for several trainers or taggers.

    >>> ItemSequence([["foo"], {"bar": {"baz": 1}}]).items()
    [{'foo': 1.0}, {'bar:baz': 1.0}]
    """

    def __init__(self, pyseq):
        if isinstance(pyseq, ItemSequence):
            self._items = pyseq._items
        else:
            self._items = [_Attributes(item_attributes(x)) for x in pyseq]

    def items(self):
        """The items as ``{attribute: value}`` dicts."""
        return [dict(x) for x in self._items]

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __repr__(self):
        return f"<ItemSequence of size {len(self)}>"


def _items(xseq):
    return xseq._items if isinstance(xseq, ItemSequence) else list(xseq)


# ------------------------------------------------------------------ tagger
class Tagger:
    """Tags item sequences with a CRFsuite model (python-crfsuite's ``Tagger``)."""

    def __init__(self):
        self._model = None
        self._xseq = None
        self._arrays = None

    def open(self, name):
        """Open a model file; returns a context manager that closes it."""
        try:
            with open(name, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ValueError(f"Error opening model file {name!r} ({exc})") from None
        self._load(data, name)
        return contextlib.closing(self)

    def open_inmemory(self, value):
        """Open a model from its bytes (the content of a model file)."""
        if not isinstance(value, bytes):
            raise TypeError(f"open_inmemory takes bytes, got {type(value).__name__}.")
        self._load(value, "<in-memory model>")
        return contextlib.closing(self)

    def _load(self, data, name):
        if data[:4] != b"lCRF":
            raise ValueError(f"Invalid model file {name!r}: not a CRFsuite model.")
        try:
            self._model = CRFsuiteModel.from_bytes(data, name)
        except ModelFileError as exc:
            raise ValueError(str(exc)) from None
        self._data = data
        self._xseq = self._arrays = None

    def close(self):
        """Close the model."""
        self._model = self._xseq = self._arrays = None

    def _need_model(self):
        if self._model is None:
            raise ValueError("no model is open: call open() or open_inmemory() first.")
        return self._model

    def labels(self):
        """The model's labels."""
        return list(self._need_model().labels)

    def set(self, xseq):
        """Set the item sequence the next tag / probability / marginal use."""
        model = self._need_model()
        self._xseq = _items(xseq)
        self._arrays = model.arrays([self._xseq])
        self._marginals = None

    def _current(self):
        if self._arrays is None:
            raise ValueError("no item sequence: call set() or tag(xseq) first.")
        return self._arrays

    def tag(self, xseq=None):
        """The most probable label sequence of ``xseq`` (or of the current one)."""
        if xseq is not None:
            self.set(xseq)
        model = self._need_model()
        idx, _ = model.tag(self._current())
        return [model.labels[i] for i in idx.tolist()]

    def probability(self, yseq):
        """P(yseq | the current item sequence)."""
        model = self._need_model()
        arrays = self._current()
        try:
            y = np.array([model.label_id[lab] for lab in yseq], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"unknown label {exc.args[0]!r}.") from None
        if y.size != arrays.n_tokens:
            raise ValueError(f"{y.size} labels for {arrays.n_tokens} items.")
        score = model.path_scores(arrays, y)
        _, log_z = self._forward()
        return float(np.exp(score[0] - log_z[0]))

    def _forward(self):
        if self._marginals is None:
            self._marginals = self._need_model().marginals(self._current())
        return self._marginals

    def marginal(self, y, pos):
        """P(label ``y`` at position ``pos`` | the current item sequence)."""
        model = self._need_model()
        if y not in model.label_id:
            raise ValueError(f"unknown label {y!r}.")
        P, _ = self._forward()
        if not 0 <= pos < P.shape[0]:
            raise IndexError(f"position {pos} outside the sequence of {P.shape[0]} items.")
        return float(P[pos, model.label_id[y]])

    def dump(self, filename=None):
        """Write the model in CRFsuite's plain-text dump format (to stdout by default)."""
        text = dump_text(self._need_model(), self._data)
        if filename is None:
            sys.stdout.write(text)
        else:
            with open(filename, "w", encoding="utf-8") as fh:
                fh.write(text)

    def info(self):
        """The model's header, labels, attributes and weights (:class:`ParsedDump`),
        as python-crfsuite parses them from the dump."""
        parsed = ParsedDump()
        for line in dump_text(self._need_model(), self._data).splitlines():
            parsed.feed(line)
        return parsed


def dump_text(model, data):
    """``crfsuite dump``'s text of a model (header, labels, attributes,
    transitions, state features; weights with six decimals)."""
    fields = struct.unpack_from("<4sI4sIIIIIIIII", data, 0)
    names = ("magic", "size", "type", "version", "num_features", "num_labels",
             "num_attrs", "off_features", "off_labels", "off_attrs", "off_labelrefs",
             "off_attrrefs")
    out = ["FILEHEADER = {"]
    for name, v in zip(names, fields):
        if isinstance(v, bytes):
            v = v.decode("ascii", "replace")
        elif name.startswith("off_"):
            v = f"0x{v:X}"
        out.append(f"  {name}: {v}")
    out += ["}", "", "LABELS = {"]
    out += [f"  {i:5d}: {lab}" for i, lab in enumerate(model.labels)]
    out += ["}", "", "ATTRIBUTES = {"]
    out += [f"  {i:5d}: {a}" for i, a in enumerate(model.attributes)]
    out += ["}", "", "TRANSITIONS = {"]
    A = model.weights.A
    for i, j in zip(*np.nonzero(A)):
        out.append(f"  (1) {model.labels[i]} --> {model.labels[j]}: {A[i, j]:f}")
    out += ["}", "", "STATE_FEATURES = {"]
    W = model.weights.W
    for a, lab in zip(*np.nonzero(W)):
        out.append(f"  (0) {model.attributes[a]} --> {model.labels[lab]}: {W[a, lab]:f}")
    out += ["}", ""]
    return "\n".join(out) + "\n"


class ParsedDump:
    """A CRFsuite model's header (strings), labels and attributes
    (``{name: id string}``), ``transitions`` (``{(from, to): weight}``) and
    ``state_features`` (``{(attribute, label): weight}``), from its dump."""

    _SECTION = re.compile(r"(FILEHEADER|LABELS|ATTRIBUTES|TRANSITIONS|STATE_FEATURES) = {")
    _FEATURE = re.compile(r"\(\d+\) (.+) --> (.+): ([+-]?\d+\.\d+)")

    def __init__(self):
        self.header, self.labels, self.attributes = {}, {}, {}
        self.transitions, self.state_features = {}, {}
        self._section = None

    def feed(self, line):
        line = line.lstrip().rstrip("\r\n")
        if not line:
            return
        m = self._SECTION.match(line)
        if m:
            self._section = m.group(1)
        elif line == "}":
            self._section = None
        elif self._section == "FILEHEADER":
            key, _, value = line.partition(": ")
            self.header[key] = value
        elif self._section in ("LABELS", "ATTRIBUTES"):
            num, _, name = line.partition(": ")
            getattr(self, self._section.lower())[name] = num
        else:
            m = self._FEATURE.match(line)
            target = (self.transitions if self._section == "TRANSITIONS"
                      else self.state_features)
            target[(m.group(1), m.group(2))] = float(m.group(3))


# ----------------------------------------------------------------- trainer
#: python-crfsuite's L-BFGS parameters: name -> (type, default, help)
_PARAMS = {
    "feature.minfreq": (float, 0.0, "The minimum frequency of features."),
    "feature.possible_states": (int, 0, "Force to generate possible state features."),
    "feature.possible_transitions": (int, 0,
                                     "Force to generate possible transition features."),
    "c1": (float, 0.0, "Coefficient for L1 regularization."),
    "c2": (float, 1.0, "Coefficient for L2 regularization."),
    "max_iterations": (int, 2147483647, "The maximum number of iterations for L-BFGS "
                       "optimization."),
    "num_memories": (int, 6, "The number of limited memories for approximating the "
                     "inverse hessian matrix."),
    "epsilon": (float, 1e-5, "Epsilon for testing the convergence of the objective."),
    "period": (int, 10, "The duration of iterations to test the stopping criterion."),
    "delta": (float, 1e-5, "The threshold for the stopping criterion; an L-BFGS "
              "iteration stops when the improvement of the log likelihood over the last "
              "${period} iterations is no greater than this threshold."),
    "linesearch": (str, "MoreThuente", "The line search algorithm used in L-BFGS "
                   "updates (skcrf: MoreThuente always)."),
    "max_linesearch": (int, 20, "The maximum number of trials for the line search "
                       "algorithm."),
}
_OTHERS = ("l2sgd", "averaged-perceptron", "passive-aggressive", "arow", "ap", "pa")


class BaseTrainer:
    """Collects item / label sequences and trains a CRFsuite model with
    skcrf's L-BFGS (python-crfsuite's ``BaseTrainer``)."""

    def __init__(self, algorithm=None, params=None, verbose=True):
        self._params = {k: v[1] for k, v in _PARAMS.items()}
        self._data = []
        self.verbose = verbose
        if algorithm is not None:
            self.select(algorithm)
        if params is not None:
            self.set_params(params)

    def message(self, message):
        """Receive a line of the training log (printed when ``verbose``)."""
        if self.verbose:
            print(message, end="")

    def append(self, xseq, yseq, group=0):
        """Add an instance: items (dicts, lists or an :class:`ItemSequence`)
        and as many labels; ``group`` selects held-out data in :meth:`train`."""
        items = _items(xseq)
        labels = list(yseq)
        if len(items) != len(labels):
            raise ValueError(f"the item sequence has {len(items)} items but the label "
                             f"sequence {len(labels)} labels.")
        if not all(isinstance(y, (str, bytes)) for y in labels):
            raise TypeError("labels must be strings.")
        labels = [y.decode("utf-8") if isinstance(y, bytes) else y for y in labels]
        self._data.append((items, labels, int(group)))

    def select(self, algorithm, type="crf1d"):
        """Choose the training algorithm: only ``"lbfgs"`` exists here."""
        algorithm = str(algorithm).lower()
        if type != "crf1d":
            raise ValueError(f"Bad arguments: type={type!r}; the only model is 'crf1d'.")
        if algorithm in _OTHERS:
            raise ValueError(
                f"algorithm={algorithm!r} is one of CRFsuite's other training algorithms; "
                "skcrf trains with L-BFGS only ('lbfgs': c1 for L1 / elastic net, c2 for L2).")
        if algorithm != "lbfgs":
            raise ValueError(f"Bad arguments: algorithm={algorithm!r}, type={type!r}")

    def params(self):
        """The names of the parameters."""
        return list(_PARAMS)

    def set_params(self, params):
        for key, value in params.items():
            self.set(key, value)

    def get_params(self):
        return {name: self.get(name) for name in self.params()}

    def set(self, name, value):
        """Set a parameter (python-crfsuite's names; values as their strings)."""
        if name not in _PARAMS:
            raise ValueError(f"Parameter not found: {name}")
        typ = _PARAMS[name][0]
        if isinstance(value, bool):
            value = int(value)
        try:
            self._params[name] = typ(value) if typ is not int else int(float(value))
        except (TypeError, ValueError):
            raise ValueError(f"{name}: {value!r} is not a {typ.__name__}.") from None

    def get(self, name):
        if name not in _PARAMS:
            raise ValueError(f"Parameter not found: {name}")
        v = self._params[name]
        return bool(v) if name.startswith("feature.possible") else v

    def help(self, name):
        """The description of a parameter."""
        if name not in _PARAMS:
            raise ValueError(f"Parameter not found: {name}")
        return _PARAMS[name][2]

    def clear(self):
        """Remove every instance appended so far."""
        self._data = []

    def train(self, model, holdout=-1):
        """Train on the instances (those of group ``holdout`` held out and
        scored after each iteration) and write the CRFsuite model file
        ``model`` (none if ``model`` is empty)."""
        from ._crfsuite_train import fit_crfsuite, to_crfsuite_model

        self._before_train()
        train = [(x, y) for x, y, g in self._data if g != holdout]
        held = [(x, y) for x, y, g in self._data if g == holdout]
        if not train:
            raise CRFSuiteError("no training instance (all are in the holdout group).")
        p = self._params
        vectorizer, crf, labels = fit_crfsuite(
            [x for x, _ in train], [y for _, y in train],
            held_out=([x for x, _ in held], [y for _, y in held]) if held else None,
            log=self.message, c1=p["c1"], c2=p["c2"], max_iter=p["max_iterations"],
            tol=p["delta"], period=p["period"], epsilon=p["epsilon"],
            num_memories=p["num_memories"], min_freq=p["feature.minfreq"],
            all_possible_states=bool(p["feature.possible_states"]),
            all_possible_transitions=bool(p["feature.possible_transitions"]))
        if model:
            data = to_crfsuite_model(vectorizer, crf, labels).to_bytes()
            with open(model, "wb") as fh:
                fh.write(data)

    def _before_train(self):
        pass


class Trainer(BaseTrainer):
    """:class:`BaseTrainer` whose log lines are parsed as they come
    (``logparser``: iterations, losses, held-out scores), python-crfsuite's
    ``Trainer``."""

    logparser = None

    def _before_train(self):
        self.logparser = TrainLogParser()

    def message(self, message):
        event = self.logparser.feed(message)
        if self.verbose and event is not None:
            print(self.logparser.last_log, end="")


class TrainLogParser:
    """Reads the training log line by line, as python-crfsuite's does:
    ``iterations`` (dicts with ``num``, ``loss``, ``feature_norm``,
    ``error_norm``, ``active_features``, ``linesearch_trials``,
    ``linesearch_step``, ``time``, ``scores`` and, with held-out data,
    ``avg_precision`` / ``avg_recall`` / ``avg_f1``, ``item_accuracy`` /
    ``instance_accuracy`` and their ``_float``), ``last_iteration``,
    ``featgen_num_features``, ``training_seconds``, ``log``, ``events``;
    :meth:`feed` returns an event name at the end of a block of lines
    (``"start"``, ``"featgen_end"``, ``"iteration"``, ``"optimization_end"``,
    ``"end"``), whose lines are then ``last_log``."""

    _ITER = re.compile(r"\*{5} Iteration #(\d+) \*{5}")
    _FIELDS = [("loss", r"Loss: (\d+\.\d+)", float),
               ("feature_norm", r"Feature norm: (\d+\.\d+)", float),
               ("error_norm", r"Error norm: (\d+\.\d+)", float),
               ("active_features", r"Active features: (\d+)", int),
               ("linesearch_trials", r"Line search trials: (\d+)", int),
               ("linesearch_step", r"Line search step: (\d+\.\d+)", float),
               ("time", r"Seconds required for this iteration: (\d+\.\d+)", float)]
    _AVG = re.compile(r"Macro-average precision, recall, F1: \((\d\.\d+), (\d\.\d+), "
                      r"(\d\.\d+)\)")
    _ACC = re.compile(r"(Item|Instance) accuracy: (\d+) / (\d+)")
    _LABEL = re.compile(r"\s{4}(.+): \((\d+), (\d+), (\d+)\) \((\d\.\d+), (\d\.\d+), "
                        r"(\d\.\d+)\)")

    def __init__(self):
        self.iterations, self.last_iteration, self.log, self.events = [], None, [], []
        self.featgen_percent = -2
        self.featgen_num_features = self.featgen_seconds = None
        self.training_seconds = self.storing_seconds = None
        self._start, self._last = 0, ""
        self._state = None

    @property
    def last_log(self):
        """The lines of the block that the last event ended."""
        return self._last

    def feed(self, line):
        self.log.append(line)
        event = self._parse(line)
        if event is not None:
            self._last = "".join(self.log[self._start:])
            self._start = len(self.log)
            self.events.append((event, self._start, len(self.log)))
        return event

    def _parse(self, line):
        if line.startswith("Feature generation"):
            self._state = "featgen"
            return "start"
        if line.startswith("Number of features:"):
            self.featgen_num_features = int(line.split(":")[1])
        if line.startswith("Seconds required:") and self._state == "featgen":
            self.featgen_seconds = float(line.split(":")[1])
            self._state = "prepared"
            return "featgen_end"
        m = self._ITER.match(line)
        if m:
            self.last_iteration = {"num": int(m.group(1)), "scores": {}}
            self.iterations.append(self.last_iteration)
            self._state = "iteration"
            return None
        if self._state == "iteration":
            return self._iteration_line(line)
        if line.startswith("Total seconds required for training:"):
            self.training_seconds = float(line.split(":")[1])
        if line.startswith("Storing the model"):
            self._state = "storing"
            return "optimization_end"
        if self._state == "storing":
            if line.startswith("Seconds required:"):
                self.storing_seconds = float(line.split(":")[1])
            elif line == "\n":
                self._state = None
                return "end"
        return None

    def _iteration_line(self, line):
        it = self.last_iteration
        if line == "\n":
            self._state = "between"
            return "iteration"
        for key, pattern, typ in self._FIELDS:
            m = re.match(pattern, line)
            if m:
                it[key] = typ(m.group(1))
        m = self._AVG.match(line)
        if m:
            it.update(avg_precision=float(m.group(1)), avg_recall=float(m.group(2)),
                      avg_f1=float(m.group(3)))
        m = self._ACC.match(line)
        if m:
            key = m.group(1).lower() + "_accuracy"
            it[key] = Fraction(int(m.group(2)), int(m.group(3)))
            it[key + "_float"] = float(it[key])
        m = self._LABEL.match(line)
        if m:
            it["scores"][m.group(1)] = LabelScore(
                int(m.group(2)), int(m.group(3)), int(m.group(4)), float(m.group(5)),
                float(m.group(6)), float(m.group(7)))
        return None


LabelScore = namedtuple("LabelScore", "match model ref precision recall f1")
