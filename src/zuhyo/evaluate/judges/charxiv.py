"""The ``charxiv:<model spec>`` judge: CharXiv's GPT grading with its rubric prompts.

Follows princeton-nlp/CharXiv (Wang et al., NeurIPS 2024 D&B; code Apache-2.0, commit 7ebe88f):
``src/descriptive_utils.py`` and ``src/reasoning_utils.py``. The prompts are CharXiv's ``src/constants.py``
(DESCRIPTIVE_GRADING_PREFIX/QMAP/ICL, REASONING_GRADING_PREFIX/INST), copied verbatim into
``prompts/judges/charxiv/`` (see NOTICE.txt there).

- Descriptive (``sample.charxiv.kind == "descriptive"``): CharXiv grades up to five responses per call grouped by
  template; zuhyo grades one per call, i.e. the same prompt with a batch of one (``<|NUM_TRIPLETS|>`` = 1, JSON
  keys ``['extract_answer_T1', 'score_T1']``, the overarching question ``QMAP[qid]``, the rubric chosen by
  ``get_rubric(qid)``, then ``T1:\\nResponse 1: …\\nGround Truth 1: …\\n\\n``).
- Reasoning: ``REASONING_GRADING_PREFIX + REASONING_GRADING_INST[inst_category]`` with the raw question (without
  the response instructions; the adapter keeps it in ``sample.metadata["raw_question"]``), ground truth and
  response substituted; the reply's JSON has ``extracted_answer`` and ``score``.

Like upstream: temperature 0, top-p 1, seed 42, ``response_format={"type": "json_object"}``; the reply must be
JSON with a score of 0 or 1, otherwise the item is *unscored* (upstream marks it -1 and counts it invalid).
"""

from __future__ import annotations

import json
from typing import Any

from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict
from zuhyo.evaluate.judges.llm import RAW_REPLY_LIMIT, backend_for_judge
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend
from zuhyo.prompts import load_prompt

PROMPT_DIR = "judges/charxiv"
MAX_TOKENS = 1024
"""Upstream starts at 256 tokens and doubles up to 1024 when the JSON is cut off; zuhyo asks for 1024 at once."""


def rubric_name(qid: int) -> str:
    """CharXiv ``get_rubric``: which ICL rubric grades descriptive template ``qid``."""
    for name, qids in (("title", {1}), ("ocr", {2, 3, 4, 5, 6, 7}), ("quant", {8, 9, 10, 12, 14, 15, 17, 19}),
                       ("bool", {11}), ("enum", {13}), ("trend", {16}), ("layout", {18})):
        if qid in qids:
            return name
    raise ValueError(f"CharXiv descriptive qid {qid} has no rubric (expected 1-19)")


def descriptive_questions() -> dict[int, str]:
    """``DESCRIPTIVE_GRADING_QMAP``: template id → the overarching question."""
    text = load_prompt(f"{PROMPT_DIR}/descriptive_qmap").text
    return {int(k): v for k, v in (line.split("\t", 1) for line in text.splitlines() if line)}


def descriptive_grading_prompt(qid: int, response: str, answer: str) -> str:
    """The grading query CharXiv's ``build_descriptive_grading_queries`` builds for a batch of one."""
    prefix = load_prompt(f"{PROMPT_DIR}/descriptive_prefix").text
    prefix = (prefix.replace("<|NUM_TRIPLETS|>", "1")
              .replace("<|OVERARCHING_QUESTION|>", descriptive_questions()[qid])
              .replace("<|JSON_KEYS|>", str(["extract_answer_T1", "score_T1"])))
    rubric = load_prompt(f"{PROMPT_DIR}/descriptive_rubric_{rubric_name(qid)}").text
    return prefix + rubric + f"T1:\nResponse 1: {response}\nGround Truth 1: {answer}\n\n"


def reasoning_grading_prompt(inst_category: int, question: str, response: str, answer: str) -> str:
    """The grading query CharXiv's ``build_reasoning_grading_queries`` builds."""
    if inst_category not in (1, 2, 3, 4):
        raise ValueError(f"CharXiv inst_category {inst_category} is not 1-4")
    inst = load_prompt(f"{PROMPT_DIR}/reasoning_inst_{inst_category}").text
    return load_prompt(f"{PROMPT_DIR}/reasoning_prefix").text + (
        inst.replace("<|question|>", question).replace("<|ground_truth|>", answer).replace("<|response|>", response))


def parse_grading_reply(text: str, answer_key: str, score_key: str) -> tuple[Any, int] | None:
    """(extracted answer, score) from the grader's JSON; None unless it is JSON with a 0/1 score."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or answer_key not in obj or score_key not in obj:
        return None
    score = obj[score_key]
    if isinstance(score, bool) or not isinstance(score, int | float) or score not in (0, 1):
        return None
    return obj[answer_key], int(score)


class CharXivJudge:
    """CharXiv grading over an injected model backend."""

    def __init__(self, backend: ModelBackend) -> None:
        self.backend = backend
        self.id = f"charxiv:{backend.spec}"
        self.prompt_version = "charxiv-1"

    def grading_request(self, item: JudgeInput) -> tuple[str, str, str]:
        """(prompt, answer key, score key) for an item; ValueError when it is not a usable CharXiv item."""
        meta = item.sample.charxiv if item.sample is not None else None
        if meta is None:
            raise ValueError("not a CharXiv item (the sample has no charxiv metadata)")
        response = item.raw_response if item.raw_response is not None else item.response
        answer = item.references[0]
        if meta.kind == "descriptive":
            if meta.qid is None:
                raise ValueError("descriptive CharXiv item without qid")
            return descriptive_grading_prompt(meta.qid, response, answer), "extract_answer_T1", "score_T1"
        if meta.inst_category is None:
            raise ValueError("reasoning CharXiv item without inst_category")
        question = str((item.sample.metadata if item.sample else {}).get("raw_question", item.question))
        return reasoning_grading_prompt(meta.inst_category, question, response, answer), "extracted_answer", "score"

    async def judge(self, item: JudgeInput) -> Verdict:
        try:
            prompt, answer_key, score_key = self.grading_request(item)
        except ValueError as e:
            return Verdict(verdict="unscored", reason=str(e), decided_by="charxiv")
        config = GenerationConfig(temperature=0.0, max_tokens=MAX_TOKENS, seed=42,
                                  extra_body={"top_p": 1, "response_format": {"type": "json_object"}})
        reply = await self.backend.generate(ChatRequest(prompt=prompt, image=None, config=config))
        parsed = parse_grading_reply(reply.text.strip(), answer_key, score_key)
        if parsed is None:
            return Verdict(verdict="unscored", reason=f"unparseable grader reply: {reply.text[:RAW_REPLY_LIMIT]}",
                           decided_by="charxiv")
        extracted, score = parsed
        return Verdict(verdict="correct" if score == 1 else "incorrect", score=float(score),
                       extracted_answer=None if extracted is None else str(extracted), decided_by="charxiv",
                       reason="CharXiv rubric grading")

    async def aclose(self) -> None:
        await self.backend.aclose()


@JUDGES.register("charxiv", "CharXiv GPT grading with its rubric prompts (descriptive & reasoning): "
                            "charxiv:<model spec>")
def _build_charxiv(rest: str, options: JudgeOptions) -> CharXivJudge:
    return CharXivJudge(backend_for_judge("charxiv", rest, options))
