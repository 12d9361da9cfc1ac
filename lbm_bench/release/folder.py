"""The folder a release is built in: one build at a time, and one release in it.

:func:`locked_folder` holds an exclusive lock on the release folder for the whole build
(``flock`` on the folder itself: nothing is added to it, and the lock goes with the process
that holds it, also when it is killed). A second build of the same folder, started
meanwhile, is refused in one line instead of writing tables whose seeds the first build's
manifest then contradicts.

:func:`claim_folder` checks what the folder already holds against the spec about to be built:
nothing, or the same release (an interrupted build, resumed; a complete one, checked again)
is fine; another release (another spec: other tables, seeds or settings, a smaller grid) is
refused unless ``force``, and with ``force`` the files of the other release that the new one
would not overwrite (its tables outside the new spec, with their thumbnails, and its release
files) are removed first, and the description of what was replaced is returned. The spec is
then written as ``spec.toml`` at once, so that an interrupted build says which release it
was building.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from lbm_bench.release.card import THUMBNAILS, thumbnail_name
from lbm_bench.release.spec import SPEC_FILE, ReleaseSpec, read_spec

__all__ = ["RELEASE_FOLDER_FILES", "claim_folder", "locked_folder"]

#: The files of a built release besides its tables and thumbnails (removed with ``force``).
RELEASE_FOLDER_FILES = ("manifest.json", "SHA256SUMS", "README.md", "croissant.json", "tables.csv",
                        "index.html", SPEC_FILE)


@contextlib.contextmanager
def locked_folder(out: Path) -> Iterator[None]:
    """Create ``out`` if needed and hold an exclusive lock on it for the block (ValueError in one
    line when another process holds it). Without ``fcntl`` (not POSIX), no lock is taken."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        out.mkdir(parents=True, exist_ok=True)
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"release folder {out} is being built by another process; wait for "
                             "that build to "
                             "finish (or stop it), or build into another out=") from None
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _recorded_spec(out: Path) -> tuple[ReleaseSpec | None, str | None]:
    """The spec the folder records (its spec.toml, else its manifest's), and a problem reading
    it."""
    for name in (SPEC_FILE, "manifest.json"):
        if (out / name).is_file():
            try:
                return read_spec(out / name), None
            except ValueError as exc:
                return None, f"its {name} cannot be read ({exc})"
    return None, None


def _foreign_tables(out: Path, spec: ReleaseSpec) -> list[Path]:
    """Table files of the folder that are not tables of ``spec``: another name, or the same name
    with another seed or kind (a damaged file of the spec is not foreign: the build redoes it)."""
    from lbm_bench.storage import read_info

    wanted = {Path(t.filename).name: t for t in spec.tables}
    foreign = []
    for path in sorted((out / "tables").glob("*.h5")):
        table = wanted.get(path.name)
        if table is None:
            foreign.append(path)
            continue
        try:
            info = read_info(path)
        except (ValueError, OSError):
            continue
        if info.get("seed") != table.seed or info.get("kind") != table.kind:
            foreign.append(path)
    return foreign


def claim_folder(spec: ReleaseSpec, out: Path, *, force: bool = False) -> str | None:
    """Check that ``out`` holds nothing but ``spec``'s release (call it with the folder locked).

    Returns
    -------
    str or None
        With ``force``, what was replaced (one line); None when nothing was.

    Raises
    ------
    ValueError
        Without ``force``, when the folder holds another release or tables that are not the spec's.
    """
    recorded, problem = _recorded_spec(out)
    other_spec = problem is not None or (recorded is not None and recorded.source != spec.source)
    foreign = _foreign_tables(out, spec)
    if not other_spec and not foreign:
        return None
    if recorded is not None and other_spec:
        what = (f"release {recorded.name} {recorded.version} ({len(recorded.tables)} table(s), "
                f"seed {recorded.seed})")
    elif problem is not None:
        what = f"a release whose spec is unreadable: {problem}"
    else:
        what = (f"{len(foreign)} table file(s) that are not tables of spec {spec.name} "
                f"{spec.version}")
    this = f"{spec.name} {spec.version}: {len(spec.tables)} table(s), seed {spec.seed}"
    if not force:
        raise ValueError(f"{out} holds {what}, not this spec's release ({this}): build into "
                         "another out=, or give "
                         "force=True to replace it")
    for path in foreign:
        path.unlink(missing_ok=True)
        (out / thumbnail_name(path.stem)).unlink(missing_ok=True)
    for name in RELEASE_FOLDER_FILES:
        (out / name).unlink(missing_ok=True)
    for picture in sorted((out / THUMBNAILS).glob("*")) if (out / THUMBNAILS).is_dir() else []:
        if picture.is_file() and picture.stem not in {t.id for t in spec.tables}:
            picture.unlink()
    kept = len({p.name
                for p in (out / "tables").glob("*.h5")}
               & {Path(t.filename).name
                  for t in spec.tables})
    return (f"replaced {what} in {out} by {this}: removed {len(foreign)} table file(s) and the "
            "release "
            f"files, kept {kept} table file(s) of this spec")
