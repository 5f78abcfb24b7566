"""Running one command: its module, exit statuses, Ctrl-C and SIGTERM, closed
streams. NumPy-free."""

import os
import signal
import sys
from importlib import import_module

from ..exceptions import ModelFileError, TemplateError
from ._io import Interrupted, UserError
from ._parser import parser

__all__ = ["main"]

#: command -> the module that runs it (imported only for that command)
COMMANDS = {"train": "._train", "tag": "._tag", "segment": "._tag", "eval": "._eval",
            "dump": "._dump", "demo": "._demo", "compile": "._compile"}


# commands that always run the Numba kernels (tag, dump and eval may not need them)
_COMPILING = ("train", "demo", "compile")


def main(argv=None):
    """Run the command line; returns the exit status (0, 2 for a user error,
    130 / 143 for Ctrl-C / SIGTERM)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:             # --help, --version, a bad option
        return exc.code if isinstance(exc.code, int) else 2
    run = getattr(import_module(COMMANDS[args.command], __package__), "cmd_" + args.command)
    previous = _on_sigterm()
    try:
        if args.command in _COMPILING:
            # these commands compile kernels on a first run: say so on stderr
            from .._compile_notice import compile_notice

            with compile_notice(sys.stderr):
                return run(args)
        return run(args)
    except UserError as exc:
        return _error(args, exc)
    except (ModelFileError, TemplateError) as exc:
        return _error(args, exc)
    except (ValueError, TypeError) as exc:
        # bad input found deeper down (a data line, a model's labels, ...)
        return _error(args, exc)
    except Interrupted as exc:
        _say(f"skcrf {args.command}: {exc.message}")
        return exc.status
    except KeyboardInterrupt:
        _say(f"skcrf {args.command}: interrupted.")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _error(args, exc):
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    _say(f"skcrf {args.command}: error: {msg}")
    return 2


def _say(msg):
    if sys.stderr is not None:
        print(msg, file=sys.stderr, flush=True)


def _on_sigterm():
    """SIGTERM raises :class:`Interrupted`, so that what is being written is
    cleaned up (a model file being saved leaves no temporary file)."""
    def handler(signum, frame):
        raise Interrupted("terminated", 143)

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:                    # not the main thread: leave it alone
        return None


def _quiet_stdout():
    """After a closed pipe (``skcrf tag ... | head``), point stdout at
    /dev/null so that Python's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass
