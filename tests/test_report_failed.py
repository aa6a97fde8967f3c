"""The report's failed-items list and category plots: every failure listed (interleaved across benchmarks, paged
by the page), counted per benchmark, always with a reason; category plots drawn for small benchmarks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURE_CHARTQA, run_cli_json
from test_report_support import answer_key, eval_into, write_hakusho

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark
from zuhyo.report.html import failure_reason
from zuhyo.report.plots import stack_labels


def page_rows(index: Path) -> list[dict]:
    """The failed-item rows index.html carries for its script."""
    html = index.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="failed-data">(.*?)</script>', html, re.S)
    assert m, "index.html has no failed-data block"
    return json.loads(m.group(1))["rows"]


def test_stacked_labels_keep_ties_apart_and_inside_the_axis():
    ys = stack_labels([50.0, 50.0, 50.0, 10.0], min_gap=6.0)
    assert sorted(ys[:3]) == pytest.approx([44.0, 50.0, 56.0]) and ys[3] == 10.0
    ys = stack_labels([0.0, 0.0, 1.0, 100.0, 100.0], min_gap=6.0, lo=3.0, hi=97.0)
    srt = sorted(ys)
    assert all(b - a >= 6.0 - 1e-9 for a, b in zip(srt, srt[1:], strict=False))
    assert 3.0 <= min(ys) and max(ys) <= 97.0
    assert stack_labels([20.0, 70.0], min_gap=6.0) == [20.0, 70.0]  # far apart: labels stay at their dots


def test_failure_reason_is_never_empty():
    why = failure_reason("incorrect", "", "103", "500", "metric:chartqa_relaxed", {"relaxed_accuracy": 0.0})
    assert "'103'" in why and "'500'" in why and "relaxed_accuracy 0" in why
    assert failure_reason("incorrect", "", None, "5", "", {}).startswith("the judge: no answer was extracted")
    assert failure_reason("unscored", "", None, "5", "rules", {}) == "rules could not decide"
    assert failure_reason("incorrect", "different option", "b", "a", "rules", {}) == "different option"


@pytest.fixture(scope="module")
def mixed_report(tmp_path_factory, fake_server_module) -> dict:
    """chartqa under its numeric metric (a wrong number for 2 of 3 items) and a small HakushoBench-like set."""
    root = tmp_path_factory.mktemp("failed")
    chartqa = load_benchmark("chartqa", BenchmarkSource(path=FIXTURE_CHARTQA)).samples
    key = {s.question: (s.answer if i % 3 == 0 else "103") for i, s in enumerate(chartqa)}
    hpath, hrows = write_hakusho(root / "data")
    key |= answer_key(hrows, "hakusho", lambda i: i % 4 != 0, lambda i: True)
    server = fake_server_module(answers=key)
    run_cli_json("eval", "--bench", "chartqa", "--path", str(FIXTURE_CHARTQA), "--model",
                 f"openai:m@{server.base_url}", "--out", str(root / "c"), "--runs", "1", "--prompt", "direct",
                 "--judge", "metric:chartqa_relaxed", "--quiet")
    eval_into(root / "h", "hakusho", hpath, server.base_url, "m", "rules")
    out = root / "report"
    doc = run_cli_json("report", str(root / "c"), str(root / "h"), "--out", str(out), "--bootstrap", "200")
    return {"doc": doc, "out": out, "chartqa": chartqa, "hakusho": hrows}


@pytest.fixture(scope="module")
def fake_server_module():
    from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

    servers: list[FakeOpenAIServer] = []

    def start(**kwargs: object) -> FakeOpenAIServer:
        servers.append(FakeOpenAIServer(ServerState(**kwargs)).start())  # type: ignore[arg-type]
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def test_every_failure_is_listed_interleaved_counted_and_explained(mixed_report):
    rows = page_rows(mixed_report["out"] / "index.html")
    doc = mixed_report["doc"]
    (model,) = doc["failed_counts"]
    by_bench = doc["failed_by_benchmark"][model]
    n_chartqa = sum(by_bench["chartqa"].values())
    assert n_chartqa >= 40 and sum(by_bench["hakusho"].values()) > 0
    assert len(rows) == doc["failed_counts"][model]  # every failure listed (was: the first 300 per model)
    # Interleaved: the first rows alternate between the benchmarks instead of one benchmark filling the page.
    assert {r["bench"] for r in rows[:4]} == {"chartqa", "hakusho"}
    # Never an empty reason; the numeric metric's failures say which values were compared.
    assert all(r["reason"].strip() for r in rows)
    numeric = [r for r in rows if r["bench"] == "chartqa" and r["response"] == "103"
               and r["reference"].replace(".", "").isdigit()]
    assert numeric and all("'103'" in r["reason"] and repr(r["reference"]) in r["reason"] for r in numeric)
    html = (mixed_report["out"] / "index.html").read_text(encoding="utf-8")
    assert 'id="failed-counts"' in html and f'data-bench="chartqa">{n_chartqa}' in html


def test_max_failed_caps_the_list_but_not_the_counts(mixed_report, tmp_path):
    out = tmp_path / "r"
    root = mixed_report["out"].parent
    doc = run_cli_json("report", str(root / "c"), str(root / "h"), "--out", str(out), "--bootstrap", "200",
                       "--max-failed", "6", "--no-plots")
    rows = page_rows(out / "index.html")
    assert len(rows) == 6 and {r["bench"] for r in rows} == {"chartqa", "hakusho"}
    assert doc["failed_counts"] == mixed_report["doc"]["failed_counts"]
    assert "(6 listed)" in (out / "index.html").read_text(encoding="utf-8")


def test_category_plots_are_drawn_by_default_with_small_categories_greyed(mixed_report):
    plots = {p["name"]: p for p in mixed_report["doc"]["plots"]}
    assert {"hakusho_image_type_direct", "hakusho_flag_direct"} <= set(plots)
    caption = plots["hakusho_image_type_direct"]["caption"]
    # 44 items, none in a category of 50: all drawn grey and named once, in the caption (not also in the figure).
    assert caption.count("Grey: fewer than 50 items") == 1
    assert "Bar (n=24)" in caption and "Line (n=14)" in caption and "Pie (n=6)" in caption
    assert "or more items" not in caption
