"""Peak resident memory of ``generate_table`` by phase, in the command's process and its workers.

    python scripts/benchmarks/bench_million_phases.py 100000x10000 0.01 2 out.h5 [KIND [effects]]

Runs ``generate_table(KIND, n_rows, n_cols, 3, 3, 0.1, density=DENSITY, jobs=JOBS, rng=1,
max_memory="1T")`` (KIND default bernoulli; ``effects``: with ``effects=True``, the
Poisson family's row and column effects, as ``lbm-bench generate --effects``) then
``save_table`` in this process, polls the RSS of this process and of its children every
0.2 s, and prints per phase (calibration; then per candidate: its draw, its MAP, the Gibbs
runs, the floor; writing the file; a primed name is what follows a phase until the next
one) the peak of the sum over processes, of this process and of the largest worker, in GiB
and in bytes per stored entry. Peak RSS is robust to the machine's load; the wall times
are not.
"""
import json
import sys
import threading
import time

import psutil

import lbm_bench.protocol.generate as G
import lbm_bench.storage as storage

shape, density, jobs, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kind = sys.argv[5] if len(sys.argv) > 5 else "bernoulli"
options = {"effects": True} if sys.argv[6:7] == ["effects"] else {}
n, d = map(int, shape.split("x"))
phase = ["start"]
peaks = {}  # phase -> {"sum":, "parent":, "workers": max worker, "nproc":}
order = []
stop = threading.Event()
me = psutil.Process()

def poll():
    while not stop.is_set():
        try:
            procs = [me, *me.children(recursive=True)]
            rss = {}
            for p in procs:
                try:
                    rss[p.pid] = p.memory_info().rss
                except psutil.Error:
                    pass
            ph = phase[0]
            rec = peaks.setdefault(ph, {"sum": 0, "parent": 0, "worker": 0, "n": 0})
            if ph not in order:
                order.append(ph)
            s = sum(rss.values())
            rec["sum"] = max(rec["sum"], s)
            rec["parent"] = max(rec["parent"], rss.get(me.pid, 0))
            w = [v for k, v in rss.items() if k != me.pid]
            rec["worker"] = max([rec["worker"], *w])
            rec["n"] = max(rec["n"], len(w))
        except Exception as e:
            print("poll error", e, file=sys.stderr)
        stop.wait(0.2)

def wrap(mod, name, label):
    f = getattr(mod, name)
    def g(*a, **k):
        prev = phase[0]
        phase[0] = label
        try:
            return f(*a, **k)
        finally:
            phase[0] = prev + "'"
    setattr(mod, name, g)

wrap(G, "calibrate", "calibration")
wrap(G, "map_labels", "map")
wrap(G, "gibbs_labels", "gibbs")
wrap(G, "floor_certificate", "floor")
orig_try = G._RejectionSampler.try_candidate
def try_candidate(self, seed):
    phase[0] = "draw"
    return orig_try(self, seed)
G._RejectionSampler.try_candidate = try_candidate
t = threading.Thread(target=poll, daemon=True)
t.start()
t0 = time.time()
table = G.generate_table(kind, n, d, 3, 3, 0.1, density=density, jobs=jobs, rng=1, max_memory="1T",
                         **options)
phase[0] = "write"
storage.save_table(table, out)
phase[0] = "end"
time.sleep(0.5)
stop.set()
t.join()
nnz = int(table.data.nnz)
GiB = 2**30
timings = json.dumps({k: round(v, 1) for k, v in table.timings.items()})
what = f"{kind}{' with effects' if options else ''}"
print(f"{what} {shape} density {density} jobs {jobs}: nnz {nnz:,} wall {time.time() - t0:.0f}s timings {timings}")
print(f"{'phase':14s} {'sum GiB':>8s} {'parent':>8s} {'worker':>8s}  sum B/nnz parent B/nnz worker B/nnz  nworkers")
for ph in order:
    r = peaks[ph]
    print(f"{ph:14s} {r['sum'] / GiB:8.3f} {r['parent'] / GiB:8.3f} {r['worker'] / GiB:8.3f}  "
          f"{r['sum'] / nnz:9.1f} {r['parent'] / nnz:11.1f} {r['worker'] / nnz:11.1f}  {r['n']}")
tot = max(r["sum"] for r in peaks.values())
print(f"peak sum {tot/GiB:.3f} GiB = {tot/nnz:.1f} B/nnz")
