"""What a release build reports: the tables built, skipped and failed, and where the time went.

:class:`BuildReport` is returned by :func:`lbm_bench.release.build.build_release` (and printed
by ``lbm-bench build``, with ``--timings`` its table of seconds per configuration and stage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TABLE_STAGES", "BuildReport"]

#: The stages of one table's build, after its configuration's calibration, as keys of
#: its timings: ``rejection`` (candidates, MAP, screening), ``gibbs`` (the Gibbs runs),
#: ``floor`` (the Bayes labels for l_item and their cross-fitted risk: the
#: ``Table.timings["floor"]`` of :func:`lbm_bench.generate_table`), ``writing`` (the
#: table file) and ``thumbnail`` (its picture for the HTML card, drawn by the worker
#: from the table in memory; absent, so reported as unknown, when matplotlib is not
#: installed or the drawing failed, in which case the card draws it). Thumbnails the
#: card draws after the tables (those of tables built by an earlier run) are not
#: worker time and count only in the wall time.
TABLE_STAGES = ("rejection", "gibbs", "floor", "writing", "thumbnail")


@dataclass
class BuildReport:
    """What a build did: per-table outcomes, per-stage seconds, acceptance rates."""

    out_dir: Path
    built: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    calibration_seconds: dict[str, float] = field(default_factory=dict)
    table_seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The tables built over all the workers (:func:`spreads_over_workers`), in build order: their
    #: seconds (and their configuration's calibration's) are wall seconds of the whole pool, not
    #: one worker's.
    spread: list[str] = field(default_factory=list)
    #: One line each for what the build could not do and the user should know (e.g. no thumbnails).
    notes: list[str] = field(default_factory=list)
    #: The archive written by ``archive=True`` and its SHA-256 (what to publish), else None.
    archive: Path | None = None
    archive_sha256: str | None = None
    #: What ``force=True`` replaced in the folder (one line), else None.
    replaced: str | None = None
    #: What :func:`~lbm_bench.release.verify_release` found wrong with the release just written
    #: (a build never reports success on a release its own verification rejects).
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.problems

    def summary(self) -> str:
        lines = [
            (f"built {len(self.built)} table(s), skipped {len(self.skipped)} already complete, "
             f"failed {len(self.failed)}; wall time {self.wall_seconds:.1f} s"),
        ]
        # none when nothing was built: a line of zeros
        if any(v > 0 for v in self.stage_seconds.values()):
            stages = ", ".join(f"{k} {v:.1f} s" for k, v in self.stage_seconds.items()
                               if not math.isnan(v))
            lines.append(f"time per stage (summed over workers): {stages}")
        if self.spread:
            lines.append(f"{len(self.spread)} large table(s) certified over all the workers, one "
                         "at a time "
                         "(their seconds above are the pool's wall seconds)")
        if self.attempts:
            total = sum(self.attempts.values())
            lines.append(
                f"rejection sampling: {total} attempt(s) for {len(self.attempts)} table(s), "
                f"acceptance rate {len(self.attempts) / total:.3f}"
            )
        for table_id, error in sorted(self.failed.items()):
            lines.append(f"FAILED {table_id}: {error}")
        lines += [f"VERIFY {problem}" for problem in self.problems]
        if self.problems:
            lines.append(f"the release written to {self.out_dir} does not pass verify "
                         f"({len(self.problems)} problem(s))")
        lines += self.notes
        return "\n".join(lines)

    def timings_by_configuration(self) -> list[dict[str, Any]]:
        """Where the time went, per configuration (kind, shape, clusters, risk) built.

        Returns
        -------
        list of dict
            One per configuration, in id order: ``config`` (its id), ``tables``
            (kept tables built), ``attempts`` (candidates drawn for them), the
            worker seconds of each of :data:`TABLE_STAGES` summed over the
            configuration's tables (``calibration``, ``rejection``, ``gibbs``,
            ``floor``: the Bayes labels and their cross-fitted risk, ``writing``,
            ``thumbnail``)
            and ``per_kept_table`` (their total divided by ``tables``). A stage
            that a table's timings do not report (``floor`` from a generator that
            does not time it, ``thumbnail`` when the worker drew none) is NaN for
            its configuration (unknown, not 0 s) and left out of
            ``per_kept_table``; the floor's seconds are not part of ``rejection``.
        """
        rows: dict[str, dict[str, Any]] = {}
        for config_id, seconds in self.calibration_seconds.items():
            rows[config_id] = {
                "config": config_id, "tables": 0, "attempts": 0, "calibration": seconds,
                **dict.fromkeys(TABLE_STAGES, 0.0)
            }
        for table_id, timings in self.table_seconds.items():
            row = rows[table_id.rsplit("-", 1)[0]]
            row["tables"] += 1
            row["attempts"] += self.attempts.get(table_id, 0)
            for key in TABLE_STAGES:
                row[key] += timings.get(key, math.nan)
        for row in rows.values():
            total = row["calibration"] + sum(row[key]
                                             for key in TABLE_STAGES if not math.isnan(row[key]))
            row["per_kept_table"] = total / row["tables"] if row["tables"] else float("nan")
        return [rows[k] for k in sorted(rows)]

    def format_timings(self) -> str:
        """:meth:`timings_by_configuration` as a fixed-width table, with a total line.

        Columns: tables kept, candidates tried, then worker seconds of the
        calibration, the rejection sampling (MAP and screening), the Gibbs runs,
        the floor (Bayes labels and cross-fitting), the writing, the thumbnail
        (``-`` when the workers drew none: no matplotlib), and seconds per kept
        table.
        """
        stages = ("calibration", *TABLE_STAGES)
        header = (f"{'configuration':<34} {'tables':>6} {'tries':>5} {'calib s':>8} "
                  f"{'reject s':>8} "
                  f"{'gibbs s':>7} {'floor s':>7} {'write s':>7} {'thumb s':>7} {'s/table':>8}")

        def line(name: str, r: dict[str, Any], per_table: float) -> str:
            # "-": not reported
            cells = [f"{r[k]:.2f}" if not math.isnan(r[k]) else "-" for k in TABLE_STAGES]
            return (f"{name:<34} {r['tables']:>6} {r['attempts']:>5} {r['calibration']:>8.2f} "
                    f"{cells[0]:>8} {cells[1]:>7} {cells[2]:>7} {cells[3]:>7} {cells[4]:>7} "
                    f"{per_table:>8.2f}")

        lines = [header, "-" * len(header)]
        rows = self.timings_by_configuration()
        lines += [line(r["config"], r, r["per_kept_table"]) for r in rows]
        if rows:
            total = {k: sum(r[k] for r in rows) for k in ("tables", "attempts", *stages)}
            seconds = sum(total[k] for k in stages if not math.isnan(total[k]))
            lines.append(
                line("total", total,
                     seconds / total["tables"] if total["tables"] else float("nan")))
        return "\n".join(lines)
