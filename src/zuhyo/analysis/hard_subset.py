"""Hard subset: the items a given model got wrong, exported as a new benchmark.

HakushoBench (limitations section) suggests keeping the questions a strong model answers wrongly as a harder
subset. This module reads a run set (``zuhyo eval`` / ``zuhyo score`` output), tallies the judge's verdicts on one
model's predictions per item, keeps the items that are wrong by a rule, and writes them as zuhyo JSONL (images
copied beside the file) loadable with ``--bench local --path FILE``.

What counts:

- a prediction's verdict is the judge's ``correct`` / ``incorrect`` label (for graded metrics that is score ≥ 0.5,
  see :func:`zuhyo.evaluate.judges.base.verdict_from_score`);
- **not** wrong, and not counted at all: errored predictions (the model call failed), ``undecided`` and
  ``unscored`` verdicts, judge failures, ok predictions without a judgment, and judgments of an older response
  (their ``response_sha`` no longer matches the stored response). Each is counted and reported;
- rules over an item's decided verdicts (all prompts given × all runs): ``any-wrong`` — at least one incorrect;
  ``all-wrong`` — every decided verdict incorrect; ``majority-wrong`` — more than half incorrect. An item with no
  decided verdict is *undetermined*: it is left out and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from zuhyo.errors import ZuhyoError
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.schema import Sample

HardRule = Literal["any-wrong", "all-wrong", "majority-wrong"]
HARD_RULES: tuple[str, ...] = get_args(HardRule)
#: Reasons a prediction gives no decided verdict (never counted as wrong).
EXCLUSION_REASONS = ("error", "unjudged", "stale", "judge_error", "undecided", "unscored")


@dataclass
class ItemTally:
    """Decided verdicts and exclusions of one item across prompts and runs."""

    correct: int = 0
    incorrect: int = 0
    excluded: Counter[str] = field(default_factory=Counter)

    @property
    def decided(self) -> int:
        return self.correct + self.incorrect


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tally_verdicts(predictions: Iterable[PredictionRecord], judgments: dict[tuple, JudgmentRecord], *, model: str,
                   judge: str, prompts: Iterable[str] | None = None) -> dict[tuple[str, str], ItemTally]:
    """Per (benchmark, sample id): the judge's decided verdicts on ``model``'s latest predictions, and exclusions."""
    wanted = set(prompts) if prompts is not None else None
    tallies: dict[tuple[str, str], ItemTally] = {}
    for p in predictions:
        if p.model != model or (wanted is not None and p.prompt not in wanted):
            continue
        tally = tallies.setdefault((p.benchmark, p.sample_id), ItemTally())
        if p.status != "ok":
            tally.excluded["error"] += 1
            continue
        j = judgments.get((*p.key, judge))
        if j is None:
            tally.excluded["unjudged"] += 1
        elif j.response_sha and j.response_sha != _sha256(p.response or ""):
            tally.excluded["stale"] += 1
        elif j.judge_error:
            tally.excluded["judge_error"] += 1
        elif j.verdict == "correct":
            tally.correct += 1
        elif j.verdict == "incorrect":
            tally.incorrect += 1
        else:
            tally.excluded[j.verdict] += 1
    return tallies


def is_hard(tally: ItemTally, rule: HardRule) -> bool | None:
    """Whether the item is wrong by ``rule``; None when it has no decided verdict (undetermined)."""
    if tally.decided == 0:
        return None
    if rule == "any-wrong":
        return tally.incorrect >= 1
    if rule == "all-wrong":
        return tally.incorrect == tally.decided
    if rule == "majority-wrong":
        return 2 * tally.incorrect > tally.decided
    raise ValueError(f"unknown rule {rule!r}; known: {', '.join(HARD_RULES)}")


@dataclass
class HardSubset:
    """The selected samples and what was counted on the way."""

    model: str
    judge: str
    prompts: list[str]
    rule: HardRule
    samples: list[Sample]
    counts: dict[str, Any]


def _choose(kind: str, given: str | None, available: set[str], flag: str) -> str:
    if given is not None:
        if given not in available:
            known = ", ".join(sorted(available)) or "none"
            raise ZuhyoError(f"{kind} {given!r} is not in this run set; found: {known}")
        return given
    if len(available) == 1:
        return next(iter(available))
    if not available:
        raise ZuhyoError(f"no {kind} found in this run set")
    raise ZuhyoError(f"this run set has several {kind}s ({', '.join(sorted(available))}); choose one with {flag}")


def select_hard_subset(run_dir: Path, model: str, *, judge: str | None = None, prompts: list[str] | None = None,
                       rule: HardRule = "any-wrong") -> HardSubset:
    """Read run set ``run_dir`` and keep the items ``model`` got wrong by ``rule`` (see the module doc)."""
    from zuhyo.evaluate.config import BenchmarkSpec
    from zuhyo.evaluate.session import load_benchmarks
    from zuhyo.evaluate.store import MANIFEST, RunStore

    if rule not in HARD_RULES:
        raise ZuhyoError(f"unknown rule {rule!r}; known: {', '.join(HARD_RULES)}")
    if not (run_dir / MANIFEST).is_file():
        raise ZuhyoError(f"{run_dir} is not a zuhyo run set (no {MANIFEST})")
    store = RunStore(run_dir)
    manifest = store.read_json(MANIFEST)
    predictions = list(store.latest_predictions().values())
    judgments = store.latest_judgments()
    if store.read_errors:
        raise ZuhyoError(f"unreadable records in {run_dir}: {'; '.join(store.read_errors[:5])}")
    models = {p.model for p in predictions}
    if model not in models:
        found = ", ".join(sorted(models)) or "none"
        raise ZuhyoError(f"model {model!r} has no predictions in {run_dir}; found: {found}")
    model_prompts = {p.prompt for p in predictions if p.model == model}
    for prompt in prompts or []:
        if prompt not in model_prompts:
            found = ", ".join(sorted(model_prompts))
            raise ZuhyoError(f"prompt {prompt!r} has no predictions of {model!r}; found: {found}")
    used_prompts = sorted(set(prompts) if prompts else model_prompts)
    judges = {j.judge for j in judgments.values() if j.model == model and j.prompt in used_prompts}
    if not judges and judge is None:
        raise ZuhyoError(f"no judgments of {model!r} in {run_dir}; judge the predictions first (`zuhyo score`)")
    chosen_judge = _choose("judge", judge, judges, "--judge")

    specs = [BenchmarkSpec.from_json(b) for b in manifest.get("benchmarks", [])]
    benches, load_errors = load_benchmarks(specs, limit=manifest.get("limit"))
    tallies = tally_verdicts(predictions, judgments, model=model, judge=chosen_judge, prompts=used_prompts)

    kept: list[Sample] = []
    outcome: Counter[str] = Counter()
    excluded: Counter[str] = Counter()
    per_bench: dict[str, Counter[str]] = {}
    known_items: set[tuple[str, str]] = set()
    for bench in benches:
        counter = per_bench.setdefault(bench.name, Counter())
        for s in bench.samples:
            known_items.add((bench.name, s.id))
            counter["samples"] += 1
            tally = tallies.get((bench.name, s.id))
            if tally is None:
                label = "not_evaluated"
            else:
                excluded.update(tally.excluded)
                hard = is_hard(tally, rule)
                label = "undetermined" if hard is None else ("hard" if hard else "not_hard")
                if hard:
                    kept.append(_with_provenance(s, bench.base_dir, run_dir, model, chosen_judge, rule, tally))
            outcome[label] += 1
            counter[label] += 1
    orphans = sum(1 for key in tallies if key not in known_items)
    counts = {
        "benchmark_samples": sum(outcome.values()),
        "kept": outcome["hard"],
        "not_hard": outcome["not_hard"],
        "undetermined": outcome["undetermined"],
        "not_evaluated": outcome["not_evaluated"],
        "excluded_predictions": {r: excluded[r] for r in EXCLUSION_REASONS},
        "orphan_predictions": orphans,
        "per_benchmark": {name: dict(c) for name, c in per_bench.items()},
        "load_errors": len(load_errors),
        "load_error_examples": load_errors[:20],
    }
    return HardSubset(model=model, judge=chosen_judge, prompts=used_prompts, rule=rule,
                      samples=_unique_ids(kept), counts=counts)


def _with_provenance(s: Sample, base_dir: Path | None, run_dir: Path, model: str, judge: str, rule: str,
                     tally: ItemTally) -> Sample:
    """The sample with its image path made absolute (subsets may mix folders) and why it was kept in metadata."""
    update: dict[str, Any] = {"metadata": {**s.metadata, "hard_subset": {
        "run": str(run_dir), "model": model, "judge": judge, "rule": rule, "incorrect": tally.incorrect,
        "decided": tally.decided, "source_benchmark": s.benchmark, "source_id": s.id}}}
    if s.image is not None and s.image.path is not None and s.image.data is None:
        resolved = s.image.resolve_path(base_dir)
        if resolved is not None:
            update["image"] = s.image.model_copy(update={"path": str(resolved.resolve())})
    return s.model_copy(update=update)


def _unique_ids(samples: list[Sample]) -> list[Sample]:
    """Ids stay as they are within one benchmark; a subset spanning several gets ``<benchmark>/<id>`` ids."""
    if len({s.benchmark for s in samples}) <= 1:
        return samples
    return [s.model_copy(update={"id": f"{s.benchmark}/{s.id}"}) for s in samples]


def write_hard_subset(subset: HardSubset, out: Path) -> dict[str, int]:
    """Write the subset as zuhyo JSONL with images copied to ``<stem>_images/``; returns export counts."""
    from zuhyo.benchmarks.base import LoadResult
    from zuhyo.benchmarks.local import export_jsonl

    names = {s.benchmark for s in subset.samples}
    name = next(iter(names)) if len(names) == 1 else "hard-subset"
    return export_jsonl(LoadResult(name, subset.samples, [], base_dir=None), out)
