"""Training: the objective, its parameter layout, the penalty and the optimisers.

Owns what ``LinearChainCRF.fit`` minimises and how: which (feature, label)
pairs are parameters (``layout``), the data term of a shard of sequences and
its gradient (``loss``: :class:`~.loss.CRFLoss`, summed with the penalty by
:class:`~.loss.Objective`; a large sparse model's state weights as one record
per feature, ``records``), the elastic-net penalty (``penalty``), L-BFGS and
OWL-QN with the Moré–Thuente line search (``optimize``, ``lbfgs``,
``line_search``; scipy's L-BFGS-B as the reference solver) and early stopping
on held-out sequences (``early_stopping``).

May import: :mod:`skcrf._kernels`, :mod:`skcrf._inference`, the base modules
(``skcrf._arrays``), NumPy, SciPy, threadpoolctl and scikit-learn's
exceptions; never the estimators, feature extraction, io or the command line.
A cluster fit (:mod:`skcrf.dask`) uses the same pieces with remote data terms.
"""
