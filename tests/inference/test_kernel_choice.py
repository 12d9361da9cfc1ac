"""The choice of the sparse tables' kernel (lbm_bench.inference.kernel_choice): by argument, by
``LBM_BENCH_KERNEL`` (the argument wins), by size under ``"auto"``, carried to the workers of
a call; its refusals; the hint and the report."""

import os

import pytest

from lbm_bench.inference import kernel_choice
from lbm_bench.inference.engine import Sweeper
from lbm_bench.inference.kernel_choice import (
    COMPILED_MIN_ENTRIES,
    KERNEL_VARIABLE,
    check_kernel,
    kernel_hint,
    kernel_report,
    kernel_setting,
    use_compiled,
    use_kernel,
)
from lbm_bench.models.design import random_design
from lbm_bench.tasks.backends import in_threads, worker_backend
from lbm_bench.tasks.pool import run_tasks


def _no_numba(monkeypatch):
    monkeypatch.setattr(kernel_choice, "numba_status", lambda: (None, "ImportError: hidden"))


def _setting_and_pid(_):
    return kernel_setting(), os.getpid()


def test_the_argument_wins_over_the_environment(monkeypatch):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    assert kernel_setting() == "auto"
    monkeypatch.setenv(KERNEL_VARIABLE, "scipy")
    assert kernel_setting() == "scipy"
    with use_kernel("auto"):
        assert kernel_setting() == "auto"
        with use_kernel(None):  # keeps what is in force
            assert kernel_setting() == "auto"
    with use_kernel(None):
        assert kernel_setting() == "scipy"
    assert kernel_setting() == "scipy"


def test_bad_choices_are_refused_naming_the_argument_or_the_variable(monkeypatch):
    with pytest.raises(ValueError, match="kernel must be one of 'auto', 'compiled', 'scipy', got 'fast'"):
        check_kernel("fast")
    monkeypatch.setenv(KERNEL_VARIABLE, "numba")
    with pytest.raises(ValueError, match=f"{KERNEL_VARIABLE} must be one of"):
        kernel_setting()
    with pytest.raises(ValueError, match=KERNEL_VARIABLE), use_kernel():
        pass


def test_the_compiled_kernel_asked_without_numba_is_refused_up_front(monkeypatch):
    _no_numba(monkeypatch)
    with pytest.raises(ValueError, match=r"kernel='compiled' needs numba \(pip install 'lbm-bench\[fast\]'\)"):
        check_kernel("compiled")
    # where numba is missing but the choice comes from elsewhere (a worker): scipy's kernel
    monkeypatch.setenv(KERNEL_VARIABLE, "compiled")
    assert not use_compiled(10**9)


@pytest.mark.numba
def test_auto_takes_the_compiled_kernel_from_the_threshold_where_numba_imports(monkeypatch):
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    assert not use_compiled(COMPILED_MIN_ENTRIES - 1) and use_compiled(COMPILED_MIN_ENTRIES)
    with use_kernel("compiled"):
        assert use_compiled(1)
    with use_kernel("scipy"):
        assert not use_compiled(10**9)
    model = random_design("bernoulli", 2, 2, density=0.1, rng=0).model(1.0)
    X = model.sample(200, 100, rng=1)[0]
    assert Sweeper.for_table(model, X).kernel.name == "sparse"  # small: scipy's
    monkeypatch.setattr(kernel_choice, "COMPILED_MIN_ENTRIES", X.nnz)
    assert Sweeper.for_table(model, X).kernel.name == "compiled"
    _no_numba(monkeypatch)
    assert Sweeper.for_table(model, X).kernel.name == "sparse"


@pytest.mark.parametrize("where", ["loky", "threads"])
def test_the_choice_of_a_call_holds_in_its_workers(monkeypatch, where):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    calls = [(k,) for k in range(4)]
    context = worker_backend("loky", 2) if where == "loky" else in_threads()
    with context:
        assert {s for s, _ in run_tasks(_setting_and_pid, calls, 2)} == {"auto"}
        with use_kernel("scipy"):
            got = run_tasks(_setting_and_pid, calls, 2)
        assert {s for s, _ in got} == {"scipy"}
        if where == "loky":
            assert os.getpid() not in {pid for _, pid in got}
        assert {s for s, _ in run_tasks(_setting_and_pid, calls, 2)} == {"auto"}  # not kept


def test_the_hint_is_for_large_sparse_tables_certified_without_numba(monkeypatch):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    _no_numba(monkeypatch)
    hint = kernel_hint(COMPILED_MIN_ENTRIES)
    assert hint.startswith("note: pip install 'lbm-bench[fast]' (numba) makes")
    assert f"about {kernel_choice.COMPILED_SPEEDUP} times faster" in hint and "\n" not in hint
    assert kernel_hint(COMPILED_MIN_ENTRIES - 1) is None
    with use_kernel("scipy"):
        assert kernel_hint(10**9) is None  # asked for
    monkeypatch.setattr(kernel_choice, "numba_status", lambda: ("0.60.0", ""))
    assert kernel_hint(10**9) is None


def test_the_report_says_which_kernel_runs(monkeypatch):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    monkeypatch.setattr(kernel_choice, "numba_status", lambda: ("0.61.0", ""))
    lines = kernel_report()
    assert lines[0] == "numba 0.61.0"
    assert lines[1] == (f"sparse kernel: compiled (numba) from {COMPILED_MIN_ENTRIES:,} stored "
                        "entries, scipy's below (kernel='auto')")
    assert lines[2].startswith("compiled loops cached ")
    monkeypatch.setenv(KERNEL_VARIABLE, "scipy")
    assert kernel_report()[1] == "sparse kernel: scipy's (kernel='scipy'; LBM_BENCH_KERNEL='scipy')"
    with use_kernel("compiled"):
        assert "for every sparse table of integer statistics" in kernel_report()[1]
    _no_numba(monkeypatch)
    monkeypatch.delenv(KERNEL_VARIABLE)
    lines = kernel_report()
    assert lines[0] == "numba: not available (ImportError: hidden)"
    assert lines[1].startswith("sparse kernel: scipy's (the compiled kernel needs numba)")
    assert len(lines) == 2


def test_a_release_of_small_tables_never_imports_numba():
    """Small sparse tables stay with scipy's kernel under "auto": numba (half a second per
    process) is not imported for them."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from lbm_bench import random_design, gibbs_labels; "
            "m = random_design('bernoulli', 2, 2, density=0.1, rng=0).model(1.0); "
            "X = m.sample(300, 200, rng=1)[0]; gibbs_labels(m, X, n_samples=20, rng=2); "
            "print('numba' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != KERNEL_VARIABLE}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
