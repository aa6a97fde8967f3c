"""Aggregation of merged run sets into report cells (pure functions over records and samples).

A *cell* is one (benchmark, model, prompt, judge). Its score follows the procedure of ``summary.json``
(:mod:`zuhyo.evaluate.summary`, after the HakushoBench paper's "mean ± std over 3 runs"): per run, the mean score
over the items that run *scored*; then mean and sample std (ddof = 1) over runs. Category scores apply the same
procedure to the items of the category. Items that were not scored — the judge left them undecided/unscored, the
model call failed, or no prediction exists — never enter a mean; they are counted per cell and reported.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from zuhyo.evaluate.summary import sample_categories
from zuhyo.report.runsets import MergedRuns, Problem, ReportError

PROMPT_ORDER = ("direct", "cot", "cot+ocr")


@dataclass(frozen=True)
class CellKey:
    benchmark: str
    model: str
    prompt: str
    judge: str | None


@dataclass(frozen=True)
class Score:
    """Mean ± std over runs for one cell (or one category of it), with the counts behind it."""

    mean: float | None
    std: float | None
    run_means: tuple[float | None, ...]
    n_items: int
    """Distinct items scored in at least one run."""
    n_scored: int
    """Item-run judgments that entered the per-run means (summed over runs)."""
    n_unscored: int
    n_errors: int
    n_missing: int

    def to_json(self) -> dict[str, object]:
        return {"mean": self.mean, "std": self.std, "run_means": list(self.run_means), "n_items": self.n_items,
                "n_scored": self.n_scored, "n_unscored": self.n_unscored, "n_errors": self.n_errors,
                "n_missing": self.n_missing}


@dataclass
class CellRecords:
    """Per-run item outcomes of one cell."""

    key: CellKey
    runs: int
    scores: dict[int, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    unscored: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    errors: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    predicted: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    metrics: dict[str, dict[int, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def score(self, universe: set[str], subset: set[str] | None = None) -> Score:
        """Score over ``subset`` of the items (all when None); ``universe`` is the benchmark's item set."""
        ids = universe if subset is None else subset
        run_means: list[float | None] = []
        n_scored = n_unscored = n_errors = n_missing = 0
        scored_items: set[str] = set()
        for r in range(self.runs):
            vals = [v for k, v in self.scores.get(r, {}).items() if k in ids]
            scored_items.update(k for k in self.scores.get(r, {}) if k in ids)
            run_means.append(statistics.fmean(vals) if vals else None)
            n_scored += len(vals)
            n_unscored += len(self.unscored.get(r, set()) & ids)
            n_errors += len(self.errors.get(r, set()) & ids)
            n_missing += len(ids - self.predicted.get(r, set()))
        present = [m for m in run_means if m is not None]
        mean = statistics.fmean(present) if present else None
        std = statistics.stdev(present) if len(present) > 1 else None
        return Score(mean, std, tuple(run_means), len(scored_items), n_scored, n_unscored, n_errors, n_missing)

    def item_scores(self, subset: set[str] | None = None) -> dict[str, float]:
        """Per item, the mean score over the runs that scored it (the bootstrap and paired tests' unit)."""
        per_item: dict[str, list[float]] = defaultdict(list)
        for run_scores in self.scores.values():
            for k, v in run_scores.items():
                if subset is None or k in subset:
                    per_item[k].append(v)
        return {k: statistics.fmean(v) for k, v in per_item.items()}

    def metric_score(self, name: str) -> tuple[float | None, float | None, int]:
        """A judgment metric (rouge_l, bleu4, l3score…): mean over runs of per-run means, std, values counted."""
        by_run = self.metrics.get(name, {})
        means = [statistics.fmean(v) for _, v in sorted(by_run.items()) if v]
        n = sum(len(v) for v in by_run.values())
        if not means:
            return None, None, 0
        return statistics.fmean(means), (statistics.stdev(means) if len(means) > 1 else None), n


@dataclass
class Aggregate:
    """Every cell of the merged run sets, plus the item universe and categories per benchmark."""

    merged: MergedRuns
    cells: dict[CellKey, CellRecords]
    benchmarks: list[str]
    models: list[str]
    prompts: list[str]
    judge_for: dict[str, str | None]
    items: dict[str, set[str]]
    problems: list[Problem] = field(default_factory=list)

    @property
    def baselines(self) -> frozenset[str]:
        """Models the run sets mark as baselines (floors such as `ocr`), labelled as such in tables and plots."""
        return frozenset(m for r in self.merged.runsets for m in r.manifest.get("baselines", []))

    def cell(self, benchmark: str, model: str, prompt: str) -> CellRecords | None:
        return self.cells.get(CellKey(benchmark, model, prompt, self.judge_for.get(benchmark)))

    def categories(self, benchmark: str, axis: str) -> dict[str, set[str]]:
        """Category value → item ids of ``benchmark`` on ``axis`` (image_type, flag, category, aspect, ...)."""
        out: dict[str, set[str]] = defaultdict(set)
        for (bench, sid), sample in self.merged.samples.items():
            if bench == benchmark:
                for v in sample_categories(sample).get(axis, []):
                    out[v].add(sid)
        return dict(out)


def parse_judge_choice(items: list[str] | None) -> tuple[str | None, dict[str, str]]:
    """``--judge SPEC`` (all benchmarks) and ``--judge BENCH=SPEC`` (one benchmark)."""
    default: str | None = None
    per_bench: dict[str, str] = {}
    for item in items or []:
        bench, sep, spec = item.partition("=")
        if sep and ":" not in bench:
            per_bench[bench.strip()] = spec.strip()
        elif default is not None:
            raise ReportError(f"--judge given twice for all benchmarks ({default!r} and {item!r}); "
                              "use BENCH=SPEC for one benchmark")
        else:
            default = item.strip()
    return default, per_bench


def choose_judges(merged: MergedRuns, benchmarks: list[str], default: str | None,
                  per_bench: dict[str, str]) -> tuple[dict[str, str | None], list[Problem]]:
    """The one judge whose verdicts each benchmark's tables use; several judges and no choice is an error."""
    present: dict[str, set[str]] = defaultdict(set)
    for key in merged.judgments:
        present[key[0]].add(key[5])
    out: dict[str, str | None] = {}
    problems: list[Problem] = []
    for bench in benchmarks:
        judges = present.get(bench, set())
        wanted = per_bench.get(bench, default)
        if wanted is not None:
            if wanted not in judges:
                raise ReportError(f"benchmark {bench!r} has no judgments by {wanted!r}; judges present: "
                                  f"{', '.join(sorted(judges)) or 'none (run `zuhyo score`)'}")
            out[bench] = wanted
        elif len(judges) == 1:
            out[bench] = next(iter(judges))
        elif not judges:
            out[bench] = None
            problems.append(Problem("judge_choice", f"benchmark {bench!r} has predictions but no judgments: no "
                                    "scores (run `zuhyo score DIR --judge ...`)"))
        else:
            raise ReportError(f"benchmark {bench!r} was judged by several judges ({', '.join(sorted(judges))}); "
                              f"choose one with --judge SPEC or --judge {bench}=SPEC")
    return out, problems


def _ordered(values: set[str], order: tuple[str, ...]) -> list[str]:
    return sorted(values, key=lambda v: (order.index(v) if v in order else len(order), v))


def aggregate(merged: MergedRuns, *, judge: list[str] | None = None) -> Aggregate:
    """Cells for every (benchmark, model, prompt) with predictions, scored by the chosen judge per benchmark."""
    if not merged.predictions:
        raise ReportError("the run sets hold no predictions (run `zuhyo eval` first)")
    model_order: list[str] = []
    for rs in merged.runsets:
        model_order += [m for m in rs.manifest.get("models", []) if m not in model_order]
    models_seen = {k[2] for k in merged.predictions}
    models = [m for m in model_order if m in models_seen] + sorted(models_seen - set(model_order))
    benchmarks = sorted({k[0] for k in merged.predictions})
    prompts = _ordered({k[3] for k in merged.predictions}, PROMPT_ORDER)
    default, per_bench = parse_judge_choice(judge)
    unknown = set(per_bench) - set(benchmarks)
    if unknown:
        raise ReportError(f"--judge names unknown benchmark(s) {', '.join(sorted(unknown))}; benchmarks: "
                          f"{', '.join(benchmarks)}")
    judge_for, problems = choose_judges(merged, benchmarks, default, per_bench)
    items: dict[str, set[str]] = defaultdict(set)
    for bench, sid in merged.samples:
        items[bench].add(sid)
    for key in merged.predictions:
        items[key[0]].add(key[1])
    cells: dict[CellKey, CellRecords] = {}
    for key, p in merged.predictions.items():
        bench, sid, model, prompt, run = key
        ck = CellKey(bench, model, prompt, judge_for.get(bench))
        rec = cells.setdefault(ck, CellRecords(ck, merged.runs))
        rec.predicted[run].add(sid)
        if p.status != "ok":
            rec.errors[run].add(sid)
            continue
        j = merged.judgments.get((*key, ck.judge)) if ck.judge else None
        if j is None:
            rec.unscored[run].add(sid)
            continue
        for name, v in j.metrics.items():
            rec.metrics[name][run].append(v)
        if j.verdict in ("undecided", "unscored") or j.score is None:
            rec.unscored[run].add(sid)
        else:
            rec.scores[run][sid] = j.score
    return Aggregate(merged, cells, benchmarks, models, prompts, judge_for, dict(items), problems)
