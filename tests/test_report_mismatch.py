"""Bad input that must be reported plainly: models scored on different item sets, a missing run."""

from __future__ import annotations

import csv

import pytest
from conftest import run_cli_json
from test_report_support import answer_key, write_hakusho

from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState


def test_different_item_sets_are_compared_on_the_intersection_and_missing_runs_reported(tmp_path):
    hpath, rows = write_hakusho(tmp_path / "data")
    key = answer_key(rows, "hakusho", lambda i: i % 2 == 0, lambda i: True)
    with FakeOpenAIServer(ServerState(answers=key)) as srv:
        full, part = tmp_path / "full", tmp_path / "part"
        common = ["--bench", "hakusho", "--path", str(hpath), "--judge", "rules", "--quiet", "--prompt", "direct"]
        run_cli_json("eval", *common, "--model", f"openai:full@{srv.base_url}", "--out", str(full), "--runs", "2")
        # Another model on the first 20 items only, and one run where the manifest of the other set asks for two.
        run_cli_json("eval", *common, "--model", f"openai:part@{srv.base_url}", "--out", str(part), "--runs", "1",
                     "--limit", "20")
    doc = run_cli_json("report", str(full), str(part), "--out", str(tmp_path / "r"), "--no-plots",
                       "--bootstrap", "500")
    kinds = [p["kind"] for p in doc["problems"]]
    messages = " ".join(p["message"] for p in doc["problems"])
    assert "item_set_mismatch" in kinds and "different item sets" in messages
    assert "missing_run" in kinds and "run(s) 1 of 2 have no predictions" in messages
    cells = {c["model"].split(":")[1].split("@")[0]: c for c in doc["cells"]}
    part_cell, full_cell = cells["part"], cells["full"]
    # Each mean is over its own items and says so in its counts; never averaged over the other model's items.
    assert part_cell["n_scored"] == 20 and part_cell["n_missing"] == 2 * len(rows) - 20
    assert full_cell["n_scored"] == 2 * len(rows) and full_cell["n_missing"] == 0
    assert part_cell["mean"] == pytest.approx(sum(1 for i in range(20) if i % 2 == 0) / 20)
    cmp = part_cell["vs_best"] or full_cell["vs_best"]
    assert cmp["n_common"] == 20 and cmp["only_in_a"] + cmp["only_in_b"] == len(rows) - 20
    assert cmp["test"] == "mcnemar_exact" and cmp["p_value"] == pytest.approx(1.0)
    with (tmp_path / "r" / "tables" / "main.csv").open(encoding="utf-8") as f:
        main = {r["row"]: r for r in csv.DictReader(f)}
    assert main["part"]["n_missing"] == str(2 * len(rows) - 20)
    assert "scored on different item sets" in (tmp_path / "r" / "tables" / "main.md").read_text(encoding="utf-8")
