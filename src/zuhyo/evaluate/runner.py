"""The inference stage: async, bounded, resumable.

Work is a stream of (sample, model, prompt, run) requests in sample order. A producer feeds a bounded queue; a
fixed pool of ``concurrency`` workers drains it, so at most ``concurrency`` requests are in flight and memory
stays bounded. Each sample's image is decoded, resized and encoded once (in a thread) and shared by all its
requests, then released. Every finished request is appended to ``predictions.jsonl`` at once; a request that
fails after all retries becomes an ``error`` record (never a wrong answer) and is tried again on the next run.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from zuhyo.errors import ImageError, ModelError
from zuhyo.evaluate.config import EvalConfig, RetryPolicy, request_fingerprint
from zuhyo.evaluate.prompting import RenderedPrompt, extract_final_answer, render_prompt
from zuhyo.evaluate.records import PredictionRecord
from zuhyo.evaluate.store import AppendLog, RunStore, StoreWriteError
from zuhyo.models.base import (
    ChatRequest,
    ConnectionBreaker,
    ModelBackend,
    ModelReply,
    PermanentModelError,
    PreparedImage,
    TransientModelError,
)
from zuhyo.schema import Sample

ProgressFn = Callable[[int, bool], None]
"""Called with (items finished, ok?) as requests complete."""


class _RecordKeyFields(TypedDict):
    """The fields every PredictionRecord of one job shares, whatever the outcome of its requests."""

    benchmark: str
    sample_id: str
    model: str
    prompt: str
    run_index: int
    fingerprint: str


@dataclass
class LoadedBenchmark:
    """A benchmark's samples with the folder their relative image paths resolve against."""

    name: str
    samples: list[Sample]
    base_dir: Path | None


@dataclass
class InferenceStats:
    """What the inference stage did."""

    total: int = 0
    skipped_done: int = 0
    ok: int = 0
    errors: int = 0
    retries: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    error_examples: list[str] = field(default_factory=list)
    wall_s: float = 0.0


@dataclass
class _Job:
    bench: LoadedBenchmark
    sample: Sample
    backend: ModelBackend
    prompt: str
    run_index: int
    fingerprint: str


@dataclass
class _SampleAssets:
    """A sample's prepared image (and OCR text when a cot+ocr prompt needs it), shared by its requests."""

    future: asyncio.Future[tuple[PreparedImage | None, str | None]] | None = None
    refs: int = 0
    requests: dict[str, tuple[RenderedPrompt, ChatRequest]] = field(default_factory=dict)
    """By model spec and prompt style."""


def backoff_delay(attempt: int, policy: RetryPolicy, retry_after: float | None) -> float:
    """Full-jitter exponential backoff; a server's Retry-After wins when given (both capped)."""
    if retry_after is not None:
        return min(retry_after, policy.max_delay_s)
    return random.uniform(0, min(policy.max_delay_s, policy.base_delay_s * (2 ** (attempt - 1))))


class InferenceRunner:
    """Runs the pending requests of a run set."""

    def __init__(self, config: EvalConfig, store: RunStore, backends: list[ModelBackend],
                 progress: ProgressFn | None = None) -> None:
        self.config = config
        self.store = store
        self.backends = backends
        self.progress = progress
        self.stats = InferenceStats()
        self.breaker = ConnectionBreaker(config.retry.max_connection_failures)
        """Stops the run when an endpoint cannot be reached (instead of retrying every request against it)."""
        self._assets: dict[tuple[str, int | None], _SampleAssets] = {}
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zuhyo-image")

    def pending_jobs(self, benches: list[LoadedBenchmark]) -> list[_Job]:
        """Requests without an ok record of the same fingerprint, in sample order (so images are shared)."""
        done = {(k, r.fingerprint) for k, r in self.store.latest_predictions().items() if r.status == "ok"}
        jobs: list[_Job] = []
        for bench in benches:
            for sample in bench.samples:
                for backend in self.backends:
                    for prompt in self.config.prompts:
                        version = render_prompt(sample, prompt, ocr_text="").version
                        gen = self.config.generation_for(backend.spec, prompt)
                        fp = request_fingerprint(backend.spec, gen, version, backend.max_image_pixels)
                        for run in range(self.config.runs):
                            key = (bench.name, sample.id, backend.spec, prompt, run)
                            self.stats.total += 1
                            if (key, fp) in done:
                                self.stats.skipped_done += 1
                                continue
                            jobs.append(_Job(bench, sample, backend, prompt, run, fp))
        return jobs

    async def run(self, benches: list[LoadedBenchmark]) -> InferenceStats:
        """Run the pending requests. Any failure of a worker or of the store (e.g. disk full) cancels the rest at
        once and is raised; records already written stay, and the cancelled requests are pending on resume."""
        t0 = time.perf_counter()
        jobs = self.pending_jobs(benches)
        for job in jobs:  # reference counts let each prepared image be dropped after its last request
            self._asset_entry(job).refs += 1
        tasks: list[asyncio.Task[None]] = []
        failure: list[BaseException] = []

        def abort(exc: BaseException) -> None:
            if not failure:
                failure.append(exc)
            for t in tasks:
                t.cancel()

        log = AppendLog(self.store.predictions_path, on_error=abort)
        queue: asyncio.Queue[_Job | None] = asyncio.Queue(maxsize=max(2, self.config.concurrency * 2))
        try:
            tasks += [asyncio.create_task(self._guarded(self._worker(queue, log), abort))
                      for _ in range(self.config.concurrency)]
            tasks.append(asyncio.create_task(self._guarded(self._produce(jobs, queue), abort)))
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for t in tasks:
                t.cancel()
            self._pool.shutdown(wait=False, cancel_futures=True)
            try:
                log.close()
            except StoreWriteError as e:
                abort(e)
        if failure:
            raise failure[0]
        self.stats.wall_s = time.perf_counter() - t0
        return self.stats

    async def _produce(self, jobs: list[_Job], queue: asyncio.Queue[_Job | None]) -> None:
        for job in jobs:
            self._ensure_prepared(job)
            await queue.put(job)
        for _ in range(self.config.concurrency):
            await queue.put(None)

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, None], abort: Callable[[BaseException], None]) -> None:
        """Run a worker or the producer; its failure stops the whole run (no task may die unnoticed)."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - re-raised by run() after the other tasks are cancelled
            abort(e)

    # -- images -------------------------------------------------------------------------------------------------

    def _asset_key(self, job: _Job) -> tuple[str, int | None]:
        return (f"{job.bench.name}/{job.sample.id}", job.backend.max_image_pixels)

    def _asset_entry(self, job: _Job) -> _SampleAssets:
        key = self._asset_key(job)
        entry = self._assets.get(key)
        if entry is None:
            entry = self._assets[key] = _SampleAssets()
        return entry

    def _ensure_prepared(self, job: _Job) -> None:
        entry = self._asset_entry(job)
        if entry.future is None:
            need_ocr = "cot+ocr" in self.config.prompts
            loop = asyncio.get_running_loop()
            entry.future = loop.run_in_executor(self._pool, self._prepare_sync, job.bench, job.sample,
                                                job.backend.max_image_pixels, need_ocr)

    def _prepare_sync(self, bench: LoadedBenchmark, sample: Sample, max_pixels: int | None,
                      need_ocr: bool) -> tuple[PreparedImage | None, str | None]:
        from zuhyo.images.load import read_image_bytes
        from zuhyo.images.prepare import prepare_image

        if sample.image is None:
            raise ImageError(f"{bench.name}/{sample.id}: sample has no image")
        data = read_image_bytes(sample.image, bench.base_dir, self.config.images_dir)
        prepared = prepare_image(data, max_pixels=max_pixels, label=f"{bench.name}/{sample.id}")
        ocr = None
        if need_ocr:
            from zuhyo.models.ocr import ocr_text

            ocr = ocr_text(data)
        return prepared, ocr

    def _release(self, job: _Job) -> None:
        key = self._asset_key(job)
        entry = self._assets.get(key)
        if entry is not None:
            entry.refs -= 1
            if entry.refs <= 0:
                del self._assets[key]

    # -- requests -----------------------------------------------------------------------------------------------

    async def _worker(self, queue: asyncio.Queue[_Job | None], log: AppendLog) -> None:
        while True:
            job = await queue.get()
            if job is None:
                return
            try:
                record = await self._run_job(job)
            finally:
                self._release(job)
            log.append(record)
            ok = record.status == "ok"
            if ok:
                self.stats.ok += 1
            else:
                self.stats.errors += 1
                if len(self.stats.error_examples) < 20:
                    self.stats.error_examples.append(
                        f"{job.bench.name}/{job.sample.id} [{job.backend.spec} {job.prompt} run {job.run_index}]: "
                        f"{record.error}")
            outcome = record.outcome or "answered"
            self.stats.outcomes[outcome] = self.stats.outcomes.get(outcome, 0) + 1
            if self.progress is not None:
                self.progress(1, ok)

    async def _run_job(self, job: _Job) -> PredictionRecord:
        base = _RecordKeyFields(benchmark=job.bench.name, sample_id=job.sample.id, model=job.backend.spec,
                                prompt=job.prompt, run_index=job.run_index, fingerprint=job.fingerprint)
        try:
            image, ocr = await self._asset_entry_for(job)
        except (ImageError, OSError) as e:
            return PredictionRecord(**base, status="error", outcome="image", error=str(e), attempts=0,
                                    created=time.time())
        rendered, request = self._request_for(job, image, ocr)
        policy = self.config.retry
        attempt = 0
        while True:
            attempt += 1
            self.breaker.check()
            t = time.perf_counter()
            try:
                async with asyncio.timeout(self.config.timeout_s):  # no extra task per request, unlike wait_for
                    reply = await job.backend.generate(request)
            except (TimeoutError, TransientModelError) as e:
                msg = str(e) if isinstance(e, TransientModelError) else f"timeout after {self.config.timeout_s:g}s"
                if isinstance(e, TransientModelError):
                    self.breaker.failed(e)  # EndpointUnreachableError stops the run: nothing listens there
                if attempt > policy.max_retries:
                    return PredictionRecord(**base, status="error", outcome=_error_kind(msg), error=msg,
                                            attempts=attempt, prompt_version=rendered.version, created=time.time())
                self.stats.retries += 1
                retry_after = e.retry_after if isinstance(e, TransientModelError) else None
                await asyncio.sleep(backoff_delay(attempt, policy, retry_after))
                continue
            except (PermanentModelError, ModelError) as e:
                self.breaker.answered()
                return PredictionRecord(**base, status="error", outcome="rejected", error=str(e), attempts=attempt,
                                        prompt_version=rendered.version, created=time.time())
            self.breaker.answered()
            return _ok_record(base, reply, job.prompt, attempt, time.perf_counter() - t, rendered.version)

    def _request_for(self, job: _Job, image: PreparedImage | None,
                     ocr: str | None) -> tuple[RenderedPrompt, ChatRequest]:
        """One request object per (sample, backend, prompt), shared by all runs: a backend may then reuse the
        body it encoded for the first run (the runs differ only in when they are sent)."""
        entry = self._assets[self._asset_key(job)]
        key = f"{job.backend.spec}\n{job.prompt}"  # settings may differ per model and prompt
        cached = entry.requests.get(key)
        if cached is None:
            rendered = render_prompt(job.sample, job.prompt, ocr_text=ocr)
            request = ChatRequest(prompt=rendered.text, image=image, context=tuple(job.sample.context),
                                  config=self.config.generation_for(job.backend.spec, job.prompt), ocr_text=ocr)
            cached = entry.requests[key] = (rendered, request)
        return cached

    async def _asset_entry_for(self, job: _Job) -> tuple[PreparedImage | None, str | None]:
        entry = self._assets[self._asset_key(job)]
        assert entry.future is not None  # noqa: S101 - set by the producer before the job is queued
        return await asyncio.shield(entry.future)


def _ok_record(base: _RecordKeyFields, reply: ModelReply, prompt: str, attempts: int, latency: float,
               version: str) -> PredictionRecord:
    text = reply.text or ""
    outcome = reply_outcome(reply)
    return PredictionRecord(**base, status="ok", response=text, answer=extract_final_answer(text, prompt),
                            outcome=outcome, attempts=attempts, latency_s=round(latency, 4),
                            finish_reason=reply.finish_reason, usage=reply.usage, prompt_version=version,
                            created=time.time())


def reply_outcome(reply: ModelReply) -> str:
    """What a reply is: ``refusal`` (refused or filtered), ``empty``, ``truncated`` (hit max tokens) or
    ``answered``; the runner's records and the construction audit classify replies alike."""
    if reply.finish_reason == "refusal" or reply.finish_reason == "content_filter":
        return "refusal"
    if not (reply.text or "").strip():
        return "empty"
    if reply.finish_reason == "length":
        return "truncated"
    return "answered"


def _error_kind(message: str) -> str:
    if message.startswith("HTTP "):
        return "http_" + message.split()[1]
    if "timeout" in message:
        return "timeout"
    if "malformed" in message:
        return "malformed_reply"
    if "connection" in message:
        return "connection"
    return "error"
