"""The error-analysis table of a report (HakushoBench §6.3: error types of a model's wrong answers, tagged by
people in the annotation app), from a workspace's :func:`zuhyo.annotate.errors_analysis.error_breakdown` (read
by the CLI: the report layer does not open workspaces)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zuhyo.report.tables import Cell, Column, Row, Table

ERROR_NOTE = ("Error types tagged by people on wrong answers drawn at random from each model's run set (`zuhyo "
              "errors import`); shares are of tags, a sample tagged by several people counting once per tag.")


def error_table(breakdown: dict[str, Any], labels: dict[str, str]) -> Table:
    """One row per (run set, model): samples, tagged, and each error type's share of the tags."""
    groups = breakdown["groups"]
    types: list[str] = []
    for g in groups:
        types += [t for t in g["types"] if t not in types]
    rows = [Row(labels.get(g["model"], g["model"]),
                [Cell(text=str(g["samples"])), Cell(text=str(g["tagged"]))]
                + [Cell(text=f"{100 * g['shares'].get(t, 0.0):.1f}% ({g['types'].get(t, 0)})") for t in types],
                group=Path(g["run_set"]).name)
            for g in groups]
    return Table(name="error_analysis", title="Error analysis of wrong answers",
                 columns=[Column("", "Samples"), Column("", "Tagged")] + [Column("Error type", t) for t in types],
                 rows=rows, notes=[ERROR_NOTE], show_counts=False)

