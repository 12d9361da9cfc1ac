"""The Markdown card of a release (``README.md``), generated from its manifest.

It says what the tables are (the protocol), lists them with their criterion, floor
and MAP risk (the certified one, named by the criterion, in bold), shows how to load,
score, verify and rebuild them, and how to cite the release (the spec's citation).
"""

from __future__ import annotations

from pathlib import Path

from lbm_bench._atomic import atomic_write_text
from lbm_bench.release.manifest import has_missing_entries, kind_text, missing_text, risk_texts

__all__ = ["DEFAULT_CITATION", "readme_text", "rebuild_commands", "write_readme"]

#: Citation used when the spec gives none.
DEFAULT_CITATION = (
    "Lomet, A., Govaert, G. and Grandvalet, Y. Design of Artificial Data Tables for Co-Clustering "
    "Analysis. And lbm-bench."
)


def rebuild_commands(manifest: dict) -> str:
    """The commands, run in a release's folder, that verify it, rebuild it from its own
    ``spec.toml`` into a sibling folder and compare the two (README.md and index.html).

    Examples
    --------
    >>> print(rebuild_commands({"release": {"name": "lbm-bench-mini"}, "spec_file": "spec.toml"}))
    lbm-bench verify .
    lbm-bench build spec.toml --out ../lbm-bench-mini-rebuilt --jobs 2
    lbm-bench verify ../lbm-bench-mini-rebuilt --against .
    """
    spec = manifest.get("spec_file") or "spec.toml"
    target = f"../{manifest['release']['name']}-rebuilt"
    return (f"lbm-bench verify .\nlbm-bench build {spec} --out {target} --jobs 2\n"
            f"lbm-bench verify {target} --against .")


def write_readme(manifest: dict, out: Path, *, spec_path: str | None = None) -> str:
    """Write ``README.md`` into the release directory ``out``; return its name.

    One of the release file writers (:data:`lbm_bench.release.release_files.RELEASE_FILE_WRITERS`).
    """
    atomic_write_text(out / "README.md", readme_text(manifest, spec_path=spec_path))
    return "README.md"


def _risk_cells(entry: dict) -> str:
    """The floor and MAP risk cells of a table's row, the certified one (named by the criterion) in
    bold."""
    floor, risk = risk_texts(entry, "±", lambda text: f"**{text}**")
    return f"{floor} | {risk}"


def _citation_block(citation: str) -> str:
    """A one-line citation as a paragraph; a multi-line one (BibTeX...) verbatim in a code block."""
    citation = citation.strip()
    if "\n" not in citation:
        return citation
    fence = "````" if "```" in citation else "```"
    return f"{fence}\n{citation}\n{fence}"


def readme_text(manifest: dict, *, spec_path: str | None = None) -> str:
    """The release's README.md, generated from its manifest.

    The publication keys the manifest's ``release`` does not hold (``citation``,
    ``date``...) come from the spec it records, as in ``croissant.json`` and ``index.html``.
    """
    release = {**manifest.get("spec", {}).get("release", {}), **manifest["release"]}
    tables = manifest["tables"]
    kinds = sorted({t["kind"] for t in tables})
    shapes = sorted({tuple(t["shape"]) for t in tables})
    rebuild = rebuild_commands(manifest)
    missing = has_missing_entries(manifest)
    rows = "\n".join(
        f"| `{t['id']}` | {kind_text(t)} | {t['shape'][0]}x{t['shape'][1]} | "
        f"{t['clusters'][0]}x{t['clusters'][1]} "
        + (f"| {missing_text(t)} " if missing else "")
        + f"| {t['target_risk']:.3f} | {t.get('criterion', 'map')} | {_risk_cells(t)} "
        f"| {t['row_loss']:.3f} / {t['col_loss']:.3f} | {t['acceptance_rate']:.2f} |"
        for t in tables
    )
    head = ("| id | kind | shape | clusters | " + ("missing | " if missing else "")
            + "target | criterion | floor ± MCSE | MAP risk ± MCSE | l_row / l_col (MAP) | "
              "acceptance |")
    rule = "| --- " * (10 + missing) + "|"
    missing_note = "" if not missing else (
        "\nSome tables have **missing entries** (column *missing*: rate, mechanism and count): "
        "they are 0 in\n`data` and marked by the observed mask `observed` (uint8, 1: observed; a "
        "sparse table lists them in\nthe group `missing`), and `lbm_bench.load_table` returns NaN "
        "there. Their risks are certified given the\nobserved entries: the difficulty of what a "
        "user sees. Mechanism `random`: entries missing completely at\nrandom; `block`: each block "
        "its own probability, so the mask itself informs the labels.\n"
    )
    example = tables[0]["id"] if tables else "ID"
    license_line = f"License: {release['license']}." + (f" Published {release['date']}."
                                                        if release.get("date") else "")
    citation = _citation_block(release.get("citation") or DEFAULT_CITATION)
    description = release['description'] or ('Co-clustering benchmark tables with a certified '
                                              'conditional Bayes risk.')
    return f"""# {release['name']} {release['version']}

{description}

{len(tables)} tables of {', '.join(kinds)} entries, shapes from {shapes[0][0]}x{shapes[0][1]} to
{shapes[-1][0]}x{shapes[-1][1]}, built by lbm-bench {manifest['lbm_bench_version']}. {license_line}

## What the tables are

Each table was drawn from a latent block model whose scale was calibrated so that the
mean risk of the criterion (the X-only MAP's apparent error, or with the `bayes`
criterion the floor of a short Gibbs run) is centred on the target risk (over tables
sharing common random numbers), then
kept by rejection sampling only if its own conditional risk, estimated from Gibbs label
sets drawn given the table with the true parameters, was within the tolerance of the
target (after Lomet, Govaert and Grandvalet's protocol). The *criterion* says which risk
the target applied to: `bayes`, the **floor** (the cross-fitted risk of the Bayes labels
for l_item, which no labelling beats beyond Monte Carlo error), or `map`, the risk of the
X-only MAP labels (the paper's protocol, an upper bound of the floor). Both are listed.
Every file holds the
table, its generating labels, its MAP and Bayes labels, the Gibbs label sets (several
plausible ground truths), the parameters and the calibration record; `docs/format.md`
of lbm-bench is the normative description of the file format.

{head}
{rule}
{rows}

In bold: each table's certified difficulty, the risk its criterion names.
{missing_note}
## Load a table

```python
import h5py
with h5py.File("tables/{example}.h5", "r") as f:
    X = f["data"][:]
    gibbs_rows, gibbs_cols = f["gibbs/rows"][:], f["gibbs/cols"][:]

import lbm_bench
release = lbm_bench.load_release(".")
table = lbm_bench.load_release_table(".", "{example}")
```

## Score an algorithm

```
lbm-bench evaluate tables/{example}.h5 --rows rows.txt --cols cols.txt
lbm-bench benchmark . --algorithm cem --out results/
```

The score is the conditional risk of your labels (mean l_item over the Gibbs label
sets under one optimal label matching) and its excess over the table's floor (and over
its MAP labels).

## Verify and rebuild

In this folder:

```
{rebuild}
```

`spec.toml` is the spec this release was built from, byte for byte. The rebuilt files
are byte-identical with lbm-bench {manifest['lbm_bench_version']} and the versions of
`built_with` in `manifest.json` (Python, numpy, scipy, h5py and HDF5, matplotlib), on any
x86-64 CPU with AVX2 (lbm-bench's docs/releases.md); `verify --against` checks the rebuilt
release and compares its `SHA256SUMS` with this one's, naming any file that differs and
whether a table that differs is the same table up to rounding.

## Cite

{citation}
"""
