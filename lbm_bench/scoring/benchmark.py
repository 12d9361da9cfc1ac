"""The benchmark's tracks, by name, and :func:`run_benchmark`: co-clustering algorithms over a
release.

A **track** says how its algorithms are called and what the run writes: a
:class:`~lbm_bench.scoring.harness.Track`, declared in its own module and listed in
:data:`TRACKS`, the one list the package reads (``run_benchmark``, ``lbm-bench benchmark
--track`` and its options); nothing else names a track.

``known-clusters`` (the default, :mod:`lbm_bench.scoring.known_clusters`)
    Every algorithm is told the table's numbers of clusters:
    ``fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)``.
``unknown-clusters`` (:mod:`lbm_bench.scoring.unknown_clusters`)
    Algorithms choose them, up to ``max_clusters``:
    ``fit(X, max_row_clusters, max_col_clusters, *, rng) -> (rows, cols)``.

Every track runs one task per (algorithm, table), seeded by the master seed, the
algorithm's name and the table's id, scores the labels with
:func:`lbm_bench.scoring.evaluate`, keeps each run's row in
``OUT/runs/<algorithm>/<table id>.json`` (a second run resumes there) and writes
``OUT/results.csv``, ``OUT/summary.md`` and ``OUT/excess_risk.png``.

**Adding a track** is writing its module under ``lbm_bench/scoring/`` (its runner, summary and
options record, and its :class:`~lbm_bench.scoring.harness.Track`; its algorithms' contract and
built-ins in :data:`lbm_bench.algorithms.CONTRACTS`) and adding it to :data:`TRACKS` below.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from lbm_bench._seeds import check_seed
from lbm_bench.scoring.harness import Track
from lbm_bench.scoring.known_clusters import KNOWN_CLUSTERS
from lbm_bench.scoring.unknown_clusters import UNKNOWN_CLUSTERS

__all__ = ["DEFAULT_TRACK", "TRACKS", "get_track", "run_benchmark", "track_names"]

#: The tracks of the benchmark, by name, in the order they are listed (help, docs).
TRACKS: dict[str, Track] = {track.name: track for track in (KNOWN_CLUSTERS, UNKNOWN_CLUSTERS)}
#: The track of ``run_benchmark`` and ``lbm-bench benchmark`` when none is named.
DEFAULT_TRACK = KNOWN_CLUSTERS.name


def track_names() -> tuple[str, ...]:
    """The names of the tracks, e.g. ``("known-clusters", "unknown-clusters")``."""
    return tuple(TRACKS)


def get_track(name: Any) -> Track:
    """The track called ``name``.

    Raises
    ------
    ValueError
        When no track has that name (the message lists them).

    Examples
    --------
    >>> get_track("unknown-clusters").signature
    'fit(X, max_row_clusters, max_col_clusters, *, rng)'
    """
    from lbm_bench._validation import check_choice

    return TRACKS[check_choice("track", name, track_names())]


def run_benchmark(
    release_dir: str | os.PathLike[str],
    algorithms: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    seed: int = 0,
    progress: bool = False,
    track: str = DEFAULT_TRACK,
    timeout: float | None = None,
    **options: Any,
) -> list[dict]:
    """Run ``algorithms`` on every table of a release on one track; write results and summary.

    Parameters
    ----------
    release_dir : path
        A built release (with ``manifest.json``).
    algorithms : sequence of str
        Names of the track's built-ins (its ``contract.builtins``:
        :data:`lbm_bench.algorithms.ALGORITHMS` on the known-clusters track,
        :data:`lbm_bench.algorithms.SELECTION_ALGORITHMS` on the unknown-clusters track) or
        ``"module:function"``, called as the track's ``signature`` says.
    out_dir : path
        Where results go (created if needed).
    n_jobs : int, default=1
        Parallel workers (:mod:`lbm_bench.tasks`: loky processes).
    seed : int, default=0
        Master seed of the algorithms' seeds.
    progress : bool, default=False
        Show a tqdm bar.
    track : {"known-clusters", "unknown-clusters"}, default="known-clusters"
        Whether the algorithms are told the tables' numbers of clusters, or choose them
        (:data:`TRACKS`).
    timeout : float, optional
        Seconds each fit may take, on every track: each run's algorithm then runs in a child
        process, stopped when over, and the run fails as timed out
        (:func:`~lbm_bench.scoring.harness.fit_labels`). None: no limit. Whatever an algorithm
        raises (``SystemExit`` included) fails its run only; an interruption (Ctrl-C, SIGTERM)
        stops the run and keeps the finished runs' files.
    **options
        The track's own options (its ``options`` record; None: the default): on the
        unknown-clusters track ``max_clusters=(G, M)``, the largest numbers of clusters
        (default 8x8). An option of another track is refused.

    Returns
    -------
    list of dict
        The rows of ``results.csv`` (the track's ``columns``).

    Notes
    -----
    Each run is scored with :func:`~lbm_bench.evaluate`; ``results.csv``, ``summary.md``,
    ``excess_risk.png`` and one file per run are written under ``out_dir``, so that a second
    call resumes where the first stopped (docs/benchmark.md). The tracks are registered
    objects (:data:`~lbm_bench.scoring.TRACKS`): each says how its algorithms are called
    (``signature``), its built-ins and its options.

    Examples
    --------
    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> build_release(spec, tiny).ok
    True
    >>> rows = run_benchmark(tiny, ["cem", "double-kmeans"], os.path.join(tiny, "..", "results"))
    >>> [(row["algorithm"], row["table"], row["error"]) for row in rows]
    [('cem', 'bernoulli-30x20-2x2-r0.1-01', ''),
     ('double-kmeans', 'bernoulli-30x20-2x2-r0.1-01', '')]
    >>> chosen = run_benchmark(tiny, ["cem-icl"], os.path.join(tiny, "..", "chosen"),
    ...                        track="unknown-clusters", max_clusters=(3, 3))
    >>> chosen[0]["given_algorithm"], chosen[0]["counts"] in ("found", "too few", "too many")
    ('cem', True)
    >>> TRACKS["unknown-clusters"].signature
    'fit(X, max_row_clusters, max_col_clusters, *, rng)'
    """
    chosen = get_track(track)
    check_seed("seed", seed)
    for key, value in options.items():
        owner = next((t.name for t in TRACKS.values() if key in t.options.names()), None)
        if value is not None and owner is not None and owner != chosen.name:
            raise ValueError(f"{key} is an option of the {owner} track (track={owner!r})")
    values = chosen.option_values(options)
    return chosen.run(release_dir, algorithms, out_dir, n_jobs=n_jobs, seed=seed, progress=progress,
                      timeout=timeout, **values)
