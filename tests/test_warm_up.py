"""What ``skcrf compile`` (skcrf._warm_up.compile_kernels) compiles: every
kernel specialisation that a fit and predict of a real problem use, whatever
its layout (dense or compact state weights, private or shared gradients),
threads, labels, L1 term and input type (lists of scipy matrices, a
``Sequences`` of int64 indices, binary ``Sequences``), so that after it no first fit
compiles. Checked on the dispatchers' signatures, in a new process (in this
one, earlier tests have loaded kernels the warm-up might miss): a fit that
needed a kernel for argument types the warm-up did not use adds one."""

import json
import os
import subprocess
import sys

from tests.probes import SIGNATURES

_PROBE = SIGNATURES + r'''
import json, sys, warnings
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp

from skcrf import LinearChainCRF, Sequences
from skcrf._training import loss
from skcrf._warm_up import _forced_layout, compile_kernels
from skcrf.feature_extraction import SequenceDictVectorizer

warnings.simplefilter("ignore")


def layout(name):
    # the layouts only large models take, forced as the warm-up forces them
    return nullcontext() if name == "dense" else _forced_layout(name)


taken = []
init = loss.CRFLoss.__init__


def recording(self, *args, **kwargs):
    init(self, *args, **kwargs)
    taken.append("compact" if self.compact else
                 "shared" if self._owned is not None else "dense")


loss.CRFLoss.__init__ = recording


def problem(kind, n_labels, rng):
    # 30 sequences; at 24 labels more state parameters than ELEMENT_BLOCK, so
    # that L-BFGS's passes run in several chunks on two threads
    lengths = rng.integers(2, 12, size=30)
    y = [[str(v) for v in rng.integers(0, n_labels, n)] for n in lengths]
    if kind == "csr":
        X = [sp.random(n, 200, density=0.05, random_state=i, format="csr")
             for i, n in enumerate(lengths)]
    elif kind == "csr64":      # what DictVectorizer makes of a large input
        m = sp.random(int(lengths.sum()), 200, density=0.05, random_state=0, format="csr")
        m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
        X = Sequences(m, lengths)
    else:
        X = SequenceDictVectorizer().fit_transform(
            [[{"w": f"w{rng.integers(50)}", "s": f"s{rng.integers(9)}"} for _ in range(n)]
             for n in lengths])
    return X, y


compile_kernels(segmenter=False)
rng = np.random.default_rng(0)
report = []
for name, n_jobs in [("dense", 1), ("dense", 2), ("compact", 1), ("compact", 2),
                     ("shared", 2)]:
    for kind in ("csr", "csr64", "binary"):
        del taken[:]
        before = signatures()
        for n_labels in (4, 24):
            for c1 in (0.0, 0.1):
                X, y = problem(kind, n_labels, rng)
                with layout(name):
                    crf = LinearChainCRF(max_iter=3, n_jobs=n_jobs, c1=c1).fit(X, y)
                crf.predict(X)
                crf.predict_marginals(X)
        new = {k: sorted(v - before.get(k, set())) for k, v in signatures().items()
               if v - before.get(k, set())}
        report.append([name, n_jobs, kind, taken[:], new])
print(json.dumps(report))
'''


def test_no_fit_compiles_after_the_warm_up():
    res = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         timeout=1200, env=dict(os.environ))
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(report) == 15
    for layout, n_jobs, kind, taken, new in report:
        assert taken == [layout] * 4, (layout, n_jobs, kind)   # the path under test
        assert new == {}, (layout, n_jobs, kind)
