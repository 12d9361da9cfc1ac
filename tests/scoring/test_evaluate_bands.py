"""evaluate reads and scores the Gibbs label sets band by band (issue 33): the report is the one
the whole sets in memory give, whatever the bands and the workers."""

import math
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from lbm_bench import evaluate, floor_certificate, generate_table, load_table, save_table
from lbm_bench.metrics.chance import chance_risk_of_sets
from lbm_bench.metrics.mcmc import chain_diagnostics
from lbm_bench.metrics.partition import ari_values
from lbm_bench.metrics.risk import conditional_risk_of_sets, set_item_losses
from lbm_bench.scoring import set_counts
from lbm_bench.scoring.evaluate import CHANCE_SEED
from lbm_bench.storage import FormatError

DATA = Path(__file__).resolve().parents[1] / "data"


def _whole_sets_scores(table, rows, cols) -> dict:
    """The scores of evaluate computed as before issue 33 (b05d9fb): every metric on the whole
    label sets in memory (the reference the banded counts must equal exactly)."""
    g = table.gibbs
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    result = conditional_risk_of_sets(g.rows, g.cols, rows, cols, g.chain_lengths.tolist())
    row_l, col_l = set_item_losses(g.rows, g.cols, *result.matched_labels(rows, cols))
    mine = row_l + col_l - row_l * col_l
    map_row, map_col = set_item_losses(g.rows, g.cols, table.map_rows, table.map_cols)
    map_losses = map_row + map_col - map_row * map_col
    map_excess_mcse, _ = chain_diagnostics(mine - map_losses, g.chain_lengths)
    out = {"risk": result.risk, "risk_mcse": result.mcse, "row_loss": result.mean_l_row,
           "col_loss": result.mean_l_col, "cari_mean": result.cari_mean, "cari_std": result.cari_sd,
           "row_map": result.row_map.tolist(), "col_map": result.col_map.tolist(),
           "matching_exact": result.exact, "map_excess_risk": float(result.risk - map_losses.mean()),
           "map_excess_mcse": float(map_excess_mcse),
           "ari_rows": float(np.mean(ari_values(g.rows.astype(np.int64), rows))),
           "ari_cols": float(np.mean(ari_values(g.cols.astype(np.int64), cols)))}
    out["chance_risk"], out["chance_mcse"] = chance_risk_of_sets(
        g.rows, g.cols, table.model.row_proportions, table.model.col_proportions,
        rng=np.random.default_rng(CHANCE_SEED))
    if table.bayes_risk is not None:
        gr, gc = table.model.block_shape
        floor = floor_certificate(g, starts=[(table.map_rows, table.map_cols)], n_row_clusters=gr,
                                  n_col_clusters=gc).losses
        out["excess_risk"] = float(result.risk - floor.mean())
        out["excess_mcse"] = float(chain_diagnostics(mine - floor, g.chain_lengths)[0])
    else:
        out["excess_risk"], out["excess_mcse"] = out["map_excess_risk"], out["map_excess_mcse"]
    return out


def _same(report, expected: dict) -> None:
    got = report.to_dict()
    for name, value in expected.items():
        same = got[name] == value or (isinstance(value, float) and math.isnan(value) and math.isnan(got[name]))
        assert same, (name, got[name], value)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Files: dense Bernoulli with its floor, dense Poisson with missing entries and its floor,
    sparse with its floor, categorical, and a format 1.0 file (no floor)."""
    folder = tmp_path_factory.mktemp("bands")
    paths = {}
    for name, kwargs in {
        "bernoulli": dict(kind="bernoulli", n_rows=150, n_cols=130, n_row_clusters=3, n_col_clusters=2, rng=3),
        "poisson_missing": dict(kind="poisson", n_rows=140, n_cols=70, n_row_clusters=2, n_col_clusters=3,
                                missing=0.1, rng=4),
    }.items():
        table = generate_table(**kwargs, target_risk=0.15, tolerance=0.05, n_samples=200, n_calibration_tables=10)
        paths[name] = folder / f"{name}.h5"
        save_table(table, paths[name])
    for name in ("table_v1_1_sparse", "table_v1_2_categorical", "table_v1_3_missing_sparse", "table_v1"):
        paths[name] = folder / f"{name}.h5"
        shutil.copy(DATA / f"{name}.h5", paths[name])
    return paths


def _predictions(table, seed=0):
    """Known numbers of clusters (MAP, truth), unknown ones (more, fewer, one), huge label values."""
    rng = np.random.default_rng(seed)
    n, d = table.shape
    return {
        "map": (table.map_rows, table.map_cols),
        "truth": (table.truth_rows, table.truth_cols),
        "more": (rng.integers(0, 5, n), rng.integers(0, 4, d)),
        "fewer_and_one": (np.minimum(table.map_rows, 1), np.zeros(d, dtype=np.int64)),
        "huge": (table.map_rows.astype(np.int64) * 10**12 + 7, table.map_cols.astype(np.int64) + 3),
    }


@pytest.mark.parametrize("name", ["bernoulli", "poisson_missing", "table_v1_1_sparse", "table_v1_2_categorical",
                                  "table_v1_3_missing_sparse", "table_v1"])
def test_banded_report_equals_the_whole_sets_scores(tables, name, monkeypatch):
    table = load_table(tables[name])
    for key, (rows, cols) in _predictions(table).items():
        expected = _whole_sets_scores(table, rows, cols)
        from_file = evaluate(tables[name], rows, cols)
        _same(from_file, expected)
        with monkeypatch.context() as patch:  # bands of 7 items of the sets in memory
            patch.setattr(set_counts, "BAND_LABELS", 7 * table.gibbs.n_samples)
            in_memory = evaluate(table, rows, cols)
        _same(in_memory, expected)
        assert {k: v for k, v in in_memory.to_dict().items() if k != "table"} == \
            {k: v for k, v in from_file.to_dict().items() if k != "table"}, key


def test_workers_and_chunk_wide_bands_give_the_same_report(tables, monkeypatch):
    """Bands one HDF5 chunk wide (64 items), counted by two worker processes."""
    path = tables["bernoulli"]
    table = load_table(path)
    rows, cols = _predictions(table)["more"]
    expected = evaluate(path, rows, cols).to_dict()
    monkeypatch.setattr(set_counts, "BAND_LABELS", 1)
    stored = load_table(path, label_sets=False).gibbs.rows
    assert set_counts.band_edges(*stored.shape, stored.chunk_items, 1) == [0, 64, 128, 150]
    assert evaluate(path, rows, cols, jobs=2).to_dict() == expected


def test_a_label_beyond_the_clusters_is_refused_as_it_is_read(tables, tmp_path):
    path = tmp_path / "bad.h5"
    shutil.copy(tables["bernoulli"], path)
    with h5py.File(path, "r+") as f:
        f["gibbs/rows"][5, 100] = 7
    table = load_table(path, label_sets=False)  # the sets are not read
    with pytest.raises(FormatError, match=r"bad.h5: dataset gibbs/rows holds label 7, outside \[0, 3\)"):
        evaluate(path, table.map_rows, table.map_cols)
    with pytest.raises(FormatError, match="gibbs/rows holds label 7"):
        load_table(path)


def test_command_line_jobs_quiet_and_info_without_the_sets(tables, tmp_path, capsys):
    """``evaluate --jobs 2 --quiet`` prints the report of ``--jobs 1``; ``--jobs 0`` is one line,
    exit 2; ``info`` prints the summary without reading the label sets (a label beyond the
    clusters in them goes unseen), which ``evaluate`` refuses in one line."""
    from lbm_bench.cli import main

    path = tmp_path / "table.h5"
    shutil.copy(tables["bernoulli"], path)
    table = load_table(path)
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.txt"
    np.savetxt(rows, table.map_rows, fmt="%d")
    np.savetxt(cols, table.map_cols, fmt="%d")
    command = ["evaluate", str(path), "--rows", str(rows), "--cols", str(cols), "--json"]
    assert main(command) == 0
    one = capsys.readouterr().out
    assert main([*command, "--jobs", "2", "--quiet"]) == 0
    assert capsys.readouterr().out == one
    assert main([*command, "--jobs", "0"]) == 2
    assert "jobs must be >= 1, got 0" in capsys.readouterr().err
    assert main(["info", str(path)]) == 0
    summary = capsys.readouterr().out
    with h5py.File(path, "r+") as f:
        f["gibbs/cols"][0, 0] = 9
    assert main(["info", str(path)]) == 0
    assert capsys.readouterr().out == summary
    assert main(command) == 2
    err = capsys.readouterr().err.strip()
    assert "dataset gibbs/cols holds label 9, outside [0, 2)" in err and "\n" not in err


@pytest.mark.parametrize("name", ["bernoulli", "table_v1_2_categorical"])
def test_the_floor_s_descents_as_tasks_give_the_same_report(tables, name, monkeypatch):
    """The floor's descents of a large table run as tasks over ``jobs`` threads of this process
    (every table counts as large here): the report of ``jobs=1``, which runs them one by one."""
    from lbm_bench.inference import floor
    from lbm_bench.tasks import large

    path = tables[name]
    table = load_table(path)
    rows, cols = _predictions(table)["more"]
    expected = evaluate(path, rows, cols).to_dict()
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    tasks = []
    original = floor._descent_task
    monkeypatch.setattr(floor, "_descent_task", lambda *args: tasks.append(1) or original(*args))
    assert evaluate(path, rows, cols, jobs=2).to_dict() == expected
    assert len(tasks) == 2  # the descents ran as two tasks, in threads (a patched function)
