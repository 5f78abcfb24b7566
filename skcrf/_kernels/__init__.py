"""Numba kernels: everything that runs per token, compiled (the lowest layer).

Owns the compiled passes over sequences — emission scores, forward-backward
(one sequence, or eight side by side in SIMD lanes), expected and empirical
feature counts, the objective's data term, Viterbi (with pruned steps from
17 labels on, :mod:`.decode_pruned`), marginals, exact k-best —
and how they are spread over threads (:mod:`.parallel`).

May import: NumPy, Numba, llvmlite, and its own modules. Never SciPy,
scikit-learn or any other part of skcrf (checked by
``tests/test_architecture.py``).

Conventions. Every kernel takes only contiguous arrays and scalars:

* the token features as CSR arrays ``indptr`` (int64, n_tokens + 1),
  ``indices`` (int32) and ``data`` (float64), and ``offsets`` (int64,
  n_sequences + 1): sequence ``s`` owns token rows ``offsets[s]:offsets[s + 1]``
  (:class:`skcrf._arrays.KernelArrays`). Binary features (every value 1: what
  :class:`~skcrf.SequenceFeaturizer` gives) come as a ``data`` of one element,
  1.0, instead of one per non-zero: kernels read value p as
  ``data[p & _value_mask(data, indices)]``;
* the state weights as a dense feature-major matrix ``W`` of shape
  ``(n_features, n_labels)`` or, in the training objective of a large model
  with few parameters per feature, flat records ``R`` (one per feature: its
  parameters' labels and weights, or where its dense row is; see
  :mod:`skcrf._training.records`), the column indices then replaced by the
  offsets of the non-zeros' records;
* transition weights ``A[from, to]`` and start / end weights; -inf forbids.

Each pass over sequences is a chunk kernel ``*_chunk(c, bounds, ...)`` plus
a ``prange`` driver ``*_parallel(bounds, ...)``; chunks that accumulate own a
slice of every gradient buffer, so no driver needs atomics. The Python-side
entry points are :mod:`.inference` (decoding) and the training objective in
:mod:`skcrf._training.loss`. :mod:`.compile_helper` compiles kernels ahead in
helper processes on a cold cache (``skcrf demo``'s first run).
"""
