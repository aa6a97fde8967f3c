"""LLM judge, cascade and metric judge over a scripted fake backend (the ModelBackend protocol)."""

from __future__ import annotations

import pytest

from zuhyo.evaluate.judges import build_judge
from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.evaluate.judges.cascade import CascadeJudge
from zuhyo.evaluate.judges.llm import LLMJudge, format_references, parse_judge_reply
from zuhyo.models.base import ModelBackend, TransientModelError
from zuhyo.prompts import load_prompt
from zuhyo.testing.scripted import ScriptedBackend

HLE_YES = """extracted_final_answer: 二羽

reasoning: The response says 二羽, which is the same as 2羽 written with a kanji numeral.

correct: yes

confidence: 90%"""

HLE_NO_MARKDOWN = """**extracted_final_answer:** 2018年

**reasoning:** The reference is 2019; the response says 2018. correct: yes would be wrong.

**correct:** no

**confidence:** 100"""


def test_fake_backend_implements_the_protocol() -> None:
    assert isinstance(ScriptedBackend(), ModelBackend)


def test_parse_hle_field_format() -> None:
    v = parse_judge_reply(HLE_YES)
    assert v.verdict == "correct" and v.score == 1.0
    assert v.extracted_answer == "二羽"
    assert "kanji numeral" in v.reason
    assert v.metrics["judge_confidence"] == 90.0


def test_parse_markdown_fields_uses_the_correct_field_not_the_reasoning() -> None:
    v = parse_judge_reply(HLE_NO_MARKDOWN)
    assert v.verdict == "incorrect" and v.score == 0.0
    assert v.extracted_answer == "2018年"


def test_parse_json_reply() -> None:
    v = parse_judge_reply('```json\n{"extracted_final_answer": "25%", "reasoning": "same", "correct": "yes", '
                          '"confidence": 80}\n```')
    assert v.verdict == "correct" and v.extracted_answer == "25%" and v.metrics["judge_confidence"] == 80.0


@pytest.mark.parametrize("reply", ["", "I think it's right.", "correct: maybe", '{"correct": "perhaps"}'])
def test_unparseable_reply_is_unscored_with_raw_text(reply: str) -> None:
    v = parse_judge_reply(reply)
    assert v.verdict == "unscored" and v.score is None
    assert reply in v.reason


def test_prompt_is_versioned_and_lists_the_leniency_rules() -> None:
    p = load_prompt("judges/hakusho_judge")
    assert p.version == "1" and not p.text.startswith("#")
    for phrase in ("'2羽' and '二羽'", "extracted_final_answer:", "correct: Answer 'yes'", "confidence:",
                   "synonym", "more specific", "small margin of error"):
        assert phrase in p.text


async def test_llm_judge_sends_question_reference_full_reply_at_temperature_zero() -> None:
    backend = ScriptedBackend(HLE_YES, spec="fake:judge")
    judge = LLMJudge(backend)
    item = JudgeInput(question="何羽か。", references=("2羽",), response="二羽", raw_response="考察…\nAnswer: 二羽")
    v = await judge.judge(item)
    assert v.verdict == "correct" and v.decided_by == "llm"
    req = backend.requests[0]
    assert req.config.temperature == 0.0 and req.image is None
    assert "[question]: 何羽か。" in req.prompt and "[correct_answer]: 2羽" in req.prompt
    assert "[response]: 考察…\nAnswer: 二羽" in req.prompt
    assert judge.id == "llm:fake:judge" and judge.prompt_version == "judges/hakusho_judge-1"
    await judge.aclose()
    assert backend.closed


def test_several_references_are_offered_as_alternatives() -> None:
    text = format_references(["2羽", "二羽", "2羽"])
    assert text.count("2羽") == 1 and '"二羽"' in text and "any one" in text


async def test_model_errors_propagate_so_the_scoring_stage_retries() -> None:
    judge = LLMJudge(ScriptedBackend(TransientModelError("HTTP 503")))
    with pytest.raises(TransientModelError):
        await judge.judge(JudgeInput(question="q", references=("a",), response="b"))


async def test_cascade_asks_the_llm_only_when_rules_are_undecided() -> None:
    backend = ScriptedBackend(HLE_YES, spec="fake:judge")
    cascade = CascadeJudge(LLMJudge(backend))
    decided = await cascade.judge(JudgeInput(question="何年か。", references=("令和5年",), response="2023年"))
    assert decided.verdict == "correct" and decided.decided_by == "rules"
    wrong = await cascade.judge(JudgeInput(question="何年か。", references=("2019年",), response="2018年"))
    assert wrong.verdict == "incorrect" and wrong.decided_by == "rules"
    assert backend.requests == []
    synonym = await cascade.judge(JudgeInput(question="業種は。", references=("情報通信業",), response="IT産業"))
    assert synonym.verdict == "correct" and synonym.decided_by == "llm"
    assert "rules undecided" in synonym.reason
    assert len(backend.requests) == 1
    assert cascade.id == "cascade:fake:judge" and "rules" in cascade.prompt_version


def test_llm_judges_need_a_model_spec() -> None:
    for kind in ("llm", "cascade", "charxiv", "l3score"):
        with pytest.raises(ValueError, match="needs a model spec"):
            build_judge(kind)


async def test_metric_judge_wraps_a_metric() -> None:
    judge = build_judge("metric:chartqa_relaxed")
    assert judge.id == "metric:chartqa_relaxed"
    near = await judge.judge(JudgeInput(question="q", references=("100",), response="104"))
    assert near.verdict == "correct" and near.score == 1.0 and near.metrics["chartqa_relaxed"] == 1.0
    far = await judge.judge(JudgeInput(question="q", references=("100",), response="106"))
    assert far.verdict == "incorrect" and far.score == 0.0
    # astro_numeric does not apply to a pair without AstroChart metadata → unscored, not wrong
    na = await build_judge("metric:astro_numeric").judge(JudgeInput(question="q", references=("1",), response="1"))
    assert na.verdict == "unscored" and na.score is None
    with pytest.raises(KeyError, match="known"):
        build_judge("metric:nope")
