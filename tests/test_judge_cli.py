"""`zuhyo judge` end to end (subprocess), with a real OpenAI-compatible judge server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_single_pair_human_and_json() -> None:
    out = run_cli("judge", "--question", "何年か。", "--reference", "令和5年", "--response", "Answer: 2023年")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("correct (rules)")
    out = run_cli("judge", "--question", "割合は。", "--reference", "12%", "--response", "1.2%", "--json")
    row = json.loads(out.stdout)
    assert row["verdict"] == "incorrect" and row["judge"] == "rules" and row["score"] == 0.0


def test_metric_judge_from_cli() -> None:
    out = run_cli("judge", "--reference", "100", "--response", "104", "--judge", "metric:chartqa_relaxed", "--json")
    assert json.loads(out.stdout)["verdict"] == "correct"


def test_batch_reports_malformed_lines_with_their_numbers(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join([
        json.dumps({"question": "人口は。", "reference": ["1億2000万人"], "response": "120,000,000人"},
                   ensure_ascii=False),
        "{not json",
        "",
        json.dumps({"question": "q", "reference": "a"}),
        json.dumps({"question": "q", "reference": 5, "response": "5"}),
        json.dumps({"question": "割合は。", "reference": "30%", "response": "3割"}, ensure_ascii=False),
    ]) + "\n", encoding="utf-8")
    out = run_cli("judge", "--input", str(pairs), "--json")
    assert out.returncode == 1  # some lines were bad
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 4, 5, 6]
    assert rows[0]["verdict"] == "correct" and rows[4]["verdict"] == "correct"
    assert "not valid JSON" in rows[1]["error"] and "pairs.jsonl:2" in rows[1]["error"]
    assert "missing field 'response'" in rows[2]["error"]
    assert "'reference' must be" in rows[3]["error"]


def test_bad_usage_is_a_clear_error() -> None:
    out = run_cli("judge", "--reference", "a")
    assert out.returncode != 0 and "--response" in out.stderr
    out = run_cli("judge", "--reference", "a", "--response", "b", "--judge", "nope")
    assert out.returncode != 0 and "unknown judge" in out.stderr


class JudgeServer:
    """An OpenAI-compatible chat server answering as an LLM judge: yes when the response names アメリカ."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"auth": request.headers.get("Authorization"), **body})
        prompt = body["messages"][-1]["content"][-1]["text"]
        ok = "[response]: アメリカ" in prompt
        if "[correct_answer]" not in prompt and "Ground-truth answer" not in prompt:
            text = "I cannot judge that."
        elif body.get("logprobs"):
            text = "Yes"
        else:
            text = (f"extracted_final_answer: アメリカ\n\nreasoning: same country\n\ncorrect: {'yes' if ok else 'no'}"
                    "\n\nconfidence: 95")
        choice: dict = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [{"token": "Yes", "logprob": math.log(0.75), "top_logprobs": [
                {"token": "Yes", "logprob": math.log(0.75)}, {"token": "No", "logprob": math.log(0.25)}]}]}
        return web.json_response({"id": "x", "object": "chat.completion", "choices": [choice],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5}})

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    server = JudgeServer()
    server.start()
    yield server
    server.stop()


def test_llm_and_cascade_judges_against_a_local_server(judge_server: JudgeServer, tmp_path: Path) -> None:
    spec = f"openai:judge-model@http://127.0.0.1:{judge_server.port}/v1"
    out = run_cli("judge", "--question", "国名は。", "--reference", "米国", "--response", "アメリカ",
                  "--judge", f"llm:{spec}", "--json", "--api-key-env", "ZUHYO_TEST_JUDGE_KEY",
                  env={"ZUHYO_TEST_JUDGE_KEY": "sk-test"})
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["verdict"] == "correct" and row["decided_by"] == "llm" and row["judge"] == f"llm:{spec}"
    assert judge_server.requests[-1]["temperature"] == 0.0
    assert judge_server.requests[-1]["auth"] == "Bearer sk-test"

    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"question": "何年か。", "reference": "令和5年", "response": "2023年"},
                                ensure_ascii=False) + "\n" +
                     json.dumps({"question": "地域は。", "reference": "米国本土", "response": "アメリカ"},
                                ensure_ascii=False) + "\n", encoding="utf-8")  # a synonym: rules undecided
    before = len(judge_server.requests)
    out = run_cli("judge", "--input", str(pairs), "--judge", f"cascade:{spec}", "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["line"], r["verdict"], r["decided_by"]) for r in rows] == [(1, "correct", "rules"),
                                                                           (2, "correct", "llm")]
    assert len(judge_server.requests) == before + 1  # only the undecided pair reached the LLM


def test_l3score_against_a_local_server(judge_server: JudgeServer) -> None:
    spec = f"openai:judge-model@http://127.0.0.1:{judge_server.port}/v1"
    out = run_cli("judge", "--question", "Where?", "--reference", "US-Canada border", "--response", "Niagara",
                  "--judge", f"l3score:{spec}", "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["metrics"]["l3score"] == pytest.approx(0.75) and row["verdict"] == "correct"
    assert judge_server.requests[-1]["logprobs"] is True


def test_input_lines_are_whole_samples_for_every_judge(tmp_path: Path) -> None:
    """Lines may carry Sample fields (benchmark, chartqapro, astro...), so `auto` scores each like its benchmark."""
    lines = [
        # ChartQAPro metadata: the official metric (ANLS on text), which sees the raw reply by default
        {"question": "Which platform?", "reference": "Facebook", "response": "Facebook",
         "benchmark": "chartqapro", "chartqapro": {"question_type": "Factoid", "year_flags": ["NO"]}},
        {"question": "Which year?", "reference": "2019", "response": "2018", "benchmark": "chartqapro",
         "chartqapro": {"question_type": "Factoid", "year_flags": ["YES"]}},
        # ChartQA: pix2struct's relaxed accuracy on the raw prediction
        {"question": "Which platform?", "reference": "Facebook", "response": "**Facebook**", "benchmark": "chartqa"},
        # a CoT reply: simple-evals-mm's last "Answer:" reaches the rules judge, never 回答：四十二
        {"question": "件数は。", "reference": "42", "response": "Answer: 42\n回答：四十二", "prompt": "cot",
         "label": "a column of the user's own, ignored"},
        # AstroChart metadata: the astrochart judge's choice scoring
        {"question": "Which colour?", "references": ["blue"], "response": "blue", "benchmark": "sample-astro",
         "astro": {"qa_type": "FQA", "category": "Visual", "aspect": "Color", "answer_kind": "choice"}},
        {"question": "q", "reference": "a", "response": "a", "chartqapro": {"year_flags": ["NO"]}},
        {"question": "q", "reference": "a", "response": "a", "prompt": "think"},
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    out = run_cli("judge", "--input", str(path), "--judge", "auto", "--json")
    assert out.returncode == 1, out.stderr  # the two malformed lines
    rows = {r["line"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert (rows[1]["verdict"], rows[1]["decided_by"], rows[1]["score"]) == ("correct", "chartqapro", 1.0)
    assert (rows[2]["verdict"], rows[2]["decided_by"]) == ("incorrect", "chartqapro")  # years: exact match
    assert (rows[3]["verdict"], rows[3]["decided_by"], rows[3]["answer"]) == \
        ("incorrect", "chartqa_relaxed", "**Facebook**")
    assert (rows[4]["verdict"], rows[4]["answer"], rows[4]["extracted_answer"]) == ("correct", "42", "42")
    assert rows[5]["verdict"] == "correct" and rows[5]["id"] == "line5"
    assert "field 'chartqapro.question_type'" in rows[6]["error"] and "items.jsonl:6" in rows[6]["error"]
    assert "field 'prompt' must be one of" in rows[7]["error"]

    lenient = run_cli("judge", "--input", str(path), "--judge", "auto", "--json", "--answer-cleaning", "lenient")
    rows = {r["line"]: r for r in map(json.loads, lenient.stdout.splitlines())}
    assert (rows[3]["verdict"], rows[3]["answer"]) == ("correct", "Facebook")
    human = run_cli("judge", "--input", str(path), "--judge", "auto")
    assert "line 1: correct (chartqapro) score 1" in human.stdout and "7 items:" in human.stdout  # results: stdout
