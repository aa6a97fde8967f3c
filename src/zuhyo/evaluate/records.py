"""Records of the run store: one prediction per (benchmark, sample, model, prompt, run), one judgment per
prediction and judge. Both are append-only JSONL; the last record for a key wins."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PredictionStatus = Literal["ok", "error"]


class PredictionRecord(BaseModel):
    """One model answer (or one failure to get an answer) for one sample, prompt and run."""

    model_config = ConfigDict(extra="ignore")

    benchmark: str
    """Benchmark name."""
    sample_id: str
    """Sample id within the benchmark."""
    model: str
    """Model spec, e.g. ``openai:qwen@http://127.0.0.1:8000/v1`` or ``ocr``."""
    prompt: str
    """Prompt style: direct, cot, cot+ocr."""
    run_index: int
    """0-based repetition index (the papers use 3 runs)."""
    status: PredictionStatus
    """ok: the model answered; error: every attempt failed (never scored; retried on resume)."""
    response: str | None = None
    """The model's full reply."""
    answer: str | None = None
    """The final answer extracted from the reply (CoT: after the last ``Answer:``)."""
    outcome: str | None = None
    """Per-item outcome class: answered, empty, refusal, truncated, or the error kind (http, timeout, image...)."""
    error: str | None = None
    """Error message of the last attempt, when status is error."""
    attempts: int = 1
    """Requests made for this record (1 + retries)."""
    latency_s: float | None = None
    """Wall time of the successful attempt."""
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    prompt_version: str = ""
    """Version of the prompt template used."""
    fingerprint: str = ""
    """Hash of everything that determines the request (model, generation config, prompt text version)."""
    created: float = 0.0
    """Unix time the record was written."""

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.benchmark, self.sample_id, self.model, self.prompt, self.run_index)


class JudgmentRecord(BaseModel):
    """A judge's verdict on one stored prediction."""

    model_config = ConfigDict(extra="ignore")

    benchmark: str
    sample_id: str
    model: str
    prompt: str
    run_index: int
    judge: str
    """Judge spec, e.g. ``rules`` or ``cascade:openai:gpt-5.1@...``."""
    verdict: Literal["correct", "incorrect", "undecided", "unscored"]
    """undecided / unscored are excluded from means and counted."""
    score: float | None = None
    reason: str = ""
    extracted_answer: str | None = None
    decided_by: str = ""
    metrics: dict[str, float] = Field(default_factory=dict)
    response_sha: str = ""
    """SHA-256 of the judged response: a changed prediction invalidates the judgment."""
    judge_error: bool = False
    """True when the judge itself failed (e.g. its API was down): re-judged on the next `zuhyo score`."""
    answer_cleaning: str | None = None
    """How the judged answer was read from the reply: faithful | lenient (None: written before the option)."""
    judge_repeat: str | None = None
    """shared (identical inputs share one verdict across runs) | per-run (each run judged anew); None: shared,
    written before the option."""
    created: float = 0.0

    @property
    def key(self) -> tuple[str, str, str, str, int, str]:
        return (self.benchmark, self.sample_id, self.model, self.prompt, self.run_index, self.judge)
