"""`zuhyo draft`: QA pairs drafted by a model over a real local HTTP server (DomainCQA Table 1 / HakushoBench §3.2),
checked for leaks, duplicates and (hakusho) yes/no and multiple-choice forms, stored as workspace QA items."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from test_construct_classify import make_captioned_ws  # noqa: E402

from zuhyo.testing.fake_openai import REFUSAL, SLOW  # noqa: E402

ABSTRACT = "We measure the Hubble constant from 42 lensed quasars."
CONCLUSION = "Time-delay cosmography gives H0 = 73 km/s/Mpc, in tension with the CMB value."
CITING = "Figure 2 shows the posterior of H0 from the joint sample."


def make_ws(tmp_path: Path, n: int, *, sample: tuple[int, ...] = (), abstracts: tuple[int, ...] = ()) -> Path:
    """A workspace of ``n`` captioned figures (cap-0 ...), a current sample and chart abstracts with paper context."""
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import AbstractOutcome
    from zuhyo.construct.workspace.records import record_decision
    from zuhyo.construct.workspace.tables import Document, FigureRow
    from zuhyo.schema import Decision

    ws = make_captioned_ws(tmp_path, n)
    with Workspace.open(ws) as w:
        if sample:
            with w.run("sample", {"seed": 0}) as run, w.db.write() as s:
                for rank, fid in enumerate(sample, 1):
                    record_decision(s, Decision(figure_id=fid, stage="sample", decision="keep",
                                                decided_by="stage:sample", reason=f"chosen {rank}",
                                                evidence={"rank": rank}), run_id=run.id)
        for fid in abstracts:
            with w.db.write() as s:
                fig = s.get(FigureRow, fid)
                doc = s.get(Document, fig.document_id)
                doc.meta = {"title": "Lensed quasars", "abstract": ABSTRACT, "conclusion": CONCLUSION}
                fig.context = [CITING]
                s.add(AbstractOutcome(document_id=doc.id, outcome="majority", figure_id=fid, votes={"a": fid}))
    return ws


def items(ws: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(ws / "zuhyo.db")
    con.row_factory = sqlite3.Row
    try:
        rows = con.execute("SELECT * FROM qa_items ORDER BY id").fetchall()
    finally:
        con.close()
    out = []
    for r in rows:
        d = dict(r)
        for k in ("axis", "key_points", "difficulty", "meta"):
            d[k] = json.loads(d[k]) if d[k] is not None else None
        out.append(d)
    return out


def open_errors(ws: Path) -> list[tuple[str, int, str]]:
    con = sqlite3.connect(ws / "zuhyo.db")
    try:
        return con.execute("SELECT item_key, figure_id, reason FROM item_errors WHERE stage = 'draft' AND "
                           "resolved_at IS NULL ORDER BY id").fetchall()
    finally:
        con.close()


def qa(question: str, answer: str, **extra: Any) -> str:
    return json.dumps({"question": question, "answer": answer, **extra})


# Keys: a phrase only that kind's prompt contains (the fake server answers the longest key found in the prompt).
K = {
    "Color": "Aspect of this question: Color", "Style": "Aspect of this question: Style",
    "Text": "Aspect of this question: Text", "Layout": "Aspect of this question: Layout",
    "Point": "Aspect of this question: Point", "Interval": "Aspect of this question: Interval",
    "Calculation": "Aspect of this question: Calculation", "Inference": "(FQA) Inference question-answer pair",
    "Summary": "(FQA) Summary question-answer pair", "KB-Inference": "KB-Inference question-answer pair",
    "KB-Summary": "KB-Summary question-answer pair",
}

VALID = {
    "Color": qa("What colour is the best-fit curve?", "red", key_points=["red"]),
    "Style": qa("Which line style marks the model prediction?", "dashed", key_points=["dashed line"]),
    "Text": qa("What quantity is on the horizontal axis?", "Redshift z", key_points=["redshift"]),
    "Layout": qa("How many panels does the figure have?", "2", key_points=["two panels"]),
    "Point": qa("What is the flux at 5 keV?", "3.2e-3", axis={"min": 1e-4, "max": 1e-1, "scale": "log"}),
    "Interval": qa("Over which redshift range do the data points extend?", "0.5 to 2.5",
                   axis={"min": 0, "max": 3, "scale": "linear"}),
    "Calculation": qa("By how much does the peak exceed the baseline level?", "40"),
    "Inference": qa("How does the scatter of the points change with redshift?",
                    "The scatter grows with redshift, roughly doubling between z=0.5 and z=2.",
                    key_points=["scatter increases with redshift", "about a factor of two"]),
    "Summary": qa("Summarise all visual elements of the chart.",
                  "A two-panel log-log plot of flux against energy with red data points and a dashed model.",
                  key_points=["two panels", "log-log axes", "red points", "dashed model"]),
    "KB-Inference": qa("Why would a larger time delay point to a smaller Hubble constant here?",
                       "Time delays scale inversely with H0, so longer delays imply a lower H0.",
                       key_points=["delay inversely proportional to H0"]),
    "KB-Summary": qa("What is the main cosmological result this chart supports?",
                     "It gives H0 near 73 km/s/Mpc, higher than the CMB inference.",
                     key_points=["H0 about 73", "tension with CMB"]),
}
FQA = ["Color", "Style", "Text", "Layout", "Point", "Interval", "Calculation", "Inference", "Summary"]


def test_astro_drafts_every_category_with_axes_and_loads_as_samples(tmp_path: Path, fake_server):
    from zuhyo.construct.qa.items import qa_item_to_sample
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import QAItemRow
    from zuhyo.construct.workspace.tables import FigureRow
    from zuhyo.evaluate.judges.astro_routing import scoring_kind

    ws = make_ws(tmp_path, 3, sample=(1,), abstracts=(2,))
    server = fake_server(answers={K[k]: v for k, v in VALID.items()})
    spec = f"openai:m1@{server.base_url}"
    out = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro")
    assert (out["figures"], out["abstracts"], out["drafted"], out["errors"], out["source"]) == (2, 1, 11, 0, "sample")
    assert out["rejected"] == {"leak": 0, "duplicate": 0, "yes_no": 0, "multiple_choice": 0}
    assert server.state.requests == 11 and "cap-2" not in json.dumps(server.state.seen_questions)
    rows = items(ws)
    by_kind = {(r["figure_id"], r["category"], r["aspect"]): r for r in rows}
    assert sorted(k for k in by_kind if k[0] == 1) == sorted(
        [(1, "FQA-Visual", a) for a in ("Color", "Style", "Text", "Layout")]
        + [(1, "FQA-Data", a) for a in ("Point", "Interval", "Calculation")]
        + [(1, "FQA-Inference", None), (1, "FQA-Summary", None)])
    assert sorted(k for k in by_kind if k[0] == 2) == [(2, "AQA-KB-Inference", None), (2, "AQA-KB-Summary", None)]
    point = by_kind[(1, "FQA-Data", "Point")]
    assert point["axis"] == {"min": 1e-4, "max": 0.1, "scale": "log"} and point["answer_kind"] == "numeric_retrieval"
    assert point["item_key"] == f"draft/1/astro/FQA-Data:Point/{spec}/1"
    assert (point["origin"], point["status"], point["style"], point["model"], point["prompt_version"]) == \
        ("draft", "draft", "astro", spec, "1")
    assert json.loads(point["raw"])["answer"] == "3.2e-3" and point["run_id"] is not None
    assert by_kind[(1, "FQA-Data", "Interval")]["axis"] == {"min": 0, "max": 3, "scale": "linear"}
    assert by_kind[(1, "FQA-Data", "Calculation")]["answer_kind"] == "numeric_exact"
    assert by_kind[(1, "FQA-Summary", None)]["key_points"] == ["two panels", "log-log axes", "red points",
                                                               "dashed model"]
    assert by_kind[(2, "AQA-KB-Summary", None)]["answer_kind"] == "open"
    assert by_kind[(1, "FQA-Visual", "Color")]["answer_kind"] is None  # the scorer derives it (counts: exact)
    # every item is a valid evaluation Sample, scored as DomainCQA Algorithm 3 / the key-point judge would
    with Workspace.open(ws) as w, w.db.read() as s:
        samples = {}
        for row in s.query(QAItemRow).all():
            fig = s.get(FigureRow, row.figure_id)
            samples[(row.category, row.aspect)] = qa_item_to_sample(row, fig, None)
    p = samples[("FQA-Data", "Point")]
    assert (p.astro.axis_min, p.astro.axis_max, p.astro.log_scale) == (1e-4, 0.1, True)
    assert scoring_kind(p) == "numeric_retrieval" and p.answers == ["3.2e-3"]
    assert scoring_kind(samples[("FQA-Visual", "Layout")]) == "numeric_exact"
    assert scoring_kind(samples[("FQA-Visual", "Color")]) == "open"
    assert samples[("AQA-KB-Inference", None)].astro.qa_type == "AQA"
    # AQA prompts carried the paper's context (Appendix C); FQA prompts only the caption
    assert server.state.seen_questions[K["KB-Inference"]] == 1
    # re-run: nothing asked, nothing added
    again = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro")
    assert (again["drafted"], again["skipped_existing"], again["errors"]) == (0, 11, 0)
    assert server.state.requests == 11 and len(items(ws)) == 11
    status = run_cli_json("status", str(ws))
    assert status["stages"]["draft"]["errors"] == 0
    human = run_cli("draft", str(ws), "--model", spec, "--style", "astro")
    assert "11 already drafted" in human.stdout and "0 errors" in human.stdout  # the summary is on stdout


def test_invalid_json_refusal_timeout_leak_and_duplicate(tmp_path: Path, fake_server):
    ws = make_ws(tmp_path, 1, sample=(1,))
    answers: dict[str, str | list[str]] = {K[k]: VALID[k] for k in FQA}
    answers.update({
        K["Point"]: "The flux is about 3.2e-3.",  # not JSON: re-asked
        "no JSON object in the reply": [VALID["Point"], REFUSAL, REFUSAL],
        K["Interval"]: qa("Over which redshift range do the points extend?", "up to 2.5",
                          axis={"min": 0, "max": 3, "scale": "linear"}),  # one number: re-asked
        "must contain 2 numbers": VALID["Interval"],
        K["Calculation"]: REFUSAL,  # refuses every time: an error, never a guessed item
        K["Inference"]: [SLOW, VALID["Inference"]],  # times out once, retried
        K["Text"]: qa("What does the horizontal axis label, Redshift z, read?", "Redshift z",
                      key_points=["redshift"]),  # leaks its answer
        K["Summary"]: qa("How does the scatter of the points change with redshift?", "It grows.",
                         key_points=["grows"]),  # the Inference question again
    })
    server = fake_server(answers=answers, slow_s=5.0)
    spec = f"openai:m1@{server.base_url}"
    out = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro", "--timeout", "1.5",
                       "--retry-base", "0.01")
    assert (out["figures"], out["drafted"], out["errors"], out["reasked"]) == (1, 6, 1, 2)
    assert out["retries"] >= 1  # the slow reply (a loaded machine may time out another request too)
    assert out["rejected"] == {"leak": 1, "duplicate": 1, "yes_no": 0, "multiple_choice": 0}
    assert out["error_items"] == [{"figure_id": 1, "kind": "FQA-Data:Calculation", "reason":
                                   "no valid reply after 3 attempt(s): no JSON object in the reply: "
                                   "I can't help with that."}]
    rows = {(r["category"], r["aspect"]): r for r in items(ws)}
    assert len(rows) == 8 and ("FQA-Data", "Calculation") not in rows
    leak, dup = rows[("FQA-Visual", "Text")], rows[("FQA-Summary", None)]
    assert (leak["status"], leak["reason"]) == ("rejected", "the answer 'Redshift z' appears in the question")
    assert leak["meta"]["reject_kind"] == "leak"
    inference_id = rows[("FQA-Inference", None)]["id"]
    assert (dup["status"], dup["reason"]) == ("rejected", f"same question as QA item {inference_id}")
    assert rows[("FQA-Data", "Point")]["meta"]["attempts"] == 2
    assert rows[("FQA-Data", "Interval")]["answer"] == "0.5 to 2.5"
    assert open_errors(ws) == [(f"draft/1/astro/FQA-Data:Calculation/{spec}/1", 1,
                                out["error_items"][0]["reason"])]
    assert run_cli_json("status", str(ws))["stages"]["draft"]["errors"] == 1
    # the failed draft is asked again on the next run and resolved; rejected drafts are not redrafted
    server.state.answers[K["Calculation"]] = VALID["Calculation"]
    before = server.state.requests
    again = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro")
    assert (again["drafted"], again["skipped_existing"], again["errors"]) == (1, 8, 0)
    assert server.state.requests == before + 1 and open_errors(ws) == []


def test_second_model_adds_beside_and_its_repeats_are_duplicates(tmp_path: Path, fake_server):
    ws = make_ws(tmp_path, 2, sample=(1,), abstracts=(2,))
    first = fake_server(answers={K[k]: v for k, v in VALID.items()})
    second_answers = {K[k]: v for k, v in VALID.items()}
    second_answers[K["Color"]] = qa("Which colour are the data points drawn in?", "red", key_points=["red"])
    second = fake_server(answers=second_answers)
    run_cli_json("draft", str(ws), "--model", f"openai:a@{first.base_url}", "--style", "astro",
                 "--category", "FQA-Visual")
    out = run_cli_json("draft", str(ws), "--model", f"openai:b@{second.base_url}", "--style", "astro",
                       "--category", "FQA-Visual")
    # the second model's Style/Text/Layout questions repeat the first model's: stored, rejected, counted
    assert (out["figures"], out["drafted"], out["rejected"]["duplicate"]) == (1, 1, 3)
    rows = items(ws)
    assert len(rows) == 8 and {r["model"].split("@")[0] for r in rows} == {"openai:a", "openai:b"}
    assert all(r["status"] == "draft" for r in rows if r["model"].startswith("openai:a"))
    assert second.state.requests == 4 and first.state.requests == 4
    # the AQA categories alone need no sample; a tie outcome after a majority means no chart abstract
    aqa = run_cli_json("draft", str(ws), "--model", f"openai:a@{first.base_url}", "--style", "astro",
                       "--category", "AQA-KB-Inference", "--category", "AQA-KB-Summary")
    assert (aqa["figures"], aqa["abstracts"], aqa["drafted"], aqa["source"]) == (1, 1, 2, "abstracts")
    con = sqlite3.connect(ws / "zuhyo.db")
    con.execute("INSERT INTO abstract_outcomes (document_id, outcome, figure_id, votes, meta, created_at) "
                "VALUES (1, 'tie', NULL, '{}', '{}', '2026-01-01')")
    con.commit()
    con.close()
    none = run_cli_json("draft", str(ws), "--model", f"openai:b@{second.base_url}", "--style", "astro",
                        "--category", "AQA-KB-Summary")
    assert (none["figures"], none["drafted"]) == (0, 0)


def test_no_sample_exits_1_unless_all_kept(tmp_path: Path, fake_server):
    ws = make_ws(tmp_path, 2)
    server = fake_server(answers={K[k]: v for k, v in VALID.items()})
    spec = f"openai:m@{server.base_url}"
    proc = run_cli("draft", str(ws), "--model", spec, "--style", "astro", check=False)
    assert proc.returncode == 1 and "no sampled figures" in proc.stderr and "--all-kept" in proc.stderr
    assert "Traceback" not in proc.stderr and server.state.requests == 0
    run_cli_json("decide", str(ws), "2", "drop", "--reason", "a photograph")
    out = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro", "--all-kept", "--category",
                       "FQA-Data")
    assert (out["figures"], out["drafted"], out["source"]) == (1, 3, "kept")
    bad = run_cli("draft", str(ws), "--model", spec, "--style", "astro", "--category", "FQA-Colour", check=False)
    assert bad.returncode == 1 and "unknown category 'FQA-Colour'" in bad.stderr
    from zuhyo.construct.qa.drafting import run_drafting
    from zuhyo.construct.workspace import Workspace
    from zuhyo.errors import DataError
    from zuhyo.testing.scripted import ScriptedBackend

    backend = ScriptedBackend(spec="fake:none")
    with Workspace.open(ws) as w, pytest.raises(DataError, match="no sampled figures"):
        run_drafting(w, backend, "astro")
    assert backend.closed and backend.requests == []


def hq(question: str, answer: str, flags: list[str]) -> str:
    return json.dumps({"question": question, "answer": answer, "difficulty": flags}, ensure_ascii=False)


def test_hakusho_short_answers_with_flags_yes_no_and_choice_rejected(tmp_path: Path, fake_server):
    from zuhyo.construct.qa.items import qa_item_to_sample
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import QAItemRow
    from zuhyo.construct.workspace.tables import FigureRow
    from zuhyo.schema import Flag

    ws = make_ws(tmp_path, 4)
    answers: dict[str, str | list[str]] = {
        "cap-0": hq("2020年度の予算額は2015年度の何倍か。", "1.5倍", ["Multi-hop", "Global"]),
        "cap-1": hq("2020年に増加したかどうか答えよ。", "はい", ["Other"]),  # yes/no every time
        "a yes/no question": [hq("2020年に増加したかどうか。", "いいえ", ["Other"])],
        "cap-2": hq("最も多い地域はどれか。(A) 北海道 (B) 沖縄 (C) 東京", "北海道", ["Visual"]),
        "a multiple-choice question": [hq("次のうち最も多い地域はどれか。", "北海道", ["Visual"])],
        "cap-3": hq("凡例にある項目の数はいくつか。", "5", ["Hard"]),  # not a flag: re-asked
        "does not match the schema": hq("凡例にある項目の数はいくつか。", "5", ["Counting"]),
    }
    server = fake_server(answers=answers)
    spec = f"openai:h@{server.base_url}"
    out = run_cli_json("draft", str(ws), "--model", spec, "--style", "hakusho", "--concurrency", "1")
    assert (out["figures"], out["drafted"], out["errors"], out["source"], out["reasked"]) == (4, 2, 0, "kept", 3)
    assert out["rejected"] == {"leak": 0, "duplicate": 0, "yes_no": 1, "multiple_choice": 1}
    rows = {r["figure_id"]: r for r in items(ws)}
    assert rows[1]["difficulty"] == ["Multi-hop", "Global"] and rows[1]["status"] == "draft"
    assert rows[1]["item_key"] == f"draft/1/hakusho/short-answer/{spec}/1" and rows[1]["category"] is None
    assert (rows[2]["status"], rows[2]["meta"]["reject_kind"]) == ("rejected", "yes_no")
    assert rows[2]["reason"] == "a yes/no question (answer 'いいえ')" and rows[2]["meta"]["attempts"] == 3
    assert (rows[3]["status"], rows[3]["meta"]["reject_kind"]) == ("rejected", "multiple_choice")
    assert rows[4]["difficulty"] == ["Counting"] and rows[4]["answer"] == "5"
    with Workspace.open(ws) as w, w.db.read() as s:
        row = s.get(QAItemRow, rows[1]["id"])
        sample = qa_item_to_sample(row, s.get(FigureRow, 1), None)
    assert sample.flags == [Flag.MULTI_HOP, Flag.GLOBAL] and sample.astro is None
    # with a sample, only the sampled figures get a hakusho question
    ws2 = make_ws(tmp_path / "two", 3, sample=(2,))
    out2 = run_cli_json("draft", str(ws2), "--model", spec, "--style", "hakusho")
    assert (out2["figures"], out2["source"]) == (1, "sample") and [r["figure_id"] for r in items(ws2)] == [2]


def test_request_carries_image_schema_and_paper_context(tmp_path: Path):
    from zuhyo.construct.qa.drafting import run_drafting
    from zuhyo.construct.workspace import Workspace
    from zuhyo.testing.scripted import ScriptedBackend

    ws = make_ws(tmp_path, 2, sample=(1,), abstracts=(2,))
    backend = ScriptedBackend(VALID["Point"], VALID["Interval"], VALID["Calculation"], VALID["KB-Inference"],
                              spec="fake:one")
    with Workspace.open(ws) as w:
        report = run_drafting(w, backend, "astro", categories=["FQA-Data", "AQA-KB-Inference"], concurrency=1,
                              domain="geophysics")
    assert (report.drafted, report.errors, report.figures, report.abstracts) == (4, 0, 2, 1)
    point, interval, calc, kb = backend.requests
    assert point.image is not None and point.image.data_url.startswith("data:image/png;base64,")
    schema = point.config.extra_body["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == {"question", "answer", "axis"} and not schema["additionalProperties"]
    calc_schema = calc.config.extra_body["response_format"]["json_schema"]["schema"]
    # strict structured output wants every property required: the axis is listed, nullable, and may be left out
    assert "axis" in calc_schema["required"] and {"type": "null"} in calc_schema["properties"]["axis"]["anyOf"]
    assert "cap-0" in point.prompt and "one number, the value read off the chart" in point.prompt
    assert "two numbers, the lower and the upper end" in interval.prompt and ABSTRACT not in point.prompt
    for text in (ABSTRACT, CONCLUSION, CITING, "Caption: cap-1", "requires geophysics domain knowledge"):
        assert text in kb.prompt
    assert kb.image is not None and backend.closed


def test_checks_leak_duplicate_yes_no_choice():
    from zuhyo.construct.qa.draft_checks import choice_reason, duplicate_reason, leak_reason, yes_no_reason

    assert leak_reason("What is the value of 42 in 2015?", "42") is not None
    assert leak_reason("What is the value in 2015?", "2") is None  # a digit of a longer number is no leak
    assert leak_reason("What is 3.5 plus 1?", "3") is None
    assert leak_reason("２０１５年の値は？", "2015年") is not None  # full-width digits normalised
    assert leak_reason("Which line is red?", "The dashed line") is None
    assert duplicate_reason("What colour is the curve?", [(7, "What color is the curve?")]) == \
        "near-identical to QA item 7 (similarity 0.98)"
    assert duplicate_reason("what is the x-axis label", [(3, "What is the X-axis label?")]) == \
        "same question as QA item 3"
    assert duplicate_reason("How many panels are there?", [(1, "What is the x-axis label?")]) is None
    assert yes_no_reason("Is the red line above the blue one?", "The red one") is not None
    assert yes_no_reason("What is shown?", "Yes.") is not None
    assert yes_no_reason("赤線は青線より上か。", "はい") is not None
    assert yes_no_reason("What is the peak value?", "12") is None
    assert choice_reason("Which is largest? (A) red (B) blue (C) green") is not None
    assert choice_reason("次のうち最も大きいのはどれか。") is not None
    assert choice_reason("Which region has the largest share?") is None


def test_prompts_quote_the_papers():
    from zuhyo.construct.qa.draft_kinds import ASTRO_KINDS, HAKUSHO_KIND

    texts = {k.key_part: k.prompt.text for k in (*ASTRO_KINDS, HAKUSHO_KIND)}
    # DomainCQA Appendix C, one line per category
    assert "The questions should require retrieving specific data points or a range of values from the chart." \
        in texts["FQA-Data:Point"]
    assert "with a focus on explaining chart relationships using scientific insights, without directly " \
           "referencing the article's conclusion." in texts["AQA-KB-Inference"]
    assert "including colors, labels, texts, formulas, chart types, and structural components" in \
        texts["FQA-Summary"]
    # HakushoBench §3.2 requirements and difficulty dimensions
    hakusho = texts["short-answer"]
    assert "(a) be unanswerable from the question text alone, requiring the image to resolve" in hakusho
    assert "admit a single, unambiguous answer expressible in a word, phrase, or short sentence" in hakusho
    for flag in ("Global", "Multi-hop", "Counting", "External knowledge", "Visual", "Other"):
        assert f'"{flag}":' in hakusho
    assert all(k.prompt.version == "1" for k in (*ASTRO_KINDS, HAKUSHO_KIND))


def test_hakusho_drafts_for_real_chartqa_charts(tmp_path: Path, fake_server, shared_data: Path):
    """The 30 real ChartQA test charts of ../shared/data each get one short-answer draft; their images are sent."""
    charts = shared_data / "chartqa" / "test" / "png"
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    assert run_cli_json("collect", "folder", str(ws), str(charts))["figures"] == 30
    server = fake_server(default_answer=hq("What is the difference between the two largest bars?", "12",
                                           ["Multi-hop"]))
    out = run_cli_json("draft", str(ws), "--model", f"openai:m@{server.base_url}", "--style", "hakusho")
    assert (out["figures"], out["drafted"], out["errors"], sum(out["rejected"].values())) == (30, 30, 0, 0)
    assert server.state.requests == 30
    assert server.state.bytes_in > sum(p.stat().st_size for p in charts.glob("*.png"))
    assert {r["difficulty"][0] for r in items(ws)} == {"Multi-hop"}


def test_missing_image_is_an_error_per_draft_and_counted(tmp_path: Path, fake_server):
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.tables import FigureRow

    ws = make_ws(tmp_path, 2)
    with Workspace.open(ws) as w:
        with w.db.read() as s:
            sha = s.get(FigureRow, 2).sha256
        path = w.images.path_for(sha)
        path.unlink()
    server = fake_server(default_answer=hq("凡例にある項目の数はいくつか。", "5", ["Counting"]))
    out = run_cli_json("draft", str(ws), "--model", f"openai:m@{server.base_url}", "--style", "hakusho")
    assert (out["figures"], out["drafted"], out["errors"]) == (2, 1, 1) and server.state.requests == 1
    assert out["error_items"] == [{"figure_id": 2, "kind": "short-answer",
                                   "reason": f"image: image {sha[:12]} is missing from the image store"}]
    assert [(fid, reason) for _, fid, reason in open_errors(ws)] == [(2, out["error_items"][0]["reason"])]
