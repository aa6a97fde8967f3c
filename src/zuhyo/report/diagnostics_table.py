"""The CoT diagnostics table of a report (HakushoBench §6.1: "these models often fail to engage in reasoning or
produce repetitive and incoherent chains"), from :func:`zuhyo.evaluate.diagnostics.reply_diagnostics`."""

from __future__ import annotations

from typing import Any

from zuhyo.evaluate.diagnostics import DIAGNOSTICS_NOTE
from zuhyo.report.paper_tables import prompt_label
from zuhyo.report.tables import Cell, Column, Row, Table


def _share(row: dict[str, Any], kind: str) -> Cell:
    n, share = row[f"n_{kind}"], row[f"{kind}_share"]
    return Cell(text="n/a" if n is None else f"{100 * share:.1f}% ({n})")


def diagnostics_table(rows: list[dict[str, Any]], labels: dict[str, str]) -> Table:
    """One row per model × prompt: shares of truncated, answer-less and looping replies, median lengths."""
    out = []
    for r in rows:
        tokens = r["median_completion_tokens"]
        out.append(Row(f"{labels.get(r['model'], r['model'])} · {prompt_label(r['prompt'])}", [
            Cell(text=str(r["n_replies"])), _share(r, "truncated"), _share(r, "no_final_answer"),
            _share(r, "looping"), Cell(text=f"{r['median_reply_chars']:g}"),
            Cell(text="—" if tokens is None else f"{tokens:g}")]))
    return Table(name="cot_diagnostics", title="Reply diagnostics per model and prompt",
                 columns=[Column("", "Replies"), Column("", "Hit token limit"), Column("", "No final answer"),
                          Column("", "Repetition loop"), Column("", "Median chars"), Column("", "Median tokens")],
                 rows=out, row_header="Model · prompt", notes=[DIAGNOSTICS_NOTE], show_counts=False)
