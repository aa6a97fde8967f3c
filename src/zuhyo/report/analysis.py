"""Comparisons over an :class:`~zuhyo.report.aggregate.Aggregate`: CIs, significance markers, the open/proprietary
gap, and the data problems a reader must see (errors, unscored items, missing runs, different item sets)."""

from __future__ import annotations

from dataclasses import dataclass, field

from zuhyo.report.aggregate import Aggregate, CellKey
from zuhyo.report.runsets import Problem, ReportError
from zuhyo.report.stats import ConfidenceInterval, PairedComparison, bootstrap_ci, compare_paired

OPEN = "open"
PROPRIETARY = "proprietary"
GROUP_LABELS = {OPEN: "Open-weight", PROPRIETARY: "Proprietary"}
MARK_VS_BEST = "†"
MARK_VS_DIRECT = "‡"


def parse_tags(items: list[str] | None, models: list[str]) -> dict[str, str]:
    """``--tag MODEL=open|proprietary``; a model that is not in the run sets or another group is an error."""
    tags: dict[str, str] = {}
    for item in items or []:
        model, sep, group = item.rpartition("=")
        group = group.strip().lower()
        if not sep or group not in (OPEN, PROPRIETARY):
            raise ReportError(f"--tag expects MODEL=open or MODEL=proprietary, got {item!r}")
        if model not in models:
            raise ReportError(f"--tag names model {model!r}, which is not in the run sets; models: {', '.join(models)}")
        tags[model] = group
    return tags


@dataclass
class Analysis:
    """Everything computed on top of the cells."""

    ci: dict[CellKey, ConfidenceInterval | None] = field(default_factory=dict)
    vs_best: dict[CellKey, PairedComparison] = field(default_factory=dict)
    """Each non-best model vs the best model of its (benchmark, prompt) column."""
    best: dict[tuple[str, str], str] = field(default_factory=dict)
    vs_direct: dict[CellKey, PairedComparison] = field(default_factory=dict)
    """Each non-Direct prompt vs Direct for the same model and benchmark."""
    gaps: list[dict[str, object]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    n_resamples: int = 0
    seed: int = 0


def analyse(agg: Aggregate, tags: dict[str, str], *, n_resamples: int, seed: int) -> Analysis:
    """Bootstrap CIs for every cell, paired tests vs the best model and vs Direct, gaps and problems."""
    out = Analysis(n_resamples=n_resamples, seed=seed)
    for key, rec in agg.cells.items():
        out.ci[key] = bootstrap_ci(list(rec.item_scores().values()), n_resamples=n_resamples, seed=seed)
    for bench in agg.benchmarks:
        for prompt in agg.prompts:
            _column(agg, out, bench, prompt, tags, n_resamples, seed)
        for model in agg.models:
            direct = agg.cell(bench, model, "direct")
            for prompt in agg.prompts:
                other = agg.cell(bench, model, prompt)
                if prompt == "direct" or direct is None or other is None:
                    continue
                cmp = compare_paired(f"{model} {prompt}", other.item_scores(), f"{model} direct",
                                     direct.item_scores(), n_resamples=n_resamples, seed=seed)
                out.vs_direct[other.key] = cmp
                if cmp.mismatched:
                    out.problems.append(Problem("item_set_mismatch", f"{bench}: {model} {prompt} vs direct compared "
                                                f"on the {cmp.n_common} items scored in both ({cmp.only_in_a} only "
                                                f"{prompt}, {cmp.only_in_b} only direct)"))
    out.problems += cell_problems(agg)
    return out


def _column(agg: Aggregate, out: Analysis, bench: str, prompt: str, tags: dict[str, str], n_resamples: int,
            seed: int) -> None:
    universe = agg.items.get(bench, set())
    scored = {m: rec for m in agg.models if (rec := agg.cell(bench, m, prompt)) is not None
              and rec.score(universe).mean is not None}
    if not scored:
        return
    means = {m: rec.score(universe).mean or 0.0 for m, rec in scored.items()}
    best = max(means, key=lambda m: means[m])
    out.best[(bench, prompt)] = best
    item_sets = {m: frozenset(rec.item_scores()) for m, rec in scored.items()}
    if len(set(item_sets.values())) > 1:
        sizes = ", ".join(f"{m}: {len(s)}" for m, s in item_sets.items())
        out.problems.append(Problem("item_set_mismatch", f"{bench} / {prompt}: models were scored on different item "
                                    f"sets ({sizes} items); each mean is over its own items, pairwise tests use "
                                    "only the items both models have"))
    for m, rec in scored.items():
        if m == best:
            continue
        out.vs_best[rec.key] = compare_paired(m, rec.item_scores(), best, scored[best].item_scores(),
                                              n_resamples=n_resamples, seed=seed)
    groups = {g: [m for m in scored if tags.get(m) == g] for g in (OPEN, PROPRIETARY)}
    if groups[OPEN] and groups[PROPRIETARY]:
        best_open = max(groups[OPEN], key=lambda m: means[m])
        best_prop = max(groups[PROPRIETARY], key=lambda m: means[m])
        cmp = compare_paired(best_prop, scored[best_prop].item_scores(), best_open,
                             scored[best_open].item_scores(), n_resamples=n_resamples, seed=seed)
        group_mean = {g: sum(means[m] for m in ms) / len(ms) for g, ms in groups.items()}
        out.gaps.append({"benchmark": bench, "prompt": prompt, "best_proprietary": best_prop,
                         "best_open": best_open, "best_gap": means[best_prop] - means[best_open],
                         "mean_proprietary": group_mean[PROPRIETARY], "mean_open": group_mean[OPEN],
                         "group_mean_gap": group_mean[PROPRIETARY] - group_mean[OPEN],
                         "n_open": len(groups[OPEN]), "n_proprietary": len(groups[PROPRIETARY]),
                         "test": cmp.to_json()})


def cell_problems(agg: Aggregate) -> list[Problem]:
    """Errors, unscored items, missing predictions and wholly missing runs, one line per affected cell."""
    problems: list[Problem] = []
    for key, rec in sorted(agg.cells.items(), key=lambda kv: (kv[0].benchmark, kv[0].model, kv[0].prompt)):
        s = rec.score(agg.items.get(key.benchmark, set()))
        where = f"{key.benchmark} / {key.model} / {key.prompt}"
        empty_runs = [r for r in range(rec.runs) if not rec.predicted.get(r)]
        if empty_runs:
            problems.append(Problem("missing_run", f"{where}: run(s) {', '.join(map(str, empty_runs))} of "
                                    f"{rec.runs} have no predictions; mean ± std is over the other runs"))
        if s.n_errors:
            problems.append(Problem("errors", f"{where}: {s.n_errors} item-run(s) errored (the model call failed); "
                                    "excluded from the mean, not counted wrong — resume with `zuhyo eval`"))
        if s.n_unscored:
            problems.append(Problem("unscored", f"{where}: {s.n_unscored} item-run(s) unscored (judge undecided, "
                                    "failed or not run); excluded from the mean"))
        partial_missing = s.n_missing - len(empty_runs) * len(agg.items.get(key.benchmark, set()))
        if partial_missing > 0:
            problems.append(Problem("missing_items", f"{where}: {partial_missing} item-run(s) have no prediction"))
    return problems
