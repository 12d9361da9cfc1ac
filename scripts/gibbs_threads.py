"""Where the Gibbs benchmark's threads go: incremental runs with 1 and 2 BLAS threads.

    python scripts/gibbs_threads.py [--rounds 2] [--config "gaussian 1000x1000 3x3 @5%"]

On the benchmark's table (``lbm_bench.bench.gibbs_map.find_scale``, chains at the
MAP), runs ``gibbs_labels(method=...)`` alternately with BLAS pinned to 2 and to 1
thread (threadpoolctl, from the ``dask`` or ``test`` extras) and prints, for each
run, the wall time and the CPU seconds of every thread of the process that worked
during it (``/proc/self/task``, Linux). With 2 BLAS threads, OpenBLAS's worker
thread keeps spinning on the second core after each full product (the first ones
and the periodic recomputes of the incremental method), which shows as CPU time of
a second thread far above the products' share (docs/performance.md, issue 15).
"""

from __future__ import annotations

import argparse
import os
import time

from threadpoolctl import threadpool_limits

from lbm_bench.bench.gibbs_map import CONFIGS, find_scale
from lbm_bench.inference.gibbs import gibbs_labels


def _thread_cpu() -> dict[str, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        out[task] = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--config", default="gaussian 1000x1000 3x3 @5%")
    parser.add_argument("--method", default="incremental", choices=["incremental", "full"])
    args = parser.parse_args(argv)
    config = next(c for c in CONFIGS if c.name == args.config)
    found = find_scale(config, seed=0)
    model, X, result = found["model"], found["X"], found["map"]
    init = (result.rows, result.cols)
    print(f"# {config.name}, method={args.method}; load average {os.getloadavg()}")
    for _ in range(args.rounds):
        for threads in (2, 1):
            with threadpool_limits(threads, user_api="blas"):
                time.sleep(0.5)  # let a spinning worker of the previous run go to sleep
                before, start = _thread_cpu(), time.perf_counter()
                gibbs_labels(
                    model, X, n_samples=config.n_samples, init=init, rng=0, method=args.method
                )
                wall, after = time.perf_counter() - start, _thread_cpu()
            worked = sorted(
                (after[t] - before.get(t, 0.0) for t in after if after[t] > before.get(t, 0.0)),
                reverse=True,
            )
            print(
                f"BLAS threads {threads}: wall {wall:.2f} s, CPU s of the threads that worked "
                + ", ".join(f"{c:.2f}" for c in worked)
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
