"""Slow, obviously correct references the fast code is tested against.

``naive``: enumeration of every label sequence (log Z, marginals, Viterbi,
expected counts) for tiny inputs; ``logspace``: a NumPy log-space
forward-backward for long sequences; ``problems``: tiny random problems and
models built from given weights.
"""
