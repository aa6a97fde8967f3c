"""The ``astrochart[:<model spec>]`` judge: DomainCQA/AstroChart scoring per item (DomainCQA §4.4, Appendix G).

Each item is routed by :func:`~zuhyo.evaluate.judges.astro_routing.scoring_kind` (``sample.astro.answer_kind``,
else derived from category/aspect):

- ``numeric_retrieval`` → ``astro_numeric`` (Appendix G.1, Algorithm 3), ``numeric_exact`` → ``astro_exact`` (data
  derivation: exact numeric match). The values are extracted first (Algorithm 3 step 4; "an LLM extracts numerical
  values"): with a model spec by the LLM value extractor for every numeric item
  (:mod:`~zuhyo.evaluate.judges.value_extractor`; an unusable reply after its retries → *unscored*), without one by
  the deterministic extractor (:mod:`~zuhyo.evaluate.judges.numeric_values`; values it cannot isolate →
  *undecided*). The deterministic extraction is also computed beside the LLM's and shown in the reason as the
  first guess. Bad metadata (no axis range, a reference without a number) → *unscored*, naming the item;
- ``choice`` → the chosen option against the reference option (:func:`~zuhyo.evaluate.judges.astro_routing.
  match_choice`: a label, the option text, or a sentence naming one option);
- ``open`` → the LLM key-point score in [0, 1] (DomainCQA's open-answer evaluation, Appendix G.2: the share of the
  reference's key points, ``sample.astro.key_points``, that the answer covers; prompt
  ``prompts/judges/astro_keypoints.txt``) when a model spec is given, else *unscored* with the reason. ROUGE-L
  and BLEU-4 (Japanese-aware tokenizer) are always added to ``Verdict.metrics`` for open items.
"""

from __future__ import annotations

import re
from typing import Any

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.astro_routing import match_choice, scoring_kind
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, verdict_from_score
from zuhyo.evaluate.judges.llm import RAW_REPLY_LIMIT, backend_for_judge, first_json_object
from zuhyo.evaluate.judges.numeric_values import Extraction
from zuhyo.evaluate.judges.value_extractor import LLMValueExtractor
from zuhyo.evaluate.metrics.astro import axis_range, best_score, deterministic_extractions
from zuhyo.evaluate.metrics.text_overlap import bleu4, rouge_l_f
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend
from zuhyo.prompts import load_prompt
from zuhyo.schema import Sample

#: Metric names of the numeric kinds (DomainCQA: retrieval by Algorithm 3, derivation by exact match).
_NUMERIC_METRICS = {"numeric_retrieval": "astro_numeric", "numeric_exact": "astro_exact"}


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
    """Dispatches each AstroChart item to its scorer; the backend extracts numeric values and scores open answers."""

    def __init__(self, backend: ModelBackend | None = None, max_tokens: int = 2048, extract_attempts: int = 3) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.prompt = load_prompt("judges/astro_keypoints")
        self.extractor = LLMValueExtractor(backend, attempts=extract_attempts) if backend is not None else None
        self.id = "astrochart" + (f":{backend.spec}" if backend is not None else "")
        extractor = f"+{self.extractor.version}" if self.extractor is not None else ""
        self.prompt_version = f"astrochart-2+{self.prompt.name}-{self.prompt.version}{extractor}"

    async def judge(self, item: JudgeInput) -> Verdict:
        sample = item.sample
        if sample is None or sample.astro is None:
            return Verdict(verdict="unscored", reason="not an AstroChart item (the sample has no astro metadata)",
                           decided_by="astrochart")
        kind = scoring_kind(sample)
        if kind in _NUMERIC_METRICS:
            try:
                return await self._judge_numeric(item, sample, kind)
            except DataError as e:
                return Verdict(verdict="unscored", reason=str(e), decided_by=_NUMERIC_METRICS[kind])
        if kind == "choice":
            return match_choice(item.references, _full(item), item.question)
        return await self._judge_open(item, sample)

    async def _judge_numeric(self, item: JudgeInput, sample: Sample, kind: str) -> Verdict:
        """Extract the values (LLM, else deterministic), then Algorithm 3 or exact match per reference answer."""
        name = _NUMERIC_METRICS[kind]
        if kind == "numeric_retrieval" and axis_range(sample) is None:
            raise DataError(f"{sample.key}: numeric retrieval needs axis_min and axis_max (Algorithm 3 divides by "
                            "the axis range)")
        text = _full(item)
        references, guesses = deterministic_extractions(sample.model_copy(update={"question": item.question}), text)
        llm: Extraction | None = None
        if self.extractor is not None:
            llm = await self.extractor.extract(item.question, text)
            if llm.values is None:
                return Verdict(verdict="unscored", reason=f"{sample.key}: {llm.reason}", decided_by=name)
        best = best_score(sample, references, [llm] * len(references) if llm else guesses,
                          retrieval=kind == "numeric_retrieval")
        first_guess = "; ".join(dict.fromkeys(g.reason for g in guesses))
        if best is None:
            return Verdict(verdict="undecided", reason=f"{first_guess} (an LLM extractor decides: "
                           "astrochart:<model spec>)", decided_by=name)
        reason = f"{llm.reason} (first guess, rules: {first_guess})" if llm is not None else first_guess
        verdict = verdict_from_score(best[0], name, reason=reason, **{name: best[0]})
        verdict.extracted_answer = ", ".join(str(v) for v in best[1].values or ())
        return verdict

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


def _full(item: JudgeInput) -> str:
    return item.raw_response if item.raw_response is not None else item.response


def _reasoning(text: str) -> str:
    obj: dict[str, Any] | None = first_json_object(text)
    return str(obj.get("reasoning", "")) if obj else ""


@JUDGES.register("astrochart", "AstroChart per answer kind (derived from category/aspect when absent): Algorithm 3 "
                               "numeric retrieval, exact derivation (values extracted by the LLM, else by rules), "
                               "choice, LLM key-point score for open answers (+ROUGE-L, BLEU-4): "
                               "astrochart[:<model spec>]")
def _build_astrochart(rest: str, options: JudgeOptions) -> AstroChartJudge:
    backend = backend_for_judge("astrochart", rest, options) if rest else None
    return AstroChartJudge(backend)
