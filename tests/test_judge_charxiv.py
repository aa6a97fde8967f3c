"""CharXiv grading: prompts identical to the official builders, JSON parsing, unscored on bad replies."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.evaluate.judges.charxiv import (
    CharXivJudge,
    descriptive_grading_prompt,
    reasoning_grading_prompt,
    rubric_name,
)
from zuhyo.schema import CharXivMeta, Sample
from zuhyo.testing.scripted import ScriptedBackend

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # upstream constants.py escapes
CHARXIV = Path(__file__).resolve().parents[2] / "shared" / "data" / "charxiv"


def _load(name: str, file: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, CHARXIV / file)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def official() -> dict[str, ModuleType]:
    if not CHARXIV.exists():
        pytest.skip(f"CharXiv source not at {CHARXIV}")
    constants = _load("constants", "src_constants.py")
    saved = sys.modules.get("constants")
    sys.modules["constants"] = constants  # the official utils do `from constants import ...`
    try:
        mods = {"descriptive": _load("charxiv_descriptive_utils", "src_descriptive_utils.py"),
                "reasoning": _load("charxiv_reasoning_utils", "src_reasoning_utils.py")}
    finally:
        if saved is None:
            sys.modules.pop("constants", None)
        else:
            sys.modules["constants"] = saved
    return mods



def test_descriptive_prompt_matches_official_builder_for_every_template(official: dict[str, ModuleType]) -> None:
    rows = json.loads((CHARXIV / "data_descriptive_val.json").read_text())
    seen: set[int] = set()
    for figure in rows.values():
        for i, qid in enumerate(figure["qids"]):
            if qid in seen:
                continue
            seen.add(qid)
            response = f"The answer is {figure['answers'][i]} (response {qid})"
            groups = {q: [] for q in range(1, 20)}
            groups[qid].append((f"{figure['figure_id']}_{i}", response, figure["answers"][i]))
            queries = official["descriptive"].build_descriptive_grading_queries(groups, nq_per_query=5)
            assert len(queries) == 1
            assert descriptive_grading_prompt(qid, response, figure["answers"][i]) == queries[0]["grading_query"]
    assert seen == set(range(1, 20))


def test_reasoning_prompt_matches_official_builder(official: dict[str, ModuleType]) -> None:
    rows = json.loads((CHARXIV / "data_reasoning_val.json").read_text())
    by_cat: dict[int, dict] = {}
    for key, row in rows.items():
        by_cat.setdefault(row["inst_category"], {key: row})
    assert set(by_cat) == {1, 2, 3, 4}
    for cat, data in by_cat.items():
        row = next(iter(data.values()))
        resp = {str(row["figure_id"]): {"raw_question": row["query"], "response": "Final answer: 42"}}
        official_q = official["reasoning"].build_reasoning_grading_queries(data, resp)[str(row["figure_id"])]
        assert reasoning_grading_prompt(cat, row["query"], "Final answer: 42", row["answer"]) == \
            official_q["grading_query"]


def test_rubric_assignment_matches_official(official: dict[str, ModuleType]) -> None:
    constants = sys.modules.get("constants") or _load("constants", "src_constants.py")
    for qid in range(1, 20):
        assert official["descriptive"].get_rubric(qid) == constants.DESCRIPTIVE_GRADING_ICL[rubric_name(qid)]
    with pytest.raises(ValueError):
        rubric_name(20)


def _reasoning_sample(inst: int = 3) -> Sample:
    return Sample(id="reasoning/7", benchmark="charxiv", question="What is x?\n * instructions", answers=["0.01"],
                  charxiv=CharXivMeta(kind="reasoning", figure_id=7, inst_category=inst),
                  metadata={"raw_question": "What is x?"})


async def test_reasoning_grading_round_trip_and_request_settings() -> None:
    backend = ScriptedBackend('{"extracted_answer": "0.012", "score": 0}', '{"extracted_answer": "10^-2", "score": 1}')
    judge = CharXivJudge(backend)
    sample = _reasoning_sample()
    wrong = await judge.judge(JudgeInput(question=sample.question, references=("0.01",), response="0.012",
                                         sample=sample))
    assert wrong.verdict == "incorrect" and wrong.extracted_answer == "0.012"
    right = await judge.judge(JudgeInput(question=sample.question, references=("0.01",), response="10^-2",
                                         sample=sample))
    assert right.verdict == "correct" and right.score == 1.0
    req = backend.requests[0]
    assert "* Question: What is x?\n" in req.prompt  # the raw question, not the one with instructions
    assert req.config.temperature == 0.0 and req.config.seed == 42
    assert req.config.extra_body["response_format"] == {"type": "json_object"}


async def test_descriptive_grading_reads_the_t1_keys() -> None:
    backend = ScriptedBackend('{"extract_answer_T1": "Not Applicable", "score_T1": 1}')
    sample = Sample(id="descriptive/3_0", benchmark="charxiv", question="title?", answers=["Not Applicable"],
                    charxiv=CharXivMeta(kind="descriptive", figure_id=3, qid=1))
    v = await CharXivJudge(backend).judge(JudgeInput(question="title?", references=("Not Applicable",),
                                                     response="There is no title.", sample=sample))
    assert v.verdict == "correct" and v.extracted_answer == "Not Applicable"
    assert "Overarching Question: What is the title of the plot?" in backend.requests[0].prompt


@pytest.mark.parametrize("reply", ['{"extracted_answer": "x", "score": 2}', '{"extracted_answer": "x"}',
                                   'score: 1', '{"extracted_answer": "x", "score": "1"}'])
async def test_bad_grader_replies_are_unscored(reply: str) -> None:
    sample = _reasoning_sample()
    v = await CharXivJudge(ScriptedBackend(reply)).judge(
        JudgeInput(question="q", references=("0.01",), response="r", sample=sample))
    assert v.verdict == "unscored" and reply in v.reason


async def test_items_without_charxiv_metadata_are_unscored() -> None:
    v = await CharXivJudge(ScriptedBackend()).judge(JudgeInput(question="q", references=("a",), response="a"))
    assert v.verdict == "unscored" and "CharXiv" in v.reason
