"""The judging stage: over stored predictions, separate from inference (`zuhyo score` re-runs only this).

Each ok prediction gets one judgment per judge, appended to ``judgments.jsonl``. What the judge sees as the answer
is read from the full reply with the chosen answer cleaning (:func:`~zuhyo.evaluate.judges.answer_extraction.
scored_answer`: ``faithful`` by default, ``lenient`` on request). A judgment is reused while the prediction's
response and the answer cleaning are unchanged; a judge that failed (its API down) is retried next time. Judge calls are
cached in ``judge_cache.jsonl`` by (judge id, prompt version, question, references, response, item metadata), so
identical responses across runs and prompts cost one call (``judge_repeat="shared"``, the default). With
``judge_repeat="per-run"`` the cache key also holds the prediction's key (benchmark, sample, model, prompt, run):
every run's reply is judged anew, identical text included — HakushoBench §5.1 repeats each evaluation three times
"to account for stochastic variation in both model outputs and LLM judgment".
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from zuhyo.evaluate.judges.answer_extraction import DEFAULT_ANSWER_CLEANING, check_answer_cleaning, scored_answer
from zuhyo.evaluate.judges.base import Judge, JudgeInput, Verdict
from zuhyo.evaluate.prompting import prompt_family
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.evaluate.store import JUDGE_CACHE, AppendLog, RunStore, read_records
from zuhyo.schema import Sample


@dataclass
class ScoringStats:
    """What the judging stage did."""

    judge: str
    answer_cleaning: str = DEFAULT_ANSWER_CLEANING
    judge_repeat: str = "shared"
    judged: int = 0
    reused: int = 0
    cache_hits: int = 0
    judge_errors: int = 0
    missing_samples: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    decided_by: dict[str, int] = field(default_factory=dict)
    error_examples: list[str] = field(default_factory=list)


class _CacheEntry(JudgmentRecord):
    cache_key: str = ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def judge_cache_key(judge: Judge, item: JudgeInput, prediction: tuple[str, str, str, str, int] | None = None) -> str:
    """Cache key of a judge call; ``prediction`` (per-run judging) ties it to one prediction, so one run's verdict
    is never reused for another run."""
    meta = None
    if item.sample is not None:
        meta = item.sample.model_dump(mode="json", include={"astro", "chartqapro", "charxiv"}, exclude_none=True)
    parts: list[object] = [judge.id, judge.prompt_version, item.question, list(item.references), item.response,
                           item.raw_response, meta]
    if prediction is not None:
        parts.append(list(prediction))
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True)
    return sha256_text(blob)


async def score_predictions(store: RunStore, samples: dict[tuple[str, str], Sample], judge: Judge, *,
                            concurrency: int = 16, answer_cleaning: str = DEFAULT_ANSWER_CLEANING,
                            judge_repeat: str = "shared", progress: Callable[[int], None] | None = None,
                            on_total: Callable[[int], None] | None = None) -> ScoringStats:
    """Judge every ok prediction in ``store`` that has no valid judgment by ``judge`` (with this answer cleaning)
    yet (and, for ``judge_repeat``, one made the same way)."""
    stats = ScoringStats(judge=judge.id, answer_cleaning=check_answer_cleaning(answer_cleaning),
                         judge_repeat=judge_repeat)
    per_run = judge_repeat == "per-run"
    predictions = [p for p in store.latest_predictions().values() if p.status == "ok"]
    existing = store.latest_judgments()
    cache: dict[str, Verdict] = {}
    for _, rec, _err in read_records(store.root / JUDGE_CACHE, _CacheEntry):
        if rec is not None and not rec.judge_error:
            cache[rec.cache_key] = Verdict(verdict=rec.verdict, score=rec.score, reason=rec.reason,
                                           extracted_answer=rec.extracted_answer, decided_by=rec.decided_by,
                                           metrics=rec.metrics)
    todo: list[tuple[PredictionRecord, Sample]] = []
    for p in predictions:
        sample = samples.get((p.benchmark, p.sample_id))
        if sample is None:
            stats.missing_samples += 1
            if len(stats.error_examples) < 20:
                stats.error_examples.append(f"{p.benchmark}/{p.sample_id}: prediction has no sample in the benchmark")
            continue
        prev = existing.get((*p.key, judge.id))
        if (prev is not None and not prev.judge_error and prev.response_sha == sha256_text(p.response or "")
                and prev.answer_cleaning == answer_cleaning and (prev.judge_repeat or "shared") == judge_repeat):
            stats.reused += 1
            _count(stats, prev.verdict, prev.decided_by)
            continue
        todo.append((p, sample))
    if on_total is not None:
        on_total(len(todo))
    log = AppendLog(store.judgments_path)
    cache_log = AppendLog(store.root / JUDGE_CACHE)
    sem = asyncio.Semaphore(concurrency)
    inflight: dict[str, asyncio.Future[Verdict]] = {}

    async def judge_one(p: PredictionRecord, sample: Sample) -> None:
        answer = scored_answer(p.response or "", p.prompt, prompt_family(sample), answer_cleaning)
        item = JudgeInput(question=sample.question, references=tuple(sample.answers), response=answer,
                          raw_response=p.response, sample=sample)
        ck = judge_cache_key(judge, item, p.key if per_run else None)
        failed = False
        if ck in cache:
            verdict = cache[ck]
            stats.cache_hits += 1
        elif ck in inflight:  # an identical item is being judged right now: share its call
            verdict = await asyncio.shield(inflight[ck])
            failed = verdict.decided_by == "error"
            stats.cache_hits += 1
        else:
            fut: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
            inflight[ck] = fut
            async with sem:
                try:
                    verdict = await judge.judge(item)
                except Exception as e:  # noqa: BLE001 - a judge failure must never become a wrong answer
                    failed = True
                    verdict = Verdict(verdict="unscored", reason=f"judge failed: {type(e).__name__}: {e}",
                                      decided_by="error")
            if verdict.extracted_answer is None and not failed:  # metrics extract nothing: show what they scored
                verdict = verdict.model_copy(update={"extracted_answer": answer})
            fut.set_result(verdict)
            del inflight[ck]
            if not failed:
                cache[ck] = verdict
                cache_log.append(_CacheEntry(**_record_fields(p, judge, verdict, failed), cache_key=ck))
        if failed:
            stats.judge_errors += 1
            if len(stats.error_examples) < 20:
                stats.error_examples.append(f"{p.benchmark}/{p.sample_id} [{p.model} {p.prompt} run {p.run_index}]: "
                                            f"{verdict.reason}")
        log.append(JudgmentRecord(**_record_fields(p, judge, verdict, failed), answer_cleaning=answer_cleaning,
                                  judge_repeat=judge_repeat))
        stats.judged += 1
        _count(stats, verdict.verdict, verdict.decided_by)
        if progress is not None:
            progress(1)

    try:
        await asyncio.gather(*(judge_one(p, s) for p, s in todo))
    finally:
        log.close()
        cache_log.close()
    return stats


def _record_fields(p: PredictionRecord, judge: Judge, v: Verdict, failed: bool) -> dict:
    return dict(benchmark=p.benchmark, sample_id=p.sample_id, model=p.model, prompt=p.prompt,
                run_index=p.run_index, judge=judge.id, verdict=v.verdict, score=v.score, reason=v.reason,
                extracted_answer=v.extracted_answer, decided_by=v.decided_by, metrics=v.metrics,
                response_sha=sha256_text(p.response or ""), judge_error=failed, created=time.time())


def _count(stats: ScoringStats, verdict: str, decided_by: str) -> None:
    stats.verdicts[verdict] = stats.verdicts.get(verdict, 0) + 1
    if decided_by:
        stats.decided_by[decided_by] = stats.decided_by.get(decided_by, 0) + 1
