"""The CoT diagnostics table of a report (HakushoBench §6.1: "these models often fail to engage in reasoning or
produce repetitive and incoherent chains"), from :func:`zuhyo.evaluate.diagnostics.reply_diagnostics`, and the
judge-variance table of run sets judged per run (HakushoBench §5.1)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from zuhyo.evaluate.diagnostics import DIAGNOSTICS_NOTE
from zuhyo.evaluate.judge_variance import judge_variance
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.report.aggregate import Aggregate
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


def judge_variance_rows(agg: Aggregate, labels: dict[str, str]) -> list[dict[str, Any]]:
    """Per model × benchmark × prompt judged per run (``--judge-repeat per-run``): the judge's own variance on
    the items whose reply did not change across runs (:func:`zuhyo.evaluate.judge_variance.judge_variance`)."""
    preds: dict[tuple[str, str, str], list[PredictionRecord]] = defaultdict(list)
    for p in agg.merged.predictions.values():
        preds[(p.model, p.benchmark, p.prompt)].append(p)
    judged: dict[tuple[str, str, str], list[JudgmentRecord]] = defaultdict(list)
    for j in agg.merged.judgments.values():
        if j.judge == agg.judge_for.get(j.benchmark):
            judged[(j.model, j.benchmark, j.prompt)].append(j)
    rows = []
    for key in sorted(judged):
        var = judge_variance(preds.get(key, []), judged[key])
        if var is not None:
            rows.append({"model": key[0], "label": labels.get(key[0], key[0]), "benchmark": key[1],
                         "prompt": key[2], **var})
    return rows


def judge_variance_table(rows: list[dict[str, Any]]) -> Table:
    """The judge's variance across runs on unchanged replies, one row per model × benchmark × prompt."""
    out = [Row(f"{r['label']} · {r['benchmark']} · {prompt_label(r['prompt'])}", [
        Cell(text=str(r["n_items"])), Cell(text=str(r["n_inconsistent"])),
        Cell(text="—" if r["inconsistent_share"] is None else f"{100 * r['inconsistent_share']:.1f}%"),
        Cell(text="—" if r["mean_item_std"] is None else f"{r['mean_item_std']:.3f}")]) for r in rows]
    return Table(name="judge_variance", title="Judge variance across runs (replies unchanged between runs)",
                 columns=[Column("", "Items"), Column("", "Differing verdicts"), Column("", "Share"),
                          Column("", "Mean item std")],
                 rows=out, row_header="Model · benchmark · prompt", show_counts=False,
                 notes=["Judged per run (--judge-repeat per-run, HakushoBench §5.1): on items whose reply was "
                        "identical in every run, verdicts that differ between runs come from the judge alone."])
