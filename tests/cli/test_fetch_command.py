"""``lbm-bench fetch`` (lbm_bench.cli.fetch_command): its refusals name its flags, not
fetch_release's arguments (downloads themselves: tests/release/test_fetch.py)."""

import pytest

from lbm_bench.cli import main


@pytest.mark.parametrize("args, message", [
    (["--max-size", "big"],
     "--max-size must be a size like 16G, 500MiB or 2000000 (bytes), got 'big'"),
    (["--timeout", "-1"], "--timeout must be finite and > 0, got -1.0"),
    (["--min-rate", "-1"], "--min-rate must be finite and >= 0, got -1.0"),
    (["--sha256", "abc"], "--sha256 must be 64 hexadecimal digits, got 'abc'"),
])
def test_bad_limits_name_the_flags(args, message, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["fetch", str(tmp_path / "r.tar.gz"), "--cache", str(cache), *args]) == 2
    assert capsys.readouterr().err == f"lbm-bench fetch: error: {message}\n"


def test_a_refused_download_is_one_line_exit_1_naming_the_flag(tmp_path, capsys, monkeypatch):
    import lbm_bench.release as release
    from lbm_bench.release.download import FetchError

    def refused(url, **options):
        raise FetchError(f"{url}: refused archive: it unpacks to more than max_size (50 KiB)")

    monkeypatch.setattr(release, "fetch_release", refused)
    assert main(["fetch", "r.tar.gz", "--cache", str(tmp_path / "cache")]) == 1
    assert capsys.readouterr().err == (
        "lbm-bench fetch: error: r.tar.gz: refused archive: it unpacks to more than --max-size "
        "(50 KiB)\n")
