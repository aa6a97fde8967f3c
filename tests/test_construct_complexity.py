"""`zuhyo complexity`: DomainCQA chart complexity vectors (Appendix A, Tables 3-4) by a model and by people."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from test_construct_classify import label_rows, make_captioned_ws  # noqa: E402

from zuhyo.schema import CCV_ATTRIBUTES  # noqa: E402

NAMES = [a.name for a in CCV_ATTRIBUTES]


def ccv_json(bits: str) -> str:
    """``"1000000001"`` → the reply JSON with Annotation=1 and Type=1."""
    return json.dumps({name: int(b) for name, b in zip(NAMES, bits, strict=True)})


def test_prompt_holds_table3_names_and_definitions_verbatim():
    from zuhyo.prompts import load_prompt

    prompt = load_prompt("construct/ccv")
    for i, a in enumerate(CCV_ATTRIBUTES, 1):
        assert f"{i}. {a.name} Complexity\n   0: {a.simple}\n   1: {a.complex}" in prompt.text
    assert prompt.version == "1" and "$caption" in prompt.text


def test_l1_score_table4_and_histogram():
    from zuhyo.construct.select.complexity import l1_score, score_histogram, table4

    vectors = [(1, 1, 0, 0, 0, 0, 0, 0, 0, 1), (0, 1, 0, 0, 0, 0, 0, 0, 0, 0), (0, 1, 1, 0, 0, 0, 0, 0, 1, 1),
               (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    assert [l1_score(v) for v in vectors] == [3, 1, 4, 0]
    rows = table4(vectors)
    assert [r["attribute"] for r in rows] == NAMES
    assert (rows[1]["complex_share"], rows[1]["simple_share"], rows[0]["complex_share"]) == (0.75, 0.25, 0.25)
    assert rows[4] == {"attribute": "Axis", "group": "Data Interpretation", "complex": 0, "simple_share": 1.0,
                       "complex_share": 0.0}
    assert score_histogram(vectors) == {0: 1, 1: 1, 2: 0, 3: 1, 4: 1, 5: 0, 6: 0, 7: 0, 8: 0, 9: 0, 10: 0}
    assert table4([])[0]["complex_share"] is None


def test_complexity_by_model_with_reask_error_and_rerun(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 4)
    missing_type = json.dumps({n: 0 for n in NAMES[:-1]})
    answers: dict[str, str | list[str]] = {
        "cap-0": ccv_json("1100000001"),
        "cap-1": "```json\n" + ccv_json("0100000000") + "\n```",  # a fence alone is the object alone
        "cap-2": missing_type,  # Type missing: re-asked
        "does not match the schema": [ccv_json("0110000011"), json.dumps({**{n: 0 for n in NAMES}, "Color": 2})],
        "cap-3": json.dumps({**{n: 0 for n in NAMES}, "Color": 2}),  # never valid: an error
    }
    server = fake_server(answers=answers)
    spec = f"openai:m@{server.base_url}"
    out = run_cli_json("complexity", str(ws), "--model", spec, "--concurrency", "1")
    assert set(out) == {"stage", "import", "run", "charts", "table4", "scores"}
    run = out["run"]
    assert (run["labelled"], run["errors"], run["reasked"]) == (3, 1, 1)
    assert run["error_items"][0]["figure_id"] == 4
    assert "Color: Input should be 0 or 1" in run["error_items"][0]["reason"]
    assert out["charts"] == 3
    shares = {r["attribute"]: r["complex_share"] for r in out["table4"]}
    assert shares["Color"] == 1.0 and shares["Annotation"] == pytest.approx(1 / 3) and shares["Axis"] == 0.0
    assert shares["Type"] == pytest.approx(2 / 3) and shares["Subplot"] == pytest.approx(1 / 3)
    assert out["scores"] == {"0": 0, "1": 1, "2": 0, "3": 1, "4": 1, "5": 0, "6": 0, "7": 0, "8": 0, "9": 0,
                             "10": 0}
    stored = {r[0]: json.loads(r[4]) for r in label_rows(ws, "ccv")}
    assert stored[1] == {n: int(b) for n, b in zip(NAMES, "1100000001", strict=True)}
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.labels import current_ccvs

    with Workspace.open(ws) as w:
        assert current_ccvs(w) == {1: (1, 1, 0, 0, 0, 0, 0, 0, 0, 1), 2: (0, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                   3: (0, 1, 1, 0, 0, 0, 0, 0, 1, 1)}
    requests = server.state.requests
    # the re-run asks only the failed figure, which fails again: every item it tried failed, so it exits 1
    retry = run_cli("complexity", str(ws), "--model", spec, "--json", check=False)
    assert retry.returncode == 1 and "error: all 1 figures asked failed" in retry.stderr
    again = json.loads(retry.stdout)
    assert (again["run"]["labelled"], again["run"]["skipped_existing"], again["run"]["errors"]) == (0, 3, 1)
    assert server.state.requests == requests + 3  # only the failed figure was asked again (3 replies)
    human = run_cli("complexity", str(ws), "--model", spec, check=False).stdout  # the table is the result: stdout
    assert "Color Complexity" in human and "100%" in human and "L1 complexity scores: 0: 0, 1: 1" in human


def test_import_ccv_csv(tmp_path: Path, fake_server):
    ws = make_captioned_ws(tmp_path, 3)
    server = fake_server(answers={"cap-0": ccv_json("0000000000"), "cap-1": ccv_json("0000000000"),
                                  "cap-2": ccv_json("0000000000")})
    run_cli_json("complexity", str(ws), "--model", f"openai:m@{server.base_url}")
    import sqlite3

    con = sqlite3.connect(ws / "zuhyo.db")
    sha3 = con.execute("SELECT sha256 FROM figures WHERE id = 3").fetchone()[0]
    con.close()
    labels = tmp_path / "ccv.csv"
    labels.write_text("figure," + ",".join(NAMES) + "\n"
                      "1," + ",".join("1111100000") + "\n"
                      "2,1,1,1,1,1,0,0,0,0,2\n"
                      + sha3 + "," + ",".join("0000000001") + "\n"
                      "42," + ",".join("0000000000") + "\n"
                      "1," + ",".join("111110000") + "\n", encoding="utf-8")
    out = run_cli_json("complexity", str(ws), "--import", str(labels))
    imp = out["import"]
    assert (imp["rows"], imp["imported"]) == (5, 2)
    assert imp["errors"] == ["line 3: Type must be 0 or 1, got '2'", "line 6: Type must be 0 or 1, got ''"]
    assert imp["unknown"] == ["line 5: no figure with id 42"]
    assert out["run"] is None and out["charts"] == 3
    shares = {r["attribute"]: r["complex_share"] for r in out["table4"]}
    assert shares["Annotation"] == pytest.approx(1 / 3) and shares["Type"] == pytest.approx(1 / 3)
    assert out["scores"]["5"] == 1 and out["scores"]["1"] == 1 and out["scores"]["0"] == 1
    assert run_cli_json("complexity", str(ws), "--import", str(labels))["import"]["unchanged"] == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("figure,Annotation\n1,0\n", encoding="utf-8")
    proc = run_cli("complexity", str(ws), "--import", str(bad), check=False)
    assert proc.returncode == 1 and "missing: Color, Legend" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("complexity", str(ws), check=False)
    assert proc.returncode == 1 and "--model SPEC" in proc.stderr
