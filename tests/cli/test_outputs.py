"""Outputs never replace an input or a device, and are checked before the work (issue 48, item 3):
for every command that writes a file (generate, fit, show, build's archive), an output that is one
of its inputs (the same inode: the same name, a hard or a symbolic link) or anything but a regular
file (a named pipe, a character device, a link to one, a dangling link) is refused in one line,
``--force`` or not, before any work and without touching it; an out-of-range ``--seed`` is refused
before the work; an output whose name says another format is written with a one-line warning.

Devices are made in a temporary folder (``os.mknod``, when this process may), never the
machine's own: no test here opens ``/dev/null`` or any real device for writing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from lbm_bench._atomic import check_writable_file, put_in_place
from lbm_bench.cli import main
from tests.cli.helpers import SMALL


def _fifo(folder: Path) -> Path:
    path = folder / "pipe.h5"
    os.mkfifo(path)
    return path


def _char_device(folder: Path) -> Path:
    """A character device node in ``folder`` (the numbers of /dev/null: a node made here writes
    nowhere the machine cares about, and nothing here opens it); skip when not permitted."""
    path = folder / "device.h5"
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
            pytest.skip("this process may not make device nodes")
        raise
    return path


def _dangling(folder: Path) -> Path:
    path = folder / "link.h5"
    path.symlink_to(folder / "missing" / "x.h5")
    return path


def _link_to_device(folder: Path) -> Path:
    path = folder / "to-device.h5"
    path.symlink_to(_char_device(folder))
    return path


NOT_REGULAR = {
    "fifo": (_fifo, "is a named pipe (FIFO), not a regular file"),
    "device": (_char_device, "is a character device, not a regular file"),
    "link to a device": (_link_to_device, "a character device, not a regular file"),
    "dangling link": (_dangling, "which does not exist"),
}


def _kind(path: Path) -> int:
    return stat.S_IFMT(path.lstat().st_mode)


def _forbid(monkeypatch, module: str, name: str) -> None:
    """Make the command's work fail loudly if it starts: the refusal must come first."""
    import importlib

    def started(*args, **kwargs):
        raise AssertionError(f"{name} ran before the output was refused")

    monkeypatch.setattr(importlib.import_module(module), name, started)


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("case", sorted(NOT_REGULAR))
def test_generate_never_replaces_what_is_not_a_regular_file(tmp_path, monkeypatch, capsys, case, force):
    make, words = NOT_REGULAR[case]
    output = make(tmp_path)
    kind = _kind(output)
    _forbid(monkeypatch, "lbm_bench.protocol.generate", "generate_table")
    assert main(["generate", *SMALL, "-o", str(output), *force]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "it is never replaced" in err
    assert _kind(output) == kind  # untouched: still the pipe, the device, the link
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(("pipe", "device", "link",
                                                                                "to-device"))) == []


@pytest.mark.parametrize("case", sorted(NOT_REGULAR))
def test_fit_and_show_never_replace_what_is_not_a_regular_file(tmp_path, monkeypatch, capsys, counts, case):
    make, words = NOT_REGULAR[case]
    output = make(tmp_path)
    kind = _kind(output)
    _forbid(monkeypatch, "lbm_bench.fitting", "fit_design")
    _forbid(monkeypatch, "lbm_bench.user_plots", "plot_file")
    for command in (["fit", str(counts)], ["show", str(counts)]):
        assert main([*command, "-o", str(output), "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err
        assert _kind(output) == kind


def test_no_command_replaces_its_own_input(tmp_path, monkeypatch, capsys, counts, design_file):
    """``fit DATA -o DATA --force``, ``generate --design D -o D --force``, ``show T -o T``: refused,
    by inode (another name of the same file too), and the input keeps its bytes."""
    data = tmp_path / "counts.npy"
    data.write_bytes(counts.read_bytes())
    design = tmp_path / "design.toml"
    design.write_bytes(design_file.read_bytes())
    os.link(data, tmp_path / "also-counts.npy")
    (tmp_path / "design-link.toml").symlink_to(design)
    _forbid(monkeypatch, "lbm_bench.fitting", "fit_design")
    _forbid(monkeypatch, "lbm_bench.protocol.generate", "generate_table")
    _forbid(monkeypatch, "lbm_bench.user_plots", "plot_file")
    before = {path: path.read_bytes() for path in (data, design)}
    for argv in (["fit", data, "-o", data], ["fit", data, "-o", tmp_path / "also-counts.npy"],
                 ["generate", "--design", design, "--risk", "0.1", "-o", design],
                 ["generate", "--design", design, "--risk", "0.1", "-o", tmp_path / "design-link.toml"],
                 ["show", data, "-o", data], ["show", data, "--design", design, "-o", design]):
        assert main([*map(str, argv), "--force"]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is the input" in err and "never replaced" in err, err
    assert {path: path.read_bytes() for path in (data, design)} == before
    assert (tmp_path / "design-link.toml").is_symlink()


def test_builds_archive_is_never_its_spec(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text("not read: the archive is refused first\n")
    (tmp_path / "out.tar.gz").symlink_to(spec)
    assert main(["build", str(spec), "--out", str(tmp_path / "out"), "--archive", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--archive" in err and "is the input" in err and err.count("\n") == 1
    assert spec.read_text() == "not read: the archive is refused first\n"
    assert not (tmp_path / "out").exists()


def test_a_seed_out_of_range_is_refused_before_the_work(tmp_path, monkeypatch, capsys, counts):
    """``generate --seed 2**64`` ran 6 s, then could not save the table; ``fit --seed -1`` said
    numpy's ``expected non-negative integer``."""
    from lbm_bench.protocol import generate as generate_module

    def calibrated(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(generate_module, "_generate", calibrated)
    options = [a for a in SMALL if a not in ("--seed", "3")]
    assert main(["generate", *options, "--seed", str(2**64), "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seed must be below 2**63" in err and str(2**64) in err
    _forbid(monkeypatch, "lbm_bench.algorithms.selection", "select_lbm")
    assert main(["fit", str(counts), "--seed", "-1", "-o", str(tmp_path / "d.toml")]) == 2
    assert "--seed must be a non-negative seed, got -1" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_output_named_for_another_format_is_written_with_a_warning(tmp_path, capsys, counts):
    assert main(["generate", *SMALL, "-q", "-o", str(tmp_path / "t.csv")]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "t.csv will hold an HDF5 table file" in err
    assert (tmp_path / "t.csv").read_bytes()[:4] == b"\x89HDF"
    assert main(["fit", str(counts), "--max-clusters", "3x3", "--no-certify", "-q", "-o",
                 str(tmp_path / "x.h5")]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.h5 will hold a design file (TOML text)" in err
    assert main(["fit", str(counts), "--max-clusters", "3x3", "--no-certify", "-q", "-o",
                 str(tmp_path / "x.toml")]) == 0
    assert capsys.readouterr().err == ""


# -- the writer itself: a device, a pipe or a folder is never replaced, whoever asks ------------


def test_put_in_place_never_replaces_what_is_not_a_regular_file(tmp_path):
    """The last line of defence, for every writer of the package (release files, results): even
    with ``overwrite``, a pipe or a device at the destination stays."""
    for make in (_fifo, _dangling, _char_device):
        destination = make(tmp_path)
        kind = _kind(destination)
        temporary = tmp_path / ".new"
        temporary.write_text("x")
        with pytest.raises(ValueError, match="not replaced"):
            put_in_place(temporary, destination, overwrite=True)
        assert _kind(destination) == kind
        temporary.unlink()


def test_check_writable_file_names_the_input(tmp_path):
    source = tmp_path / "a.npy"
    source.write_bytes(b"x")
    os.link(source, tmp_path / "b.npy")
    with pytest.raises(ValueError, match=r"output .*b.npy is the input \(.*a.npy\)"):
        check_writable_file(tmp_path / "b.npy", overwrite=True, inputs=(source,))
    check_writable_file(tmp_path / "c.npy", overwrite=True, inputs=(source, None))
