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


@pytest.mark.parametrize("edit, message", [
    (("rates = [[", "rates = [[1e300, "), "beyond the 1e+15 a table can be drawn at"),
    (("rates = [[", "rates = [[" + "9" * 400 + ", "), "design.blocks.rates must be an array of numbers"),
    (("max_clusters = [4, 4]", "max_clusters = [inf, 4]"), "selection.max_clusters must be two positive integers"),
])
def test_a_hostile_design_file_of_a_spec_is_one_line_naming_it(design_file, tmp_path, capsys, edit, message):
    """Issue 48: rates of 1e300 or 400 digits in a spec's design gave an OverflowError after 60 warning
    lines in build, as in generate; now one line naming the design file and the key, before the work."""
    import re

    (tmp_path / "spec" / "designs").mkdir(parents=True)
    old, new = edit
    text = design_file.read_text()
    assert old in text
    if new.endswith(", "):  # the first number replaced
        text = re.sub(rf"^{re.escape(old)}[^,]+, ", new, text, count=1, flags=re.M)
    else:
        text = text.replace(old, new, 1)
    (tmp_path / "spec" / "designs" / "d.toml").write_text(text)
    spec = tmp_path / "spec" / "spec.toml"
    spec.write_text('[release]\nname = "like"\nversion = "1"\nseed = 3\n\n[[grid]]\ndesign = "designs/d.toml"\n'
                    "risks = [0.1]\n")
    out = tmp_path / "out"
    assert main(["build", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "designs/d.toml" in err and message in err and "--" not in err, err
    assert not out.exists()
