"""`zuhyo report` as a library call: run sets in, a report folder out.

Layout of ``out``::

    index.html            self-contained report (plots and thumbnails inlined)
    report.json           everything below in machine-readable form (also what ``--json`` prints)
    tables.md             all tables in one Markdown file
    tables/<name>.md|.csv|.tex
    plots/<name>.png|.svg
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zuhyo.report.aggregate import Aggregate, aggregate
from zuhyo.report.analysis import Analysis, analyse, parse_tags
from zuhyo.report.paper_tables import BREAKDOWN_AXES, build_tables, model_labels
from zuhyo.report.runsets import load_and_merge
from zuhyo.report.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from zuhyo.report.tables import Table, render_csv, render_latex, render_markdown


@dataclass(frozen=True)
class ReportOptions:
    """Options of `zuhyo report`."""

    tags: list[str] = field(default_factory=list)
    """``MODEL=open|proprietary``."""
    judge: list[str] = field(default_factory=list)
    """``SPEC`` or ``BENCH=SPEC``: which judge's verdicts to use where several judged a benchmark."""
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    min_category_items: int = 50
    """Categories with fewer items are greyed out in the category plots (HakushoBench Fig. 7 omits < 50)."""
    font: Path | None = None
    max_failed_per_model: int = 0
    """Failed item-runs listed per model in index.html (0: all; the page pages and filters them; all are counted)."""
    strict: bool = False
    """Refuse conflicting duplicate records across run sets instead of keeping the first."""
    plots: bool = True
    reference_scores: list[str] = field(default_factory=list)
    """Published-score CSVs (paths or bundled names, :mod:`zuhyo.report.reference`) shown beside the measured."""
    error_breakdown: dict[str, Any] | None = None
    """A workspace's error analysis (``zuhyo errors``, HakushoBench §6.3:
    :func:`zuhyo.annotate.errors_analysis.error_breakdown`), shown when given; the CLI reads it, so the report
    layer never opens a workspace."""


def _cells_json(agg: Aggregate, an: Analysis) -> list[dict[str, Any]]:
    out = []
    for key, rec in sorted(agg.cells.items(), key=lambda kv: (kv[0].benchmark, kv[0].model, kv[0].prompt)):
        universe = agg.items.get(key.benchmark, set())
        ci = an.ci.get(key)
        cats: dict[str, dict[str, Any]] = {}
        for axis in (*BREAKDOWN_AXES, "category", "aspect", "qa_type"):
            groups = agg.categories(key.benchmark, axis)
            if groups:
                cats[axis] = {v: {**rec.score(universe, ids).to_json(), "n_items_in_category": len(ids)}
                              for v, ids in sorted(groups.items())}
        metrics = {}
        for name in sorted(rec.metrics):
            mean, std, n = rec.metric_score(name)
            metrics[name] = {"mean": mean, "std": std, "n": n}
        out.append({
            "benchmark": key.benchmark, "model": key.model, "prompt": key.prompt, "judge": key.judge,
            **rec.score(universe).to_json(),
            "ci95": None if ci is None else {"low": ci.low, "high": ci.high, "item_mean": ci.mean,
                                             "n_items": ci.n_items},
            "vs_best": an.vs_best[key].to_json() if key in an.vs_best else None,
            "vs_direct": an.vs_direct[key].to_json() if key in an.vs_direct else None,
            "metrics": metrics, "by_category": cats,
        })
    return out


def _diagnostics_and_references(agg: Aggregate, cells: list[dict[str, Any]], labels: dict[str, str],
                                references: list[str]) -> tuple[list[Table], dict[str, Any]]:
    """The CoT diagnostics table (HakushoBench §6.1), the judge's variance where judged per run (§5.1) and one
    published-vs-measured table per reference CSV."""
    from zuhyo.evaluate.diagnostics import reply_diagnostics
    from zuhyo.report.diagnostics_table import diagnostics_table, judge_variance_rows, judge_variance_table
    from zuhyo.report.reference import compare, load_reference_scores, reference_table

    diagnostics = reply_diagnostics(agg.merged.predictions.values())
    tables = [diagnostics_table(diagnostics, labels)] if diagnostics else []
    variance = judge_variance_rows(agg, labels)
    if variance:
        tables.append(judge_variance_table(variance))
    compared: list[dict[str, Any]] = []
    for i, spec in enumerate(references):
        matched, unmatched = compare(load_reference_scores(spec), cells, agg.models, labels)
        table = reference_table(matched, unmatched, spec)
        if len(references) > 1:
            table.name = f"reference_scores_{i + 1}"
        tables.append(table)
        compared.append({"reference": spec, "matched": matched, "n_unmatched": len(unmatched)})
    return tables, {"diagnostics": diagnostics, "judge_variance": variance, "reference_scores": compared}


def write_tables(tables: list[Table], out: Path) -> list[Path]:
    tdir = out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    files = []
    for t in tables:
        for suffix, render in ((".md", render_markdown), (".csv", render_csv), (".tex", render_latex)):
            path = tdir / f"{t.name}{suffix}"
            path.write_text(render(t), encoding="utf-8")
            files.append(path)
    combined = out / "tables.md"
    combined.write_text("\n\n".join(render_markdown(t) for t in tables), encoding="utf-8")
    files.append(combined)
    return files


def build_report(dirs: list[Path], out: Path, options: ReportOptions | None = None) -> dict[str, Any]:
    """Load and merge ``dirs``, write tables, plots, index.html and report.json under ``out``; return the JSON."""
    import json

    from zuhyo.report.html import collect_failed, render_html
    from zuhyo.report.plots import build_plots

    opts = options or ReportOptions()
    if opts.n_resamples < 100:
        from zuhyo.report.runsets import ReportError

        raise ReportError(f"--bootstrap {opts.n_resamples}: use at least 100 resamples (default {DEFAULT_RESAMPLES})")
    merged = load_and_merge(dirs, strict=opts.strict)
    agg = aggregate(merged, judge=opts.judge)
    tags = parse_tags(opts.tags, agg.models)
    an = analyse(agg, tags, n_resamples=opts.n_resamples, seed=opts.seed)
    problems = [p.to_json() for p in (*merged.problems, *agg.problems, *an.problems)]
    tables = build_tables(agg, an, tags, min_items=opts.min_category_items)
    cells = _cells_json(agg, an)
    labels = model_labels(agg.models, agg.baselines)
    extra_tables, extra_json = _diagnostics_and_references(agg, cells, labels, opts.reference_scores)
    tables += extra_tables
    if opts.error_breakdown is not None:
        from zuhyo.report.error_table import error_table

        tables.append(error_table(opts.error_breakdown, labels))
        extra_json["error_analysis"] = opts.error_breakdown
    out.mkdir(parents=True, exist_ok=True)
    files = write_tables(tables, out)
    plots = build_plots(agg, tags, out / "plots", min_items=opts.min_category_items, font=opts.font) \
        if opts.plots else []
    files += [f for p in plots for f in (p.png, p.svg)]
    failed = collect_failed(agg, max_per_model=opts.max_failed_per_model)
    overview = {"run_sets": [str(d) for d in dirs], "models": agg.models,
                "model_labels": model_labels(agg.models, agg.baselines),
                "tags": tags, "benchmarks": agg.benchmarks, "prompts": agg.prompts, "runs": merged.runs,
                "judges": agg.judge_for, "n_resamples": opts.n_resamples, "seed": opts.seed,
                "min_category_items": opts.min_category_items,
                "items": {b: len(ids) for b, ids in sorted(agg.items.items())}, "conflicts": merged.n_conflicts}
    index = render_html(agg=agg, tables=tables, plots=plots, failed=failed,
                        max_per_model=opts.max_failed_per_model, overview=overview, problems=problems,
                        out=out / "index.html")
    files.append(index)
    doc: dict[str, Any] = {
        "overview": overview, "problems": problems, "cells": cells, "gaps": an.gaps, **extra_json,
        "failed_counts": failed.totals, "failed_by_benchmark": failed.counts, "tables": [t.name for t in tables],
        "plots": [{"name": p.name, "png": str(p.png), "svg": str(p.svg), "caption": p.caption} for p in plots],
        "out": str(out), "index": str(index),
    }
    report_json = out / "report.json"
    doc["files"] = [str(f) for f in [*files, report_json]]
    report_json.write_text(json.dumps(doc, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    return doc
