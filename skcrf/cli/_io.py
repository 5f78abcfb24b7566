"""Input and output of the command line: files in an encoding, errors that
name the file and line, progress on stderr. NumPy-free."""

import codecs
import sys

__all__ = ["UserError", "Interrupted", "open_inputs", "progress", "stdout"]

#: the default encoding of input files: UTF-8, with or without a byte-order
#: mark (some SIGHAN files start with one, which would become text)
DEFAULT_ENCODING = "utf-8-sig"


class UserError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM: the command stops with ``message`` (what it left
    undone) and exit status ``status``."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message, self.status = message, status


def progress(msg):
    if sys.stderr is not None:
        print(msg, file=sys.stderr, flush=True)


def stdout():
    """The standard output, or a UserError when the process has none."""
    if sys.stdout is None:
        raise UserError("standard output is closed: nowhere to write.")
    return sys.stdout


def open_inputs(paths, encoding=DEFAULT_ENCODING):
    """Yield ``(name, lines)`` for each path (``-`` or none: standard input);
    ``lines`` iterates the file's lines, decoded, and a line that is not text
    in ``encoding`` raises a UserError naming the file and line."""
    check_encoding(encoding)
    if not paths:
        paths = ["-"]
    for path in paths:
        if path == "-":
            if sys.stdin is None:
                raise UserError("standard input is closed: give input files.")
            yield "<stdin>", _lines(sys.stdin.buffer, "<stdin>", encoding)
            continue
        try:
            fh = open(path, "rb")
        except OSError as exc:
            raise UserError(f"{path}: cannot read ({exc.strerror or exc}).") from None
        with fh:
            yield path, _lines(fh, path, encoding)


def check_encoding(encoding):
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UserError(f"--encoding {encoding}: no such encoding.") from None


def _lines(fb, name, encoding):
    """Decoded lines of a binary stream. Byte-oriented encodings (UTF-8, GBK,
    Latin-1, ...) are decoded a line at a time, so an error names its line;
    UTF-16 and UTF-32 (whose newlines are several bytes) through a decoder of
    the whole stream, counting lines as they come."""
    if codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
        decoder = codecs.getincrementaldecoder(encoding)()
        lineno, pending = 0, ""
        for chunk in iter(lambda: fb.read(1 << 16), b""):
            try:
                pending += decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                _bad_text(name, lineno + pending.count("\n") + 1, encoding, exc)
            *done, pending = pending.split("\n")
            for line in done:
                lineno += 1
                yield line + "\n"
        if pending:
            yield pending
        return
    first = True
    for lineno, raw in enumerate(fb, 1):
        try:
            line = raw.decode(encoding if first else _without_bom(encoding))
        except UnicodeDecodeError as exc:
            _bad_text(name, lineno, encoding, exc)
        first = False
        if "\x00" in line:
            raise UserError(f"{name}:{lineno}: binary data (a NUL byte), not {encoding} text.")
        yield line


def _without_bom(encoding):
    return "utf-8" if codecs.lookup(encoding).name == "utf-8-sig" else encoding


def _bad_text(name, lineno, encoding, exc):
    raise UserError(f"{name}:{lineno}: not {encoding} text ({exc.reason} at byte "
                    f"{exc.start}); give the file's encoding with --encoding "
                    "(e.g. --encoding gbk).")
