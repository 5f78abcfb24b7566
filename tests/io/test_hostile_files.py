"""Model files from strangers: every mutation of every array and of the
metadata either raises ModelFileError naming the file and the entry, or
loads a model that predicts exactly as before — never a crash, a hang, an
allocation beyond what the file declares, or a silently different answer."""

import json
import pathlib
import re
import subprocess
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

from skcrf.exceptions import ModelFileError
from skcrf.io import load_model, read_model

DATA = pathlib.Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "expected_v0.1.0.json").read_text(encoding="utf-8"))
FILES = ("tagger", "crfpp", "chars", "segmenter")


def _load(name):
    with np.load(DATA / f"{name}_v0.1.0.skcrf", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    return meta, arrays


def _write(path, meta, arrays, raw_meta=None):
    arrays = dict(arrays)
    body = raw_meta if raw_meta is not None else json.dumps(meta).encode("utf-8")
    arrays["__meta__"] = np.frombuffer(body, dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _inputs():
    from skcrf.datasets import load_sample_cws

    sents = load_sample_cws()[900:912]
    chars = ["".join(s) for s in sents]
    tokens = [[(w, "N" if len(w) > 1 else "V") for w in s] for s in sents]
    return chars, tokens


CHARS, TOKENS = _inputs()


def _predict(model, name):
    if name == "segmenter":
        return model.segment(CHARS)
    return model.predict(CHARS if name == "chars" else TOKENS)


def _check(path, name, entry):
    """Loading ``path`` fails naming it and ``entry``, or predicts as before."""
    try:
        model = read_model(path)
    except ModelFileError as exc:
        msg = str(exc)
        assert str(path) in msg, msg
        for part in entry.replace("template", "template.").split("."):
            if part and not part.isdigit():
                assert part in msg, (entry, msg)
        return "refused"
    assert _predict(model, name) == EXPECTED[name], (entry, "changed the output")
    return "same"


def _mutations(a):
    """(label, mutated array) pairs of the classes the issue lists."""
    out = []
    empty_shape = (0,) + a.shape[1:]
    out.append(("empty", np.zeros(empty_shape, dtype=a.dtype)))
    if a.shape and a.shape[0]:
        out.append(("one short", a[:-1].copy()))
    out.append(("wrong ndim", a.reshape(-1)[:, None].copy() if a.ndim == 1
                else a.reshape(-1).copy()))
    if a.dtype.kind == "f" and a.size:
        for v in (np.nan, np.inf, -np.inf):
            b = a.copy()
            b.reshape(-1)[0] = v
            out.append((f"value {v}", b))
    if a.dtype.kind in "iu" and a.size:
        for v in (-1, 2**40):
            b = a.copy()
            b.reshape(-1)[a.size // 2] = np.array(v).astype(a.dtype)
            out.append((f"index {v}", b))
    out.append(("float32", a.astype(np.float32)))
    same = [label for label, b in out if b.shape == a.shape and b.dtype == a.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")]
    return [(label, b) for label, b in out if label not in same]


def _entries(name):
    _, arrays = _load(name)
    return [(name, k) for k in sorted(arrays)]


ENTRIES = [e for name in FILES for e in _entries(name) if ".table" not in e[1]]
TABLES = [e for name in FILES for e in _entries(name) if ".table" in e[1]]


@pytest.mark.parametrize("name, entry", ENTRIES, ids=lambda v: v)
def test_mutated_arrays_are_refused_or_change_nothing(tmp_path, name, entry):
    meta, arrays = _load(name)
    outcomes = []
    for label, bad in _mutations(arrays[entry]):
        path = _write(tmp_path / f"{name}-{entry}-{label}.skcrf", meta,
                      dict(arrays, **{entry: bad}))
        outcomes.append((label, _check(path, name, entry)))
    # the weights cannot be changed in these ways without being refused (a
    # vocabulary key changed into another is a file of other features)
    if entry.split(".")[-1] in ("W_data", "W_indices", "W_indptr", "A", "start", "end"):
        assert all(o == "refused" for _, o in outcomes), outcomes


def test_object_arrays_are_refused_without_unpickling(tmp_path):
    meta, arrays = _load("tagger")
    for entry in ("A", "vocab_keys", "W_data"):
        evil = np.empty(2, dtype=object)
        evil[:] = [{"a": 1}, print]
        path = tmp_path / f"object-{entry}.skcrf"
        arrays2 = dict(arrays, **{entry: evil})
        arrays2["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays2)        # (pickles the object array)
        with pytest.raises(ModelFileError, match=f"{entry}.*dtype object"):
            read_model(path)


_TABLE_CODE = """
import json, sys, numpy as np
sys.path.insert(0, {root!r})
from tests.io.test_hostile_files import _load, _write, _check
name, entry, tmp = {name!r}, {entry!r}, {tmp!r}
meta, arrays = _load(name)
t = arrays[entry]
cases = {{"empty": t[:0], "one short": t[:-1], "all one key": np.full_like(t, 7),
         "all keys, values 0": np.stack([np.arange(1, t.shape[0] + 1, dtype=np.uint64),
                                         np.zeros(t.shape[0], np.uint64)], axis=1),
         "rolled": np.roll(t, 1, axis=0), "huge values": t * np.uint64(3) + np.uint64(2**40),
         "wrong ndim": t.reshape(-1), "three columns": np.zeros((t.shape[0], 3), np.uint64)}}
for label, bad in cases.items():
    path = _write(tmp + "/" + label.replace(" ", "_") + ".skcrf", meta,
                  dict(arrays, **{{entry: bad}}))
    print(label, _check(path, name, entry), flush=True)
"""


@pytest.mark.parametrize("name, entry", TABLES, ids=lambda v: v)
def test_mutated_hash_tables_never_hang_or_crash(tmp_path, name, entry):
    """In a child process with a time limit: a probe loop in compiled code
    cannot be interrupted, so a hang must show as a timeout, a crash as a
    signal, not take the test run down."""
    root = str(pathlib.Path(__file__).parents[2])
    code = _TABLE_CODE.format(root=root, name=name, entry=entry, tmp=str(tmp_path))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    outcomes = dict(line.rsplit(" ", 1) for line in res.stdout.strip().splitlines())
    assert len(outcomes) == 8
    for label in ("empty", "one short", "all one key", "all keys, values 0", "rolled",
                  "wrong ndim", "three columns"):
        assert outcomes[label] == "refused", (label, outcomes)


# ------------------------------------------------------------- metadata
def _meta_cases():
    def set_(path, value):
        def edit(meta):
            obj = meta
            for k in path[:-1]:
                obj = obj[k]
            obj[path[-1]] = value
        return edit

    return [
        ("n_features 1e9", set_(["featurizer", "n_features"], 10**9), "n_features"),
        ("n_features 1e12", set_(["featurizer", "n_features"], 10**12), "n_features"),
        ("n_features float", set_(["featurizer", "n_features"], 3.5), "n_features"),
        ("labels a string", set_(["labels"], "B-LOC"), "labels"),
        ("one label more", lambda m: m["labels"].append("X"), "'A'"),
        ("one label less", lambda m: m["labels"].pop(), "W_indices|'A'"),
        ("labels repeated", lambda m: m["labels"].__setitem__(1, m["labels"][0]), "labels"),
        ("labels mixed", lambda m: m["labels"].__setitem__(0, 7), "labels"),
        ("format_version '3'", set_(["format_version"], "3"), "format_version"),
        ("format_version null", set_(["format_version"], None), "format_version"),
        ("format_version 3", set_(["format_version"], 3), "newer"),
        ("kind", set_(["kind"], "wordsegmenter"), "kind"),
        ("unknown key", set_(["surprise"], 1), "surprise"),
        ("input kind", set_(["featurizer", "input_kind"], "bytes"), "input_kind"),
        ("n_columns", set_(["featurizer", "n_columns"], 0), "n_columns"),
        ("strings", set_(["featurizer", "strings"], "abc"), "strings"),
        ("templates", set_(["featurizer", "templates"], {"type": "window"}), "templates"),
        ("decoding", set_(["crf", "params", "decoding"], "beam"), "decoding"),
        ("fitted attribute", set_(["crf", "fitted", "predict"], 1), "predict"),
        ("fitted type", set_(["crf", "fitted", "n_iter_"], "many"), "n_iter_"),
        ("template source", lambda m: m["featurizer"]["templates"][0]["parts"][0]
         .__setitem__(0, ["os", "system"]), "source"),
        ("template offset", lambda m: m["featurizer"]["templates"][0]["parts"][0]
         .__setitem__(1, 10**9), "offset"),
        ("template pieces", set_(["featurizer", "templates", 0, "pieces"], [99]), "pieces"),
    ]


@pytest.mark.parametrize("label, edit, says", _meta_cases(), ids=lambda v: v
                         if isinstance(v, str) else "")
@pytest.mark.parametrize("name", ["tagger", "segmenter"])
def test_mutated_metadata_is_refused_naming_what(tmp_path, name, label, edit, says):
    meta, arrays = _load(name)
    try:
        edit(meta)
    except (IndexError, KeyError):
        pytest.skip("not in this file")     # (e.g. the segmenter's first template has no parts)
    path = _write(tmp_path / "m.skcrf", meta, arrays)
    with pytest.raises(ModelFileError) as info:
        read_model(path)
    assert str(path) in str(info.value)
    assert re.search(says, str(info.value)), str(info.value)
    with pytest.raises(ModelFileError):
        load_model(path)


def test_dictionary_bounds_in_a_segmenter_file(tmp_path):
    meta, arrays = _load("segmenter")
    states = meta["featurizer"]["templates"]
    i = next(k for k, s in enumerate(states) if s["type"] == "dictionary")
    for key, value in (("max_len", 10**6), ("max_len", 0), ("n_words", -1),
                       ("digest", "x" * 30), ("folds", 0)):
        m = json.loads(json.dumps(meta))
        m["featurizer"]["templates"][i][key] = value
        path = _write(tmp_path / f"{key}.skcrf", m, arrays)
        with pytest.raises(ModelFileError, match=f"template{i}.*{key}"):
            read_model(path)


@pytest.mark.parametrize("raw, says", [
    (b"[1, 2, 3]", "not an skcrf model file"),
    (b"{" * 200_000, "unreadable metadata"),
    (b"[" * 200_000 + b"]" * 200_000, "nested"),
    (b"\xff\xfe", "unreadable metadata"),
    (json.dumps({"format": "skcrf-model", "format_version": 1,
                 "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}
                ).encode(), "nested"),
])
def test_unreadable_metadata(tmp_path, raw, says):
    path = _write(tmp_path / "m.skcrf", None, {}, raw_meta=raw)
    with pytest.raises(ModelFileError, match=says):
        read_model(path)


# ---------------------------------------------------------- the archive
def test_foreign_files_are_named_as_what_they_are(tmp_path):
    import pickle

    cases = {
        "pickle": (pickle.dumps({"coef_": np.zeros(3)}), "pickle"),
        "npy": (None, "single NumPy array"),
        "crfsuite": (b"lCRF\x00\x00\x00\x00" + bytes(100), "CRFsuite"),
        "crfpp": (b"version: 100\ncost-factor: 1\n", "CRF++"),
        "empty": (b"", "empty file"),
        "text": (b"hello world\n", "not an skcrf model file"),
    }
    for key, (body, says) in cases.items():
        path = tmp_path / key
        if body is None:
            np.save(path, np.zeros(3))
            path = path.with_suffix(".npy")
        else:
            path.write_bytes(body)
        with pytest.raises(ModelFileError, match=says) as info:
            read_model(path)
        assert "allow_pickle" not in str(info.value) and "pickle.load" not in str(info.value)


def test_archive_level_faults(tmp_path):
    meta, arrays = _load("tagger")
    base = _write(tmp_path / "base.skcrf", meta, arrays)
    # an unknown entry, and an entry that is not an array
    for extra, says in (("extra.npy", "unknown entry"), ("notes.txt", "not an array")):
        path = tmp_path / f"x-{extra}"
        path.write_bytes(base.read_bytes())
        with zipfile.ZipFile(path, "a") as z:
            z.writestr(extra, b"\x00" * 10)
        with pytest.raises(ModelFileError, match=says):
            read_model(path)
    # two __meta__ entries
    path = tmp_path / "twice.skcrf"
    path.write_bytes(base.read_bytes())
    with zipfile.ZipFile(path, "a") as z, pytest.warns(UserWarning):
        z.writestr("__meta__.npy", b"\x00")
    with pytest.raises(ModelFileError, match="twice"):
        read_model(path)
    # a truncated file
    path = tmp_path / "short.skcrf"
    path.write_bytes(base.read_bytes()[:-300])
    with pytest.raises(ModelFileError, match="short.skcrf"):
        read_model(path)


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    meta, arrays = _load("tagger")
    path = _write(tmp_path / "bomb.skcrf", meta, arrays)
    big = np.zeros(2**24, dtype=np.float64)          # 128 MiB of zeros, ~130 KB compressed
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as z, \
            z.open("oov.W_data.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array(f, big)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="implausible"):
            read_model(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20


def test_allocation_stays_within_what_the_file_declares(tmp_path):
    """n_features of 1e9 with consistent-looking arrays of that size cannot be
    written small; an inconsistent one is refused before anything is sized by
    it. Either way loading allocates about what the file holds."""
    meta, arrays = _load("tagger")
    meta["featurizer"]["n_features"] = 10**9
    path = _write(tmp_path / "big.skcrf", meta, arrays)
    declared = sum(i.file_size for i in zipfile.ZipFile(path).infolist())
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError):
            read_model(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * declared + 8 * 2**20


def test_dense_weights_beyond_what_the_file_warrants_are_refused(tmp_path, monkeypatch):
    import skcrf.io._validation as validation

    meta, arrays = _load("tagger")
    path = _write(tmp_path / "m.skcrf", meta, arrays)
    monkeypatch.setattr(validation, "_DENSE_FLOOR", 0)
    monkeypatch.setattr(validation, "_DENSE_FACTOR", 0.01)
    with pytest.raises(ModelFileError, match="dense weights"):
        read_model(path)
