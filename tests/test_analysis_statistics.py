"""`zuhyo analyze stats`: counts and shares of image types, flags, topics/sources and CCV attributes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, run_cli_json
from PIL import Image

from zuhyo.analysis.statistics import dataset_statistics, write_statistics
from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark


def _png(path: Path, color: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (24, 16), color).save(path)


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def hakusho_like(tmp_path: Path) -> Path:
    """6 questions over 5 images (q1 and q2 share a chart), with types, flags and sources."""
    for i in range(5):
        _png(tmp_path / "img" / f"{i}.png", (40 * i, 10, 200 - 30 * i))
    rows = [
        {"id": "q1", "benchmark": "hk", "question": "?", "answers": ["1"], "image": {"path": "img/0.png"},
         "image_type": "Bar", "flags": ["Multi-hop", "Global"],
         "hakusho": {"white_paper": "情報通信白書", "topic_group": "Infrastructure"},
         "source": {"publisher": "総務省"}},
        {"id": "q2", "benchmark": "hk", "question": "?", "answers": ["2"], "image": {"path": "img/0.png"},
         "image_type": "Bar", "flags": ["Multi-hop"],
         "hakusho": {"white_paper": "情報通信白書", "topic_group": "Infrastructure"},
         "source": {"publisher": "総務省"}},
        {"id": "q3", "benchmark": "hk", "question": "?", "answers": ["3"], "image": {"path": "img/1.png"},
         "image_type": "Table", "flags": ["Counting", "Counting"],
         "hakusho": {"white_paper": "防衛白書", "topic_group": "Security"}, "source": {"publisher": "防衛省"}},
        {"id": "q4", "benchmark": "hk", "question": "?", "answers": ["4"], "image": {"path": "img/2.png"},
         "image_type": "Line", "source": {"title": "人口推計", "publisher": "総務省統計局"}},
        {"id": "q5", "benchmark": "hk", "question": "?", "answers": ["5"], "image": {"path": "img/3.png"},
         "flags": ["Visual"], "hakusho": {"white_paper": "防衛白書", "topic_group": "Security"},
         "source": {"publisher": "防衛省"}},
        {"id": "q6", "benchmark": "hk", "question": "?", "answers": ["6"], "image": {"path": "img/4.png"},
         "image_type": "Bar", "flags": ["Global"]},
    ]
    return _write_jsonl(tmp_path / "hk.jsonl", rows)


def _astro(qid: str, image: str, ccv: list[int] | None) -> dict:
    astro = {"qa_type": "FQA", "category": "Inference"}
    if ccv is not None:
        astro["ccv"] = ccv
    return {"id": qid, "benchmark": "astro", "question": "?", "answers": ["x"], "image": {"path": image},
            "astro": astro}


def test_tables_count_questions_images_and_shares(hakusho_like: Path) -> None:
    result = load_benchmark("local", BenchmarkSource(path=hakusho_like))
    stats = dataset_statistics(result)
    assert (stats.questions, stats.images, stats.questions_without_image) == (6, 5, 0)

    types = {r["image type"]: r for r in stats.table("image_types").to_records()}
    assert len(types) == 11 + 1 + 1  # all classes, (not annotated), Total
    assert types["Bar"]["questions"] == 3 and types["Bar"]["images"] == 2  # q1/q2 share one chart
    assert types["Bar"]["share of questions"] == pytest.approx(0.5)
    assert types["Bar"]["share of images"] == pytest.approx(2 / 5)
    assert types["Pie"]["questions"] == 0
    assert types["(not annotated)"]["questions"] == 1
    assert types["Total"]["questions"] == 6 and types["Total"]["images"] == 5

    flags = {r["flag"]: r for r in stats.table("flags").to_records()}
    assert flags["Multi-hop"]["questions"] == 2
    assert flags["Global"]["questions"] == 2 and flags["Global"]["share of questions"] == pytest.approx(2 / 6)
    assert flags["Counting"]["questions"] == 1  # listed twice on q3, counted once
    assert flags["(no flag)"]["questions"] == 1

    topics = {r["topic group"]: r for r in stats.table("topic_groups").to_records()}
    assert topics["Infrastructure"]["questions"] == 2 and topics["Infrastructure"]["images"] == 1
    assert topics["Security"]["questions"] == 2 and topics["Security"]["sources"] == 1
    assert topics["(unknown)"]["questions"] == 2
    assert topics["Economy"]["questions"] == 0

    sources = [(r["topic group"], r["source"], r["publisher"], r["questions"])
               for r in stats.table("sources").to_records()]
    assert sources[:2] == [("Security", "防衛白書", "防衛省", 2), ("Infrastructure", "情報通信白書", "総務省", 2)]
    assert ("(unknown)", "人口推計", "総務省統計局", 1) in sources
    assert ("(unknown)", "(unknown)", "(unknown)", 1) in sources
    assert "ccv_attributes" not in {t.key for t in stats.tables}


def test_ccv_proportions_count_each_chart_once(tmp_path: Path) -> None:
    for i in range(4):
        _png(tmp_path / f"c{i}.png", (60 * i, 0, 0))
    a = [1, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    b = [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    c = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    rows = [_astro("a1", "c0.png", a), _astro("a2", "c0.png", a), _astro("a3", "c0.png", a),  # one chart, 3 QAs
            _astro("b1", "c1.png", b), _astro("c1", "c2.png", c), _astro("n1", "c3.png", None)]
    result = load_benchmark("local", BenchmarkSource(path=_write_jsonl(tmp_path / "a.jsonl", rows)))
    names = [f"name{i}" for i in range(10)]
    stats = dataset_statistics(result, ccv_names=names)
    attrs = stats.table("ccv_attributes").to_records()
    assert [r["attribute"] for r in attrs] == names
    assert [r["charts"] for r in attrs] == [2, 1, 1, 0, 0, 0, 0, 0, 0, 1]
    assert attrs[0]["share of charts"] == pytest.approx(2 / 3)  # by question it would be 4/5
    assert attrs[9]["share of charts"] == pytest.approx(1 / 3)
    scores = {r["score"]: r["charts"] for r in stats.table("ccv_scores").to_records()}
    assert scores[0] == 1 and scores[2] == 1 and scores[3] == 1 and sum(scores.values()) == 3
    assert not stats.warnings


def test_ccv_conflict_is_reported_not_counted(tmp_path: Path) -> None:
    _png(tmp_path / "c.png", (1, 2, 3))
    _png(tmp_path / "d.png", (3, 2, 1))
    rows = [_astro("x1", "c.png", [1] + [0] * 9), _astro("x2", "c.png", [0] * 10), _astro("y", "d.png", [1] * 10)]
    result = load_benchmark("local", BenchmarkSource(path=_write_jsonl(tmp_path / "a.jsonl", rows)))
    stats = dataset_statistics(result)
    assert len(stats.warnings) == 1 and "x1" in stats.warnings[0] and "x2" in stats.warnings[0]
    assert [r["charts"] for r in stats.table("ccv_attributes").to_records()] == [1] * 10
    with pytest.raises(ValueError, match="expected 10"):
        dataset_statistics(result, ccv_names=["a", "b"])


def test_markdown_and_csv_files(hakusho_like: Path, tmp_path: Path) -> None:
    stats = dataset_statistics(load_benchmark("local", BenchmarkSource(path=hakusho_like)))
    written = write_statistics(stats, tmp_path / "out")
    names = {p.name for p in written}
    assert {"image_types.md", "image_types.csv", "flags.csv", "sources.md", "statistics.md",
            "statistics.json"} <= names
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "flags.csv").read_text(encoding="utf-8"))))
    global_row = next(r for r in rows if r["flag"] == "Global")
    assert global_row["questions"] == "2" and float(global_row["share of questions"]) == pytest.approx(1 / 3, 1e-5)
    md = (tmp_path / "out" / "image_types.md").read_text(encoding="utf-8")
    assert "| Bar | 3 | 50.0 % | 2 | 40.0 % |" in md
    assert json.loads((tmp_path / "out" / "statistics.json").read_text())["questions"] == 6


def test_cli_json_and_human_output(hakusho_like: Path, tmp_path: Path) -> None:
    doc = run_cli_json("analyze", "stats", "local", "--path", str(hakusho_like), "--out", str(tmp_path / "t"))
    assert doc["questions"] == 6 and doc["images"] == 5
    bar = next(r for r in doc["tables"]["image_types"]["rows"] if r["image type"] == "Bar")
    assert bar["questions"] == 3
    assert (tmp_path / "t" / "topic_groups.csv").is_file() and len(doc["files"]) >= 10
    proc = run_cli("analyze", "stats", "local", "--path", str(hakusho_like))
    assert "Difficulty flags" in proc.stdout and "Multi-hop" in proc.stdout  # results: stdout


def test_cli_bad_ccv_names_and_missing_path(tmp_path: Path, hakusho_like: Path) -> None:
    proc = run_cli("analyze", "stats", "local", "--path", str(hakusho_like), "--ccv-names", "a,b", check=False)
    assert proc.returncode != 0 and "10 comma-separated" in proc.stderr
    proc = run_cli("analyze", "stats", "local", "--path", str(tmp_path / "nope.jsonl"), check=False)
    assert proc.returncode != 0 and "does not exist" in proc.stderr


@pytest.mark.parametrize("name", ["sample-ja", "sample-astro"])
def test_bundled_samples(name: str) -> None:
    data = ROOT / "src" / "zuhyo" / "benchmarks" / "data" / name / "samples.jsonl"
    if not data.is_file():
        pytest.skip(f"bundled benchmark data not built yet: {data}")
    result = load_benchmark(name)
    stats = dataset_statistics(result)
    n = len(result.samples)
    assert stats.questions == n > 0
    types = {r["image type"]: r["questions"] for r in stats.table("image_types").to_records()}
    assert types["Total"] == n
    assert sum(v for k, v in types.items() if k != "Total") == n
    topics = stats.table("topic_groups").to_records()
    assert sum(r["questions"] for r in topics) == n
    if any(s.astro is not None and s.astro.ccv is not None for s in result.samples):
        charts = {s.image.sha256 or s.image.path for s in result.samples
                  if s.astro is not None and s.astro.ccv is not None and s.image is not None}
        assert sum(r["charts"] for r in stats.table("ccv_scores").to_records()) <= len(charts)
