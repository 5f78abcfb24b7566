"""The one-pass key indexer against a plain Python dictionary."""

import numpy as np
import pytest

from skcrf.feature_extraction._dictionary import dictionary_matches
from skcrf.feature_extraction._hashing import keys_to_csr, vocabulary_table
from skcrf.feature_extraction._indexing import SlotIndexer, index_keys
from skcrf.feature_extraction._window_keys import pair_ids


def _reference(keys):
    cols, counts, first = {}, [], []
    indptr, indices = [0], []
    for r, row in enumerate(keys.tolist()):
        for s, k in enumerate(row):
            if k == 0:
                continue
            if k not in cols:
                cols[k] = len(cols)
                counts.append(0)
                first.append(r * keys.shape[1] + s)
            counts[cols[k]] += 1
            indices.append(cols[k])
        indptr.append(len(indices))
    return list(cols), counts, first, indptr, indices


def _assert_is_reference(index, keys):
    """``index`` is what :func:`_reference` gives for ``keys``."""
    ref_keys, counts, first, indptr, indices = _reference(keys)
    assert index.keys.tolist() == ref_keys
    assert index.counts.tolist() == counts
    assert index.first.tolist() == first
    assert index.indptr.tolist() == indptr
    assert index.indices.tolist() == indices


@pytest.mark.parametrize("initial_size", [2, 16, 1 << 16])
def test_index_keys_numbers_keys_in_first_occurrence_order(initial_size):
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 300, size=(500, 7)).astype(np.uint64)   # 0 = no feature
    keys[:, 3] = 0
    ref_keys, counts, first, indptr, indices = _reference(keys)
    index = index_keys(keys, initial_size=initial_size)   # 2 and 16: grows many times
    _assert_is_reference(index, keys)
    assert index.indices.dtype == np.int32
    # the vocabulary's look-up table gives every key its column
    lookup_indptr, lookup_indices = keys_to_csr(keys, vocabulary_table(index.keys))
    assert lookup_indptr.tolist() == indptr and lookup_indices.tolist() == indices


@pytest.mark.parametrize("direct_max", [16, 64, 1 << 16])
def test_index_keys_in_buckets_equals_the_reference(monkeypatch, direct_max):
    """Slots with more distinct keys than a table of ``_DIRECT_MAX`` rows holds
    are numbered in buckets; a key in several slots still gets one column,
    numbered where it first occurs."""
    monkeypatch.setattr(SlotIndexer, "_DIRECT_MAX", direct_max)
    rng = np.random.default_rng(direct_max)
    keys = rng.integers(0, 5000, size=(3000, 6)).astype(np.uint64)
    keys[:, 1] = rng.integers(0, 3, size=3000)            # few keys (0: none)
    keys[rng.random(keys.shape) < 0.2] = 0
    keys[:, 4] = keys[:, 2] + np.uint64(1)                # shares keys with slot 2
    index = index_keys(keys)
    _assert_is_reference(index, keys)


def test_slot_indexer_with_disjoint_slots_equals_the_reference(monkeypatch):
    """With ``disjoint_slots`` (what a template set promises) the merge of keys
    across slots is skipped; the result must not change when it holds."""
    monkeypatch.setattr(SlotIndexer, "_DIRECT_MAX", 64)
    rng = np.random.default_rng(7)
    keys = rng.integers(1, 400, size=(2000, 5)).astype(np.uint64)
    keys += (np.arange(5, dtype=np.uint64) * np.uint64(1000))[None, :]   # slot s: s*1000 + ..
    keys[rng.random(keys.shape) < 0.3] = 0
    indexer = SlotIndexer(*keys.shape, disjoint_slots=True)
    for s in range(keys.shape[1]):
        indexer.add(keys[:, s], s)
    index = indexer.finish()
    _assert_is_reference(index, keys)


def test_slot_indexer_with_coded_slots_equals_the_reference(monkeypatch):
    """Slots given as uint8 codes (add_codes: an entry per code, no hashing)
    mixed with keyed slots: the index must be the one of the keys the codes
    stand for."""
    monkeypatch.setattr(SlotIndexer, "_DIRECT_MAX", 64)
    rng = np.random.default_rng(11)
    n_rows, n_slots = 1500, 6
    coded = np.array([False, True, True, False, True, False])
    code_keys = {s: np.concatenate([[0], 10_000 * (s + 1) + np.arange(1, 9)]).astype(np.uint64)
                 for s in np.flatnonzero(coded)}
    codes = {s: rng.integers(0, 9, size=n_rows).astype(np.uint8) for s in code_keys}
    for c in codes.values():
        c[rng.random(n_rows) < 0.4] = 0
    keys = rng.integers(1, 300, size=(n_rows, n_slots)).astype(np.uint64)
    keys += (np.arange(n_slots, dtype=np.uint64) * np.uint64(1000))[None, :]
    keys[rng.random(keys.shape) < 0.3] = 0
    for s, c in codes.items():
        keys[:, s] = code_keys[s][c]
    indexer = SlotIndexer(n_rows, n_slots, disjoint_slots=True, coded_slots=coded)
    for s in range(n_slots):
        if coded[s]:
            indexer.add_codes(codes[s], code_keys[s], s)
        else:
            indexer.add(keys[:, s], s)
    with pytest.raises(ValueError, match="declared coded"):
        indexer.add(keys[:, 1], 1)
    with pytest.raises(ValueError, match="not declared coded"):
        indexer.add_codes(codes[1], code_keys[1], 0)
    index = indexer.finish()
    _assert_is_reference(index, keys)


def test_index_keys_keep_renumbers_and_drops_columns():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 50, size=(200, 5)).astype(np.uint64)
    index = index_keys(keys, initial_size=4)
    mask = index.counts >= 20
    kept = index.keep(mask)
    # the kept vocabulary's table knows the kept keys, and only them
    assert keys_to_csr(keys, vocabulary_table(kept.keys))[1].tolist() == \
        kept.indices.tolist()
    assert kept.keys.tolist() == index.keys[mask].tolist()
    new_col = {int(k): i for i, k in enumerate(kept.keys)}
    for r in range(keys.shape[0]):
        want = [new_col[int(k)] for k in keys[r] if k != 0 and int(k) in new_col]
        assert kept.indices[kept.indptr[r]:kept.indptr[r + 1]].tolist() == want


def test_index_keys_of_no_keys():
    index = index_keys(np.zeros((3, 2), dtype=np.uint64))
    assert index.keys.size == 0 and index.indices.size == 0
    assert index.indptr.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("X", [["上海浦东开发与法制建设同步", "", "一", "中文分词很有意思"],
                               [["Madrid", "NP"], ["en", "PREP"], [".", "Fp"]]])
def test_window_templates_in_one_pass_give_each_templates_keys(X):
    """TemplateSet.keys fills all window templates in one pass; each column must
    equal what the template's own write_keys gives."""
    from skcrf import SequenceFeaturizer
    from skcrf.feature_extraction._units import read_units

    if isinstance(X[1], list):
        X = [X, X[:1]]
    f = SequenceFeaturizer(char_classes=isinstance(X[0], str))
    units = read_units(X)
    tset = f._make_templates(units)
    assert sum(type(t).__name__ == "Window" for t in tset.templates) > 3
    together = tset.keys(units)
    sources, row = tset._sources(units)
    one_by_one = np.zeros_like(together)
    for t, s0 in zip(tset.templates, tset.slot0[:-1]):
        t.write_keys(units, sources, row, one_by_one, int(s0))
    assert np.count_nonzero(together) > 0
    np.testing.assert_array_equal(together, one_by_one)


@pytest.mark.parametrize("values", [[], [5], [3, 1, 3, 0, 7], [2**40, 3, 2**40],
                                    [-1, 4, -1], list(range(1000, 0, -3)) * 2])
def test_unique_inverse_is_numpys(values):
    from skcrf.feature_extraction._units import unique_inverse

    values = np.array(values, dtype=np.int64)
    uniq, inv = unique_inverse(values)
    want_uniq, want_inv = np.unique(values, return_inverse=True)
    assert uniq.tolist() == want_uniq.tolist()
    assert inv.tolist() == want_inv.reshape(-1).tolist()


def test_accessor_variety_counts_distinct_neighbours_as_python_does():
    from skcrf.feature_extraction._accessor_variety import accessor_variety
    from skcrf.feature_extraction._accessor_variety import ngram_key as _ngram_key

    rng = np.random.default_rng(3)
    texts = ["".join(rng.choice(list("abcde"), size=rng.integers(0, 12))) for _ in range(60)]
    cps = np.array([ord(c) for t in texts for c in t], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])]).astype(np.int64)
    keys, av = accessor_variety(cps, offsets, 4)
    got = dict(zip(keys.tolist(), av.tolist()))
    left, right = {}, {}
    for k, t in enumerate(texts):
        for n in range(2, 5):
            for i in range(len(t) - n + 1):
                g = t[i:i + n]
                # a sequence boundary is a new neighbour each time
                left.setdefault(g, set()).add(t[i - 1] if i else ("^", k, i))
                right.setdefault(g, set()).add(t[i + n] if i + n < len(t) else ("$", k, i))
    assert len(got) == len(left)
    for g in left:
        start = offsets[[k for k, t in enumerate(texts) if g in t][0]]
        t = next(t for t in texts if g in t)
        key = int(_ngram_key(cps, int(start) + t.index(g), len(g)))
        assert got[key] == min(len(left[g]), len(right[g])), g


@pytest.mark.parametrize("n_folds, unlabeled", [(2, False), (3, True), (7, True)])
def test_jackknifed_accessor_variety_equals_statistics_rebuilt_without_each_fold(
        n_folds, unlabeled):
    """The one-pass leave-one-fold-out AV against rebuilding the statistics from
    the other folds (plus unlabeled text) for every fold."""
    from skcrf.feature_extraction._accessor_variety import AccessorVariety, accessor_variety
    from skcrf.feature_extraction._accessor_variety import av_bin as _bin
    from skcrf.feature_extraction._accessor_variety import ngram_key as _ngram_key
    from skcrf.feature_extraction._jackknife import jackknife_folds
    from skcrf.feature_extraction._units import read_units

    rng = np.random.default_rng(n_folds)
    alphabet = list("abcdefgh")
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 14))) for _ in range(40)]
    extra = ["".join(rng.choice(alphabet, size=9)) for _ in range(5)] if unlabeled else []
    units = read_units(texts)
    cps, offsets = units.ids[0], units.offsets
    tpl = AccessorVariety([cps[offsets[i]:offsets[i + 1]] for i in range(len(texts))],
                          extra, max_n=4, n_bins=4, folds=n_folds)
    keys = np.zeros((units.n_tokens, tpl.n_slots), dtype=np.uint64)
    tpl.write_keys(units, None, None, keys, 0, fitting=True)
    bin_of = {int(k): b for k, b in zip(*_all_bin_keys(tpl))}
    got = np.vectorize(lambda k: bin_of[int(k)] if k else -1)(keys)

    fold = jackknife_folds(len(texts), n_folds)
    want = np.full_like(got, -1)
    for f in range(n_folds):
        other = [t for t, g in zip(texts, fold) if g != f] + extra
        o_units = read_units(other or [""])
        k, av = accessor_variety(o_units.ids[0], o_units.offsets, 4)
        stats = dict(zip(k.tolist(), av.tolist()))
        for s in np.flatnonzero(fold == f):
            a, b = offsets[s], offsets[s + 1]
            for i in range(a, b):
                for n in range(2, 5):
                    if i + n > b:
                        break
                    bn = _bin(stats.get(int(_ngram_key(cps, i, n)), 0), 4)
                    want[i, 2 * (n - 2)] = bn
                    want[i + n - 1, 2 * (n - 2) + 1] = bn
    np.testing.assert_array_equal(got, want)
    assert (got > 0).any()          # the test text has n-grams in several contexts


@pytest.mark.parametrize("folds, unlabeled", [(1, False), (1, True), (3, True)])
def test_accessor_variety_bins_of_fitting_equal_the_table_look_up(folds, unlabeled):
    """fit_transform reads the bins the statistics pass computed for every
    training position; without folds they must equal what looking the
    training text up in the saved table gives (transform), and with folds the
    transform of the training text must be the non-jackknifed statistics."""
    from skcrf.feature_extraction._accessor_variety import AccessorVariety
    from skcrf.feature_extraction._units import read_units

    rng = np.random.default_rng(folds + 10 * unlabeled)
    alphabet = list("abcdefg")
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 16))) for _ in range(50)]
    extra = ["".join(rng.choice(alphabet, size=11)) for _ in range(6)] if unlabeled else []
    units = read_units(texts)
    cps, offsets = units.ids[0], units.offsets
    seqs = [cps[offsets[i]:offsets[i + 1]] for i in range(len(texts))]

    def keys_of(tpl, fitting):
        keys = np.zeros((units.n_tokens, tpl.n_slots), dtype=np.uint64)
        tpl.write_keys(units, None, None, keys, 0, fitting=fitting)
        return keys

    tpl = AccessorVariety(seqs, extra, max_n=4, n_bins=4, folds=folds)
    fitted = keys_of(tpl, True)
    looked_up = keys_of(tpl, False)
    if folds == 1:
        np.testing.assert_array_equal(fitted, looked_up)
    else:
        plain = AccessorVariety(seqs, extra, max_n=4, n_bins=4, folds=1)
        np.testing.assert_array_equal(looked_up, keys_of(plain, False))
        assert (fitted != looked_up).any()       # jackknifed: some bins differ


def _all_bin_keys(tpl):
    from skcrf.feature_extraction._accessor_variety import _bin_key

    tids = tpl._tids()
    pairs = [(_bin_key(tids[k], b), b) for k in range(tpl.n_slots) for b in range(tpl.n_bins)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def test_pair_ids_number_distinct_pairs():
    """pair_ids (counting sort on the first id, stamps on the second) gives
    equal ids to equal pairs and only to them, -1 where either id is -1, and
    the first position of each id."""
    rng = np.random.default_rng(2)
    a = rng.integers(-1, 7, size=500).astype(np.int32)
    b = rng.integers(-1, 5, size=500).astype(np.int32)
    ids, first = pair_ids(a, b, 7, 5)
    seen = {}
    for x, (u, v) in enumerate(zip(a.tolist(), b.tolist())):
        if u < 0 or v < 0:
            assert ids[x] == -1
            continue
        seen.setdefault((u, v), x)
        assert first[ids[x]] == seen[(u, v)]
    assert len(set(ids[ids >= 0].tolist())) == len(seen) == first.size


def test_dictionary_matches_are_every_match_even_past_the_first_allocation():
    """Every (start, length) whose text is a dictionary word, per sequence, in
    text order, against a brute-force scan; the text has five matches per
    character, past the two per character first allocated, so the scan stops
    full and resumes twice."""
    from skcrf.feature_extraction._dictionary import _word_table

    sents = ["a" * 20, "ba", "", "aab" * 7]
    words = ["a", "aa", "aaa", "aaaa", "aaaaa", "ab", "bab"]
    n_words, table, _ = _word_table(words)
    order = sorted(words)
    cps = np.array([ord(c) for c in "".join(sents)], dtype=np.int64)
    offsets = np.cumsum([0] + [len(s) for s in sents]).astype(np.int64)
    start, length, word, seq = dictionary_matches(cps, offsets, table)
    expected = [(offsets[q] + i, k, order.index(s[i:i + k]) + 1, q)
                for q, s in enumerate(sents) for i in range(len(s))
                for k in range(1, len(s) - i + 1) if s[i:i + k] in words]
    assert len(expected) > 2 * cps.size
    assert list(zip(start.tolist(), length.tolist(), word.tolist(), seq.tolist())) \
        == [tuple(int(v) for v in e) for e in expected]
