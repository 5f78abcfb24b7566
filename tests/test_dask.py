"""Training and model selection on a Dask cluster (LocalCluster, worker processes)."""

import os
import signal

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from skcrf import LinearChainCRF, SequenceDictVectorizer, SequenceFeaturizer
from skcrf.datasets import load_sample_cws
from skcrf.segmentation import words_to_tags

dask = pytest.importorskip("dask", reason="dask[distributed] comes with the [test] extra")
distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402

from skcrf.dask import fit_pipeline, predict_bag, warm_up  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def cws():
    sents = load_sample_cws()[:300]
    X = ["".join(s) for s in sents]
    y = [words_to_tags(s) for s in sents]
    return X[:250], y[:250], X[250:]


@pytest.mark.parametrize("n_partitions", [1, 2, 3])
def test_same_optimum_as_a_local_fit(client, cws, n_partitions):
    X, y, X_test = cws
    pipe = make_pipeline(SequenceFeaturizer(min_freq=2), LinearChainCRF(c2=0.5, tol=1e-7))
    local = clone(pipe).fit(X, y)
    bag = db.from_sequence(list(zip(X, y)), npartitions=n_partitions)
    fitted = fit_pipeline(pipe, bag, client=client)
    assert fitted is pipe
    assert pipe[-1].objective_ == pytest.approx(local[-1].objective_, rel=1e-6)
    assert pipe.predict(X_test) == local.predict(X_test)
    np.testing.assert_array_equal(pipe[0].get_feature_names_out(),
                                  local[0].get_feature_names_out())
    assert pipe[-1].n_params_ == local[-1].n_params_
    assert pipe[-1].dask_evaluations_ >= pipe[-1].n_iter_


@pytest.mark.parametrize("n_partitions", [1, 2, 3])
def test_dict_vectorizer_pipeline_on_a_synthetic_corpus(client, n_partitions):
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(60)]
    data = []
    for _ in range(200):
        T = int(rng.integers(2, 9))
        seq = [words[int(k)] for k in rng.integers(0, 60, size=T)]
        feats = [{"w": w, "suf": w[-1], "even": int(w[1:]) % 2 == 0, "len": len(w) / 2}
                 for w in seq]
        data.append((feats, ["A" if int(w[1:]) < 20 else "B" for w in seq]))
    pipe = make_pipeline(SequenceDictVectorizer(), LinearChainCRF(c2=0.3, tol=1e-7))
    local = clone(pipe).fit([x for x, _ in data], [y for _, y in data])
    fit_pipeline(pipe, db.from_sequence(data, npartitions=n_partitions), client=client)
    assert pipe[-1].objective_ == pytest.approx(local[-1].objective_, rel=1e-6)
    assert pipe.predict([x for x, _ in data[:20]]) == local.predict([x for x, _ in data[:20]])
    # prediction on a bag, partition by partition on the workers
    got = predict_bag(pipe, db.from_sequence(data[:30], npartitions=2)).compute()
    assert got == local.predict([x for x, _ in data[:30]])


def test_a_worker_lost_mid_fit_is_recovered(client, cws):
    X, y, X_test = cws
    pipe = make_pipeline(SequenceFeaturizer(min_freq=2), LinearChainCRF(c2=0.5, tol=1e-7))
    local = clone(pipe).fit(X, y)
    pids = list(client.run(os.getpid).values())
    killed = []

    def kill_one(record, theta):
        if record.iteration == 3 and not killed:
            os.kill(pids[0], signal.SIGKILL)      # the nanny starts a new worker
            killed.append(pids[0])

    bag = db.from_sequence(list(zip(X, y)), npartitions=3)
    fit_pipeline(pipe, bag, client=client, callback=kill_one)
    assert killed
    assert pipe[-1].objective_ == pytest.approx(local[-1].objective_, rel=1e-6)
    assert pipe.predict(X_test) == local.predict(X_test)
    client.wait_for_workers(2, timeout=60)


@pytest.mark.parametrize("option", [{"accessor_variety": 3}, {"adjacent_pmi": True}])
def test_refused_options_leave_the_pipeline_unfitted(client, cws, option):
    X, y, _ = cws
    bag = db.from_sequence(list(zip(X, y)), npartitions=2)
    pipe = make_pipeline(SequenceFeaturizer(**option), LinearChainCRF())
    with pytest.raises(ValueError, match=list(option)[0]):
        fit_pipeline(pipe, bag, client=client)
    assert not hasattr(pipe[-1], "coef_")


def _threads_in_task(n_jobs):
    from skcrf._kernels.parallel import resolve_n_threads

    return resolve_n_threads(n_jobs)


def test_search_under_the_dask_joblib_backend_caps_threads(client, cws):
    try:
        from joblib import parallel_config
    except ImportError:                       # joblib < 1.3
        from joblib import parallel_backend as parallel_config
    from sklearn.model_selection import GridSearchCV, KFold

    from skcrf.metrics import segmentation_f1_scorer

    X, y, _ = cws
    # inside a worker of 1 thread, even n_jobs=-1 means 1 kernel thread
    assert client.submit(_threads_in_task, -1, pure=False).result() == 1
    search = GridSearchCV(make_pipeline(SequenceFeaturizer(char_type_offsets=()),
                                        LinearChainCRF(n_jobs=-1)),
                          {"linearchaincrf__c2": [0.3, 3.0]},
                          scoring=segmentation_f1_scorer, cv=KFold(2))
    with parallel_config(backend="dask"):
        search.fit(X[:120], y[:120])
    assert set(search.cv_results_["param_linearchaincrf__c2"]) == {0.3, 3.0}
    assert np.all(search.cv_results_["mean_test_score"] > 0.5)


def test_warm_up_runs_on_every_worker(client):
    took = warm_up(client)
    assert set(took) == set(client.scheduler_info()["workers"])
    assert all(t > 0 for t in took.values())


def test_a_cache_directory_others_may_write_to_is_reported(tmp_path, monkeypatch):
    from skcrf.dask import unsafe_cache_dir

    cache = tmp_path / "numba"
    cache.mkdir()
    monkeypatch.setattr("numba.core.config.CACHE_DIR", str(cache))
    cache.chmod(0o700)
    assert unsafe_cache_dir() is None
    for mode in (0o777, 0o1777, 0o770):
        cache.chmod(mode)
        assert unsafe_cache_dir() == str(cache)
    cache.chmod(0o700)
    monkeypatch.setattr("numba.core.config.CACHE_DIR", "")
    assert unsafe_cache_dir() is None


# ------------------------------------------------------------ bad records
@pytest.mark.parametrize("case", ["too long", "too short", "a string", "int labels",
                                  "not a pair", "bad sequence"])
def test_every_malformed_record_is_refused_naming_its_index_in_the_bag(client, cws, case):
    X, y, _ = cws
    data = [(x, list(lab)) for x, lab in zip(X[:100], y[:100])]
    where, says = {"too long": (50, r"y\[50\] has"), "too short": (70, r"y\[70\] has"),
                   "a string": (30, r"y\[30\] is a single label"),
                   "int labels": (80, "80"), "not a pair": (60, "record 60"),
                   "bad sequence": (90, r"X\[90\]")}[case]
    if case == "too long":
        data[where][1].append("S")
    elif case == "too short":
        data[where][1].pop()
    elif case == "a string":
        data[where] = (data[where][0], "B-LOC")
    elif case == "int labels":
        data[where] = (data[where][0], [0] * len(data[where][1]))
    elif case == "not a pair":
        data[where] = data[where][0]
    else:
        data[where] = (12345, data[where][1])
    bag = db.from_sequence(data, npartitions=4)     # record `where` is not in the first
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=5))
    with pytest.raises((ValueError, TypeError), match=says):
        fit_pipeline(pipe, bag, client=client)
    assert not hasattr(pipe[-1], "coef_")


def test_int_labels_throughout_and_an_empty_first_partition(client, cws):
    X, y, X_test = cws
    as_int = {"B": 0, "M": 1, "E": 2, "S": 3}
    data = [(x, [as_int[t] for t in lab]) for x, lab in zip(X[:120], y[:120])]
    parts = [db.from_sequence([], npartitions=1), db.from_sequence(data, npartitions=2)]
    bag = db.concat(parts)
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=20))
    local = clone(pipe).fit([x for x, _ in data], [lab for _, lab in data])
    fit_pipeline(pipe, bag, client=client)
    assert pipe[-1].classes_.tolist() == [0, 1, 2, 3]
    assert pipe.predict(X_test[:5]) == local.predict(X_test[:5])
