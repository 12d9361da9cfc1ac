"""Where a release build's wall time goes outside its workers' tasks.

    PYTHONPATH=CHECKOUT python scripts/build_timeline.py SPEC OUT [--jobs 2]

Builds ``SPEC`` into ``OUT`` (which should not hold a build: it is a fresh build that is
timed) with ``build_release(..., n_jobs=JOBS)`` on the loky backend, and records when
each task of the build (a calibration, a table, or both) started and ended in its
worker. It prints, as one JSON line: ``wall`` (seconds of ``build_release``),
``busy_worker_s`` (the tasks' summed seconds), ``outside`` (``wall - busy / JOBS``: the
wall time not covered by JOBS busy workers), and where that went: ``before_first_task``
(the pool's start and the workers' imports), ``idle_worker_s_between`` (worker-seconds
without a task between the first start and the last end: a phase's end waiting for its
last task) and ``after_last_task`` (the manifest, the cards, thumbnails drawn in the
main process), with the number of tasks; then the build's "time per stage" line.

The tasks are wrapped, not changed: the build writes the same bytes. It relies on the
build calling ``lbm_bench.release.build._parallel`` and then the returned callable on
``delayed`` tasks, so run it with a checkout's ``PYTHONPATH`` to compare two commits on
the same spec (alternating runs: the machine's load moves the numbers). On a loaded
machine the tasks' seconds include time spent waiting for a core, so compare
``outside`` between runs at similar load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time


def _timed(func, args, kwargs):
    """Run one task in a worker; its result with its start and end (epoch seconds)."""
    start = time.time()
    result = func(*args, **kwargs)
    return result, start, time.time(), os.getpid()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec")
    parser.add_argument("out")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    from lbm_bench.release import build

    stamps: list[tuple[float, float, int]] = []
    real = build._parallel

    def timed_parallel(backend, n_jobs, scheduler):
        @contextlib.contextmanager
        def context():
            with real(backend, n_jobs, scheduler) as parallel:
                def run(tasks):
                    for result, start, end, pid in parallel((_timed, (f, a, k), {}) for f, a, k in tasks):
                        stamps.append((start, end, pid))
                        yield result
                yield run
        return context()

    build._parallel = timed_parallel
    t0 = time.time()
    report = build.build_release(args.spec, args.out, n_jobs=args.jobs)
    t1 = time.time()
    if not report.ok:
        raise SystemExit(report.summary())
    if not stamps:
        raise SystemExit("no task ran: is OUT a complete build already?")
    first, last = min(s for s, _, _ in stamps), max(e for _, e, _ in stamps)
    busy = sum(e - s for s, e, _ in stamps)
    print(json.dumps({
        "wall": round(t1 - t0, 1),
        "busy_worker_s": round(busy, 1),
        "outside": round(t1 - t0 - busy / args.jobs, 1),
        "before_first_task": round(first - t0, 1),
        "idle_worker_s_between": round(args.jobs * (last - first) - busy, 1),
        "after_last_task": round(t1 - last, 1),
        "tasks": len(stamps),
        "load": os.getloadavg()[0],
    }))
    print(report.summary().splitlines()[1])


if __name__ == "__main__":
    main()
