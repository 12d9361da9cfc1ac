"""The HTML data card of a release (``index.html``) and its thumbnails.

A static page, readable offline in any browser: no script, no font or style
sheet from the network, only relative links to the release's own files. It shows
the release's description, how to cite it, the table of tables (kind, shape,
clusters, target, criterion, the floor and the MAP's risk, the certified one in
bold) with a thumbnail of each table (:func:`lbm_bench.release.thumbnail.thumbnail_pixels`:
grouped by its labels, with its uncertainty strips), links to every file, and how to load a table in
Python and in R.

Thumbnails are PNG files under ``thumbnails/`` written without timestamps or
version strings, so the same release gives the same bytes with the same
matplotlib; without matplotlib (the ``plots`` extra) the card is written without
them and says so. A build's worker draws each table's thumbnail right after
writing the table (:func:`draw_thumbnail`, from the table in memory); the card
draws only the missing ones (tables built by an earlier run of a resumed build,
or a deleted thumbnail) from the table files, with the same function.
"""

from __future__ import annotations

import html
import html.parser
from pathlib import Path
from typing import Any

from lbm_bench._atomic import atomic_path, atomic_write_text
from lbm_bench.release.manifest import has_missing_entries, kind_text, missing_text, risk_texts
from lbm_bench.release.readme import rebuild_commands

__all__ = [
    "THUMBNAILS",
    "can_draw_thumbnails",
    "card_html",
    "card_problems",
    "draw_thumbnail",
    "local_links",
    "python_snippet",
    "r_snippet",
    "thumbnail_name",
    "write_card",
    "write_thumbnails",
]

#: Folder of the thumbnails in a release.
THUMBNAILS = "thumbnails"
#: Thumbnail size in pixels (height, width): the card shows it 218 pixels wide.
_THUMB_PIXELS = (186, 218)

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 2rem auto;
       max-width: 72rem; padding: 0 1rem; color: #1b1b1b; background: #ffffff; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
.subtitle { color: #555; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
th, td { border: 1px solid #d0d0d0; padding: 0.3rem 0.5rem; text-align: left; vertical-align: middle; }
th { background: #f0f3f7; } tr:nth-child(even) td { background: #fafafa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img.thumb { width: 218px; height: auto; display: block; }
pre { background: #f5f5f5; border: 1px solid #e0e0e0; padding: 0.8rem; overflow-x: auto; font-size: 0.88rem; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
ul.files li { margin: 0.15rem 0; }
.note { color: #555; font-size: 0.9rem; }
"""  # noqa: E501 (a release file's text: its bytes, not code)


def python_snippet(table_file: str, table_id: str, missing: bool = False) -> str:
    """Python code that loads one table of the release (run from the release folder); with
    ``missing``, also its missing entries."""
    if missing:
        return python_snippet(table_file, table_id).replace(
            "X = table.data                                   # (n_rows, n_cols)\n",
            "X = table.data                                   # (n_rows, n_cols), NaN at missing "
            "entries\n"
            "observed = table.observed                        # the observed mask (dense tables; "
            "None: complete)\n",
        ).replace(
            '    X = f["data"][:]\n',
            '    X = f["data"][:]                              # 0 at missing entries\n'
            '    if "observed" in f:                           # format 1.3: the observed mask (1: '
            'observed)\n'
            '        X = np.where(f["observed"][:] == 1, X, np.nan)\n',
        ).replace("import h5py\n", "import h5py\nimport numpy as np\n")
    return f"""import lbm_bench
table = lbm_bench.load_release_table(".", "{table_id}")
X = table.data                                   # (n_rows, n_cols)
gibbs_rows, gibbs_cols = table.gibbs.rows, table.gibbs.cols   # label sets (ground truths)
floor, map_risk = table.bayes_risk.risk, table.risk.risk       # the floor and the MAP labels' risk
certified = floor if table.criterion == "bayes" else map_risk  # the risk the criterion names
print(table.summary())

# or with h5py only
import h5py
with h5py.File("{table_file}", "r") as f:
    X = f["data"][:]
    truth_rows, truth_cols = f["truth/rows"][:], f["truth/cols"][:]
    gibbs_rows, gibbs_cols = f["gibbs/rows"][:], f["gibbs/cols"][:]"""


def r_snippet(table_file: str, missing: bool = False) -> str:
    """R code (package hdf5r) that loads one table file with its labels and label sets.

    HDF5 stores arrays row-major and R column-major, so hdf5r returns every
    matrix with its dimensions reversed: the snippet transposes them back, giving
    ``X`` of dimension ``n_rows x n_cols`` and label sets of dimension
    ``n_samples x n_rows``. Labels are stored from 0; the snippet adds 1 (R's
    convention). A sparse table (``data`` stored as a CSR group) is read into a
    ``Matrix`` sparse matrix. With ``missing``, a dense table's missing entries become NA.
    """
    if missing:
        return r_snippet(table_file).replace(
            "  X <- t(f[[\"data\"]]$read())                     # n_rows x n_cols\n",
            "  X <- t(f[[\"data\"]]$read())                     # n_rows x n_cols\n  if "
            "(f$exists(\"observed\")) {                   # format 1.3: missing entries (0 in "
            "data) become NA\n    X[t(f[[\"observed\"]]$read()) == 0] <- NA\n"
            "  }\n",
        )
    return f"""library(hdf5r)
f <- H5File$new("{table_file}", mode = "r")
# hdf5r reverses the dimensions (HDF5 is row-major, R column-major): transpose back.
if (inherits(f[["data"]], "H5Group")) {{          # a sparse table, stored as CSR
  shape <- as.integer(h5attr(f[["data"]], "shape"))
  X <- Matrix::sparseMatrix(j = as.integer(f[["data/indices"]]$read()) + 1L,
                            p = as.integer(f[["data/indptr"]]$read()),
                            x = as.numeric(f[["data/values"]]$read()), dims = shape, repr = "R")
}} else {{
  X <- t(f[["data"]]$read())                     # n_rows x n_cols
}}
if ("categories" %in% h5attr_names(f)) {{        # a categorical table: X holds codes 0..K-1
  categories <- 0:(h5attr(f, "categories") - 1)  # factor(X, levels = categories) for one column
}}
truth_rows <- f[["truth/rows"]]$read() + 1L       # labels from 1
truth_cols <- f[["truth/cols"]]$read() + 1L
map_rows <- f[["map/rows"]]$read() + 1L
map_cols <- f[["map/cols"]]$read() + 1L
gibbs_rows <- t(f[["gibbs/rows"]]$read()) + 1L    # n_samples x n_rows label sets
gibbs_cols <- t(f[["gibbs/cols"]]$read()) + 1L    # n_samples x n_cols
risk <- h5attr(f, "risk")                         # conditional risk of the MAP labels
if ("bayes_risk" %in% h5attr_names(f)) {{          # format 1.1: the floor
  bayes_rows <- f[["bayes/rows"]]$read() + 1L     # the Bayes labels for l_item
  bayes_cols <- f[["bayes/cols"]]$read() + 1L
  bayes_risk <- h5attr(f, "bayes_risk")           # their cross-fitted risk (the floor)
  criterion <- h5attr(f, "criterion")             # the certified risk: "bayes" (floor) or "map" (risk)
}}
f$close_all()"""  # noqa: E501 (a release file's text: its bytes, not code)


def thumbnail_name(table_id: str) -> str:
    """The name of a table's thumbnail in a release, relative to the release directory."""
    return f"{THUMBNAILS}/{table_id}.png"


def can_draw_thumbnails() -> bool:
    """Whether matplotlib (the ``plots`` extra) is installed, so thumbnails can be drawn."""
    try:
        import matplotlib  # noqa: F401 - only to know whether thumbnails can be drawn
    except ImportError:
        return False
    return True


def draw_thumbnail(table: Any, path: Path) -> Path:
    """Draw one table's thumbnail as a PNG file at ``path`` (written atomically).

    The one drawing of a thumbnail, used by the build's workers (from the table they
    just built, in memory) and by :func:`write_thumbnails` (from the table file): the
    same table gives the same bytes either way, with the same matplotlib and Pillow.
    The picture is :func:`lbm_bench.release.thumbnail.thumbnail_pixels`: the table grouped by
    its labels with its uncertainty strips, written as pixels (no matplotlib figure,
    no axes or colour bar), without metadata.

    Parameters
    ----------
    table : Table
        The table (:class:`lbm_bench.Table`).
    path : Path
        The PNG file to write; its folder must exist.

    Returns
    -------
    Path
    """
    from matplotlib.image import imsave

    from lbm_bench.release.thumbnail import thumbnail_pixels

    pixels = thumbnail_pixels(table, *_THUMB_PIXELS)
    with atomic_path(path) as temporary:
        imsave(temporary, pixels, format="png", metadata={"Software": None})
    return path


def write_thumbnails(manifest: dict, out: Path, *, redraw: bool = False) -> list[str]:
    """Draw the missing thumbnails of a release's tables under ``out/thumbnails/``.

    A build's workers draw each table's thumbnail right after writing the table (and
    the build removes the thumbnail of every table it is about to rebuild), so only
    the thumbnails of tables built by an earlier run, or deleted ones, are missing.

    Parameters
    ----------
    manifest : dict
        The release's manifest.
    out : Path
        The release directory.
    redraw : bool, default=False
        Draw every table's thumbnail again, present or not.

    Returns
    -------
    list of str
        The names (relative to ``out``) of the tables' thumbnails present afterwards,
        in manifest order: none drawn when matplotlib is not installed.
    """
    folder = out / THUMBNAILS
    drawable = can_draw_thumbnails()
    if drawable:
        from lbm_bench.storage import load_table

        folder.mkdir(exist_ok=True)
    names = []
    for entry in manifest["tables"]:
        name = thumbnail_name(entry["id"])
        if drawable and (redraw or not (out / name).is_file()):
            draw_thumbnail(load_table(out / entry["file"]), out / name)
        if (out / name).is_file():
            names.append(name)
    return names


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _risk_cells(entry: dict) -> str:
    """The floor and MAP risk cells, the certified one (named by the criterion) in bold."""
    floor, risk = risk_texts(entry, "&plusmn;", lambda text: f"<strong>{text}</strong>")
    return f"<td class=num>{floor}</td><td class=num>{risk}</td>"


def _table_rows(manifest: dict, thumbnails: set[str]) -> str:
    rows = []
    missing = has_missing_entries(manifest)
    for t in manifest["tables"]:
        thumb = f"{THUMBNAILS}/{t['id']}.png"
        image = (f'<a href="{_e(thumb)}"><img class="thumb" src="{_e(thumb)}" alt="table '
                 f'{_e(t["id"])}, '
                 f'grouped by its labels"></a>' if thumb in thumbnails else "")
        rows.append(
            f"<tr><td>{image}</td>"
            f'<td><a href="{_e(t["file"])}"><code>{_e(t["id"])}</code></a></td>'
            f"<td>{_e(kind_text(t))}</td>"
            f"<td class=num>{t['shape'][0]}&times;{t['shape'][1]}</td>"
            f"<td class=num>{t['clusters'][0]}&times;{t['clusters'][1]}</td>"
            + (f"<td>{_e(missing_text(t))}</td>" if missing else "")
            + f"<td class=num>{t['target_risk']:.3f}</td>"
            f"<td>{_e(t.get('criterion', 'map'))}</td>{_risk_cells(t)}<td "
            f"class=num>{t['row_loss']:.3f} / {t['col_loss']:.3f}</td><td "
            f"class=num>{t['size'] / 1e6:.2f} MB</td></tr>"
        )
    return "\n".join(rows)


def card_html(manifest: dict, *, thumbnails: list[str] = (), files: list[str] = ()) -> str:
    """The release's ``index.html`` (a static page) from its manifest.

    Parameters
    ----------
    manifest : dict
        The release's manifest.
    thumbnails : list of str
        Thumbnail files present (relative names); tables without one get none.
    files : list of str
        The release's other files to link (``manifest.json``, ``croissant.json``...).
    """
    from lbm_bench.release.readme import DEFAULT_CITATION

    release = {**manifest.get("spec", {}).get("release", {}), **manifest["release"]}
    tables = manifest["tables"]
    kinds = ", ".join(sorted({t["kind"] for t in tables}))
    description = release.get("description") or (
        "Co-clustering benchmark tables with a certified conditional Bayes risk."
    )
    citation = release.get("citation") or DEFAULT_CITATION
    example = tables[0] if tables else {"id": "ID", "file": "tables/ID.h5"}
    rebuild = rebuild_commands(manifest)
    date = f", published {_e(release['date'])}" if release.get("date") else ""
    links = "\n".join(f'<li><a href="{_e(name)}"><code>{_e(name)}</code></a></li>'
                      for name in files)
    missing = has_missing_entries(manifest)
    head_cells = ("<th>picture</th><th>id (file)</th><th>kind</th><th>shape</th><th>clusters</th>"
                  + ("<th>missing</th>" if missing else ""))
    missing_note = "" if not missing else (
        '<p class="note">Column <em>missing</em>: the rate, mechanism and number of a table\'s '
        'missing entries. '
        "They are 0 in <code>data</code> and marked by the observed mask <code>observed</code> "
        "(uint8, 1: observed; a sparse table lists them in the group <code>missing</code>); "
        "<code>lbm_bench.load_table</code> returns NaN there, and pictures draw them in a neutral "
        "colour. The risks are certified given the observed entries. Mechanism "
        "<code>random</code>: missing completely at random; <code>block</code>: each block its own "
        "probability (not at random: the mask informs the labels).</p>\n"
    )
    no_thumbs = "" if thumbnails else (
        '<p class="note">Thumbnails were not drawn: matplotlib was not installed when the release '
        'was '
        "built (<code>pip install 'lbm-bench[plots]'</code>).</p>"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(release['name'])} {_e(release['version'])}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{_e(release['name'])} {_e(release['version'])}</h1>
<p class="subtitle">{len(tables)} co-clustering benchmark tables ({_e(kinds)}), license {_e(release['license'])}{date};
built by lbm-bench {_e(manifest['lbm_bench_version'])}.</p>
<p>{_e(description)}</p>
<p>Each table was drawn from a latent block model whose scale was calibrated to a target conditional Bayes risk,
and kept only if its own risk, estimated from Gibbs label sets drawn given the table with the true parameters, was
close to the target (the protocol of Lomet, Govaert and Grandvalet). The criterion says which risk the target
applied to: <code>bayes</code>, the floor (the cross-fitted risk of the Bayes labels for l_item, which no labelling
beats beyond Monte Carlo error), or <code>map</code>, the risk of the X-only MAP labels (the paper's protocol, an
upper bound of the floor); both are listed. Every file holds the table, its generating labels, its MAP and Bayes
labels, the Gibbs label sets (several plausible ground truths), the parameters and the calibration record.</p>

<h2>Tables</h2>
{no_thumbs}
<table>
<thead><tr>{head_cells}<th>target risk</th>
<th>criterion</th><th>floor &plusmn; MCSE</th><th>MAP risk &plusmn; MCSE</th><th>l_row / l_col (MAP)</th>
<th>size</th></tr></thead>
<tbody>
{_table_rows(manifest, set(thumbnails))}
</tbody>
</table>
<p class="note">In bold: each table's certified difficulty, the risk its criterion names.
Pictures: rows and columns grouped by the table's labels, block boundaries in colour; the strips on
the left and top are the per-row and per-column posterior uncertainty (dark: uncertain).</p>
{missing_note}
<h2>Load a table in Python</h2>
<pre><code>{_e(python_snippet(example['file'], example['id'], missing))}</code></pre>

<h2>Load a table in R</h2>
<pre><code>{_e(r_snippet(example['file'], missing))}</code></pre>

<h2>Score, verify, rebuild</h2>
<p>In the release's folder: score your labels, verify the release, rebuild it from its own
<code>spec.toml</code> (the spec it was built from, byte for byte) and
compare the rebuilt files with these (byte-identical with lbm-bench {_e(manifest['lbm_bench_version'])} and
the versions of <code>built_with</code> in <code>manifest.json</code>, on any x86-64 CPU with AVX2).</p>
<pre><code>lbm-bench evaluate {_e(example['file'])} --rows rows.txt --cols cols.txt
{_e(rebuild)}</code></pre>

<h2>Files</h2>
<ul class="files">
{links}
<li><code>tables/</code>: one HDF5 file per table (linked in the table above)</li>
</ul>

<h2>Cite</h2>
<pre>{_e(citation)}</pre>
</body>
</html>
"""  # noqa: E501 (a release file's text: its bytes, not code)


def write_card(manifest: dict, out: Path, *, spec_path: str | None = None) -> list[str]:
    """Write the thumbnails and ``index.html`` into the release directory ``out``.

    One of the release file writers (:data:`lbm_bench.release.release_files.RELEASE_FILE_WRITERS`);
    returns the names of the release's thumbnails and ``index.html``, for ``SHA256SUMS``.
    Only missing thumbnails are drawn here (see :func:`write_thumbnails`): a build's
    workers draw the others.
    """
    thumbnails = write_thumbnails(manifest, out)
    files = [
        name for name in ("README.md", "spec.toml", "manifest.json", "croissant.json", "tables.csv",
                          "SHA256SUMS") if (out / name).is_file() or name == "SHA256SUMS"
    ]
    atomic_write_text(out / "index.html", card_html(manifest, thumbnails=thumbnails, files=files))
    return [*thumbnails, "index.html"]


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def local_links(text: str) -> list[str]:
    """The ``href`` and ``src`` targets of an HTML page, in order."""
    parser = _Links()
    parser.feed(text)
    return parser.links


def card_problems(out: Path) -> list[str]:
    """What :func:`lbm_bench.verify_release` finds wrong with ``index.html``: a link
    to the network or to a file the release does not have."""
    path = out / "index.html"
    if not path.is_file():
        return []
    problems = []
    for link in dict.fromkeys(local_links(path.read_text(encoding="utf-8"))):
        if "://" in link or link.startswith("//"):
            problems.append(f"index.html: links outside the release ({link})")
        elif not (out / link).is_file():
            problems.append(f"index.html: link to {link}: missing")
    return problems
