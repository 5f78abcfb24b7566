"""Where a cold first run spends its compile time: ``python -m skcrf demo``
in a new, empty Numba cache, with a listener on Numba's ``numba:compile``
events that charges each compilation its own time (its wall time minus that
of the compilations nested in it: a kernel compiles the kernels it calls
inside its own event).

    python benchmarks/dev/compile_profile.py [--top 40] [--signatures] [--no-helpers]

Prints the wall time, the summed compile time, the number of compilations,
the kernels by own time (with how many times each was compiled: more than
once is one specialisation per argument type or layout), and the total by
module. ``--signatures`` lists the argument types of every kernel compiled
more than once.
"""

import argparse
import collections
import os
import runpy
import sys
import tempfile
import time


def _profile(top, signatures, helpers):
    from numba.core import event

    if not helpers:
        from skcrf._kernels import compile_helper

        compile_helper.start = lambda *args, **kwargs: False

    own = collections.defaultdict(float)
    count = collections.Counter()
    sigs = collections.defaultdict(list)
    stack = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append((time.perf_counter(), []))

        def on_end(self, ev):
            t0, nested = stack.pop()
            dt = time.perf_counter() - t0
            f = ev.data["dispatcher"].py_func
            name = f"{f.__module__}.{f.__qualname__}"
            own[name] += dt - sum(nested)
            count[name] += 1
            sigs[name].append(str(ev.data.get("args")))
            if stack:
                stack[-1][1].append(dt)

    event.register("numba:compile", Listener())
    t = time.perf_counter()
    sys.argv = ["skcrf", "demo"]
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        runpy.run_module("skcrf", run_name="__main__")
    except SystemExit:
        pass
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    wall = time.perf_counter() - t
    how = "" if helpers else " without compile helpers"
    print(f"cold `skcrf demo`{how}: {wall:.1f} s wall, {sum(own.values()):.1f} s compiling, "
          f"{sum(count.values())} compilations")
    print("\nown compile time by kernel (x: times compiled)")
    for name, s in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{s:7.2f} s  x{count[name]:<3d} {name}")
    print("\nby module")
    modules = collections.defaultdict(float)
    for name, s in own.items():
        modules[name.rsplit(".", 1)[0].split(".<locals>")[0]] += s
    for name, s in sorted(modules.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{s:7.2f} s  {name}")
    if signatures:
        print("\nkernels compiled more than once")
        for name, args in sorted(sigs.items()):
            if len(args) > 1:
                print(name)
                for a in args:
                    print("    ", a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--signatures", action="store_true")
    ap.add_argument("--no-helpers", action="store_true",
                    help="compile everything in the demo's own process (profile all kernels)")
    ap.add_argument("--in-cache", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.in_cache is None:
        # a new process, so that Numba reads the empty cache dir at import
        import subprocess
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            cmd = [sys.executable, __file__, "--in-cache", cache, "--top", str(args.top)]
            cmd += ["--signatures"] if args.signatures else []
            cmd += ["--no-helpers"] if args.no_helpers else []
            sys.exit(subprocess.call(cmd, env=env))
    _profile(args.top, args.signatures, not args.no_helpers)


if __name__ == "__main__":
    main()
