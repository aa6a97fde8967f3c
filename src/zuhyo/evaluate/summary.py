"""Aggregation of judgments into ``summary.json`` (pure functions over records and samples).

Per model × benchmark × prompt × judge: per-run accuracy (mean score over *scored* items of that run), mean and
sample std over runs (ddof = 1, as the HakushoBench paper reports mean ± std over 3 runs), counts of scored,
unscored (undecided or judge failure: excluded, never counted wrong) and errored items (the model call failed),
and per-category means (image type, difficulty flag, AstroChart category and aspect, ChartQAPro question type,
CharXiv kind). Categories are averaged per run first, then mean ± std over runs, like the overall score.

Because the mean leaves unscored items out, every entry also carries its *coverage*, ``n_scored / n_total``
(``n_total`` = runs × benchmark items), and ``mean_unscored_as_wrong``: per run, the sum of scores over every
item of the benchmark (unscored, errored and missing items count 0), then the mean over runs. A mean with low
coverage is a statement about the scored part only (the CLI warns below :data:`LOW_COVERAGE`).

Each entry also says how it was judged (``judge_repeat``: shared | per-run, "mixed" when its judgments differ) and,
for per-run judging, the judge's own variance (:mod:`zuhyo.evaluate.judge_variance`). The document's top-level
``diagnostics`` holds the CoT diagnostics per model × prompt (:mod:`zuhyo.evaluate.diagnostics`).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from zuhyo.evaluate.diagnostics import reply_diagnostics
from zuhyo.evaluate.judge_variance import judge_variance
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.schema import Sample

SUMMARY_SCHEMA_VERSION = 1
LOW_COVERAGE = 0.9
"""Coverage under which the CLI warns that a mean speaks for part of the items only."""


def mean_std(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample std (ddof = 1; None with fewer than 2 values)."""
    if not values:
        return None, None
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else None
    return mean, std


def sample_categories(sample: Sample) -> dict[str, list[str]]:
    """Category axes an item belongs to, for per-category breakdowns."""
    cats: dict[str, list[str]] = {}
    if sample.image_type is not None:
        cats["image_type"] = [sample.image_type.value]
    if sample.flags:
        cats["flag"] = [f.value for f in sample.flags]
    if sample.astro is not None:
        cats["category"] = [sample.astro.category.value]
        cats["qa_type"] = [sample.astro.qa_type.value]
        if sample.astro.aspect is not None:
            cats["aspect"] = [sample.astro.aspect.value]
    if sample.chartqapro is not None:
        cats["question_type"] = [sample.chartqapro.question_type]
    if sample.charxiv is not None:
        cats["charxiv_kind"] = [sample.charxiv.kind]
    if sample.split:
        cats["split"] = [sample.split]
    return cats


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 6)


def build_summary(predictions: Iterable[PredictionRecord], judgments: Iterable[JudgmentRecord],
                  samples: dict[tuple[str, str], Sample], *, runs: int,
                  baselines: set[str] | None = None) -> dict[str, Any]:
    """The summary document: one entry per (model, benchmark, prompt, judge)."""
    preds = {p.key: p for p in predictions}
    groups: dict[tuple[str, str, str, str], list[JudgmentRecord]] = defaultdict(list)
    for j in judgments:
        groups[(j.model, j.benchmark, j.prompt, j.judge)].append(j)
    pred_groups: dict[tuple[str, str, str], list[PredictionRecord]] = defaultdict(list)
    for p in preds.values():
        pred_groups[(p.model, p.benchmark, p.prompt)].append(p)
    n_samples: dict[str, int] = defaultdict(int)
    for bench, _sid in samples:
        n_samples[bench] += 1

    entries = []
    judges_seen = sorted({j for (_, _, _, j) in groups})
    # Without any judgment, one judge-less entry per (model, benchmark, prompt) still reports the predictions.
    judge_choices: Sequence[str | None] = judges_seen or [None]
    for (model, bench, prompt), plist in sorted(pred_groups.items()):
        for judge in judge_choices:
            jl = groups.get((model, bench, prompt, judge), []) if judge else []
            entries.append(_entry(model, bench, prompt, judge, plist, jl, samples, runs, n_samples[bench],
                                  baselines or set()))
    return {"schema_version": SUMMARY_SCHEMA_VERSION, "entries": entries,
            "diagnostics": reply_diagnostics(preds.values())}


def _cleaning(jlist: list[JudgmentRecord]) -> str | None:
    """The answer cleaning the entry's judgments used ("mixed" when they differ; None without judgments)."""
    used = {j.answer_cleaning or "unknown" for j in jlist}
    return None if not used else used.pop() if len(used) == 1 else "mixed"


def _repeat(jlist: list[JudgmentRecord]) -> str | None:
    """How the entry's judgments were repeated: shared | per-run ("mixed" when they differ; None without any)."""
    used = {j.judge_repeat or "shared" for j in jlist}
    return None if not used else used.pop() if len(used) == 1 else "mixed"


def low_coverage_entries(summary: dict[str, Any], threshold: float = LOW_COVERAGE) -> list[dict[str, Any]]:
    """Entries whose coverage (scored / total) is below ``threshold`` (judge-less entries are not judged)."""
    return [e for e in summary.get("entries", []) if e.get("coverage") is not None and e["coverage"] < threshold]


def _entry(model: str, bench: str, prompt: str, judge: str | None, plist: list[PredictionRecord],
           jlist: list[JudgmentRecord], samples: dict[tuple[str, str], Sample], runs: int, n_bench: int,
           baselines: set[str]) -> dict[str, Any]:
    ok_keys = {p.key for p in plist if p.status == "ok"}
    # Only judgments of the current ok predictions count (a stale judgment of a superseded record does not).
    jlist = [j for j in jlist if (j.benchmark, j.sample_id, j.model, j.prompt, j.run_index) in ok_keys]
    per_run_scores: dict[int, list[float]] = defaultdict(list)
    per_run_cat: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    metric_vals: dict[str, list[float]] = defaultdict(list)
    unscored: dict[int, int] = defaultdict(int)
    decided_by: dict[str, int] = defaultdict(int)
    for j in jlist:
        if j.decided_by:
            decided_by[j.decided_by] += 1
        for name, metric_value in j.metrics.items():
            metric_vals[name].append(metric_value)
        if j.verdict in ("undecided", "unscored") or j.score is None:
            unscored[j.run_index] += 1
            continue
        per_run_scores[j.run_index].append(j.score)
        sample = samples.get((j.benchmark, j.sample_id))
        if sample is not None:
            for axis, values in sample_categories(sample).items():
                for v in values:
                    per_run_cat[(axis, v)][j.run_index].append(j.score)
    errors: dict[int, int] = defaultdict(int)
    outcomes: dict[str, int] = defaultdict(int)
    for p in plist:
        outcomes[p.outcome or ("answered" if p.status == "ok" else "error")] += 1
        if p.status != "ok":
            errors[p.run_index] += 1
    run_rows = []
    accs = []
    strict_accs = []
    for r in range(runs):
        scores = per_run_scores.get(r, [])
        acc = statistics.fmean(scores) if scores else None
        if acc is not None:
            accs.append(acc)
        if judge is not None and n_bench:
            strict_accs.append(sum(scores) / n_bench)
        present = sum(1 for p in plist if p.run_index == r)
        run_rows.append({"run_index": r, "accuracy": _round(acc), "n_scored": len(scores),
                         "n_unscored": unscored.get(r, 0), "n_errors": errors.get(r, 0),
                         "n_missing": max(0, n_bench - present)})
    mean, std = mean_std(accs)
    strict_mean, strict_std = mean_std(strict_accs)
    n_total = runs * n_bench
    n_scored = sum(len(per_run_scores.get(r, [])) for r in range(runs))
    cat_items: dict[tuple[str, str], int] = defaultdict(int)
    for (b, _sid), sample in samples.items():
        if b == bench:
            for axis, values in sample_categories(sample).items():
                for v in values:
                    cat_items[(axis, v)] += 1
    by_category: dict[str, dict[str, Any]] = defaultdict(dict)
    cat_keys = set(per_run_cat) | (set(cat_items) if judge is not None else set())
    for axis, value in sorted(cat_keys):
        run_scores = per_run_cat.get((axis, value), {})
        run_means = [statistics.fmean(v) for _, v in sorted(run_scores.items()) if v]
        m, s = mean_std(run_means)
        n = sum(len(v) for v in run_scores.values())
        total = runs * cat_items[(axis, value)]
        by_category[axis][value] = {"mean": _round(m), "std": _round(s), "n": n, "n_total": total,
                                    "coverage": _round(n / total) if total else None}
    return {
        "model": model, "benchmark": bench, "prompt": prompt, "judge": judge,
        "baseline": model in baselines,
        "runs": run_rows,
        "mean": _round(mean), "std": _round(std),
        "n_samples": n_bench,
        "n_total": n_total,
        "coverage": _round(n_scored / n_total) if n_total and judge is not None else None,
        "mean_unscored_as_wrong": _round(strict_mean), "std_unscored_as_wrong": _round(strict_std),
        "answer_cleaning": _cleaning(jlist),
        "judge_repeat": _repeat(jlist),
        "judge_variance": judge_variance(plist, jlist),
        "n_scored": n_scored,
        "n_unscored": sum(r["n_unscored"] for r in run_rows),
        "n_errors": sum(r["n_errors"] for r in run_rows),
        "n_missing": sum(r["n_missing"] for r in run_rows),
        "outcomes": dict(outcomes),
        "decided_by": dict(decided_by),
        "metrics": {k: _round(statistics.fmean(v)) for k, v in sorted(metric_vals.items()) if v},
        "by_category": dict(by_category),
    }
