"""``lbm-bench generate`` (lbm_bench.cli.generate_command): round trips, from a random design and
from a design file, and its one-line refusals (exit 2, nothing written)."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from lbm_bench import load_table, read_design_file
from lbm_bench.cli import main
from tests.cli.helpers import REPO, SMALL, run_cli


def test_generate_writes_a_table_and_prints_a_summary(table_file, capsys):
    table = load_table(table_file)
    assert table.data.shape == (30, 24) and table.seed == 3
    assert table.criterion == "bayes" and abs(table.bayes_risk.risk - 0.1) <= 0.03
    assert main(["info", str(table_file)]) == 0
    out = capsys.readouterr().out
    assert "bernoulli table 30x24" in out and "seed 3" in out
    assert "floor (Bayes labels for l_item" in out and "Gibbs risk of the MAP labels" in out
    assert main(["info", "--json", str(table_file)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_rows"] == 30 and info["criterion"] == "bayes" and info["format_version"] == "1.1"
    assert info["bayes_risk"] == table.bayes_risk.risk and info["risk"] == table.risk.risk


def test_generate_sparse_poisson_with_effects_and_their_spread(tmp_path, capsys):
    """--density, --effects and --effects-spread (issue 16, item 1) reach the model and the file."""
    from scipy import sparse

    path = tmp_path / "p.h5"
    assert main(["generate", "--kind", "poisson", "--shape", "240x160", "--clusters", "2x2", "--risk", "0.1",
                 "--tolerance", "0.04", "--samples", "200", "--calibration-tables", "5", "--seed", "4",
                 "--density", "0.05", "--effects", "--effects-spread", "0.6", "-q", "-o", str(path)]) == 0
    table = load_table(path)
    assert isinstance(table.data, sparse.csr_array) and table.data.nnz / (240 * 160) == pytest.approx(0.05, rel=0.3)
    assert table.options["model_options"] == {"density": 0.05, "effects": True, "effects_spread": 0.6}
    assert table.model.row_effects.shape == (240,) and table.model.col_effects.shape == (160,)
    assert 0.4 < np.std(np.log(table.model.row_effects)) < 0.8  # the spread, not the default 0.3
    assert main(["info", str(path)]) == 0
    assert "poisson table 240x160, 2x2 clusters, seed 4, sparse:" in capsys.readouterr().out


def test_generate_refuses_to_overwrite(table_file):
    before = table_file.read_bytes()
    result = run_cli("generate", *SMALL, "-o", table_file)
    assert result.returncode == 2 and "exists" in result.stderr
    assert table_file.read_bytes() == before


def test_generate_never_replaces_a_file_created_meanwhile(tmp_path, monkeypatch, capsys):
    """Two ``generate -o same.h5`` at once: the one that finishes second must not replace
    the first one's table (the file appears after the up-front check)."""
    import lbm_bench.storage.writer as writer

    out = tmp_path / "same.h5"
    write = writer._write_image

    def the_other_process_finishes_first(image, temporary):
        out.write_bytes(b"the other table")
        write(image, temporary)

    monkeypatch.setattr(writer, "_write_image", the_other_process_finishes_first)
    assert main(["generate", *SMALL, "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"lbm-bench generate: error: output {out} was created by another process meanwhile; "
                   "not replaced (use --force to overwrite)\n")
    assert out.read_bytes() == b"the other table" and [p.name for p in tmp_path.iterdir()] == ["same.h5"]
    assert main(["generate", *SMALL, "-q", "--force", "-o", str(out)]) == 0  # --force replaces
    assert load_table(out).seed == 3


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_generate_under_a_file_size_limit_says_so_in_one_line(tmp_path):
    """``ulimit -f`` below the table's size: one line in words, exit 2, no file left
    (HDF5 used to print its internals over two lines, then crash at exit)."""
    import resource

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, resource.RLIM_INFINITY))

    out = tmp_path / "big.h5"
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "generate", *SMALL, "-q", "-o", str(out)],
                          capture_output=True, text=True, cwd=REPO, preexec_fn=limit_file_size, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == (f"lbm-bench generate: error: could not write {out}: file too large "
                           "(over the file-size limit of this process, see ulimit -f)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option, message", [
    (["--missing", "1"], "--missing must lie in [0, 1), got 1.0"),
    (["--missing", "-0.1"], "--missing must lie in [0, 1), got -0.1"),
    (["--missing", "nan"], "--missing must lie in [0, 1), got nan"),
    (["--missing-mechanism", "block"], "--missing-mechanism is set but --missing is 0"),
    (["--missing", "0.3", "--missing-mechanism", "mnar"], "--missing-mechanism must be one of"),
    (["--missing", "0.97"], "cannot be reached with 97% of the entries missing"),
    (["--missing", "0.2", "--density", "0.1"], "--missing=0.2 is more than --density=0.1"),
])
def test_bad_missing_options_are_one_line_exit_2_nothing_written(option, message, tmp_path):
    out = tmp_path / "t.h5"
    result = run_cli("generate", *SMALL, *option, "-o", out)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_entries_through_the_command_line(tmp_path, capsys):
    out = tmp_path / "m.h5"
    assert main(["generate", *SMALL, "--missing", "0.3", "--missing-mechanism", "block", "-o", str(out), "-q"]) == 0
    table = load_table(out)
    assert table.missing_mechanism == "block" and np.isnan(table.data).any()
    assert main(["info", str(out)]) == 0
    assert "missing entries: " in capsys.readouterr().out
    assert main(["info", "--json", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format_version"] == "1.3" and info["missing_mechanism"] == "block"
    assert info["missing_fraction"] == info["n_missing"] / (30 * 24)


def test_generate_from_a_design_file(design_file, tmp_path):
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(design_file), "--risk", "0.1", "--samples", "200",
                 "--tolerance", "0.03", "--seed", "1", "-o", str(out), "-q"]) == 0
    table = load_table(out)
    assert table.data.shape == (120, 80) and abs(table.bayes_risk.risk - 0.1) <= 0.03
    assert table.design.digest == read_design_file(design_file).digest
    assert main(["generate", "--design", str(design_file), "--risk", "0.2", "--shape", "60x40", "--samples", "200",
                 "--tolerance", "0.03", "--seed", "1", "-o", str(tmp_path / "s.h5"), "-q"]) == 0
    assert load_table(tmp_path / "s.h5").data.shape == (60, 40)


def _edited(design_file, tmp_path, old, new):
    text = design_file.read_text()
    assert old in text
    if new.endswith(" + "):  # the first number replaced
        text = re.sub(rf"^{re.escape(old)}[^,]+", new[:-3], text, count=1, flags=re.M)
    else:
        text = text.replace(old, new, 1)
    path = tmp_path / "edited.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("old,new,message", [
    ('format = "lbm-bench-design/1.2"', 'format = "lbm-bench-design/2.0"', "newer than this lbm-bench reads"),
    ("row_proportions = [", "row_proportions = [0.9, ", "must have shape (2,)"),
    ("rates = [[", "rates = [[-", "rates must be > 0.0"),
    ("counts = [2, 2]", "counts = [2, 3]", "must have shape (3,)"),
    # issue 48: a key, never a flag the user did not give; numbers float64 cannot draw from
    ('kind = "poisson"\n', "", "the key 'kind' is missing"),
    ('kind = "poisson"', 'kind = "Poisson"', "'kind' must name a family"),
    ("max_clusters = [4, 4]", "max_clusters = [inf, 4]", "selection.max_clusters must be two positive integers"),
    ("rates = [[", "rates = [[1e300 + ", "beyond the 1e+15 a table can be drawn at"),
    ("path_knee = 0.5", "path_knee = 0.9999999999999999", "design.path_knee must lie in [0.01, 0.99]"),
    ("# A design", "\ufeff# A design", None),
])
def test_generate_refuses_a_design_file_edited_badly(design_file, tmp_path, capsys, old, new, message):
    path = _edited(design_file, tmp_path, old, new)
    out = tmp_path / "t.h5"
    if message is None:  # a UTF-8 byte-order mark is skipped: the file reads (the clusters refused)
        assert main(["generate", "--design", str(path), "--risk", "0.1", "--clusters", "3x3", "-o", str(out)]) == 2
        assert "the design has 2x2 clusters, not 3x3" in capsys.readouterr().err
        return
    assert main(["generate", "--design", str(path), "--risk", "0.1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err and message in err, err
    assert not out.exists() and " --" not in err.split(str(path), 1)[1], err


def test_a_design_of_one_cluster_names_the_design_not_a_flag(design_file, tmp_path, capsys):
    """fit on noise used to write a 1x1 design that generate refused with '--clusters must be >= 2, got 1'."""
    text = design_file.read_text().split("[classes]")[0]
    lines = [line for line in text.splitlines() if not line.startswith(("runners_up", "path_knee"))]
    text = "\n".join(lines).replace("counts = [2, 2]", "counts = [1, 2]")
    text = re.sub(r"row_proportions = \[[^]]*\]", "row_proportions = [1.0]", text)
    text = re.sub(r"^rates = \[\[([^]]*)\], \[[^]]*\]\]", r"rates = [[\1]]", text, flags=re.M)
    path = tmp_path / "one.toml"
    path.write_text(text)
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(path), "--risk", "0.1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: a design of 1x2 clusters" in err and "--clusters" not in err, err


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_device_or_a_pipe_as_design_is_refused_at_once(tmp_path, capsys, special):
    """issue 48: --design /dev/zero read without bound, a FIFO blocked forever."""
    import os

    if special == "fifo":
        special = str(tmp_path / "fifo.toml")
        os.mkfifo(special)
    assert main(["generate", "--design", special, "--risk", "0.1", "-o", str(tmp_path / "t.h5")]) == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    (["--kind", "gaussian"], "error: --kind gaussian but the design is of poisson blocks"),
    (["--clusters", "3x3"], "the design has 2x2 clusters, not 3x3"),
    (["--density", "0.1"], "--density: the design fixes its design options"),
    # an option at its default value does nothing either: it was silently accepted (issue 48)
    (["--base-rate", "2"], "--base-rate: the design fixes its design options"),
    (["--missing", "0"], "--missing: the design fixes its design options"),
])
def test_generate_refuses_what_the_design_contradicts(design_file, tmp_path, capsys, args, message):
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(design_file), "--risk", "0.1", *args, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_generate_without_a_design_still_needs_kind_shape_and_clusters(tmp_path, capsys):
    assert main(["generate", "--risk", "0.1", "--kind", "poisson", "-o", str(tmp_path / "t.h5")]) == 2
    assert "--shape, --clusters required (or --design DESIGN.toml)" in capsys.readouterr().err


def test_generate_takes_the_kernel_and_names_it_in_its_refusals(tmp_path, capsys, monkeypatch):
    """--kernel scipy and --kernel compiled write the same file; --kernel compiled where numba
    does not import is refused naming the flag, before the work; after a large sparse table
    built without numba, one line says what numba would give."""
    from lbm_bench.inference import kernel_choice

    args = ["generate", "--kind", "bernoulli", "--shape", "200x100", "--clusters", "2x2", "--risk", "0.1",
            "--tolerance", "0.04", "--samples", "200", "--calibration-tables", "4", "--seed", "5",
            "--density", "0.1", "-q"]
    kernels = ["scipy", "compiled"] if kernel_choice.numba_status()[0] else ["scipy"]
    for kernel in kernels:
        assert main([*args, "--kernel", kernel, "-o", str(tmp_path / f"{kernel}.h5")]) == 0
    assert len({(tmp_path / f"{kernel}.h5").read_bytes() for kernel in kernels}) == 1
    monkeypatch.setattr(kernel_choice, "numba_status", lambda: (None, "ImportError: hidden"))
    capsys.readouterr()
    assert main([*args, "--kernel", "compiled", "-o", str(tmp_path / "refused.h5")]) == 2
    assert capsys.readouterr().err.strip() == ("lbm-bench generate: error: --kernel compiled needs numba (pip "
                                               "install 'lbm-bench[fast]'), which does not import here: "
                                               "ImportError: hidden")
    assert not (tmp_path / "refused.h5").exists()
    monkeypatch.setattr(kernel_choice, "COMPILED_MIN_ENTRIES", 100)
    assert main([a for a in args if a != "-q"] + ["-o", str(tmp_path / "hint.h5")]) == 0
    err = capsys.readouterr().err
    assert "note: pip install 'lbm-bench[fast]' (numba) makes the sparse sweeps of tables this large about" in err
