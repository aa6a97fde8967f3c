"""The judge's own variance across repetitions, where it was sampled.

With ``--judge-repeat per-run`` every run's reply is judged anew (HakushoBench §5.1). Where a model gave the very
same reply in every run of an item, any difference between the runs' verdicts comes from the judge alone; those
items measure it. (With the shared cache identical replies get one verdict, so nothing is sampled: None.)
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord


def judge_variance(plist: list[PredictionRecord], jlist: list[JudgmentRecord]) -> dict[str, Any] | None:
    """Over the items whose ok replies are identical in ≥ 2 runs, all judged per run with a score: how many there
    are, how many got differing verdicts, and the mean per-item standard deviation of the score (ddof = 1)."""
    per_run = [j for j in jlist if j.judge_repeat == "per-run" and j.score is not None
               and j.verdict not in ("undecided", "unscored")]
    if not per_run:
        return None
    replies = {p.key: p.response for p in plist if p.status == "ok"}
    by_item: dict[tuple[str, str], list[tuple[str | None, float]]] = defaultdict(list)
    for j in per_run:
        key = (j.benchmark, j.sample_id, j.model, j.prompt, j.run_index)
        if key in replies:
            by_item[(j.benchmark, j.sample_id)].append((replies[key], float(j.score)))  # type: ignore[arg-type]
    stds: list[float] = []
    inconsistent = 0
    for runs in by_item.values():
        if len(runs) < 2 or len({r for r, _ in runs}) != 1:
            continue
        scores = [s for _, s in runs]
        stds.append(statistics.stdev(scores))
        inconsistent += len(set(scores)) > 1
    n = len(stds)
    return {"n_items": n, "n_inconsistent": inconsistent,
            "inconsistent_share": round(inconsistent / n, 6) if n else None,
            "mean_item_std": round(statistics.fmean(stds), 6) if n else None}
