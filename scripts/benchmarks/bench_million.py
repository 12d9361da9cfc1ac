"""A million rows: ``lbm-bench generate`` of issue 33's 1e6 x 1e5 table, its time and memory.

    python scripts/benchmarks/bench_million.py                       # issue 33's Bernoulli table, --jobs 2
    python scripts/benchmarks/bench_million.py --kind poisson --effects
    python scripts/benchmarks/bench_million.py --shape 100000x10000 --density 0.01 --dask
    python scripts/benchmarks/bench_million.py --kernel scipy              # without the compiled kernel

Runs ``lbm-bench generate --kind KIND --shape SHAPE --clusters 3x3 --risk 0.1
--density DENSITY --seed 1 --jobs 2`` (each an option; the defaults are issue 33's
table of 1e8 stored entries; ``--kernel`` is passed on when given: by default the kernel
``auto`` chooses, the compiled one for such a table where numba imports) in its own process
and prints which sparse kernel the command runs (``lbm-bench info --versions``), then:

- the wall time of the command, and of its phases (the table's own ``timings``:
  calibration, the rest of rejection sampling (drawing the candidates, their MAP),
  the Gibbs runs (screening and certifying), the floor; and writing the file);
- the CPU time of every process (the command and its workers);
- the peak resident memory (RSS) of every process and the peak of their sum, sampled
  every 0.2 s (issue 33 asks for at most 12 GiB summed);
- the seconds per stored entry per chain per sweep of the Gibbs runs: their wall time
  times ``--jobs`` (the workers' seconds) over the stored entries times every chain's
  sweeps (burn-in included, screening runs included);
- ``lbm-bench info`` and ``lbm-bench evaluate`` (the file's own MAP labels as the
  labels scored) on the file: wall time and peak RSS (issue 33: each within a minute).

With ``--dask`` it then starts a Dask cluster on loopback (``dask scheduler`` and two
``dask worker`` processes of one thread each), runs the same command with
``--backend dask --scheduler ADDR``, checks that the file's SHA-256 is the local run's,
and stops the cluster; the cluster's processes count in the memory summed.

The machine's load average (``uptime``) is printed beside every timing: other work on
the same cores slows every figure here. A run of the full size takes tens of minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

#: Runs ``lbm-bench generate ARGS`` in this process and writes the table's timings, the
#: write's seconds and the Gibbs runs' chain sweeps to a JSON file.
_RUNNER = """
import json, math, sys, time
import lbm_bench.protocol.generate as generate
import lbm_bench.storage as storage
from lbm_bench.cli import main

original_generate, original_save = generate.generate_table, storage.save_table
record = {}

def timed_generate(*args, **kwargs):
    table = original_generate(*args, **kwargs)
    s, r = table.settings, table.rejection
    def chain_sweeps(n_samples):
        chains = min(s.n_chains, n_samples)
        return chains * (s.burn_in + math.ceil(n_samples / chains) * s.thin)
    screened = r.attempts if s.screen_samples else 0
    certified = r.attempts - r.screened_out
    record.update(table.timings, attempts=r.attempts, screened_out=r.screened_out,
                  chain_sweeps=screened * chain_sweeps(s.screen_samples) + certified * chain_sweeps(s.n_samples),
                  stored=int(table.data.nnz) if hasattr(table.data, "nnz") else int(table.data.size))
    return table

def timed_save(*args, **kwargs):
    start = time.perf_counter()
    out = original_save(*args, **kwargs)
    record["write"] = time.perf_counter() - start
    with open(sys.argv[1], "w") as handle:
        json.dump(record, handle)
    return out

generate.generate_table, storage.save_table = timed_generate, timed_save
record.update(task_bytes=0, tasks=0, scattered_bytes=0, scatters=0, large_graph_warnings=0)
try:  # on Dask: the bytes of the tasks' arguments sent in the graph, and of the data scattered
    import pickle, warnings
    import distributed
    original_submit, original_scatter = distributed.Client.submit, distributed.Client.scatter

    def counted_submit(self, func, *args, **kwargs):
        record["tasks"] += 1
        record["task_bytes"] += len(pickle.dumps((args, kwargs), protocol=5))
        return original_submit(self, func, *args, **kwargs)

    def counted_scatter(self, data, *args, **kwargs):
        record["scatters"] += 1
        record["scattered_bytes"] += len(pickle.dumps(data, protocol=5))
        return original_scatter(self, data, *args, **kwargs)

    def counted_warning(message, category, *args, original=warnings.showwarning):
        record["large_graph_warnings"] += "large graph" in str(message)
        return original(message, category, *args)

    distributed.Client.submit, distributed.Client.scatter = counted_submit, counted_scatter
    warnings.showwarning = counted_warning
except ImportError:
    pass
sys.exit(main(sys.argv[2:]))
"""

GIB = 2**30


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, as ``uptime`` prints them."""
    return "load average " + ", ".join(f"{value:.2f}" for value in os.getloadavg())


class ProcessMemory:
    """Peak RSS of a process tree (and of other watched processes), polled every ``period`` s.

    Uses psutil when installed, else ``/proc`` (Linux). ``peaks`` maps a process (pid and
    name) to its peak RSS; ``peak_sum`` is the peak of the sum over the processes alive at
    one poll; ``cpu`` maps a process to the last CPU seconds (user + system) seen.
    """

    def __init__(self, roots: list[int], period: float = 0.2) -> None:
        self.roots, self.period = list(roots), period
        self.peaks: dict[str, int] = {}
        self.cpu: dict[str, float] = {}
        self.peak_sum = 0
        self._names: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ProcessMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for key, rss, cpu in self._sample():
                self.peaks[key] = max(self.peaks.get(key, 0), rss)
                self.cpu[key] = max(self.cpu.get(key, 0.0), cpu)
                total += rss
            self.peak_sum = max(self.peak_sum, total)
            self._stop.wait(self.period)

    def _sample(self) -> list[tuple[str, int, float]]:
        try:
            import psutil
        except ImportError:
            return self._sample_proc()
        out = []
        for root in self.roots:
            try:
                parent = psutil.Process(root)
                processes = [parent, *parent.children(recursive=True)]
            except psutil.Error:
                continue
            for process in processes:
                try:
                    with process.oneshot():
                        times = process.cpu_times()
                        out.append((self._name(process.pid, process.cmdline), process.memory_info().rss,
                                    times.user + times.system))
                except psutil.Error:
                    continue
        return out

    def _sample_proc(self) -> list[tuple[str, int, float]]:
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    children.setdefault(ppid, []).append(int(entry.name))
        pending, out = list(self.roots), []
        tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
        while pending:
            pid = pending.pop()
            pending += children.get(pid, [])
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                out.append((self._name(pid, lambda: [c.decode() for c in command if c]), rss,
                            (int(fields[11]) + int(fields[12])) / tick))
        return out

    def _name(self, pid: int, command) -> str:
        """``pid`` and the short name of its command, as first seen (an exiting process has none)."""
        if pid not in self._names:
            self._names[pid] = f"{pid} {_short_name(command())}"
        return self._names[pid]

    def report(self) -> list[str]:
        lines = [f"  {key:<44s} peak RSS {rss / GIB:6.2f} GiB   CPU {self.cpu.get(key, 0.0):8.1f} s"
                 for key, rss in sorted(self.peaks.items(), key=lambda item: -item[1])]
        total_cpu = sum(self.cpu.values())
        lines.append(f"  {'summed over processes':<44s} peak RSS {self.peak_sum / GIB:6.2f} GiB   "
                     f"CPU {total_cpu:8.1f} s")
        return lines


def _short_name(command: list[str]) -> str:
    """A process's name for the report: the command's program and first words."""
    text = " ".join(command)
    if "resource_tracker" in text or "multiprocessing.resource" in text:
        return "resource tracker"
    if "loky" in text:
        return "loky worker " + (re.findall(r"LokyProcess-(\d+)", text) or ["?"])[0]
    for marker in ("dask scheduler", "dask worker", "distributed.cli.dask_scheduler", "distributed.cli.dask_worker"):
        if marker in text:
            return marker.replace("distributed.cli.dask_", "dask ")
    if "lbm_bench" in text or "lbm-bench" in text or "-c" in command:
        words = [w for w in command[1:] if not w.startswith("/") and "\n" not in w][:3]
        return "lbm-bench " + " ".join(w for w in words if not w.endswith(".json"))[:30]
    return text[:40]


def run_measured(command: list[str], watched: list[int] = (), *, quiet: bool = False,
                 ) -> tuple[float, float, ProcessMemory]:
    """Run ``command`` (its output discarded when ``quiet``); its wall seconds, the CPU seconds
    of it and its children (reaped), and the memory poller of its process tree and of ``watched``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL if quiet else None)
    with ProcessMemory([process.pid, *watched]) as memory:
        code = process.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"command failed with exit code {code}: {' '.join(command)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, memory


def generate_command(args: argparse.Namespace, out: Path) -> list[str]:
    command = ["generate", "--kind", args.kind, "--shape", args.shape, "--clusters", args.clusters,
               "--risk", str(args.risk), "--density", str(args.density), "--seed", str(args.seed),
               "-o", str(out), "--jobs", str(args.jobs), "--force", "-q"]
    if args.effects:
        command.append("--effects")
    if args.kernel is not None:
        command += ["--kernel", args.kernel]
    return command


def run_generate(args: argparse.Namespace, out: Path, extra: list[str] = (), watched: list[int] = ()) -> dict:
    """One ``lbm-bench generate``: its timings, CPU, memory, and the file's SHA-256."""
    timings = out.with_suffix(".json")
    command = generate_command(args, out) + list(extra)
    print("$ lbm-bench " + " ".join(command).replace(" --force -q", ""), flush=True)
    print(f"  ({load_average()} before)", flush=True)
    wall, cpu, memory = run_measured([sys.executable, "-c", _RUNNER, str(timings), *command], watched)
    record = json.loads(timings.read_text())
    digest = hashlib.sha256()
    with open(out, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    return {"wall": wall, "cpu": cpu, "memory": memory, "sha256": digest.hexdigest(), "load": load_average(),
            "bytes": out.stat().st_size, **record}


def print_generate(result: dict, jobs: int) -> None:
    print(f"  wall {result['wall']:.1f} s ({result['load']} after); CPU of the command and its children "
          f"{result['cpu']:.1f} s")
    phases = ("calibration", "rejection", "gibbs", "floor", "write")
    names = ("calibration", "candidates (draw, MAP)", "Gibbs runs", "floor", "writing the file")
    for phase, name in zip(phases, names, strict=True):
        print(f"    {name:<24s} {result[phase]:8.1f} s")
    print(f"  candidates {result['attempts']} (screened out {result['screened_out']}); stored entries "
          f"{result['stored']:,}; chain sweeps {result['chain_sweeps']:,}")
    per = result["gibbs"] * jobs / (result["stored"] * result["chain_sweeps"])
    print(f"  Gibbs: {per * 1e9:.2f} ns per stored entry per chain per sweep ({jobs} workers' seconds)")
    if result.get("tasks"):
        print(f"  Dask: {result['tasks']} task submissions carrying {result['task_bytes'] / 2**20:.1f} MiB of "
              f"arguments in the graph, {result['scatters']} scatters of {result['scattered_bytes'] / 2**20:.1f} "
              f"MiB, {result['large_graph_warnings']} 'large graph' warnings")
    print(f"  file {result['bytes'] / 2**20:.0f} MiB, sha256 {result['sha256']}")
    print("  memory and CPU of every process:")
    print("\n".join(result["memory"].report()))


def time_info_and_evaluate(table: Path, folder: Path) -> None:
    """``lbm-bench info`` and ``lbm-bench evaluate`` (the file's MAP labels) on ``table``."""
    import h5py
    import numpy as np

    with h5py.File(table, "r") as file:
        np.save(folder / "rows.npy", file["map/rows"][()])
        np.save(folder / "cols.npy", file["map/cols"][()])
    lbm = [sys.executable, "-m", "lbm_bench"]
    for command in (
        ["info", str(table)],
        ["evaluate", str(table), "--rows", str(folder / "rows.npy"), "--cols", str(folder / "cols.npy")],
    ):
        print(f"$ lbm-bench {' '.join(command)}", flush=True)
        wall, cpu, memory = run_measured(lbm + command, quiet=True)
        print(f"  wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS summed {memory.peak_sum / GIB:.2f} GiB "
              f"({load_average()})", flush=True)


@contextlib.contextmanager
def loopback_cluster(folder: Path, n_workers: int = 2):
    """A Dask cluster on loopback: ``dask scheduler`` and ``n_workers`` ``dask worker`` processes
    of one thread each (no memory limit: the workers are not paused or restarted); yields the
    scheduler's address and the processes' pids; stops them on exit."""
    scheduler_file = folder / "scheduler.json"
    bin_dir = Path(sys.executable).parent
    dask = str(bin_dir / "dask") if (bin_dir / "dask").exists() else "dask"
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(scheduler_file)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            if time.monotonic() > deadline or processes[0].poll() is not None:
                raise SystemExit("dask scheduler did not start")
            time.sleep(0.2)
        time.sleep(0.5)
        address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(n_workers):
            processes.append(subprocess.Popen(
                [dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-nanny",
                 "--memory-limit", "0", "--no-dashboard", "--host", "127.0.0.1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(n_workers, timeout=120)
        yield address, [p.pid for p in processes]
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", default="bernoulli")
    parser.add_argument("--shape", default="1000000x100000")
    parser.add_argument("--clusters", default="3x3")
    parser.add_argument("--risk", type=float, default=0.1)
    parser.add_argument("--density", type=float, default=0.001)
    parser.add_argument("--effects", action="store_true", help="Poisson row and column effects")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kernel", choices=["auto", "compiled", "scipy"], default=None,
                        help="the sparse kernel (lbm-bench generate --kernel; default: its own)")
    parser.add_argument("--dask", action="store_true", help="also on a loopback Dask cluster: same bytes?")
    parser.add_argument("--dask-only", action="store_true",
                        help="with --dask: compare with the file already at --folder/local.h5 instead of "
                        "running the local command again")
    parser.add_argument("--no-evaluate", action="store_true", help="skip timing info and evaluate")
    parser.add_argument("--folder", type=Path, default=None, help="keep the files here (default: a temporary folder)")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, {load_average()}")
    environment = {**os.environ, **({"LBM_BENCH_KERNEL": args.kernel} if args.kernel else {})}
    versions = subprocess.run([sys.executable, "-m", "lbm_bench", "info", "--versions"], env=environment,
                              capture_output=True, text=True, check=True).stdout.splitlines()
    print("\n".join(line for line in versions if line.startswith(("numba", "sparse kernel"))))
    with contextlib.ExitStack() as stack:
        if args.folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-million-")))
        else:
            folder = args.folder
            folder.mkdir(parents=True, exist_ok=True)
        local = folder / "local.h5"
        if args.dask_only:
            digest = hashlib.sha256(local.read_bytes()).hexdigest()
        else:
            result = run_generate(args, local)
            print_generate(result, args.jobs)
            digest = result["sha256"]
            if not args.no_evaluate:
                time_info_and_evaluate(local, folder)
        if args.dask or args.dask_only:
            with loopback_cluster(folder) as (address, pids):
                print(f"loopback Dask cluster at {address}: dask scheduler and 2 dask workers (1 thread each)")
                remote = run_generate(args, folder / "dask.h5", ["--backend", "dask", "--scheduler", address], pids)
            print_generate(remote, args.jobs)
            same = remote["sha256"] == digest
            print(f"  same bytes as the local run: {'yes' if same else 'NO'}")
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
