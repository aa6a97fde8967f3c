"""`zuhyo demo build` (the construction pipeline rehearsed offline) and the `dry-run` backend it runs on: every
construction reply schema is filled validly, what it makes is marked, and the export refuses it by default."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("pymupdf", reason="the [build] extra is needed")

from zuhyo.models.base import ChatRequest, GenerationConfig, build_backend  # noqa: E402
from zuhyo.models.dry_run import fill_schema, is_dry_run  # noqa: E402

STAGES = ["init", "collect latex", "collect pdf", "collect folder", "filter", "classify", "complexity", "sample",
          "abstracts", "draft", "audit", "review", "export (refused)", "export", "eval --bench local"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("demo-build") / "demo"
    return out, run_cli_json("demo", "build", "--out", str(out), "--no-report", timeout=600)


def test_demo_build_runs_every_stage_offline_and_exports_a_marked_rehearsal(demo):
    out, result = demo
    stages = {s["stage"]: s for s in result["stages"]}
    assert [s["stage"] for s in result["stages"]] == STAGES and result["report"] is None
    assert stages["collect latex"]["counts"]["figures"] == 5 and stages["collect pdf"]["counts"]["figures"] == 1
    assert stages["collect folder"]["counts"]["figures"] == 3
    assert stages["classify"]["counts"] == {"labelled": 9, "errors": 0}
    drafted = stages["draft"]["counts"]["drafted"]
    assert drafted > 0 and stages["draft"]["counts"]["errors"] == 0
    assert stages["review"]["counts"]["accepted"] == drafted
    assert stages["export (refused)"]["counts"]["refused"] == drafted
    assert stages["export"]["counts"]["items"] == drafted
    assert stages["eval --bench local"]["counts"]["ok"] == drafted
    con = sqlite3.connect(out / "ws" / "zuhyo.db")
    try:
        models = {m for (m,) in con.execute("SELECT DISTINCT model FROM qa_items")}
        labels = {m for (m,) in con.execute("SELECT DISTINCT model FROM figure_labels")}
        statuses = {s for (s,) in con.execute("SELECT DISTINCT status FROM qa_items")}
    finally:
        con.close()
    assert models == {"dry-run"} and labels == {"dry-run"} and statuses == {"accepted"}
    card = (out / "export" / "README.md").read_text(encoding="utf-8")
    assert f"A rehearsal, not data: {drafted} of {drafted} items hold placeholders" in card
    # an astro-only export: DomainCQA's categories and CCV, none of HakushoBench's (all-zero) flag or topic tables
    assert "### Question categories (DomainCQA Table 1)" in card and "### CCV attribute proportions" in card
    assert "Difficulty flags" not in card and "Topic groups" not in card
    # sources by their titles (the paper's \\title, the title given to the folder), not by file or folder names
    sources = card.split("## Sources and licences", 1)[1].split("\n## ", 1)[0]
    assert "| A rehearsal paper on galaxies and stars |" in sources
    assert "| Rehearsal charts (made by zuhyo demo build) |" in sources
    assert "| rehearsal-paper |" not in sources and "| folder |" not in sources
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    loaded = load_benchmark("local", BenchmarkSource(path=out / "export"), strict=True)
    assert len(loaded.samples) == drafted and all(s.metadata.get("dry_run") is True for s in loaded.samples)


def test_export_refuses_dry_run_items_unless_allowed(demo, tmp_path):
    out, _ = demo
    refused = run_cli("export", str(out / "ws"), "--out", str(tmp_path / "x"), check=False)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "hold dry-run placeholders" in refused.stderr and "--allow-dry-run" in refused.stderr
    assert not (tmp_path / "x").exists()
    doc = run_cli_json("export", str(out / "ws"), "--out", str(tmp_path / "y"), "--allow-dry-run")
    assert doc["dry_run"] == doc["items"] > 0


def test_export_names_an_unknown_source_license_id(demo, tmp_path):
    out, _ = demo
    proc = run_cli("export", str(out / "ws"), "--out", str(tmp_path / "x"), "--allow-dry-run",
                   "--source-license", "99=MIT", check=False)
    assert proc.returncode == 1 and "no source with id 99" in proc.stderr and "1 (" in proc.stderr


def test_demo_build_wants_a_new_folder(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    proc = run_cli("demo", "build", "--out", str(tmp_path / "busy"), check=False)
    assert proc.returncode == 1 and "is not empty" in proc.stderr and "Traceback" not in proc.stderr


def _ask(schema: dict[str, Any], prompt: str = "p", spec: str = "dry-run") -> str:
    backend = build_backend(spec)
    config = GenerationConfig(extra_body={"response_format": {"type": "json_schema",
                                                              "json_schema": {"name": "r", "schema": schema}}})
    return asyncio.run(backend.generate(ChatRequest(prompt=prompt, image=None, config=config))).text


def test_dry_run_fills_every_drafting_kind_so_its_checks_pass():
    from zuhyo.construct.qa.draft_checks import duplicate_reason, leak_reason
    from zuhyo.construct.qa.draft_kinds import ASTRO_KINDS, HAKUSHO_KIND
    from zuhyo.construct.qa.drafting import form_reason
    from zuhyo.construct.select.labelling import parse_json_reply

    questions: list[tuple[int, str]] = []
    for n, kind in enumerate((*ASTRO_KINDS, HAKUSHO_KIND)):
        prompt = kind.render(caption="A caption.", context="Some context.")
        reply, problem = parse_json_reply(kind.reply_model, _ask(kind.reply_model.model_json_schema(), prompt))
        assert reply is not None, (kind.key_part, problem)
        assert kind.check is None or kind.check(reply) == "", kind.key_part
        assert leak_reason(reply.question, reply.answer) is None and form_reason(kind, reply.question,
                                                                                 reply.answer) is None
        assert duplicate_reason(reply.question, questions) is None, kind.key_part
        questions.append((n, reply.question))


def test_dry_run_votes_validly_on_a_paper_and_labels_vary_over_figures():
    from zuhyo.construct.qa.abstracts import parse_vote, reply_model
    from zuhyo.construct.select.classify import IMAGE_TYPE_TASK

    keys = ["C1", "C2", "C3", "C4"]
    vote, problem = parse_vote(_ask(reply_model(4).model_json_schema(), "paper"), keys)
    assert vote is not None, problem
    assert [c.chart for c in vote.charts] == keys
    schema = IMAGE_TYPE_TASK.reply_model.model_json_schema()
    assert len({fill_schema(schema, f"figure {i}")["image_type"] for i in range(40)}) >= 5


def test_dry_run_answers_plain_prompts_and_is_recognised():
    backend = build_backend("dry-run:voter-2")
    assert backend.spec == "dry-run:voter-2" and is_dry_run(backend.spec) and is_dry_run("dry-run")
    assert not is_dry_run("openai:dry-run@http://x/v1") and not is_dry_run(None)
    cot = asyncio.run(backend.generate(ChatRequest(prompt="Think step by step. Answer: $answer", image=None)))
    assert cot.text.splitlines()[-1] == "Answer: dry-run placeholder answer"
    with pytest.raises(Exception, match="voter's name"):
        build_backend("dry-run:bad name!")
