"""Loading run sets written by `zuhyo eval` and merging several of them by record key.

A run set is a directory with ``run.json`` (manifest), ``predictions.jsonl``, ``judgments.jsonl`` and
``summary.json``. Records from several directories merge by their keys (benchmark, sample, model, prompt, run
[, judge]); the same record present twice with the same content is one record. Two *different* records under one
key are a conflict: the first directory given wins (or, with ``strict``, the report refuses), and every conflict
is listed as a :class:`Problem` naming the key and both directories — never merged silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zuhyo.errors import DataError, ZuhyoError
from zuhyo.evaluate.config import BenchmarkSpec
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.evaluate.scoring import sha256_text
from zuhyo.evaluate.store import MANIFEST, SUMMARY, RunStore
from zuhyo.schema import Sample

PredKey = tuple[str, str, str, str, int]
JudgKey = tuple[str, str, str, str, int, str]


class ReportError(ZuhyoError):
    """The report cannot be made from this input (the message says which run set, record or option)."""


@dataclass(frozen=True)
class Problem:
    """Something about the input the reader of a report must know (listed in the report and its JSON)."""

    kind: str
    """conflict, sample_conflict, load_error, read_error, missing_run, errors, unscored, missing_items,
    item_set_mismatch, no_samples, judge_choice."""
    message: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


@dataclass
class RunSet:
    """One run-set directory, read."""

    root: Path
    manifest: dict[str, Any]
    predictions: dict[PredKey, PredictionRecord]
    judgments: dict[JudgKey, JudgmentRecord]
    summary: dict[str, Any] | None
    samples: dict[tuple[str, str], Sample]
    base_dirs: dict[str, Path | None]
    problems: list[Problem] = field(default_factory=list)


def load_runset(root: Path) -> RunSet:
    """Read a run set; a benchmark that no longer loads is a :class:`Problem` (its items lose their metadata)."""
    from zuhyo.evaluate.session import load_benchmarks

    if not root.is_dir():
        raise ReportError(f"{root}: not a directory (expected a run set written by `zuhyo eval --out`)")
    if not (root / MANIFEST).is_file():
        raise ReportError(f"{root}: not a zuhyo run set (no {MANIFEST})")
    store = RunStore(root)
    manifest = store.read_json(MANIFEST)
    predictions = store.latest_predictions()
    judgments = store.latest_judgments()
    problems = [Problem("read_error", f"{root}: {e}") for e in store.read_errors]
    samples: dict[tuple[str, str], Sample] = {}
    base_dirs: dict[str, Path | None] = {}
    for bench in manifest.get("benchmarks", []):
        spec = BenchmarkSpec.from_json(bench)
        try:
            loaded, errors = load_benchmarks([spec], limit=manifest.get("limit"))
        except (DataError, ZuhyoError, OSError) as e:
            problems.append(Problem("load_error", f"{root}: benchmark {spec.name!r} does not load any more ({e}); "
                                    "its items have no question, image or categories in this report"))
            continue
        for lb in loaded:
            base_dirs[lb.name] = lb.base_dir
            samples.update({(lb.name, s.id): s for s in lb.samples})
        problems += [Problem("load_error", f"{root}: {spec.name}: {e}") for e in errors[:20]]
    return RunSet(root, manifest, predictions, judgments, store.read_json(SUMMARY), samples, base_dirs, problems)


@dataclass
class MergedRuns:
    """All records of several run sets, one per key, with where each came from."""

    predictions: dict[PredKey, PredictionRecord]
    judgments: dict[JudgKey, JudgmentRecord]
    samples: dict[tuple[str, str], Sample]
    base_dirs: dict[str, Path | None]
    runs: int
    """Runs per item requested (the largest ``runs`` of the manifests)."""
    origin: dict[PredKey, Path]
    runsets: list[RunSet]
    problems: list[Problem] = field(default_factory=list)
    n_conflicts: int = 0


def _same_prediction(a: PredictionRecord, b: PredictionRecord) -> bool:
    return (a.status, a.response, a.answer) == (b.status, b.response, b.answer)


def _same_judgment(a: JudgmentRecord, b: JudgmentRecord) -> bool:
    return (a.verdict, a.score, a.metrics, a.response_sha) == (b.verdict, b.score, b.metrics, b.response_sha)


def _same_sample(a: Sample, b: Sample) -> bool:
    return (a.question, a.answers, a.image_type, a.flags, a.astro) == (b.question, b.answers, b.image_type, b.flags,
                                                                        b.astro)


def merge_runsets(runsets: list[RunSet], *, strict: bool = False, max_listed: int = 20) -> MergedRuns:
    """Merge run sets in the order given (the first wins a conflict; ``strict`` refuses instead)."""
    merged = MergedRuns({}, {}, {}, {}, max(int(r.manifest.get("runs", 1)) for r in runsets), {}, runsets)
    conflicts: list[str] = []
    for rs in runsets:
        merged.problems += rs.problems
        for sample_key, s in rs.samples.items():
            prev_sample = merged.samples.get(sample_key)
            if prev_sample is None:
                merged.samples[sample_key] = s
            elif not _same_sample(prev_sample, s):
                merged.problems.append(Problem("sample_conflict", f"{sample_key[0]}/{sample_key[1]}: the sample "
                                               "differs between run sets (question or references changed); using "
                                               "the first"))
        for bench, base in rs.base_dirs.items():
            merged.base_dirs.setdefault(bench, base)
        for pred_key, p in rs.predictions.items():
            prev_pred = merged.predictions.get(pred_key)
            if prev_pred is None or (prev_pred.status != "ok" and p.status == "ok"):
                # An answer beats an error for the same key, as in RunStore.latest_predictions.
                merged.predictions[pred_key] = p
                merged.origin[pred_key] = rs.root
            elif not _same_prediction(prev_pred, p):
                conflicts.append(f"prediction {_fmt_key(pred_key)}: {merged.origin[pred_key]} and {rs.root} hold "
                                 "different responses")
    for rs in runsets:
        for judg_key, j in rs.judgments.items():
            pred = merged.predictions.get(judg_key[:5])
            if pred is None or pred.status != "ok" or j.response_sha != sha256_text(pred.response or ""):
                continue  # a judgment of a response that is not the one kept does not describe it
            prev_judg = merged.judgments.get(judg_key)
            if prev_judg is None:
                merged.judgments[judg_key] = j
            elif not _same_judgment(prev_judg, j):
                conflicts.append(f"judgment {_fmt_key(judg_key)}: run sets disagree ({prev_judg.verdict} vs "
                                 f"{j.verdict})")
    merged.n_conflicts = len(conflicts)
    if conflicts and strict:
        raise ReportError(f"{len(conflicts)} conflicting duplicate record(s) across run sets, e.g. "
                          + "; ".join(conflicts[:3]))
    for c in conflicts[:max_listed]:
        merged.problems.append(Problem("conflict", c + " — the first run set given wins"))
    if len(conflicts) > max_listed:
        merged.problems.append(Problem("conflict", f"… and {len(conflicts) - max_listed} more conflicting records"))
    return merged


def _fmt_key(key: tuple[Any, ...]) -> str:
    bench, sid, model, prompt, run = key[:5]
    judge = f" judge {key[5]}" if len(key) > 5 else ""
    return f"{bench}/{sid} model {model} prompt {prompt} run {run}{judge}"


def load_and_merge(dirs: list[Path], *, strict: bool = False) -> MergedRuns:
    """Load each run-set directory and merge them."""
    if not dirs:
        raise ReportError("give at least one run-set directory")
    seen: set[Path] = set()
    for d in dirs:
        r = d.resolve()
        if r in seen:
            raise ReportError(f"{d}: run set given twice")
        seen.add(r)
    return merge_runsets([load_runset(d) for d in dirs], strict=strict)
