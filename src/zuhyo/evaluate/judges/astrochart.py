"""The ``astrochart[:<model spec>]`` judge: DomainCQA/AstroChart scoring per item (DomainCQA §5.1, Appendix G).

Each item is routed by :func:`~zuhyo.evaluate.judges.astro_routing.scoring_kind` (``sample.astro.answer_kind``,
else derived from category/aspect):

- ``numeric_retrieval`` → ``astro_numeric`` (Appendix G.1, Algorithm 3), ``numeric_exact`` → ``astro_exact`` (data
  derivation: exact numeric match). The values are extracted first (Algorithm 3 step 4; "an LLM extracts numerical
  values"): with a model spec by the LLM value extractor for every numeric item
  (:mod:`~zuhyo.evaluate.judges.value_extractor`; an unusable reply after its retries → *unscored*), without one by
  the deterministic extractor (:mod:`~zuhyo.evaluate.judges.numeric_values`: fewer values than the reference, or
  none, → 0 as Algorithm 3 steps 5–6 say; values it cannot tell apart → *undecided*; derivations read after the
  last ``=``). The deterministic extraction is also computed beside the LLM's and shown in the reason as the
  first guess. Bad metadata (no axis range, a reference without a number) → *unscored*, naming the item;
- ``choice`` → the chosen option against the reference option (:func:`~zuhyo.evaluate.judges.astro_routing.
  match_choice`: a label, the option text, or a sentence naming one option);
- ``open`` → the LLM key-point score in [0, 1] (DomainCQA's open-answer evaluation, Appendix G.2: the share of the
  reference's key points that the answer covers) when a model spec is given, else *unscored* with the reason. The
  key points are ``sample.astro.key_points`` when given (prompt ``prompts/judges/astro_keypoints.txt``);
  otherwise the judge extracts the key points of the reference and of the answer and matches them in one reply,
  as G.2 describes (``prompts/judges/astro_keypoints_ref.txt``). A reply that does not validate is asked again
  (:mod:`~zuhyo.evaluate.judges.validated_reply`, 3 attempts), then the item is unscored. ROUGE-L and BLEU-4
  (Japanese-aware tokenizer) are always added to ``Verdict.metrics`` for open items.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.astro_routing import match_choice, scoring_kind
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, verdict_from_score
from zuhyo.evaluate.judges.llm import backend_for_judge, first_json_object
from zuhyo.evaluate.judges.numeric_values import Extraction
from zuhyo.evaluate.judges.validated_reply import ask_validated
from zuhyo.evaluate.judges.value_extractor import LLMValueExtractor
from zuhyo.evaluate.metrics.astro import axis_range, best_score, deterministic_extractions
from zuhyo.evaluate.metrics.text_overlap import bleu4, rouge_l_f
from zuhyo.models.base import ModelBackend
from zuhyo.prompts import load_prompt
from zuhyo.schema import Sample

KEYPOINT_INSTRUCTION = "Reply with one JSON object and nothing else, of the form the first message asks for."

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

    def __init__(self, backend: ModelBackend | None = None, max_tokens: int = 2048, attempts: int = 3) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.prompt = load_prompt("judges/astro_keypoints")
        self.prompt_ref = load_prompt("judges/astro_keypoints_ref")
        self.attempts = attempts
        self.extractor = LLMValueExtractor(backend, attempts=attempts) if backend is not None else None
        self.id = "astrochart" + (f":{backend.spec}" if backend is not None else "")
        extractor = f"+{self.extractor.version}" if self.extractor is not None else ""
        self.prompt_version = (f"astrochart-3+{self.prompt.name}-{self.prompt.version}+{self.prompt_ref.name}-"
                               f"{self.prompt_ref.version}{extractor}")

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
        references, guesses = deterministic_extractions(sample.model_copy(update={"question": item.question}), text,
                                                        derivation=kind == "numeric_exact")
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
        """DomainCQA Appendix G.2: the share of the reference's key points the answer covers. The points are
        ``sample.astro.key_points`` when given; otherwise the judge extracts them from the reference answer (and
        the answer's own points) in the same reply, as the paper's judge does."""
        metrics = {"rouge_l": max(rouge_l_f(r, item.response) for r in item.references),
                   "bleu4": bleu4(list(item.references), item.response)}
        points = sample.astro.key_points if sample.astro else []
        if self.backend is None:
            return Verdict(verdict="unscored", reason="open answers need an LLM for the key-point score: use "
                           "astrochart:<model spec>", decided_by="astro_keypoints", metrics=metrics)
        values = {"question": item.question, "reference": item.references[0], "response": _full(item)}
        parse: Callable[[str], tuple[tuple[list[int], int] | None, str]]
        if points:
            prompt = self.prompt.render(**values, key_points="\n".join(f"{i}. {p}" for i, p in enumerate(points, 1)))
            parse = partial(_covered_of_given, n_points=len(points))
        else:
            prompt, parse = self.prompt_ref.render(**values), _covered_of_extracted
        got = await ask_validated(self.backend, prompt, parse, instruction=KEYPOINT_INSTRUCTION,
                                  attempts=self.attempts, max_tokens=self.max_tokens)
        if got.value is None:
            return Verdict(verdict="unscored", reason=f"{sample.key}: unparseable key-point reply "
                           f"{got.failure(self.attempts)}", decided_by="astro_keypoints", metrics=metrics)
        covered, n = got.value
        score = len(covered) / n
        reason = (_reasoning(got.text) or f"covers key points {covered} of {n}") + got.note()
        return verdict_from_score(score, "astro_keypoints", reason=reason, keypoint_score=score, **metrics)

    async def aclose(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()


def _covered_of_given(text: str, n_points: int) -> tuple[tuple[list[int], int] | None, str]:
    covered = parse_keypoint_reply(text, n_points)
    return (None, f"no JSON object with 'covered' numbers in 1..{n_points}") if covered is None \
        else ((covered, n_points), "")


def _covered_of_extracted(text: str) -> tuple[tuple[list[int], int] | None, str]:
    """The reply of the prompt that extracts the reference's key points itself: (covered, number of points)."""
    obj = first_json_object(text)
    points = obj.get("reference_points") if obj else None
    if not isinstance(points, list) or not points or not all(isinstance(p, str) and p.strip() for p in points):
        return None, "no non-empty 'reference_points' list of strings"
    covered = parse_keypoint_reply(text, len(points))
    if covered is None:
        return None, f"no 'covered' list of numbers in 1..{len(points)}"
    return (covered, len(points)), ""


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
