"""The HTML data card of a built release (lbm_bench.release.card): a static page with every
table, its thumbnail and working relative links, no script and no network; it renders in
headless Chromium; the R snippet it shows reads a table with hdf5r (when R is installed)."""

from __future__ import annotations

import html
import html.parser
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lbm_bench.release.card import card_html, r_snippet, write_card, write_thumbnails

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("href", "src"):
                self.links.append(value)


def _parse(text: str) -> _Links:
    parser = _Links()
    parser.feed(text)
    return parser


def test_card_lists_every_table_with_working_local_links(built):
    text = (built / "index.html").read_text(encoding="utf-8")
    manifest = json.loads((built / "manifest.json").read_text())
    parsed = _parse(text)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "iframe" not in parsed.tags
    for entry in manifest["tables"]:
        assert entry["id"] in text and f'href="{entry["file"]}"' in text
        assert f"{entry['risk']:.4f}" in text
    assert parsed.links
    for link in parsed.links:
        assert "://" not in link and not link.startswith("//"), link  # nothing from the network
        assert (built / link).is_file(), link
    assert {"croissant.json", "manifest.json", "README.md"} <= set(parsed.links)
    sums = dict(reversed(line.split("  ")) for line in (built / "SHA256SUMS").read_text().splitlines())
    assert "index.html" in sums
    thumbs = [link for link in parsed.links if link.startswith("thumbnails/")]
    assert len(set(thumbs)) == len(manifest["tables"])
    assert all(t in sums for t in thumbs)


def test_thumbnails_are_pictures(built):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    for path in sorted((built / "thumbnails").glob("*.png")):
        pixels = imread(path)[..., :3]
        # drawn cell by cell (no interpolation): a binary 30x20 table has two data colours,
        # the boundaries and a few greys of its uncertainty strips
        assert pixels.std() > 0.1 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 5, path.name
        assert b"Software" not in path.read_bytes()


def test_thumbnails_drawn_by_workers_equal_those_drawn_from_the_files(built, tmp_path):
    """The build's workers draw each thumbnail from the table in memory; drawn again from
    the table files (as the card does for a resumed build) they have the same bytes."""
    pytest.importorskip("matplotlib")
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    names = write_thumbnails(manifest, copy, redraw=True)
    assert names == [f"thumbnails/{t['id']}.png" for t in manifest["tables"]]
    for name in names:
        assert (copy / name).read_bytes() == (built / name).read_bytes(), name


def test_card_draws_only_missing_thumbnails(built, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from lbm_bench.release import card

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    victim = copy / f"thumbnails/{manifest['tables'][1]['id']}.png"
    victim.unlink()
    drawn = []
    draw = card.draw_thumbnail
    monkeypatch.setattr(card, "draw_thumbnail", lambda table, path: drawn.append(path.name) or draw(table, path))
    names = write_card(manifest, copy)
    assert drawn == [victim.name]
    assert names[:-1] == [f"thumbnails/{t['id']}.png" for t in manifest["tables"]] and names[-1] == "index.html"
    assert victim.read_bytes() == (built / "thumbnails" / victim.name).read_bytes()


def test_card_without_matplotlib_says_so(built, tmp_path, monkeypatch):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy, ignore=shutil.ignore_patterns("thumbnails"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    manifest = json.loads((copy / "manifest.json").read_text())
    assert write_card(manifest, copy) == ["index.html"]
    text = (copy / "index.html").read_text()
    assert "matplotlib was not installed" in text and "<img" not in text


def test_card_cites_the_spec_and_shows_both_risks(built):
    manifest = json.loads((built / "manifest.json").read_text())
    manifest["spec"]["release"]["citation"] = "Doe, J. The tiny release & its floor. 2026."
    text = card_html(manifest)
    assert "<h2>Cite</h2>\n<pre>Doe, J. The tiny release &amp; its floor. 2026.</pre>" in text
    assert "<th>criterion</th><th>floor &plusmn; MCSE</th><th>MAP risk &plusmn; MCSE</th>" in text
    for entry in manifest["tables"]:
        assert (f"<td>{entry['criterion']}</td><td class=num><strong>{entry['bayes_risk']:.4f} &plusmn; "
                f"{entry['bayes_risk_mcse']:.4f}</strong></td><td class=num>{entry['risk']:.4f} &plusmn; ") in text


def test_text_is_escaped():
    manifest = {
        "release": {"name": "<b>x</b>", "version": "1", "license": "CC0", "description": "a & b"},
        "spec": {"release": {"citation": "<script>alert(1)</script>"}},
        "lbm_bench_version": "0", "tables": [], "spec_file": None,
    }
    text = card_html(manifest)
    assert "<script>" not in text and "&lt;script&gt;" in text and "&lt;b&gt;x&lt;/b&gt;" in text


@pytest.mark.real_client
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium browser installed (Debian package chromium)")
def test_card_renders_in_headless_chromium(built, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    shot = tmp_path / "card.png"
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
        "--window-size=1200,1400", (built / "index.html").as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert shot.is_file(), done.stderr[-2000:]
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (1400, 1200)
    # text, table borders and the coloured thumbnails: far from a blank white page
    assert (pixels < 0.9).mean() > 0.02
    assert len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 200


def _r_with(packages: list[str]) -> str | None:
    """Why R cannot run the snippet, or None when it can."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "Rscript is not installed"
    code = "; ".join(f"library({p})" for p in packages)
    done = subprocess.run([rscript, "-e", code], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return f"R package(s) {', '.join(packages)} not installed (Debian r-cran-hdf5r, r-cran-matrix)"
    return None


def _run_r(code: str) -> list[str]:
    done = subprocess.run([shutil.which("Rscript"), "-e", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


_REPORT = ('\ncat(dim(X), sum(X), X[1, 1:3], X[2, 1], dim(gibbs_rows), gibbs_rows[2, 1:4], '
           'dim(gibbs_cols), truth_rows[1:5], truth_cols[1:3], map_rows[1:5], map_cols[1:3], '
           'bayes_rows[1:5], bayes_cols[1:3], criterion, sprintf("%.17g", bayes_risk), '
           'sprintf("%.17g", risk), "\\n")\n')


def _expected(path: Path) -> list[str]:
    import h5py

    with h5py.File(path, "r") as f:
        X = f["data"][:]
        values = [*X.shape, X.sum(), *X[0, :3], X[1, 0], *f["gibbs/rows"].shape, *(f["gibbs/rows"][1, :4] + 1),
                  *f["gibbs/cols"].shape, *(f["truth/rows"][:5] + 1), *(f["truth/cols"][:3] + 1),
                  *(f["map/rows"][:5] + 1), *(f["map/cols"][:3] + 1),
                  *(f["bayes/rows"][:5] + 1), *(f["bayes/cols"][:3] + 1)]
        criterion = f.attrs["criterion"]
        criterion = criterion.decode() if isinstance(criterion, bytes) else str(criterion)
        return [str(int(v)) for v in values] + [criterion] + [
            repr(float(f.attrs[name])) for name in ("bayes_risk", "risk")]


def test_the_card_shows_the_tested_r_snippet(built):
    manifest = json.loads((built / "manifest.json").read_text())
    text = html.unescape((built / "index.html").read_text())
    assert r_snippet(manifest["tables"][0]["file"]) in text


def test_python_snippet_runs_in_the_release(built, monkeypatch):
    """The card's Python code runs from the release folder and reads the floor and the certified risk."""
    from lbm_bench.release.card import python_snippet

    manifest = json.loads((built / "manifest.json").read_text())
    entry = manifest["tables"][0]
    monkeypatch.chdir(built)
    names: dict = {}
    exec(python_snippet(entry["file"], entry["id"]), names)  # noqa: S102 - our own generated code
    assert names["X"].shape == tuple(entry["shape"])
    assert names["floor"] == entry["bayes_risk"] and names["map_risk"] == entry["risk"]
    assert names["certified"] == (entry["bayes_risk"] if entry["criterion"] == "bayes" else entry["risk"])


@pytest.mark.real_client
@pytest.mark.parametrize("kind", ["poisson", "bernoulli"])
def test_r_snippet_reads_table_labels_and_label_sets(built, kind):
    reason = _r_with(["hdf5r"])
    if reason:
        pytest.skip(reason)
    manifest = json.loads((built / "manifest.json").read_text())
    entry = next(e for e in manifest["tables"] if e["kind"] == kind)
    path = built / entry["file"]
    got = _run_r(r_snippet(str(path)) + _REPORT)
    expected = _expected(path)
    assert got[:-2] == expected[:-2]
    assert [float(v) for v in got[-2:]] == [float(v) for v in expected[-2:]]  # the floor, the MAP's risk


@pytest.mark.real_client
def test_r_snippet_reads_a_sparse_csr_table(built, tmp_path):
    """A table whose ``data`` is a CSR group (format 1.1, sparse tables) becomes a Matrix in R."""
    reason = _r_with(["hdf5r", "Matrix"])
    if reason:
        pytest.skip(reason)
    import h5py
    import scipy.sparse as sp

    manifest = json.loads((built / "manifest.json").read_text())
    entry = next(e for e in manifest["tables"] if e["kind"] == "poisson")
    path = tmp_path / "sparse.h5"
    shutil.copy(built / entry["file"], path)
    with h5py.File(path, "a") as f:
        dense = f["data"][:]
        del f["data"]
        matrix = sp.csr_array(dense)
        group = f.create_group("data")
        group["indptr"] = matrix.indptr.astype(np.int32)
        group["indices"] = matrix.indices.astype(np.int32)
        group["values"] = matrix.data
        group.attrs["shape"] = np.array(dense.shape, dtype=np.int64)
        group.attrs["encoding"] = "csr"
    assert 0 < matrix.nnz < dense.size
    got = _run_r(r_snippet(str(path)) + '\ncat(is(X, "sparseMatrix"), dim(X), sum(X), sum(X[3, ]), sum(X[, 2]), '
                 'as.vector(X[2, 1:5]), "\\n")\n')
    assert got == ["TRUE", *map(str, dense.shape), str(dense.sum()), str(dense[2].sum()), str(dense[:, 1].sum()),
                   *map(str, dense[1, :5])]


def test_verify_checks_the_card_links_and_thumbnails(built, tmp_path):
    from lbm_bench.release import verify_release
    from lbm_bench.release.card import card_problems

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    assert card_problems(copy) == []
    (copy / "thumbnails" / "extra.png").write_bytes(b"\x89PNG")
    victim = sorted((copy / "thumbnails").glob("*-01.png"))[0]
    victim.unlink()
    problems = verify_release(copy)
    assert "thumbnails/extra.png: not listed in SHA256SUMS" in problems
    assert f"thumbnails/{victim.name}: missing" in problems
    assert f"index.html: link to thumbnails/{victim.name}: missing" in problems
    text = (copy / "index.html").read_text().replace("</body>", '<img src="https://example.org/x.png"></body>')
    (copy / "index.html").write_text(text)
    assert "index.html: links outside the release (https://example.org/x.png)" in card_problems(copy)


def test_r_snippet_reads_a_categorical_table():
    """A categorical table (format 1.2): the codes and the categories 0..K-1."""
    reason = _r_with(["hdf5r"])
    if reason:
        pytest.skip(reason)
    from tests.storage.tables import CATEGORICAL_SAMPLE

    got = _run_r(r_snippet(str(CATEGORICAL_SAMPLE)) + '\ncat(dim(X), sum(X), X[1, 1:3], categories, "\\n")\n')
    expected = _expected(CATEGORICAL_SAMPLE)
    assert got[:6] == expected[:6]  # dim, sum, X[1, 1:3]
    assert got[6:] == ["0", "1", "2", "3"]
