"""CRF++ template files as skcrf templates.

A CRF++ template file holds one template per line:

* ``U<id>:<text with %x[row,col] macros>`` — a unigram (state) feature: the
  expanded text, e.g. ``U01:%x[-1,0]/%x[0,1]`` -> ``U01:the/DT``. Any number
  of macros, any rows (offsets from the current token), any columns, mixed
  with literal text; a line without macro is a constant feature;
* ``B`` — label bigrams. skcrf always learns transition weights, so ``B``
  lines change nothing; a ``B`` line with macros (transition weights that
  depend on the observation) is refused: skcrf has no such features;
* ``#`` comments and blank lines.

:func:`parse_template` turns such a file into :class:`~._templates.Window`
templates (feature names as CRF++ writes them, padding as ``_B-1`` / ``_B+1``);
errors (:class:`~skcrf.exceptions.TemplateError`) name the file and line.
:data:`PRESETS` are ready templates for the command line. The data files
are read by :mod:`skcrf.io._columns`.
"""

import os
import re

from ..exceptions import TemplateError
from ._templates import Window, crfpp_padding
from ._units import MAX_OFFSET

_MACRO = re.compile(r"%x\[\s*(-?\d+)\s*,\s*(\d+)\s*\]")


def parse_template(template, n_columns=None):
    """Parse CRF++ template text (or a path to a template file).

    Parameters
    ----------
    template : str
        A path to a template file, or the template text itself (it is taken
        as text when it contains a newline or no such file exists).
    n_columns : int, default=None
        Number of feature columns of the data (without the label): macros
        naming another column are refused.

    Returns
    -------
    templates : list of Window
    """
    name, text = _template_text(template)
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{name}:{lineno}"
        kind = line[0]
        if kind not in "UB":
            raise TemplateError(f"{where}: a template line starts with U (unigram) or B "
                                f"(bigram), got {line!r}.")
        macros = list(_MACRO.finditer(line))
        rest = _MACRO.sub("", line)
        if "%" in rest:
            bad = rest[rest.index("%"):][:12]
            raise TemplateError(f"{where}: bad macro near {bad!r}; write %x[row,col], "
                                "e.g. %x[-1,0].")
        if kind == "B":
            if macros:
                raise TemplateError(
                    f"{where}: {line!r} makes transition weights depend on the "
                    "observation, which skcrf does not support; use a plain 'B' line "
                    "(label bigrams are always learned) and U lines for the observations.")
            continue
        parts, pieces, pos = [], [], 0
        for k, m in enumerate(macros):
            row, col = int(m.group(1)), int(m.group(2))
            if abs(row) > MAX_OFFSET:
                raise TemplateError(f"{where}: row {row} is out of range: rows are "
                                    f"offsets from -{MAX_OFFSET} to {MAX_OFFSET}.")
            if n_columns is not None and col >= n_columns:
                raise TemplateError(f"{where}: column {col} does not exist: the data "
                                    f"has {n_columns} feature column(s) (0 to "
                                    f"{n_columns - 1}) before the label.")
            pieces.append(line[pos:m.start()])
            pieces.append(k)
            parts.append((("col", col), row))
            pos = m.end()
        pieces.append(line[pos:])
        window = Window(parts, [p for p in pieces if p != ""], padding=crfpp_padding,
                        key="crfpp|" + line)
        window.where = where
        out.append(window)
    if not out:
        raise TemplateError(f"{name}: no U (unigram) template line: nothing to learn from.")
    return out


def _template_text(template):
    if not isinstance(template, str):
        raise TypeError(f"template must be a path or the template text, got "
                        f"{type(template).__name__}.")
    if "\n" not in template and os.path.isfile(template):
        with open(template, encoding="utf-8-sig") as fh:
            return template, fh.read()
    if "\n" not in template and not template.lstrip().startswith(("U", "B", "#")):
        raise TemplateError(f"template {template!r} is neither a file nor template text.")
    return "<template>", template


#: built-in templates for ``skcrf train -t NAME``: CRF++ text for column data
PRESETS = {
    # the CRF++ chunking example's templates (words and POS tags around the token)
    "chunk": """# words
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]
# POS tags
U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]
U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]
B
""",
    # characters and character bigrams (one character per line)
    "cws": """U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-2,0]%x[-1,0]
U06:%x[-1,0]%x[0,0]
U07:%x[0,0]%x[1,0]
U08:%x[1,0]%x[2,0]
U09:%x[-1,0]%x[1,0]
B
""",
}
