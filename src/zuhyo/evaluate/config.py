"""Run configuration and its fingerprint."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zuhyo.benchmarks.base import BenchmarkSource
from zuhyo.models.base import GenerationConfig
from zuhyo.models.generation import ALL_PROMPTS, Overrides


@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark to evaluate and where to load it from."""

    name: str
    source: BenchmarkSource = field(default_factory=BenchmarkSource)

    def to_json(self) -> dict[str, Any]:
        s = self.source
        return {"name": self.name, "path": str(s.path) if s.path else None, "hf_id": s.hf_id,
                "revision": s.revision, "split": s.split, "cache_dir": str(s.cache_dir) if s.cache_dir else None,
                "options": dict(s.options), "allow_outside_paths": s.allow_outside_paths,
                "images_root": str(s.images_root) if s.images_root else None}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BenchmarkSpec:
        return cls(d["name"], BenchmarkSource(
            path=Path(d["path"]) if d.get("path") else None, hf_id=d.get("hf_id"), revision=d.get("revision"),
            split=d.get("split"), cache_dir=Path(d["cache_dir"]) if d.get("cache_dir") else None,
            options=d.get("options") or {}, allow_outside_paths=bool(d.get("allow_outside_paths")),
            images_root=Path(d["images_root"]) if d.get("images_root") else None))


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; Retry-After is honoured (capped at ``max_delay_s``)."""

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_connection_failures: int = 10
    """Failures to connect to one endpoint in a row (no reply in between) that stop the whole run with one
    message (:class:`zuhyo.models.base.ConnectionBreaker`); 0: never stop."""


@dataclass(frozen=True)
class EvalConfig:
    """Everything `zuhyo eval` needs."""

    benchmarks: tuple[BenchmarkSpec, ...]
    models: tuple[str, ...]
    out: Path
    prompts: tuple[str, ...] = ("direct",)
    runs: int = 3
    concurrency: int = 16
    judge: str | None = "auto"
    answer_cleaning: str = "faithful"
    """How the scored answer is read from a reply: faithful (each benchmark's official pipeline) | lenient."""
    limit: int | None = None
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout_s: float = 300.0
    endpoints: tuple[str, ...] = ()
    api_key: str | None = None
    max_image_pixels: int | None = None
    model_options: dict[str, str] = field(default_factory=dict)
    """Backend-specific options (``--model-option``), e.g. batch_size/device/dtype for ``hf:``."""
    images_dir: Path | None = None
    """Cache folder of `zuhyo images fetch` for URL-only benchmarks."""
    strict: bool = False
    prompt_settings: dict[str, Overrides] = field(default_factory=dict)
    """Generation overrides for every model: ``*`` (all prompt styles) and per style (``--gen-for``,
    ``--extra-body-for``, ``--config``); they win over a preset's."""
    model_settings: dict[str, dict[str, Overrides]] = field(default_factory=dict)
    """Per model spec, a preset's overrides (``*`` and per style)."""
    model_api_keys: dict[str, str] = field(default_factory=dict)
    """Per model spec, the key a preset named (never written to run.json)."""
    judge_repeat: str = "shared"
    """shared: identical judge inputs get one verdict (cached across runs); per-run: each run judged anew."""

    def generation_for(self, model: str, prompt: str) -> GenerationConfig:
        """The settings of ``model``'s requests with ``prompt``: ``generation``, then the model's preset (all
        prompts, then this prompt), then the run's own overrides (all prompts, then this prompt)."""
        gen = self.generation
        layers = self.model_settings.get(model, {})
        for table in (layers, self.prompt_settings):
            for key in (ALL_PROMPTS, prompt):
                if key in table:
                    gen = table[key].apply(gen)
        return gen

    def manifest(self) -> dict[str, Any]:
        """What run.json records (no secrets)."""
        return {
            "benchmarks": [b.to_json() for b in self.benchmarks],
            "models": list(self.models),
            "prompts": list(self.prompts),
            "runs": self.runs,
            "judge": self.judge,
            "answer_cleaning": self.answer_cleaning,
            "limit": self.limit,
            "generation": asdict(self.generation),
            "generation_by_prompt": {m: {p: asdict(self.generation_for(m, p)) for p in self.prompts}
                                     for m in self.models},
            "prompt_settings": {k: v.to_json() for k, v in self.prompt_settings.items()},
            "judge_repeat": self.judge_repeat,
            "max_image_pixels": self.max_image_pixels,
            "images_dir": str(self.images_dir) if self.images_dir else None,
        }


def request_fingerprint(model: str, generation: GenerationConfig, prompt_version: str,
                        max_image_pixels: int | None) -> str:
    """Hash of what determines a request besides the sample: records with another fingerprint are not reused."""
    blob = json.dumps([model, asdict(generation), prompt_version, max_image_pixels], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
