"""``lbm-bench build`` (lbm_bench.cli.build_command): refusals before the work, and what it prints
of a build (the releases themselves: tests/release/test_build.py, test_folder.py and
test_rebuild.py)."""

import pytest

from lbm_bench.cli import main
from lbm_bench.release.build_report import BuildReport
from tests.cli.helpers import REPO

MINI = REPO / "repository" / "mini.toml"


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "lbm-bench build: error: --jobs must be >= 1, got 0"),
    (["--scheduler", "tcp://h:8786"], "lbm-bench build: error: --scheduler needs --backend dask"),
])
def test_bad_options_are_refused_before_the_work(args, message, tmp_path, capsys):
    assert main(["build", str(MINI), "--out", str(tmp_path / "out"), *args]) == 2
    assert capsys.readouterr().err.strip() == message and not (tmp_path / "out").exists()


def test_what_force_replaced_is_said_even_when_quiet(tmp_path, capsys, monkeypatch):
    import lbm_bench.release as release

    def built(spec, out, **options):
        assert options["force"] is True and options["n_jobs"] == 1
        replaced = f"replaced release old 1.0 (2 table(s), seed 7) in {out} by ..."
        return BuildReport(out_dir=out, replaced=replaced)

    monkeypatch.setattr(release, "build_release", built)
    assert main(["build", str(MINI), "--out", str(tmp_path / "out"), "--force", "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("--force: replaced release old 1.0 (2 table(s), seed 7)")


def test_a_release_folder_held_by_another_release_names_the_flags(tmp_path, monkeypatch, capsys):
    """The library names out= and force=True; the command, --out and --force."""
    import lbm_bench.release as release

    def refused(spec, out, **options):
        raise ValueError(f"{out} holds release old 1.0, not this spec's release: build into "
                         "another out=, or give force=True to replace it")

    monkeypatch.setattr(release, "build_release", refused)
    assert main(["build", str(MINI), "--out", str(tmp_path / "out"), "-q"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "build into another --out, or give --force to replace it")


def test_build_takes_the_kernel(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["build", str(MINI), "--out", str(tmp_path / "out"), "--kernel", "numba"])
    assert exit_.value.code == 2
    assert "argument --kernel: invalid choice: 'numba'" in capsys.readouterr().err
