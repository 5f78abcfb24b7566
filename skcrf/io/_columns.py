"""CRF++ column data: one token per line, whitespace-separated columns,
the label last (when labelled), a blank line between sequences.

:func:`iter_column_blocks` streams a file in blocks of sequences (the command
line tags arbitrarily large inputs this way); :func:`read_columns` reads
whole files. Errors (:class:`~skcrf.exceptions.TemplateError`) name the file
and line. NumPy-free.
"""

from ..exceptions import TemplateError


def iter_column_blocks(lines, name="<data>", labelled=True, block_size=1000):
    """Read CRF++ column data from an iterable of lines, ``block_size``
    sequences at a time (streaming).

    Yields ``(tokens, labels, raw)`` per block: ``tokens`` a list of
    sequences of column tuples (without the label when ``labelled``),
    ``labels`` their label lists (None when not ``labelled``), ``raw`` the
    sequences' input lines (for output in CRF++'s layout). Lines must all
    have the same number of columns; errors name the file and line.
    """
    tokens, labels, raw = [], [], []
    cur, cur_y, cur_raw = [], [], []
    n_cols = None
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\n").rstrip("\r")
        cols = line.split()
        if not cols:
            if cur:
                tokens.append(cur)
                labels.append(cur_y)
                raw.append(cur_raw)
                cur, cur_y, cur_raw = [], [], []
                if len(tokens) >= block_size:
                    yield tokens, (labels if labelled else None), raw
                    tokens, labels, raw = [], [], []
            continue
        if n_cols is None:
            n_cols = len(cols)
            if labelled and n_cols < 2:
                raise TemplateError(f"{name}:{lineno}: a training line needs at least "
                                    "one feature column and the label, got one column.")
        elif len(cols) != n_cols:
            raise TemplateError(f"{name}:{lineno}: {len(cols)} columns, but the lines "
                                f"before have {n_cols}.")
        if labelled:
            cur.append(tuple(cols[:-1]))
            cur_y.append(cols[-1])
        else:
            cur.append(tuple(cols))
        cur_raw.append(line)
    if cur:
        tokens.append(cur)
        labels.append(cur_y)
        raw.append(cur_raw)
    if tokens:
        yield tokens, (labels if labelled else None), raw


def read_columns(paths, labelled=True):
    """All sequences of CRF++ column files: ``(tokens, labels)``."""
    tokens, labels = [], []
    for path in paths:
        with open(path, encoding="utf-8-sig") as fh:
            for t, y, _ in iter_column_blocks(fh, path, labelled):
                tokens += t
                if labelled:
                    labels += y
    return tokens, (labels if labelled else None)
