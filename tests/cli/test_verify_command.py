"""``lbm-bench verify`` (lbm_bench.cli.verify_command): what it prints and its exit status (the
checks themselves: tests/release/test_verify.py and test_rebuild.py)."""

from lbm_bench.cli import main


def test_problems_and_differences_are_printed_and_exit_1(tmp_path, capsys, monkeypatch):
    import lbm_bench.release as release

    monkeypatch.setattr(release, "verify_release", lambda folder, jobs: ["t.h5: checksum differs"])
    monkeypatch.setattr(release, "compare_releases", lambda a, b: ["u.h5: only in the release"])
    other = tmp_path / "other"
    assert main(["verify", str(tmp_path), "--against", str(other), "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "PROBLEM t.h5: checksum differs\nDIFFERS u.h5: only in the release\n"
    assert captured.err == f"1 problem(s) in {tmp_path}, 1 difference(s) from {other}\n"


def test_jobs_below_one_are_refused(tmp_path, capsys):
    assert main(["verify", str(tmp_path), "--jobs", "0"]) == 2
    assert capsys.readouterr().err == "lbm-bench verify: error: --jobs must be >= 1, got 0\n"
