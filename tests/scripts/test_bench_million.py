"""scripts/benchmarks/bench_million.py on a tiny table: the local run's phases, memory and
CPU of every process, info and evaluate timed, and the same bytes on a loopback Dask cluster
the script starts and stops."""

import os
import re

import pytest

from tests.scripts.helpers import load_script, run_script


def test_tiny_table_locally_and_on_a_loopback_dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    out = run_script("benchmarks", "bench_million", "--shape", "60x40", "--clusters", "2x2", "--risk", "0.15",
                     "--density", "0.3", "--seed", "3", "--jobs", "2", "--dask", "--folder", tmp_path).stdout
    assert out.count("$ lbm-bench generate") == 2 and "--backend dask --scheduler tcp://127.0.0.1:" in out
    assert re.search(r"Gibbs: [\d.]+ ns per stored entry per chain per sweep", out)
    assert len(re.findall(r"summed over processes +peak RSS +[\d.]+ GiB +CPU +[\d.]+ s", out)) == 2
    assert re.search(r"dask scheduler +peak RSS", out) and len(re.findall(r"dask worker +peak RSS", out)) == 2
    assert "same bytes as the local run: yes" in out
    for command in ("info", "evaluate"):
        assert re.search(rf"\$ lbm-bench {command} .*\n  wall [\d.]+ s, CPU [\d.]+ s, peak RSS summed [\d.]+ GiB", out)


def test_memory_of_a_process_tree_without_psutil():
    memory = load_script("benchmarks", "bench_million").ProcessMemory([os.getpid()])
    [(name, rss, cpu)] = [sample for sample in memory._sample_proc() if sample[0].startswith(f"{os.getpid()} ")]
    assert rss > 10 * 2**20 and cpu > 0


def _tiny_run(folder, kernel):
    return run_script("benchmarks", "bench_million", "--shape", "60x40", "--clusters", "2x2", "--risk", "0.15",
                      "--density", "0.3", "--seed", "3", "--jobs", "1", "--kernel", kernel, "--no-evaluate",
                      "--folder", folder).stdout


def test_the_kernel_is_passed_on_and_said(tmp_path):
    out = _tiny_run(tmp_path, "scipy")
    assert "sparse kernel: scipy's (kernel='scipy'; LBM_BENCH_KERNEL='scipy')" in out
    assert "--kernel scipy" in out


@pytest.mark.numba
def test_the_compiled_kernel_runs_and_writes_scipy_s_file(tmp_path):
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    out = _tiny_run(tmp_path / "compiled", "compiled")
    assert ("sparse kernel: compiled (numba) for every sparse table of integer statistics "
            "(kernel='compiled'; LBM_BENCH_KERNEL='compiled')") in out
    assert "--kernel compiled" in out and re.search(r"Gibbs: [\d.]+ ns per stored entry per chain per sweep", out)
    _tiny_run(tmp_path / "scipy", "scipy")
    assert (tmp_path / "compiled" / "local.h5").read_bytes() == (tmp_path / "scipy" / "local.h5").read_bytes()
