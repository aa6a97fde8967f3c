"""`zuhyo classify`: image types by a model over a real local HTTP server, people's labels, agreement."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from zuhyo.testing.fake_openai import REFUSAL, SLOW  # noqa: E402


def make_captioned_ws(tmp_path: Path, n: int) -> Path:
    """A workspace whose figures 1..n have captions cap-0 .. cap-{n-1} (distinct small images)."""
    from test_construct_collect_folder import make_image_folder

    files = make_image_folder(tmp_path / "imgs", n, subdirs=0)
    captions = tmp_path / "captions.csv"
    captions.write_text("file,caption\n" + "".join(f"{f},cap-{i}\n" for i, f in enumerate(files)), encoding="utf-8")
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    out = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"), "--captions", str(captions))
    assert out["figures"] == n
    return ws


def label_rows(ws: Path, stage: str) -> list[tuple[int, str, str, str, str]]:
    con = sqlite3.connect(ws / "zuhyo.db")
    try:
        return con.execute("SELECT figure_id, source, model, prompt_version, value FROM figure_labels "
                           "WHERE stage = ? ORDER BY id", (stage,)).fetchall()
    finally:
        con.close()


def bar(t: str) -> str:
    return json.dumps({"image_type": t})


def test_classify_valid_replies_then_rerun_asks_nothing(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 3)
    server = fake_server(answers={"cap-0": bar("Bar"), "cap-1": "```json\n" + bar("Map") + "\n```",
                                  "cap-2": bar("Table")}, latency_s=0.3)
    spec = f"openai:m1@{server.base_url}"
    out = run_cli_json("classify", str(ws), "--model", spec, "--concurrency", "2")
    assert server.state.max_in_flight == 2
    run = out["run"]
    assert (run["labelled"], run["errors"], run["skipped_existing"], run["prompt_version"]) == (3, 0, 0, "1")
    assert out["types"]["Bar"] == out["types"]["Map"] == out["types"]["Table"] == 1
    assert list(out["types"]) == ["Bar", "Line", "Pie", "Area", "Scatter", "Bubble", "Map", "Table", "Infographic",
                                  "Dashboard", "Other"]
    assert out["labelled_figures"] == 3 and out["import"] is None and out["agreement"] is None
    assert server.state.requests == 3
    again = run_cli_json("classify", str(ws), "--model", spec)
    assert (again["run"]["labelled"], again["run"]["skipped_existing"]) == (0, 3)
    assert server.state.requests == 3  # nothing asked again
    rows = label_rows(ws, "image_type")
    assert sorted((r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows) == \
        [(1, "model", spec, "1", "Bar"), (2, "model", spec, "1", "Map"), (3, "model", spec, "1", "Table")]


def test_invalid_reply_reasked_refusal_is_an_error_timeout_retried(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 4)
    # one figure at a time, so the scripted replies to re-asks (which quote the problem) go in figure order
    answers: dict[str, str | list[str]] = {
        "cap-0": "It is a bar chart.",  # not JSON: re-asked
        "no JSON object in the reply": [bar("Bar"), REFUSAL, REFUSAL],
        "cap-1": bar("Histogram"),  # not one of the 11 classes: re-asked
        "does not match the schema": bar("Line"),
        "cap-2": REFUSAL,  # refuses every time: an error after 3 replies, never a guess
        "cap-3": [SLOW, bar("Pie")],  # the first request times out and is retried
    }
    server = fake_server(answers=answers, slow_s=3.0)
    spec = f"openai:m1@{server.base_url}"
    out = run_cli_json("classify", str(ws), "--model", spec, "--timeout", "0.5", "--retry-base", "0.01",
                       "--concurrency", "1")
    run = out["run"]
    assert (run["labelled"], run["errors"], run["reasked"], run["retries"]) == (3, 1, 2, 1)
    assert [e["figure_id"] for e in run["error_items"]] == [3]
    reason = run["error_items"][0]["reason"]
    assert reason == "no valid reply after 3 attempt(s): no JSON object in the reply: I can't help with that."
    assert server.state.seen_questions["cap-2"] == 1 and server.state.requests == 4 + 2 + 2 + 1
    assert {r[0]: json.loads(r[4]) for r in label_rows(ws, "image_type")} == {1: "Bar", 2: "Line", 4: "Pie"}
    status = run_cli_json("status", str(ws))
    assert status["stages"]["image_type"]["errors"] == 1
    # the error is retried on the next run and resolved once the model answers
    server.state.answers["cap-2"] = bar("Other")
    again = run_cli_json("classify", str(ws), "--model", spec)
    assert (again["run"]["labelled"], again["run"]["skipped_existing"], again["run"]["errors"]) == (1, 3, 0)
    assert run_cli_json("status", str(ws))["stages"]["image_type"]["errors"] == 0


def test_another_model_keeps_earlier_answers_and_dropped_figures_are_left_out(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 3)
    a = fake_server(answers={"cap-0": bar("Bar"), "cap-1": bar("Line"), "cap-2": bar("Pie")})
    b = fake_server(answers={"cap-0": bar("Area"), "cap-1": bar("Line")})
    run_cli_json("decide", str(ws), "3", "drop", "--reason", "a photograph")
    first = run_cli_json("classify", str(ws), "--model", f"openai:a@{a.base_url}")
    assert (first["run"]["figures"], first["run"]["dropped"], first["run"]["labelled"]) == (2, 1, 2)
    assert a.state.requests == 2 and "cap-2" not in a.state.seen_questions
    second = run_cli_json("classify", str(ws), "--model", f"openai:b@{b.base_url}")
    assert second["run"]["labelled"] == 2
    assert second["types"]["Area"] == 1 and second["types"]["Bar"] == 0  # the latest model answer is current
    rows = label_rows(ws, "image_type")
    assert sorted((r[0], r[2].split("@")[0], json.loads(r[4])) for r in rows) == \
        [(1, "openai:a", "Bar"), (1, "openai:b", "Area"), (2, "openai:a", "Line"), (2, "openai:b", "Line")]


def test_import_csv_overrides_and_reports_bad_rows(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 3)
    server = fake_server(answers={"cap-0": bar("Bar"), "cap-1": bar("Line"), "cap-2": bar("Pie")})
    run_cli_json("classify", str(ws), "--model", f"openai:m@{server.base_url}")
    con = sqlite3.connect(ws / "zuhyo.db")
    sha2 = con.execute("SELECT sha256 FROM figures WHERE id = 2").fetchone()[0]
    con.close()
    labels = tmp_path / "labels.csv"
    labels.write_text("figure,image_type\n1,table\n" + f"{sha2[:12]},Infographic\n" + "3,Histogram\n"
                      "99,Bar\n" + "zz,Bar\n", encoding="utf-8")
    out = run_cli_json("classify", str(ws), "--import", str(labels))
    imp = out["import"]
    assert (imp["rows"], imp["imported"], imp["unchanged"]) == (5, 2, 0)
    assert imp["errors"] == ["line 4: image_type 'Histogram' is not one of Bar, Line, Pie, Area, Scatter, Bubble, "
                             "Map, Table, Infographic, Dashboard, Other"]
    assert imp["unknown"][0] == "line 5: no figure with id 99" and imp["unknown"][1].startswith("line 6: figure 'zz'")
    assert out["run"] is None
    assert (out["types"]["Table"], out["types"]["Infographic"], out["types"]["Pie"], out["types"]["Bar"]) == \
        (1, 1, 1, 0)
    again = run_cli_json("classify", str(ws), "--import", str(labels))
    assert (again["import"]["imported"], again["import"]["unchanged"]) == (0, 2)
    # people's labels win over a later model run
    other = fake_server(answers={"cap-0": bar("Scatter"), "cap-1": bar("Scatter"), "cap-2": bar("Scatter")})
    later = run_cli_json("classify", str(ws), "--model", f"openai:n@{other.base_url}")
    assert (later["types"]["Table"], later["types"]["Infographic"], later["types"]["Scatter"]) == (1, 1, 1)
    bad = tmp_path / "bad.csv"
    bad.write_text("figure,type\n1,Bar\n", encoding="utf-8")
    proc = run_cli("classify", str(ws), "--import", str(bad), check=False)
    assert proc.returncode == 1 and "missing: image_type" in proc.stderr and "Traceback" not in proc.stderr


def test_gold_sample_agreement(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 4)
    server = fake_server(answers={"cap-0": bar("Bar"), "cap-1": bar("Bar"), "cap-2": bar("Line"),
                                  "cap-3": bar("Line")})
    gold = tmp_path / "gold.csv"
    gold.write_text("figure,image_type\n1,Bar\n2,Line\n3,Line\n4,Line\n5,Bar\n", encoding="utf-8")
    out = run_cli_json("classify", str(ws), "--model", f"openai:m@{server.base_url}", "--gold", str(gold))
    agr = out["agreement"]
    # gold B L L L vs model B B L L: p_o = 3/4; p_e = (1*2 + 3*2)/16 = 1/2; kappa = (0.75 - 0.5)/0.5 = 0.5
    assert (agr["n"], agr["accuracy"], agr["kappa"], agr["missing"]) == (4, 0.75, 0.5, 0)
    assert agr["errors"] == ["line 6: no figure with id 5"]
    human = run_cli("classify", str(ws), "--gold", str(gold)).stdout + run_cli("classify", str(ws), "--gold",
                                                                              str(gold)).stderr
    assert "accuracy 75.0%, Cohen's kappa 0.500" in human


def test_cohen_kappa_textbook_example():
    from zuhyo.agreement import agreement, cohen_kappa

    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None and agreement([])["accuracy"] is None


def test_request_carries_image_and_schema_and_reask_context(tmp_path: Path):
    from zuhyo.construct.select.classify import IMAGE_TYPE_TASK
    from zuhyo.construct.select.labelling import run_labelling
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.labels import current_labels
    from zuhyo.schema import ImageType
    from zuhyo.testing.scripted import ScriptedBackend

    ws_path = make_captioned_ws(tmp_path, 1)
    backend = ScriptedBackend('{"image_type": "bar"}', bar("Bar"), spec="fake:one")
    with Workspace.open(ws_path) as ws:
        report = run_labelling(ws, IMAGE_TYPE_TASK, backend)
        assert (report.labelled, report.reasked) == (1, 1)
        assert current_labels(ws, "image_type") == {1: "Bar"}
    first, second = backend.requests
    assert first.image is not None and first.image.data_url.startswith("data:image/png;base64,")
    assert "cap-0" in first.prompt and "Infographic" in first.prompt
    fmt = first.config.extra_body["response_format"]["json_schema"]["schema"]
    assert fmt["$defs"]["ImageType"]["enum"] == [t.value for t in ImageType] and not fmt["additionalProperties"]
    assert second.image is first.image and second.context[0].answer == '{"image_type": "bar"}'
    assert "Input should be 'Bar'" in second.prompt
    assert backend.closed
    asyncio.run(backend.aclose())


def test_classify_real_chartqa_charts(tmp_path: Path, fake_server, shared_data: Path):
    """The 30 real ChartQA test charts of ../shared/data go through image preparation to the server."""
    charts = shared_data / "chartqa" / "test" / "png"
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    assert run_cli_json("collect", "folder", str(ws), str(charts))["figures"] == 30
    server = fake_server(default_answer=bar("Bar"))
    out = run_cli_json("classify", str(ws), "--model", f"openai:m@{server.base_url}", "--concurrency", "4")
    assert (out["run"]["labelled"], out["run"]["errors"], out["types"]["Bar"]) == (30, 0, 30)
    assert server.state.requests == 30
    assert server.state.bytes_in > sum(p.stat().st_size for p in charts.glob("*.png"))  # the images were sent


PROSE = 'It is NOT {"image_type": "Pie"}; it is clearly a Bar'


def test_json_only_replies_prose_around_the_object_is_an_error_unless_lenient(tmp_path: Path, fake_server):
    from zuhyo.construct.select.classify import ImageTypeReply
    from zuhyo.construct.select.labelling import parse_json_reply

    assert parse_json_reply(ImageTypeReply, PROSE)[1].startswith("the reply has text around its JSON object")
    assert parse_json_reply(ImageTypeReply, ' \n```json\n{"image_type": "Bar"}\n```\n')[0] is not None
    assert parse_json_reply(ImageTypeReply, PROSE, lenient=True)[0] is not None
    ws = make_captioned_ws(tmp_path, 2)
    server = fake_server(answers={"cap-0": PROSE, "cap-1": bar("Line"), "text around its JSON object": PROSE})
    spec = f"openai:m1@{server.base_url}"
    out = run_cli_json("classify", str(ws), "--model", spec, "--concurrency", "1")
    run = out["run"]
    assert (run["labelled"], run["errors"]) == (1, 1)
    assert run["error_items"][0]["reason"].startswith("no valid reply after 3 attempt(s): the reply has text "
                                                      "around its JSON object")
    assert {r[0]: json.loads(r[4]) for r in label_rows(ws, "image_type")} == {2: "Line"}  # never stored as Pie
    lenient = run_cli_json("classify", str(ws), "--model", spec, "--lenient-json")
    assert (lenient["run"]["labelled"], lenient["run"]["errors"]) == (1, 0)
    con = sqlite3.connect(ws / "zuhyo.db")
    params = [json.loads(p) for (p,) in con.execute("SELECT params FROM stage_runs WHERE stage = 'image_type' "
                                                    "ORDER BY id")]
    con.close()
    assert [p["lenient_json"] for p in params] == [False, True]
