"""`zuhyo eval` and `zuhyo score` as library calls: load → infer → judge → summarise."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Protocol

from zuhyo.benchmarks.base import LoadResult, load_benchmark
from zuhyo.errors import DataError, ZuhyoError
from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
from zuhyo.evaluate.judges.base import Judge
from zuhyo.evaluate.runlock import RunSetLock
from zuhyo.evaluate.runner import InferenceRunner, LoadedBenchmark
from zuhyo.evaluate.scoring import ScoringStats, score_predictions
from zuhyo.evaluate.store import MANIFEST, SUMMARY, RunStore
from zuhyo.evaluate.summary import build_summary
from zuhyo.schema import Sample


class ProgressReporter(Protocol):
    """How the library reports progress; the CLI renders it with rich, tests pass None.

    ``task`` yields ``advance(n)``, called as items finish; where that callable also has ``add_errors(n)``, items
    that finished with an error are reported through it as well (the plain-line reporter shows the count)."""

    def task(self, description: str, total: int) -> AbstractContextManager[Callable[[int], None]]: ...


def require_samples(result: LoadResult) -> LoadResult:
    """``result`` itself, or a :class:`DataError` when it holds no valid sample (an empty source, or every row bad)."""
    if not result.samples:
        why = (f"all {len(result.errors)} rows are invalid; first: {result.errors[0]}" if result.errors
               else "the source is empty")
        raise DataError(f"benchmark {result.benchmark!r} has no samples ({why})")
    return result


def load_benchmarks(specs: tuple[BenchmarkSpec, ...] | list[BenchmarkSpec], *, limit: int | None = None,
                    strict: bool = False) -> tuple[list[LoadedBenchmark], list[str]]:
    """Load each benchmark (first ``limit`` samples); returns them and the row errors met, as messages."""
    loaded: list[LoadedBenchmark] = []
    errors: list[str] = []
    for spec in specs:
        result = require_samples(load_benchmark(spec.name, spec.source, strict=strict))
        samples = result.samples[:limit] if limit else result.samples
        ids = [s.id for s in samples]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise DataError(f"benchmark {result.benchmark!r} has duplicate sample id {dup!r}")
        loaded.append(LoadedBenchmark(spec.name, samples, result.base_dir))
        errors += [str(e) for e in result.errors]
    return loaded, errors


def _samples_by_key(benches: list[LoadedBenchmark]) -> dict[tuple[str, str], Sample]:
    return {(b.name, s.id): s for b in benches for s in b.samples}


def _merge_manifest(store: RunStore, config: EvalConfig) -> dict[str, Any]:
    """run.json accumulates benchmarks and models across invocations so `zuhyo score DIR` can reload them.

    Called under the run set's lock, and the result written with the atomic ``write_json``: no concurrent
    read-modify-write can drop another invocation's benchmark."""
    new = config.manifest()
    old = store.read_json(MANIFEST) or {}
    benches = {b["name"]: b for b in old.get("benchmarks", [])}
    benches.update({b["name"]: b for b in new["benchmarks"]})
    new["benchmarks"] = list(benches.values())
    new["models"] = sorted(set(old.get("models", [])) | set(new["models"]))
    new["prompts"] = sorted(set(old.get("prompts", [])) | set(new["prompts"]))
    new["runs"] = max(int(old.get("runs", 0)), config.runs)
    new["baselines"] = sorted(set(old.get("baselines", [])))
    new["generation_by_prompt"] = {**old.get("generation_by_prompt", {}), **new["generation_by_prompt"]}
    return new


def run_eval(config: EvalConfig, reporter: ProgressReporter | None = None) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns the summary document (also written to ``out/summary.json``).

    Holds the run set's lock throughout: a second `eval` or `score` on the same folder is refused
    (:class:`~zuhyo.evaluate.runlock.RunSetBusyError`) instead of duplicating requests or losing a manifest entry.
    """
    from zuhyo.evaluate.run_settings import check_judge_repeat, expand_presets

    config = expand_presets(config, os.environ)
    check_judge_repeat(config.judge_repeat)
    benches, load_errors = load_benchmarks(config.benchmarks, limit=config.limit, strict=config.strict)
    store = RunStore(config.out)
    with RunSetLock(config.out):
        return asyncio.run(_run_eval(config, store, benches, load_errors, reporter))


async def _run_eval(config: EvalConfig, store: RunStore, benches: list[LoadedBenchmark], load_errors: list[str],
                    reporter: ProgressReporter | None) -> dict[str, Any]:
    from zuhyo.evaluate.judges.base import JudgeOptions, build_judge
    from zuhyo.models.base import BackendOptions, build_backend

    t0 = time.perf_counter()
    manifest = _merge_manifest(store, config)
    options = BackendOptions(api_key=config.api_key, timeout_s=config.timeout_s,
                             max_image_pixels=config.max_image_pixels, extra=dict(config.model_options))
    if config.endpoints and not config.models[0].startswith("openai:"):
        raise ZuhyoError(f"--endpoint adds replicas of the first --model, which must be openai:…; "
                         f"got {config.models[0]!r}")
    # Extra endpoints are replicas of the first model only; other models keep their own base URL.
    backends = [build_backend(spec, replace(options, endpoints=config.endpoints if i == 0 else (),
                                            api_key=config.model_api_keys.get(spec, options.api_key)))
                for i, spec in enumerate(config.models)]
    # Build the judge before inference so a bad judge spec fails in a second, not after the run.
    from zuhyo.evaluate.judges.answer_extraction import check_answer_cleaning

    try:
        check_answer_cleaning(config.answer_cleaning)
    except ValueError as e:
        raise ZuhyoError(str(e)) from None
    judge = build_judge(config.judge, JudgeOptions(api_key=config.api_key, timeout_s=config.timeout_s)) \
        if config.judge else None
    manifest["baselines"] = sorted(set(manifest["baselines"]) | {b.spec for b in backends if b.is_baseline})
    store.write_json(MANIFEST, manifest)
    try:
        runner = InferenceRunner(config, store, backends)
        pending = runner.pending_jobs(benches)
        runner.stats = type(runner.stats)()  # pending_jobs counted; run() counts again
        ctx = reporter.task("inference", len(pending)) if reporter else nullcontext(None)
        with ctx as advance:
            runner.progress = (lambda n, ok: _advance(advance, n, ok)) if advance else None
            inference = await runner.run(benches)
    finally:
        for b in backends:
            await b.aclose()
    scoring = None
    if judge is not None:
        scoring = await _score(store, _samples_by_key(benches), judge, config.concurrency, reporter,
                               config.answer_cleaning, config.judge_repeat)
    summary = _write_summary(store, benches, manifest)
    summary["inference"] = asdict(inference)
    summary["scoring"] = asdict(scoring) if scoring else None
    summary["load_errors"] = {"count": len(load_errors), "examples": load_errors[:20]}
    summary["out"] = str(config.out)
    summary["wall_s"] = round(time.perf_counter() - t0, 3)
    store.write_json(SUMMARY, summary)
    return summary



def _advance(advance: Callable[[int], None], n: int, ok: bool) -> None:
    advance(n)
    add_errors = getattr(advance, "add_errors", None)
    if not ok and add_errors is not None:
        add_errors(n)


async def _score(store: RunStore, samples: dict[tuple[str, str], Sample], judge: Judge, concurrency: int,
                 reporter: ProgressReporter | None, answer_cleaning: str, judge_repeat: str) -> ScoringStats:
    try:
        if reporter is None:
            return await score_predictions(store, samples, judge, concurrency=concurrency,
                                           answer_cleaning=answer_cleaning, judge_repeat=judge_repeat)
        holder: dict[str, Any] = {}

        def on_total(n: int) -> None:
            holder["ctx"] = reporter.task(f"judging ({judge.id})", n)
            holder["advance"] = holder["ctx"].__enter__()

        try:
            return await score_predictions(store, samples, judge, concurrency=concurrency,
                                           answer_cleaning=answer_cleaning, judge_repeat=judge_repeat,
                                           progress=lambda n: holder["advance"](n), on_total=on_total)
        finally:
            if "ctx" in holder:
                holder["ctx"].__exit__(None, None, None)
    finally:
        await judge.aclose()


def _write_summary(store: RunStore, benches: list[LoadedBenchmark], manifest: dict[str, Any]) -> dict[str, Any]:
    # A run set built by several `eval` calls holds benchmarks this call did not load: load those too, so their
    # entries get categories and missing counts.
    loaded = {b.name for b in benches}
    others = [BenchmarkSpec.from_json(b) for b in manifest.get("benchmarks", []) if b["name"] not in loaded]
    if others:
        benches = benches + load_benchmarks(others, limit=manifest.get("limit"))[0]
    preds = store.latest_predictions()
    judgments = store.latest_judgments()
    summary = build_summary(preds.values(), judgments.values(), _samples_by_key(benches),
                            runs=int(manifest.get("runs", 1)), baselines=set(manifest.get("baselines", [])))
    # Said once per unreadable line (the store keeps only the latest read of each log); the CLI prints them too.
    errors = store.read_errors
    summary["store_read_errors"] = {"count": len(errors), "examples": errors[:20]}
    return summary


def rescore(out: Path, judge_spec: str, **kwargs: Any) -> dict[str, Any]:
    """Judge stored predictions of run set ``out`` with ``judge_spec`` (no inference) and rewrite the summary;
    keyword options as :func:`_rescore`. Holds the run set's lock, like :func:`run_eval`; a missing folder is an
    error (never created)."""
    RunStore(out, create=False)
    if not (out / MANIFEST).is_file():
        raise ZuhyoError(f"{out} is not a zuhyo run set (no {MANIFEST})")
    with RunSetLock(out):
        return _rescore(out, judge_spec, **kwargs)


def _rescore(out: Path, judge_spec: str, *, concurrency: int = 16, api_key: str | None = None,
             reporter: ProgressReporter | None = None, answer_cleaning: str = "faithful",
             judge_repeat: str | None = None) -> dict[str, Any]:
    """``answer_cleaning`` (faithful | lenient) says how the scored answer is read from each reply;
    ``judge_repeat`` (shared | per-run) whether identical replies of different runs share one verdict (None: what
    the run set's `eval` used, shared for run sets written before the option)."""
    from zuhyo.evaluate.judges.answer_extraction import check_answer_cleaning
    from zuhyo.evaluate.run_settings import check_judge_repeat

    if judge_repeat is not None:
        check_judge_repeat(judge_repeat)
    try:
        check_answer_cleaning(answer_cleaning)
    except ValueError as e:
        raise ZuhyoError(str(e)) from None
    store = RunStore(out, create=False)
    manifest = store.read_json(MANIFEST)
    if manifest is None:
        raise ZuhyoError(f"{out} is not a zuhyo run set (no {MANIFEST})")
    repeat = judge_repeat or check_judge_repeat(str(manifest.get("judge_repeat", "shared")))
    specs = [BenchmarkSpec.from_json(b) for b in manifest["benchmarks"]]
    benches, load_errors = load_benchmarks(specs, limit=manifest.get("limit"))

    from zuhyo.evaluate.judges.base import JudgeOptions, build_judge

    judge = build_judge(judge_spec, JudgeOptions(api_key=api_key))

    async def go() -> ScoringStats:
        return await _score(store, _samples_by_key(benches), judge, concurrency, reporter, answer_cleaning,
                            repeat)

    scoring = asyncio.run(go())
    summary = _write_summary(store, benches, manifest)
    summary["scoring"] = asdict(scoring)
    summary["load_errors"] = {"count": len(load_errors), "examples": load_errors[:20]}
    summary["out"] = str(out)
    store.write_json(SUMMARY, summary)
    return summary
