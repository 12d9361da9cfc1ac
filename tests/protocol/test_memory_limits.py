"""lbm_bench.protocol.memory_limits: the memory guard's limit is the smallest of MemAvailable, the
control group's limit (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``) and ``ulimit -v``,
so that a container user gets the one-line refusal, not a MemoryError traceback (issue 48, item 1)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from lbm_bench.protocol import memory_limits
from lbm_bench.protocol.memory import MemoryLimitError, check_memory, estimate_generation_memory
from lbm_bench.protocol.memory_limits import (
    MemoryLimit,
    address_space_available,
    cgroup_available,
    meminfo_available,
    memory_limit,
)

MiB = 2**20


def _fake_v2(tmp_path: Path, levels: dict[str, tuple[str, int, int]], group: str = "/jobs/mine",
             root: str = "/") -> tuple[Path, Path]:
    """A cgroup2 mount under ``tmp_path`` with ``levels`` (folder below the mount: memory.max,
    memory.current, inactive_file), this process in ``group``; the fake /proc/self files."""
    mount = tmp_path / "cgroup"
    for folder, (limit, current, inactive) in levels.items():
        where = mount / folder
        where.mkdir(parents=True, exist_ok=True)
        (where / "memory.max").write_text(f"{limit}\n")
        (where / "memory.current").write_text(f"{current}\n")
        (where / "memory.stat").write_text(f"anon 1\nfile 5\ninactive_file {inactive}\nactive_file 3\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"25 1 0:22 / / rw - ext4 /dev/sda1 rw\n"
                         f"41 31 0:38 {root} {mount} rw,relatime - cgroup2 cgroup2 rw\n")
    cgroups = tmp_path / "cgroup-of-self"
    cgroups.write_text(f"0::{group}\n")
    return cgroups, mountinfo


def test_a_cgroup_v2_limit_is_the_limit_less_the_usage_at_the_tightest_level(tmp_path):
    cgroups, mountinfo = _fake_v2(tmp_path, {
        "jobs/mine": ("max", 300 * MiB, 0),  # no limit of its own
        "jobs": (2048 * MiB, 1200 * MiB, 100 * MiB),  # the parent's: 948 MiB left
        "": ("max", 0, 0),
    })
    limit = cgroup_available(cgroups, mountinfo)
    assert limit == MemoryLimit(948 * MiB, "the cgroup's memory.max")
    cgroups, mountinfo = _fake_v2(tmp_path / "b", {"jobs/mine": (512 * MiB, 100 * MiB, 0),
                                                   "jobs": (2048 * MiB, 1200 * MiB, 0)})
    assert cgroup_available(cgroups, mountinfo).bytes == 412 * MiB


def test_a_cgroup_namespace_reads_the_mount_point_itself(tmp_path):
    """In a container's namespace the group is ``/`` and the mount is the group's own folder."""
    cgroups, mountinfo = _fake_v2(tmp_path, {"": (1024 * MiB, 24 * MiB, 0)}, group="/")
    assert cgroup_available(cgroups, mountinfo).bytes == 1000 * MiB
    # a group outside the mounted part of the hierarchy: the mount point's files
    cgroups, mountinfo = _fake_v2(tmp_path / "b", {"": (1024 * MiB, 24 * MiB, 0)}, group="/elsewhere",
                                  root="/docker/abc")
    assert cgroup_available(cgroups, mountinfo).bytes == 1000 * MiB


def test_a_cgroup_v1_limit_and_no_limit(tmp_path):
    mount = tmp_path / "memory"
    group = mount / "batch" / "job"
    group.mkdir(parents=True)
    (group / "memory.limit_in_bytes").write_text(f"{1024 * MiB}\n")
    (group / "memory.usage_in_bytes").write_text(f"{500 * MiB}\n")
    (group / "memory.stat").write_text(f"cache 9\ninactive_file 1\ntotal_inactive_file {76 * MiB}\n")
    (mount / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "unlimited"
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"35 31 0:32 / {mount} rw,relatime - cgroup cgroup rw,memory\n"
                         f"32 31 0:29 / {tmp_path / 'cpu'} rw,relatime - cgroup cgroup rw,cpu\n")
    cgroups = tmp_path / "self"
    cgroups.write_text("4:memory:/batch/job\n1:cpu:/\n0::/\n")
    assert cgroup_available(cgroups, mountinfo) == MemoryLimit(600 * MiB,
                                                               "the cgroup's memory.limit_in_bytes")
    (group / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert cgroup_available(cgroups, mountinfo) is None
    assert cgroup_available(tmp_path / "absent", mountinfo) is None
    assert cgroup_available(cgroups, tmp_path / "absent") is None


def test_the_smallest_limit_binds_and_the_refusal_names_it(tmp_path, monkeypatch):
    cgroups, mountinfo = _fake_v2(tmp_path, {"jobs/mine": (256 * MiB, 56 * MiB, 0)})
    monkeypatch.setattr(memory_limits, "cgroup_available",
                        partial(cgroup_available, cgroups, mountinfo))
    assert memory_limit() == MemoryLimit(200 * MiB, "the cgroup's memory.max")
    estimate = estimate_generation_memory("bernoulli", 300, 200, 2, 2)
    assert estimate.total > 200 * MiB  # the interpreter's baseline and the calibration
    with pytest.raises(MemoryLimitError) as info:
        check_memory(estimate)
    assert "more than the 200 MiB available (the cgroup's memory.max)" in str(info.value)
    assert "\n" not in str(info.value)
    check_memory(estimate, "1G")  # a limit given is the limit


def test_meminfo_available_reads_the_file(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:  1 kB\nMemAvailable:    8000000 kB\n")
    assert meminfo_available(meminfo) == 8_000_000 * 1024


def _under_address_space_limit(limit: int, code: str) -> subprocess.CompletedProcess:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          preexec_fn=limited, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})


GiB = 2**30


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_ulimit_v_binds_the_guard():
    """Under ``ulimit -v`` the limit is what is left of the address space: the guard refuses what
    MemAvailable alone would let through."""
    available = meminfo_available()
    if available is None or available < 8 * GiB:
        pytest.skip("needs MemAvailable well above the address-space limit of the test")
    done = _under_address_space_limit(3 * GiB, """
from lbm_bench.protocol.memory import check_memory, estimate_generation_memory
from lbm_bench.protocol.memory_limits import address_space_available, memory_limit
limit = memory_limit()
print(limit.source, limit.bytes == address_space_available())
estimate = estimate_generation_memory("gaussian", 2000, 2000, 2, 2)
assert 3 * 2**30 < estimate.total < 8 * 2**30, estimate.total
try:
    check_memory(estimate)
except ValueError as exc:
    print("refused:", exc)
""")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "ulimit -v True"
    assert second.startswith("refused: the dense gaussian 2000x2000 table needs about")
    assert second.count("available (ulimit -v)") == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_generate_under_ulimit_v_is_one_line(tmp_path):
    """The command line's refusal under ``ulimit -v``: one line, exit 2, no file (it was a
    MemoryError traceback, the guard reading MemAvailable alone)."""
    available = meminfo_available()
    if available is None or available < 8 * GiB:
        pytest.skip("needs MemAvailable well above the address-space limit of the test")
    code = (f"import sys; from lbm_bench.cli import main; sys.exit(main(['generate', '--kind', 'gaussian', "
            f"'--shape', '2000x2000', '--clusters', '2x2', '--risk', '0.1', '-q', '-o', "
            f"'{tmp_path / 'x.h5'}']))")
    done = _under_address_space_limit(3 * GiB, code)
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1
    assert "available (ulimit -v)" in done.stderr and "--shape" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_address_space_available_without_a_limit():
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        assert address_space_available() is None
    else:
        assert address_space_available() >= 0
