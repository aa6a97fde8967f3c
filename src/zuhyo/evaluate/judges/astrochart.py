"""The ``astrochart[:<model spec>]`` judge: DomainCQA/AstroChart scoring per item, by ``sample.astro.answer_kind``.

- ``numeric_retrieval`` → ``astro_numeric`` (DomainCQA Algorithm 3);
- ``numeric_exact`` → ``astro_exact`` (data derivation: exact numeric match);
- ``choice`` → exact match of the option (label or normalised text), via the rules judge's normalisation;
- ``open`` → the LLM key-point score in [0, 1] (DomainCQA's open-answer evaluation: the share of the reference's
  key points, ``sample.astro.key_points``, that the answer covers; prompt
  ``prompts/judges/astro_keypoints.txt``) when a model spec is given, else *unscored* with the reason. ROUGE-L
  and BLEU-4 (Japanese-aware tokenizer) are always added to ``Verdict.metrics`` for open items.
"""

from __future__ import annotations

import re
from typing import Any

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.answer_extraction import normalize_text
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, verdict_from_score
from zuhyo.evaluate.judges.llm import RAW_REPLY_LIMIT, backend_for_judge, first_json_object
from zuhyo.evaluate.judges.rules import option_label
from zuhyo.evaluate.metrics.astro import astro_exact, astro_numeric
from zuhyo.evaluate.metrics.base import MetricFn
from zuhyo.evaluate.metrics.text_overlap import bleu4, rouge_l_f
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend
from zuhyo.prompts import load_prompt
from zuhyo.schema import Sample

#: answer_kind → (metric name, metric) for the numeric kinds (DomainCQA: retrieval by Algorithm 3, derivation exact).
_NUMERIC_METRICS: dict[str, tuple[str, MetricFn]] = {
    "numeric_retrieval": ("astro_numeric", astro_numeric),
    "numeric_exact": ("astro_exact", astro_exact),
}


def match_choice(references: tuple[str, ...] | list[str], answer: str) -> Verdict:
    """Exact match of a multiple-choice answer: option labels when both name one, else normalised text."""
    ans = normalize_text(answer)
    ans_label = option_label(ans)
    for ref in references:
        r = normalize_text(ref)
        r_label = option_label(r)
        if (r_label and ans_label and r_label == ans_label) or r == ans:
            return Verdict(verdict="correct", score=1.0, reason="same option", extracted_answer=answer,
                           decided_by="rules")
    return Verdict(verdict="incorrect", score=0.0, reason="different option", extracted_answer=answer,
                   decided_by="rules")


def parse_keypoint_reply(text: str, n_points: int) -> list[int] | None:
    """Numbers (1-based) of the covered key points from the judge's JSON reply; None when unusable."""
    obj = first_json_object(text)
    if obj is None or not isinstance(obj.get("covered"), list):
        return None
    covered: set[int] = set()
    for v in obj["covered"]:
        if isinstance(v, bool):
            return None
        if isinstance(v, str) and re.fullmatch(r"\s*\d+\s*", v):
            v = int(v)
        if not isinstance(v, int) or not 1 <= v <= n_points:
            return None
        covered.add(v)
    return sorted(covered)


class AstroChartJudge:
    """Dispatches each AstroChart item to its scorer; the backend is only needed for open answers."""

    def __init__(self, backend: ModelBackend | None = None, max_tokens: int = 2048) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.prompt = load_prompt("judges/astro_keypoints")
        self.id = "astrochart" + (f":{backend.spec}" if backend is not None else "")
        self.prompt_version = f"astrochart-1+{self.prompt.name}-{self.prompt.version}"

    async def judge(self, item: JudgeInput) -> Verdict:
        sample = item.sample
        if sample is None or sample.astro is None:
            return Verdict(verdict="unscored", reason="not an AstroChart item (the sample has no astro metadata)",
                           decided_by="astrochart")
        kind = sample.astro.answer_kind
        try:
            if kind in _NUMERIC_METRICS:
                name, metric = _NUMERIC_METRICS[kind]
                score = metric(sample, item.response)
                verdict = verdict_from_score(score, name)
                if score is not None:
                    verdict.metrics[name] = score
                return verdict
        except DataError as e:
            return Verdict(verdict="unscored", reason=str(e), decided_by="astrochart")
        if kind == "choice":
            return match_choice(item.references, item.response)
        return await self._judge_open(item, sample)

    async def _judge_open(self, item: JudgeInput, sample: Sample) -> Verdict:
        metrics = {"rouge_l": max(rouge_l_f(r, item.response) for r in item.references),
                   "bleu4": bleu4(list(item.references), item.response)}
        points = sample.astro.key_points if sample.astro else []
        if self.backend is None:
            return Verdict(verdict="unscored", reason="open answers need an LLM for the key-point score: use "
                           "astrochart:<model spec>", decided_by="astro_keypoints", metrics=metrics)
        if not points:
            return Verdict(verdict="unscored", reason=f"{sample.key}: open item without key_points",
                           decided_by="astro_keypoints", metrics=metrics)
        prompt = self.prompt.render(question=item.question, reference=item.references[0],
                                    key_points="\n".join(f"{i}. {p}" for i, p in enumerate(points, 1)),
                                    response=item.raw_response if item.raw_response is not None else item.response)
        reply = await self.backend.generate(ChatRequest(prompt=prompt, image=None, config=GenerationConfig(
            temperature=0.0, max_tokens=self.max_tokens)))
        covered = parse_keypoint_reply(reply.text, len(points))
        if covered is None:
            return Verdict(verdict="unscored", reason=f"unparseable key-point reply: {reply.text[:RAW_REPLY_LIMIT]}",
                           decided_by="astro_keypoints", metrics=metrics)
        score = len(covered) / len(points)
        reason = _reasoning(reply.text) or f"covers key points {covered} of {len(points)}"
        return verdict_from_score(score, "astro_keypoints", reason=reason, keypoint_score=score, **metrics)

    async def aclose(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()


def _reasoning(text: str) -> str:
    obj: dict[str, Any] | None = first_json_object(text)
    return str(obj.get("reasoning", "")) if obj else ""


@JUDGES.register("astrochart", "AstroChart per answer kind: Algorithm 3 numeric retrieval, exact derivation, choice, "
                               "LLM key-point score for open answers (+ROUGE-L, BLEU-4): astrochart[:<model spec>]")
def _build_astrochart(rest: str, options: JudgeOptions) -> AstroChartJudge:
    backend = backend_for_judge("astrochart", rest, options) if rest else None
    return AstroChartJudge(backend)
