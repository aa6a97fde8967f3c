"""`zuhyo abstracts`: DomainCQA Algorithm 2 (CoT & VoT chart abstracts) against real local servers, one per model."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, run_cli_json
from postgres_cluster import PostgresCluster, postgres  # noqa: F401 - the session fixture

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("pylatexenc", reason="the [build] extra is needed")

from zuhyo.testing.fake_openai import REFUSAL, SLOW  # noqa: E402

DATA = Path("/work/shared/data/astro_latex")

PAPER = r"""\documentclass{article}
\usepackage{graphicx}
\title{Paper %(name)s}
\begin{document}
\maketitle
\begin{abstract}
ABSTRACT-%(name)s We study how galaxies grow.
\end{abstract}
\section{Results}
%(cites)s

%(figures)s
\section{Conclusions}
CONCLUSION-%(name)s Galaxies grow fast.
\end{document}
"""


def make_paper(root: Path, name: str, n: int, seed: int) -> Path:
    """A LaTeX project with ``n`` PNG figures, captions ``cap-<name>-<i>``, each cited by one paragraph."""
    from PIL import Image

    root.mkdir(parents=True)
    figures, cites = [], []
    for i in range(1, n + 1):
        Image.new("RGB", (40 + i, 30), (seed * 40 % 256, i * 50 % 256, 120)).save(root / f"f{i}.png")
        figures.append(f"\\begin{{figure}}\\includegraphics{{f{i}.png}}\\caption{{cap-{name}-{i}.}}"
                       f"\\label{{fig:f{i}}}\\end{{figure}}")
        cites.append(f"Figure~\\ref{{fig:f{i}}} shows cite-{name}-{i}.")
    (root / "main.tex").write_text(PAPER % {"name": name, "cites": "\n\n".join(cites),
                                            "figures": "\n".join(figures)}, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with papers P3 (3 figures), P2 (2 figures), P1 (1 figure) and a folder without an abstract."""
    from test_construct_collect_folder import make_image_folder

    base = tmp_path_factory.mktemp("abstracts")
    ws = base / "ws"
    run_cli("init", str(ws))
    for name, n, seed in (("P3", 3, 1), ("P2", 2, 2), ("P1", 1, 3)):
        src = make_paper(base / name, name, n, seed)
        out = run_cli_json("collect", "latex", str(ws), str(src), "--paper-id", name)
        assert out["figures"] == n and out["errors"] == 0
    make_image_folder(base / "imgs", 2, subdirs=0)
    assert run_cli_json("collect", "folder", str(ws), str(base / "imgs"))["figures"] == 2
    return ws


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "ws"))


def query(ws: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(ws / "zuhyo.db")
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def doc_id(ws: Path, paper: str) -> int:
    return query(ws, "SELECT id FROM documents WHERE locator = ?", paper)[0][0]


def chart_ids(ws: Path, paper: str) -> list[int]:
    """Figure ids of C1..CN of a paper."""
    return [r[0] for r in query(ws, "SELECT f.id FROM figures f JOIN documents d ON d.id = f.document_id "
                                    "WHERE d.locator = ? ORDER BY f.id", paper)]


def vote(choice: str, n: int, relevance: dict[str, int] | None = None) -> str:
    """A valid reply choosing ``choice`` among C1..Cn (relevance 9 for the choice, 2 for the others)."""
    rel = relevance or {choice: 9}
    return json.dumps({"paper_summary": "Galaxies grow.",
                       "charts": [{"chart": f"C{i}", "summary": f"chart {i}", "relevance": rel.get(f"C{i}", 2),
                                   "reasoning": "because"} for i in range(1, n + 1)],
                       "choice": choice})


def spec(server: Any, name: str) -> str:
    return f"openai:{name}@{server.base_url}"


def abstracts(ws: Path, *specs: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    args = [a for s in specs for a in ("--model", s)]
    return run_cli_json("abstracts", str(ws), *args, "--retry-base", "0.01", *extra)


def test_majority_tie_skips_and_rerun_asks_nothing(ws: Path, fake_server):
    a = fake_server(answers={"ABSTRACT-P3": vote("C2", 3), "ABSTRACT-P2": vote("C1", 2)}, record_bodies=True)
    b = fake_server(answers={"ABSTRACT-P3": vote("C2", 3), "ABSTRACT-P2": vote("C2", 2)})
    out = abstracts(ws, spec(a, "a"), spec(b, "b"))
    # what was sent: the paper's text and every chart's caption and citing text, no image, the reply's schema
    sent = next(body for body in a.state.bodies if "ABSTRACT-P3" in json.dumps(body))
    assert sent["temperature"] == 0.0 and len(sent["messages"]) == 1
    content = sent["messages"][0]["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    assert "image_url" not in json.dumps(content)
    assert "CONCLUSION-P3 Galaxies grow fast." in text and "Caption: cap-P3-3." in text and "cite-P3-2" in text
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["choice"]["enum"] == ["C1", "C2", "C3"]
    counts = {k: out[k] for k in ("papers", "votes", "majority", "tie", "no_majority", "skipped", "errors")}
    assert counts == {"papers": 4, "votes": 4, "majority": 1, "tie": 1, "no_majority": 0, "skipped": 2, "errors": 0}
    assert (out["reused"], out["recorded"], out["prompt_version"]) == (0, 2, "1")
    assert a.state.requests == b.state.requests == 2
    assert a.state.seen_questions == {"ABSTRACT-P3": 1, "ABSTRACT-P2": 1}
    p3, p2 = chart_ids(ws, "P3"), chart_ids(ws, "P2")
    by_doc = {o["document_id"]: o for o in out["outcomes"]}
    assert by_doc[doc_id(ws, "P3")]["outcome"] == "majority" and by_doc[doc_id(ws, "P3")]["figure_id"] == p3[1]
    assert by_doc[doc_id(ws, "P2")] == {"document_id": doc_id(ws, "P2"), "locator": "P2", "outcome": "tie",
                                        "figure_id": None, "votes": {spec(a, "a"): p2[0], spec(b, "b"): p2[1]},
                                        "recorded": True}
    skipped = {s["locator"]: s["reason"] for s in out["skipped_items"]}
    assert skipped["P1"] == "1 kept figure; a chart abstract is chosen among at least 2"
    assert [r for loc, r in skipped.items() if loc != "P1"] == [
        "no abstract text (documents.meta has none; zuhyo collect latex stores it)"]
    votes = query(ws, "SELECT document_id, model, prompt_version, figure_id, paper_summary, raw, reasoning, error "
                      "FROM abstract_votes ORDER BY document_id, model")
    assert len(votes) == 4 and all(v[2] == "1" and v[4] == "Galaxies grow." and v[7] is None for v in votes)
    reasoning = json.loads(votes[0][6])
    assert [c["chart"] for c in reasoning["charts"]] == ["C1", "C2", "C3"] and reasoning["choice"] == "C2"
    assert json.loads(votes[0][5])["choice"] == "C2"  # the raw reply as it came
    outcomes = query(ws, "SELECT document_id, outcome, figure_id FROM abstract_outcomes ORDER BY id")
    assert sorted(outcomes) == sorted([(doc_id(ws, "P3"), "majority", p3[1]), (doc_id(ws, "P2"), "tie", None)])

    again = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (again["votes"], again["reused"], again["recorded"], again["majority"], again["tie"]) == (0, 4, 0, 1, 1)
    assert a.state.requests == b.state.requests == 2  # nothing asked again
    assert len(query(ws, "SELECT id FROM abstract_outcomes")) == 2  # nothing appended

    from zuhyo.construct.qa.abstracts import abstract_outcomes, chart_abstracts
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        assert chart_abstracts(w) == {doc_id(ws, "P3"): p3[1]}
        assert abstract_outcomes(w)[doc_id(ws, "P2")]["outcome"] == "tie"


def test_third_model_added_later_decides_the_tie(ws: Path, fake_server):
    a = fake_server(answers={"ABSTRACT-P3": vote("C3", 3), "ABSTRACT-P2": vote("C1", 2)})
    b = fake_server(answers={"ABSTRACT-P3": vote("C3", 3), "ABSTRACT-P2": vote("C2", 2)})
    c = fake_server(answers={"ABSTRACT-P3": vote("C1", 3), "ABSTRACT-P2": vote("C2", 2)})
    first = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (first["majority"], first["tie"]) == (1, 1)
    later = abstracts(ws, spec(a, "a"), spec(b, "b"), spec(c, "c"))
    assert (later["votes"], later["reused"], later["majority"], later["tie"], later["recorded"]) == (2, 4, 2, 0, 2)
    assert (a.state.requests, b.state.requests, c.state.requests) == (2, 2, 2)  # a and b were not asked again
    p3, p2 = chart_ids(ws, "P3"), chart_ids(ws, "P2")
    from zuhyo.construct.qa.abstracts import chart_abstracts
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        assert chart_abstracts(w) == {doc_id(ws, "P3"): p3[2], doc_id(ws, "P2"): p2[1]}
    history = query(ws, "SELECT outcome, figure_id, votes FROM abstract_outcomes WHERE document_id = ? ORDER BY id",
                    doc_id(ws, "P2"))
    assert [(h[0], h[1]) for h in history] == [("tie", None), ("majority", p2[1])]  # append-only
    assert json.loads(history[1][2]) == {spec(a, "a"): p2[0], spec(b, "b"): p2[1], spec(c, "c"): p2[1]}
    assert len(query(ws, "SELECT id FROM abstract_votes")) == 6


def test_three_way_tie_is_recorded_not_guessed(ws: Path, fake_server):
    servers = [fake_server(answers={"ABSTRACT-P3": vote(f"C{i}", 3), "ABSTRACT-P2": vote("C1", 2)})
               for i in (1, 2, 3)]
    out = abstracts(ws, *(spec(s, f"m{i}") for i, s in enumerate(servers)))
    by_doc = {o["document_id"]: o for o in out["outcomes"]}
    p3 = by_doc[doc_id(ws, "P3")]
    assert (p3["outcome"], p3["figure_id"]) == ("tie", None)
    assert sorted(p3["votes"].values()) == chart_ids(ws, "P3")
    assert by_doc[doc_id(ws, "P2")]["outcome"] == "majority"  # 3 of 3
    assert query(ws, "SELECT outcome, figure_id FROM abstract_outcomes WHERE document_id = ?",
                 doc_id(ws, "P3")) == [("tie", None)]


def test_invalid_replies_reasked_refusal_is_an_error_timeout_retried(ws: Path, fake_server):
    a = fake_server(answers={
        "ABSTRACT-P3": "I would pick the second chart.",  # not JSON: re-asked
        "no JSON object in the reply": vote("C2", 3),
        "ABSTRACT-P2": vote("C7", 2),  # a chart the paper does not have: re-asked
        "is not a chart of this paper": vote("C1", 2),
    })
    b = fake_server(answers={"ABSTRACT-P3": REFUSAL,  # refuses every time: an error after 3 replies
                             "no JSON object in the reply": REFUSAL,  # (the re-asks quote the problem)
                             "ABSTRACT-P2": [SLOW, vote("C1", 2)]},  # the first request times out, is retried
                    slow_s=3.0)
    # 1.5 s: well under the slow reply's 3 s, and over what a quick reply takes on a loaded machine (at 0.5 s two
    # test suites at once on 2 cores timed one out as well: 2 retries)
    out = abstracts(ws, spec(a, "a"), spec(b, "b"), extra=("--timeout", "1.5", "--concurrency", "1"))
    counts = {k: out[k] for k in ("votes", "majority", "tie", "no_majority", "errors", "reasked", "retries")}
    assert counts == {"votes": 3, "majority": 1, "tie": 0, "no_majority": 1, "errors": 1, "reasked": 2,
                      "retries": 1}
    assert out["error_items"] == [{"document_id": doc_id(ws, "P3"), "model": spec(b, "b"), "reason":
                                   "no valid reply after 3 attempt(s): no JSON object in the reply: "
                                   "I can't help with that."}]
    by_doc = {o["document_id"]: o for o in out["outcomes"]}
    p3, p2 = chart_ids(ws, "P3"), chart_ids(ws, "P2")
    # one vote of two is no majority: recorded, with the missing vote as null, and no chart chosen
    assert by_doc[doc_id(ws, "P3")]["outcome"] == "no_majority"
    assert by_doc[doc_id(ws, "P3")]["votes"] == {spec(a, "a"): p3[1], spec(b, "b"): None}
    assert (by_doc[doc_id(ws, "P2")]["outcome"], by_doc[doc_id(ws, "P2")]["figure_id"]) == ("majority", p2[0])
    failed = query(ws, "SELECT figure_id, error, raw FROM abstract_votes WHERE model = ?", spec(b, "b"))
    assert sorted(failed, key=lambda r: r[0] is None)[1][:2] == (None, out["error_items"][0]["reason"])
    problems = json.loads(query(ws, "SELECT meta FROM abstract_votes WHERE model = ? AND document_id = ?",
                                spec(a, "a"), doc_id(ws, "P2"))[0][0])["problems"]
    assert problems[0].startswith("choice 'C7' is not a chart of this paper (the charts are C1 to C2)")
    assert run_cli_json("status", str(ws))["stages"]["abstracts"]["errors"] == 1
    # the failed vote is asked again on the next run; the rest is not
    b.state.answers["ABSTRACT-P3"] = vote("C2", 3)
    assert b.state.seen_questions["no JSON object in the reply"] == 2
    requests_a, requests_b = a.state.requests, b.state.requests
    again = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (again["votes"], again["reused"], again["errors"], again["majority"]) == (1, 3, 0, 2)
    assert (a.state.requests, b.state.requests) == (requests_a, requests_b + 1)
    assert run_cli_json("status", str(ws))["stages"]["abstracts"]["errors"] == 0
    assert query(ws, "SELECT figure_id, error FROM abstract_votes WHERE model = ? AND document_id = ?",
                 spec(b, "b"), doc_id(ws, "P3")) == [(p3[1], None)]
    assert [r[0] for r in query(ws, "SELECT outcome FROM abstract_outcomes WHERE document_id = ? ORDER BY id",
                                doc_id(ws, "P3"))] == ["no_majority", "majority"]


def test_concurrency_bounds_requests_of_all_models_together(ws: Path, fake_server):
    server = fake_server(answers={"ABSTRACT-P3": vote("C1", 3), "ABSTRACT-P2": vote("C2", 2)}, latency_s=0.4)
    out = abstracts(ws, spec(server, "a"), spec(server, "b"), extra=("--concurrency", "3"))
    assert (out["votes"], out["majority"]) == (4, 2)
    assert server.state.requests == 4 and server.state.max_in_flight == 3


def test_needs_two_distinct_models(ws: Path, fake_server):
    a = fake_server(answers={})
    one = run_cli("abstracts", str(ws), "--model", spec(a, "a"), check=False)
    assert one.returncode == 1 and "at least 2 models" in one.stderr and "Traceback" not in one.stderr
    same = run_cli("abstracts", str(ws), "--model", spec(a, "a"), "--model", spec(a, "a"), check=False)
    assert same.returncode == 1 and "given more than once" in same.stderr
    assert a.state.requests == 0


def test_tally_outcomes():
    from zuhyo.construct.qa.abstract_vote import tally

    assert tally({"a": 7, "b": 7}) == ("majority", 7)
    assert tally({"a": 7, "b": 8}) == ("tie", None)
    assert tally({"a": 7, "b": 8, "c": 7}) == ("majority", 7)
    assert tally({"a": 1, "b": 2, "c": 3}) == ("tie", None)
    assert tally({"a": 7, "b": None}) == ("no_majority", None)  # one of two is not more than half
    assert tally({"a": 7, "b": 7, "c": None}) == ("majority", 7)
    assert tally({"a": 1, "b": 1, "c": 2, "d": 3}) == ("no_majority", None)
    assert tally({"a": 1, "b": 1, "c": 2, "d": 2}) == ("tie", None)
    assert tally({"a": None, "b": None}) == ("no_votes", None)


def test_parse_vote_checks_algorithm_2_lines_5_to_10():
    from zuhyo.construct.qa.abstracts import parse_vote

    keys = ("C1", "C2", "C3")
    reply, problem = parse_vote("```json\n" + vote("C3", 3) + "\n```", keys)
    assert problem == "" and reply.choice == "C3" and reply.paper_summary == "Galaxies grow."
    assert parse_vote(vote("C2", 3, {"C2": 5, "C3": 8}), keys) == (
        None, "choice C2 is not a chart with the highest relevance (C3, relevance 8)")
    assert parse_vote(vote("C2", 3, {"C2": 8, "C3": 8}), keys)[1] == ""  # the model's choice among equals
    partial = json.loads(vote("C1", 3))
    partial["charts"] = partial["charts"][:2]
    assert parse_vote(json.dumps(partial), keys)[1] == '"charts" must list every chart once; missing C3'
    doubled = json.loads(vote("C1", 3))
    doubled["charts"][2]["chart"] = "C1"
    assert parse_vote(json.dumps(doubled), keys)[1] == '"charts" must list every chart once; missing C3'
    assert parse_vote(vote("C4", 3), keys)[1] == "choice 'C4' is not a chart of this paper (the charts are C1 to C3)"
    bad = json.loads(vote("C1", 3))
    bad["charts"][0]["relevance"] = 11
    assert "charts.0.relevance" in parse_vote(json.dumps(bad), keys)[1]
    extra = json.loads(vote("C1", 3))
    extra["confidence"] = 0.9
    assert "confidence" in parse_vote(json.dumps(extra), keys)[1]


def test_prompt_holds_abstract_conclusion_captions_and_citing_text(ws: Path):
    from zuhyo.construct.qa.abstracts import PROMPT_NAME, papers_to_vote, render_prompt
    from zuhyo.construct.workspace import Workspace
    from zuhyo.prompts import load_prompt

    with Workspace.open(ws) as w:
        papers, skipped, n_docs = papers_to_vote(w)
    assert (n_docs, len(skipped)) == (4, 2) and [p.locator for p in papers] == ["P3", "P2"]
    text = render_prompt(load_prompt(PROMPT_NAME), papers[0])
    assert "ABSTRACT-P3 We study how galaxies grow." in text and "CONCLUSION-P3 Galaxies grow fast." in text
    for i in (1, 2, 3):
        assert f"C{i}: Figure {i}\nCaption: cap-P3-{i}.\nCited in:\n- Figure {i} shows cite-P3-{i}." in text
    assert "The paper's 3 charts" in text and "C1 to C3" in text and "$" not in text


def test_votes_over_changed_charts_are_asked_again_and_kept(ws: Path, fake_server):
    a = fake_server(answers={"ABSTRACT-P3": [vote("C3", 3), vote("C2", 2)], "ABSTRACT-P2": vote("C1", 2)})
    b = fake_server(answers={"ABSTRACT-P3": [vote("C3", 3), vote("C2", 2)], "ABSTRACT-P2": vote("C1", 2)})
    first = abstracts(ws, spec(a, "a"), spec(b, "b"))
    p3 = chart_ids(ws, "P3")
    assert first["majority"] == 2 and {o["figure_id"] for o in first["outcomes"]} >= {p3[2]}
    run_cli_json("decide", str(ws), str(p3[2]), "drop", "--reason", "not a chart")  # the chosen chart goes
    again = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (again["votes"], again["reused"], again["outdated"], again["recorded"]) == (2, 2, 2, 1)
    assert (a.state.requests, b.state.requests) == (3, 3)  # only P3 asked again, over its 2 remaining charts
    from zuhyo.construct.qa.abstracts import chart_abstracts
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        assert chart_abstracts(w)[doc_id(ws, "P3")] == p3[1]
    meta = json.loads(query(ws, "SELECT meta FROM abstract_votes WHERE document_id = ? AND model = ?",
                            doc_id(ws, "P3"), spec(a, "a"))[0][0])
    assert meta["charts"] == {"C1": p3[0], "C2": p3[1]}
    assert [(e["figure_id"], e["charts"]) for e in meta["earlier"]] == [
        (p3[2], {"C1": p3[0], "C2": p3[1], "C3": p3[2]})]  # the earlier vote is kept
    assert abstracts(ws, spec(a, "a"), spec(b, "b"))["reused"] == 4


def test_dropped_figures_are_not_charts(ws: Path, fake_server):
    p2 = chart_ids(ws, "P2")
    run_cli_json("decide", str(ws), str(p2[1]), "drop", "--reason", "a photograph")
    a = fake_server(answers={"ABSTRACT-P3": vote("C1", 3)})
    b = fake_server(answers={"ABSTRACT-P3": vote("C1", 3)})
    out = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert "ABSTRACT-P2" not in a.state.seen_questions
    assert {s["locator"]: s["reason"] for s in out["skipped_items"]}["P2"].startswith("1 kept figure")


def test_abstracts_on_postgres(postgres: PostgresCluster, tmp_path: Path, fake_server):  # noqa: F811
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--db", postgres.create_database("zuhyo_abstracts"))
    for name, n, seed in (("P3", 3, 1), ("P2", 2, 2)):
        run_cli_json("collect", "latex", str(ws), str(make_paper(tmp_path / name, name, n, seed)), "--paper-id", name)
    a = fake_server(answers={"ABSTRACT-P3": vote("C3", 3), "ABSTRACT-P2": vote("C1", 2)})
    b = fake_server(answers={"ABSTRACT-P3": vote("C3", 3), "ABSTRACT-P2": vote("C2", 2)})
    c = fake_server(answers={"ABSTRACT-P3": vote("C1", 3), "ABSTRACT-P2": vote("C1", 2)})
    first = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (first["votes"], first["majority"], first["tie"], first["recorded"]) == (4, 1, 1, 2)
    again = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (again["votes"], again["reused"], again["recorded"]) == (0, 4, 0)
    third = abstracts(ws, spec(a, "a"), spec(b, "b"), spec(c, "c"))
    assert (third["votes"], third["reused"], third["majority"], third["tie"], third["recorded"]) == (2, 4, 2, 0, 2)
    assert (a.state.requests, b.state.requests, c.state.requests) == (2, 2, 2)
    from zuhyo.construct.qa.abstracts import abstract_outcomes, chart_abstracts
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        chosen = chart_abstracts(w)
        latest = abstract_outcomes(w)
    assert len(chosen) == 2 and all(o["outcome"] == "majority" for o in latest.values())


celerite = pytest.mark.skipif(not (DATA / "dfm_celerite").is_dir() or not (DATA / "aastex_sample63").is_dir(),
                              reason="real data absent: /work/shared/data/astro_latex")


@celerite
def test_real_astro_papers(tmp_path: Path, fake_server):
    from zuhyo.construct.qa.abstracts import PROMPT_NAME, papers_to_vote, render_prompt
    from zuhyo.construct.workspace import Workspace
    from zuhyo.prompts import load_prompt

    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    run_cli_json("collect", "latex", str(ws), str(DATA / "dfm_celerite"), str(DATA / "aastex_sample63"))
    with Workspace.open(ws) as w:
        papers, skipped, _ = papers_to_vote(w)
    assert [p.locator for p in papers] == ["dfm_celerite", "aastex_sample63"] and skipped == []
    celerite_paper, aastex = papers
    assert len(celerite_paper.charts) == 4 and len(aastex.charts) == 15
    text = render_prompt(load_prompt(PROMPT_NAME), celerite_paper)
    assert "The growing field of large-scale time domain astronomy" in text
    assert "Gaussian Process models have been fruitfully applied" in text
    assert "Cited in:\n- Figure 1 shows a plot of the PSD" in text
    aastex_text = render_prompt(load_prompt(PROMPT_NAME), aastex)
    assert "This example manuscript is intended" in aastex_text and ", panel (a)" in aastex_text
    key_c = "The growing field of large-scale time domain astronomy"
    key_a = "This example manuscript is intended"
    a = fake_server(answers={key_c: vote("C4", 4), key_a: vote("C2", 15)})
    b = fake_server(answers={key_c: vote("C4", 4), key_a: vote("C3", 15)})
    out = abstracts(ws, spec(a, "a"), spec(b, "b"))
    assert (out["papers"], out["votes"], out["majority"], out["tie"], out["errors"]) == (2, 4, 1, 1, 0)
    from zuhyo.construct.qa.abstracts import chart_abstracts

    with Workspace.open(ws) as w:
        assert chart_abstracts(w) == {celerite_paper.document_id: celerite_paper.charts[3].figure_id}
