"""`zuhyo audit`: a panel of models (real local HTTP servers, scripted per model and per blind / with-image
request) answers workspace QA items; text_only, reference_doubt and ambiguity flags with evidence."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, run_cli_json
from test_construct_abstracts import query

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

# question tag → (question, reference); the tag is what the scripted servers match in the prompt
ITEMS = {
    "q1": ("【q1】2020年の輸出額は何億円か", "42億円"),  # answerable blind
    "q2": ("【q2】2021年の失業率は何%か", "15%"),  # wrong reference: the models agree on 18%
    "q3": ("【q3】2022年の普及率は何%か", "30%"),  # the answers scatter
    "q4": ("【q4】最も値が大きいのは何年か", "2019年"),  # clean
}
NOT_BLIND = "わかりません"  # rules: an abstention is judged wrong, never correct


def make_ws(tmp_path: Path, statuses: dict[str, str] | None = None,
            items: dict[str, tuple[str, str]] = ITEMS) -> Path:
    """A workspace with one figure per item of ``items`` and one hakusho-style QA item on each (ids 1..)."""
    from test_construct_collect_folder import make_image_folder

    from zuhyo.construct.qa.items import add_qa_item
    from zuhyo.construct.workspace import Workspace

    make_image_folder(tmp_path / "imgs", len(items), subdirs=0)
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    assert run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))["figures"] == len(items)
    with Workspace.open(ws) as w, w.db.write() as s:
        for fid, (tag, (question, answer)) in enumerate(items.items(), start=1):
            add_qa_item(s, item_key=f"author/{fid}/1", figure_id=fid, origin="human", question=question,
                        answer=answer, status=(statuses or {}).get(tag, "authored"), actor="test", style="hakusho")
    return ws


def panel(fake_server: Any) -> list[Any]:
    """Three models: all read q2 as 18% and scatter on q3; two of three answer q1 without the image."""
    image = {"m1": {"q1": "42億円", "q2": "18%", "q3": "12%", "q4": "2019年"},
             "m2": {"q1": "42億円", "q2": "18%", "q3": "45%", "q4": "2019年"},
             "m3": {"q1": "42億円", "q2": "18.0%", "q3": "70%", "q4": "令和元年"}}
    blind = {"m1": {"q1": "42億円"}, "m2": {"q1": "4,200,000,000円"}, "m3": {}}
    return [fake_server(answers={f"【{t}】": a for t, a in image[m].items()},
                        blind_answers={f"【{t}】": blind[m].get(t, NOT_BLIND) for t in ITEMS}) for m in image]


def specs(servers: list[Any]) -> list[str]:
    out = []
    for i, server in enumerate(servers, start=1):
        out += ["--model", f"openai:m{i}@{server.base_url}"]
    return out


def flags(ws: Path) -> set[tuple[int, str]]:
    return set(query(ws, "SELECT qa_item_id, kind FROM qa_flags"))


def test_audit_flags_blind_answerable_doubtful_reference_and_scatter_not_the_clean_item(tmp_path: Path,
                                                                                     fake_server):
    ws = make_ws(tmp_path)
    servers = panel(fake_server)
    out = run_cli_json("audit", str(ws), *specs(servers), "--concurrency", "3")
    assert (out["items"], out["asked"], out["answers"], out["errors"]) == (4, 24, 24, 0)
    assert out["flags"] == {"text_only": 1, "reference_doubt": 1, "ambiguity": 1}
    assert flags(ws) == {(1, "text_only"), (2, "reference_doubt"), (3, "ambiguity")}  # q4 is clean
    assert all(s.state.requests == 8 for s in servers)
    # the blind probe is the evaluation's Direct prompt, without the image; the with-image one carries it
    rows = query(ws, "SELECT purpose, model, verdict, answer, prompt_version, item_revision FROM qa_model_answers "
                 "WHERE qa_item_id = 1 ORDER BY purpose, model")
    assert [(r[0], r[1].split("@")[0], r[2]) for r in rows] == [
        ("audit_blind", "openai:m1", "correct"), ("audit_blind", "openai:m2", "correct"),
        ("audit_blind", "openai:m3", "wrong"), ("audit_image", "openai:m1", "correct"),
        ("audit_image", "openai:m2", "correct"), ("audit_image", "openai:m3", "correct")]
    assert {r[4] for r in rows} == {"1"} and {r[5] for r in rows} == {1}
    import json

    detail, evidence = query(ws, "SELECT detail, evidence FROM qa_flags WHERE kind = 'text_only'")[0]
    assert detail.startswith("2 of 3 models answered correctly without the image")
    ev = json.loads(evidence)
    assert (ev["purpose"], ev["reference"], ev["rule"], ev["judge"]) == ("audit_blind", "42億円", "majority", "auto")
    assert [(a["answer"], a["verdict"]) for a in ev["answers"]] == [("42億円", "correct"),
                                                                    ("4,200,000,000円", "correct"),
                                                                    (NOT_BLIND, "wrong")]
    doubt = json.loads(query(ws, "SELECT evidence FROM qa_flags WHERE kind = 'reference_doubt'")[0][0])
    assert [a["answer"] for a in doubt["answers"]] == ["18%", "18%", "18.0%"]
    assert {p["agreement"] for p in doubt["pairs"]} == {"agree"} and len(doubt["pairs"]) == 3
    scatter = json.loads(query(ws, "SELECT evidence FROM qa_flags WHERE kind = 'ambiguity'")[0][0])
    assert [p["agreement"] for p in scatter["pairs"]] == ["disagree"] * 3
    # one action row per flag
    actions = query(ws, "SELECT actor, action, target_id FROM actions WHERE action = 'audit_flag' ORDER BY target_id")
    assert actions == [("zuhyo audit", "audit_flag", 1), ("zuhyo audit", "audit_flag", 2),
                       ("zuhyo audit", "audit_flag", 3)]
    listed = run_cli_json("audit", str(ws), "--list")["flags"]
    assert [(f["qa_item_id"], f["kind"], f["status"]) for f in listed] == [
        (1, "text_only", "open"), (2, "reference_doubt", "open"), (3, "ambiguity", "open")]
    human = run_cli("audit", str(ws), "--list", "--kind", "ambiguity").stdout
    assert "1 open audit flags" in human and "ambiguity" in human and "reference_doubt" not in human


def test_rerun_asks_nothing_and_adds_nothing_twice_another_model_adds_beside(tmp_path: Path, fake_server):
    ws = make_ws(tmp_path)
    servers = panel(fake_server)
    first = run_cli_json("audit", str(ws), *specs(servers[:2]))
    # two models: q1 blind 2/2 correct; q2 two agreeing wrong answers; q3: only 2 answers, never "scattered"
    assert first["flags"] == {"text_only": 1, "reference_doubt": 1, "ambiguity": 0}
    again = run_cli_json("audit", str(ws), *specs(servers[:2]))
    assert (again["asked"], again["skipped_existing"], again["flags"], again["flags_existing"]) == (
        0, 16, {"text_only": 0, "reference_doubt": 0, "ambiguity": 0}, 2)
    assert [s.state.requests for s in servers] == [8, 8, 0]
    assert len(query(ws, "SELECT id FROM qa_flags")) == 2
    assert len(query(ws, "SELECT id FROM actions WHERE action = 'audit_flag'")) == 2
    # a third model adds its answers beside, asking only itself; the 3-model panel's flags have a new fingerprint
    third = run_cli_json("audit", str(ws), *specs(servers))
    assert (third["asked"], third["skipped_existing"]) == (8, 16)
    assert [s.state.requests for s in servers] == [8, 8, 8]
    assert third["flags"] == {"text_only": 1, "reference_doubt": 1, "ambiguity": 1}
    assert len(query(ws, "SELECT id FROM qa_model_answers")) == 24


def test_failing_model_is_counted_as_errors_not_wrong_and_asked_again(tmp_path: Path, fake_server):
    ws = make_ws(tmp_path)
    good, _, _ = panel(fake_server)
    bad = fake_server(answers={}, fail_rate=1.0, faults=("500",))
    spec_bad = f"openai:bad@{bad.base_url}"
    out = run_cli_json("audit", str(ws), "--model", f"openai:m1@{good.base_url}", "--model", spec_bad,
                       "--retries", "1", "--retry-base", "0.01")
    assert (out["asked"], out["answers"], out["errors"], out["retries"]) == (16, 8, 8, 8)
    assert bad.state.requests == 16  # each call tried twice
    assert out["flags"] == {"text_only": 0, "reference_doubt": 0, "ambiguity": 0}  # flags wait for the panel
    assert out["incomplete"] == 8
    assert {(e["purpose"], e["model"]) for e in out["error_items"]} == {("audit_blind", spec_bad),
                                                                        ("audit_image", spec_bad)}
    assert "HTTP 500" in out["error_items"][0]["reason"]
    rows = query(ws, "SELECT verdict, answer, error FROM qa_model_answers WHERE model = ?", spec_bad)
    assert len(rows) == 8 and all(r[0] is None and r[1] is None and "HTTP 500" in r[2] for r in rows)
    assert run_cli_json("status", str(ws))["stages"]["audit"]["errors"] == 8
    # the model comes back: only the failed calls are asked again, the errors resolve, the flags appear
    bad.state.fail_rate = 0.0
    bad.state.answers.update({"【q1】": "42億円", "【q2】": "18%", "【q3】": "45%", "【q4】": "2019年"})
    bad.state.blind_answers.update({"【q1】": "42億円"})
    bad.state.__post_init__()
    again = run_cli_json("audit", str(ws), "--model", f"openai:m1@{good.base_url}", "--model", spec_bad)
    assert (again["asked"], again["answers"], again["errors"], again["skipped_existing"]) == (8, 8, 0, 8)
    assert good.state.requests == 8
    assert again["flags"] == {"text_only": 1, "reference_doubt": 1, "ambiguity": 0}
    assert run_cli_json("status", str(ws))["stages"]["audit"]["errors"] == 0
    assert len(query(ws, "SELECT id FROM qa_model_answers")) == 16


def test_revised_item_is_asked_again_and_statuses_filter(tmp_path: Path, fake_server):
    from zuhyo.construct.qa.items import update_qa_item
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import QAItemRow

    ws = make_ws(tmp_path, statuses={"q3": "rejected", "q4": "accepted"})
    servers = panel(fake_server)
    out = run_cli_json("audit", str(ws), *specs(servers))
    assert out["items"] == 3 and all(s.state.requests == 6 for s in servers)  # the rejected q3 is left out
    assert (3, "ambiguity") not in flags(ws)
    only = run_cli_json("audit", str(ws), *specs(servers), "--status", "accepted")
    assert (only["items"], only["asked"]) == (1, 0)
    # the author corrects q2's reference: revision 2 is asked again, the doubt is not raised again
    with Workspace.open(ws) as w, w.db.write() as s:
        row = s.get(QAItemRow, 2)
        assert row is not None
        update_qa_item(s, row, actor="test", action="edit", answer="18%")
    again = run_cli_json("audit", str(ws), *specs(servers))
    assert (again["asked"], again["skipped_existing"]) == (6, 12)
    assert again["flags"] == {"text_only": 0, "reference_doubt": 0, "ambiguity": 0}
    revs = query(ws, "SELECT item_revision, verdict FROM qa_model_answers WHERE qa_item_id = 2 AND purpose = "
                 "'audit_image' ORDER BY item_revision")
    assert revs == [(1, "wrong")] * 3 + [(2, "correct")] * 3


def test_undecided_verdicts_are_not_wrong(tmp_path: Path, fake_server):
    """Rules leave differing texts (and refusals) undecided: never wrong, left out of every rule's count."""
    # place names the rules know (大阪 against 東京: a different prefecture) are decided, so t1 uses ones they don't
    ws = make_ws(tmp_path, items={"t1": ("【t1】庁舎はどこにあるか", "霞が関"), "t2": ("【t2】比率は何%か", "15%")})
    models = [fake_server(answers={"【t1】": "永田町", "【t2】": "__REFUSAL__"},
                          blind_answers={"【t1】": "霞が関", "【t2】": NOT_BLIND}),
              fake_server(answers={"【t1】": "永田町", "【t2】": "__REFUSAL__"},
                          blind_answers={"【t1】": "丸の内", "【t2】": NOT_BLIND})]
    out = run_cli_json("audit", str(ws), *specs(models))
    assert (out["answers"], out["errors"], out["undecided"]) == (8, 0, 5)
    # t1: two agreeing undecided answers are no doubt; blind, 1 of the 1 decided answers is correct
    assert flags(ws) == {(1, "text_only")}
    assert query(ws, "SELECT detail FROM qa_flags")[0][0].startswith("1 of 1 models answered correctly")
    verdicts = query(ws, "SELECT verdict, COUNT(*) FROM qa_model_answers GROUP BY verdict ORDER BY verdict")
    assert verdicts == [("correct", 1), ("undecided", 5), ("wrong", 2)]


def test_another_judge_rejudges_stored_answers_and_a_failing_judge_is_no_wrong_answer(tmp_path: Path,
                                                                                       fake_server):
    """`--judge auto:<spec>` (cascade for hakusho items): the LLM decides what rules cannot, on stored answers."""
    ws = make_ws(tmp_path, items={"c1": ("【c1】庁舎はどこにあるか", "霞が関")})
    models = [fake_server(answers={"【c1】": "霞が関一丁目"}, blind_answers={"【c1】": "丸の内"}) for _ in range(2)]
    first = run_cli_json("audit", str(ws), *specs(models))
    assert (first["asked"], first["undecided"]) == (4, 4)  # rules: "one text contains the other", "texts differ"
    verdict = "extracted_final_answer: {a}\nreasoning: compared\ncorrect: {c}\nconfidence: 100"
    judge = fake_server(answers={"[response]: 霞が関一丁目": verdict.format(a="霞が関一丁目", c="yes"),
                                 "[response]: 丸の内": verdict.format(a="丸の内", c="no")},
                        fail_rate=1.0, faults=("500",))
    spec = f"auto:openai:judge@{judge.base_url}"
    down = run_cli_json("audit", str(ws), *specs(models), "--judge", spec)
    assert (down["asked"], down["judged"], down["judge_errors"]) == (0, 0, 4)
    assert query(ws, "SELECT COUNT(*) FROM qa_model_answers WHERE verdict IS NULL AND error IS NULL") == [(4,)]
    judge.state.fail_rate = 0.0
    up = run_cli_json("audit", str(ws), *specs(models), "--judge", spec)
    assert (up["asked"], up["judged"], up["judge_errors"], up["undecided"]) == (0, 4, 0, 0)
    assert all(m.state.requests == 2 for m in models)  # the models were asked once, whatever the judge
    rows = query(ws, "SELECT purpose, verdict, judge FROM qa_model_answers ORDER BY purpose, model")
    assert rows == [("audit_blind", "wrong", spec)] * 2 + [("audit_image", "correct", spec)] * 2
    assert up["flags"] == {"text_only": 0, "reference_doubt": 0, "ambiguity": 0}


def test_astro_item_is_judged_by_the_astrochart_routing(tmp_path: Path):
    """A numeric-retrieval astro item is scored by DomainCQA Algorithm 3 (41 on a 0-100 axis is right for 40)."""
    from test_construct_collect_folder import make_image_folder

    from zuhyo.construct.qa.audit import AuditOptions, run_audit
    from zuhyo.construct.qa.items import add_qa_item
    from zuhyo.construct.workspace import Workspace
    from zuhyo.evaluate.judges import build_judge
    from zuhyo.testing.scripted import ScriptedBackend

    make_image_folder(tmp_path / "imgs", 1, subdirs=0)
    ws_path = tmp_path / "ws"
    run_cli("init", str(ws_path))
    run_cli_json("collect", "folder", str(ws_path), str(tmp_path / "imgs"))
    with Workspace.open(ws_path) as ws:
        with ws.db.write() as s:
            add_qa_item(s, item_key="draft/1/astro/FQA-Data/m/1", figure_id=1, origin="draft", style="astro",
                        category="FQA-Data", aspect="Point", question="What is the flux at 5 keV?", answer="40",
                        status="draft", actor="test", axis={"min": 0, "max": 100, "scale": "linear"})
        backend = ScriptedBackend("I cannot see it", "41", spec="fake:a")
        report = run_audit(ws, [backend], build_judge("auto"), AuditOptions(concurrency=1))
        assert (report.asked, report.answers, report.judged) == (2, 2, 2)
        with ws.db.read() as s:
            from sqlalchemy import select

            from zuhyo.construct.workspace.qa_tables import QAModelAnswer

            got = {r.purpose: (r.verdict, r.score, r.meta["decided_by"]) for r in s.scalars(select(QAModelAnswer))}
    blind, image = backend.requests
    assert blind.image is None and image.image is not None and blind.prompt == image.prompt
    assert blind.prompt.startswith("What is the flux at 5 keV?\nAnswer based on the chart.")
    assert got["audit_image"] == ("correct", pytest.approx(0.99), "astro_numeric")
    assert got["audit_blind"][0] in ("wrong", "undecided")
    asyncio.run(backend.aclose())


def test_rules_are_pure_and_documented_thresholds():
    from zuhyo.construct.qa.audit_rules import JudgedAnswer, ambiguity, reference_doubt, text_only

    def a(model: str, verdict: str | None, answer: str = "x", outcome: str = "answered") -> JudgedAnswer:
        return JudgedAnswer(model=model, answer=answer, verdict=verdict, outcome=outcome)

    blind = [a("m1", "correct"), a("m2", "wrong"), a("m3", "undecided")]
    assert text_only(blind, "any") and text_only(blind, "all") is None
    assert text_only(blind, "majority") is None  # 1 of 2 decided is not more than half
    assert text_only([a("m1", "correct"), a("m2", "undecided")], "majority")
    assert text_only([a("m1", "undecided")], "any") is None
    with pytest.raises(ValueError, match="unknown text-only rule"):
        text_only(blind, "most")
    agree = {("m1", "m2"): "agree", ("m1", "m3"): "disagree", ("m2", "m3"): "disagree"}
    wrong3 = [a("m1", "wrong", "18"), a("m2", "wrong", "18"), a("m3", "wrong", "7")]
    assert reference_doubt(wrong3, agree)  # 2 of 3 agree, more than half
    assert reference_doubt([*wrong3[:2], a("m3", "correct")], agree) is None  # someone reads the reference
    refusals = [a("m1", "wrong", "I can't", "refusal"), a("m2", "wrong", "I can't", "refusal")]
    assert reference_doubt(refusals, {("m1", "m2"): "agree"}) is None
    assert ambiguity(wrong3, agree) is None  # 2 of 3 pairs disagree: 67% < 75%
    assert ambiguity(wrong3, agree, threshold=0.6)
    scattered = {("m1", "m2"): "disagree", ("m1", "m3"): "disagree", ("m2", "m3"): "undecided"}
    assert ambiguity(wrong3, scattered)  # 2 of 2 decided pairs, 2 of 3 pairs decided
    assert ambiguity(wrong3[:2], {("m1", "m2"): "disagree"}) is None  # two answers never scatter


def test_cli_errors_are_one_line(tmp_path: Path):
    ws = make_ws(tmp_path)
    for args, message in [((), "give --model SPEC"), (("--model", "openai:x@http://127.0.0.1:9",
                                                        "--text-only-rule", "most"), "unknown --text-only-rule"),
                          (("--model", "openai:x@http://127.0.0.1:9", "--status", "new"), "unknown --status"),
                          (("--list", "--kind", "odd"), "unknown --kind")]:
        proc = run_cli("audit", str(ws), *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr
