"""`astrochart` adapter: JSON/JSONL/CSV/Parquet rows, field mapping, DomainCQA category spellings, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zuhyo.benchmarks import BenchmarkSource, load_benchmark
from zuhyo.benchmarks.astrochart import parse_aspect, parse_category
from zuhyo.errors import DataError
from zuhyo.evaluate.judges import build_judge
from zuhyo.evaluate.judges.astro_routing import scoring_kind
from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.schema import AstroAspect, AstroCategory, AstroQAType

FIX = Path(__file__).parent / "fixtures" / "adapters" / "astrochart"
CSV_MAPPING = {"field.id": "qid", "field.image": "figure", "field.question": "q", "field.answer": "a",
               "field.category": "cat", "field.aspect": "subcat", "field.answer_kind": "kind", "field.axis_min": "ymin",
               "field.axis_max": "ymax", "field.log_scale": "log", "field.key_points": "points"}


def _load(path: Path, strict: bool = False, **options: str):
    return load_benchmark("astrochart", BenchmarkSource(path=path, options=options), strict=strict)


def test_json_natural_layout() -> None:
    result = _load(FIX / "astrochart_qa.json")
    assert result.errors == [] and result.missing_images() == []
    by = {s.id: s for s in result.samples}
    a1 = by["a-001"].astro
    assert (a1.qa_type, a1.category, a1.aspect, a1.answer_kind) == (AstroQAType.FQA, AstroCategory.DATA,
                                                                     AstroAspect.POINT, "numeric_retrieval")
    assert (a1.axis_min, a1.axis_max, a1.log_scale) == (0.0, 40.0, False)
    a2 = by["a-002"].astro  # "visual color": category and aspect from one spelling
    assert (a2.category, a2.aspect, a2.answer_kind) == (AstroCategory.VISUAL, AstroAspect.COLOR, None)
    assert scoring_kind(by["a-002"]) == "open"  # no answer_kind: derived from the category when scored
    assert by["a-003"].astro.key_points == ["the middle bar is the highest", "the last bar is the lowest"]
    a4 = by["a-004"].astro  # "KB Inference" and an AQA type derived from the category
    assert (a4.qa_type, a4.category) == (AstroQAType.AQA, AstroCategory.KB_INFERENCE)
    assert by["a-001"].image.resolve_path(result.base_dir) == FIX / "bar_chart.png"


def test_csv_with_field_mapping() -> None:
    result = _load(FIX / "astrochart_qa.csv", **CSV_MAPPING)
    assert result.errors == []
    by = {s.id: s for s in result.samples}
    assert by["c-001"].astro.answer_kind == "numeric_exact" and by["c-001"].astro.aspect is AstroAspect.CALCULATION
    c2 = by["c-002"].astro
    assert (c2.category, c2.aspect, c2.answer_kind, c2.log_scale, c2.axis_min, c2.axis_max) == (
        AstroCategory.DATA, AstroAspect.POINT, "numeric_retrieval", True, 1.0, 100.0)
    assert by["c-003"].astro.key_points == ["no monotonic trend", "peak in the middle"]
    assert by["c-004"].astro.category is AstroCategory.KB_SUMMARY and by["c-004"].astro.qa_type is AstroQAType.AQA
    # Without the mapping the default column names are absent: every row is reported, none silently loaded.
    unmapped = _load(FIX / "astrochart_qa.csv")
    assert unmapped.samples == [] and {e.field for e in unmapped.errors} == {"question"} and len(unmapped.errors) == 4


def test_jsonl_and_folder(tmp_path: Path) -> None:
    result = _load(FIX / "astrochart_qa.jsonl")
    assert result.errors == []
    j1, j2 = result.samples
    assert j1.answers == ["3"] and j2.image.url == "https://example.org/fig.png"
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("astrochart_qa.json", "astrochart_qa.jsonl", "bar_chart.png"):
        shutil.copyfile(FIX / name, folder / name)
    both = _load(folder)
    assert len(both.samples) == 6 and both.errors == [] and both.missing_images() == []


def test_parquet_with_embedded_bytes_and_generated_ids(tmp_path: Path) -> None:
    png = (FIX / "bar_chart.png").read_bytes()
    table = pa.Table.from_pylist([
        {"image": png, "question": "Q1", "answer": "1.5", "category": "Data", "aspect": "data interval",
         "ccv": "0101000011"},
        {"image": png, "question": "Q2", "answer": "x", "category": "kb-summary", "ccv": None},
    ])
    pq.write_table(table, tmp_path / "qa.parquet")
    result = _load(tmp_path / "qa.parquet")
    assert result.errors == []
    assert [s.id for s in result.samples] == ["0000", "0001"]
    assert result.samples[0].astro.aspect is AstroAspect.INTERVAL
    assert result.samples[0].astro.ccv == [0, 1, 0, 1, 0, 0, 0, 0, 1, 1]
    assert result.samples[0].image.data == png


def test_bad_rows_name_row_and_source_column(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "question": "Q", "answer": "A", "category": "Inference"},
        {"id": "b1", "question": "Q", "answer": "A", "category": "Astrology"},
        {"id": "b2", "question": "Q", "answer": "A", "category": "Visual", "aspect": "Point"},
        {"id": "b3", "question": "Q", "answer": "A", "category": "Data", "aspect": "Flavour"},
        {"id": "b4", "question": "Q", "answer": "A", "category": "Summary", "qa_type": "AQA"},
        {"id": "b5", "question": "Q", "answer": "1", "category": "Data", "aspect": "Point",
         "answer_kind": "numeric_retrieval"},
        {"id": "b6", "question": "Q", "answer": "1", "category": "Data", "axis_min": "low"},
        {"id": "b7", "question": "Q", "category": "Data"},
        {"id": "b8", "question": 5, "answer": "A", "category": "Data"},
        {"id": "b9", "question": "Q", "answer": "A", "category": "Data", "log_scale": "maybe"},
        {"id": "b10", "question": "Q", "answer": "A", "category": "data point", "aspect": "Color"},
        {"id": "b11", "question": "Q", "answer": "A", "category": "Data", "answer_kind": "vibes"},
        {"id": "b12", "question": "Q", "answer": "A", "category": "Data", "ccv": [1, 0]},
        {"id": "b13", "question": "Q", "answer": "A", "category": "Data", "image": "not base64 at all!"},
        {"id": "ok", "question": "Q again", "answer": "A", "category": "Summary"},
        "junk",
    ]
    (tmp_path / "qa.json").write_text(json.dumps(rows), encoding="utf-8")
    result = _load(tmp_path / "qa.json", **{"field.category": "category"})
    assert [s.id for s in result.samples] == ["ok"]
    got = [(e.row, e.field) for e in result.errors]
    assert got == [("qa.json[1]", "category"), ("qa.json[2]", "aspect"), ("qa.json[3]", "aspect"),
                   ("qa.json[4]", "qa_type"), ("qa.json[5]", "axis_min"), ("qa.json[6]", "axis_min"),
                   ("qa.json[7]", "answer"), ("qa.json[8]", "question"), ("qa.json[9]", "log_scale"),
                   ("qa.json[10]", "aspect"), ("qa.json[11]", "answer_kind"), ("qa.json[12]", "ccv"),
                   ("qa.json[13]", "image"), ("qa.json[15]", None), ("ok", "id")]
    assert "unknown category 'Astrology'" in result.errors[0].message
    assert "does not belong to category Visual" in result.errors[1].message
    # Errors name the *source* column when the mapping renames it.
    (tmp_path / "qa2.json").write_text(json.dumps([{"Q": "q", "A": "a", "Kategorie": "Nope"}]), encoding="utf-8")
    err = _load(tmp_path / "qa2.json", **{"field.question": "Q", "field.answer": "A",
                                          "field.category": "Kategorie"}).errors[0]
    assert (err.row, err.field) == ("qa2.json[0]", "Kategorie")
    with pytest.raises(DataError, match=r"astrochart row qa.json\[1\] field 'category': unknown category"):
        _load(tmp_path / "qa.json", strict=True)


def test_bad_files(tmp_path: Path) -> None:
    f = tmp_path / "qa.csv"
    f.write_bytes("id,question,answer,category\nx,Qué?,A,Data\n".encode("cp1252"))
    result = _load(f)
    assert result.samples == [] and "not UTF-8" in result.errors[0].message and result.errors[0].row == "qa.csv"
    f.write_text("id,question,answer,category\nx,Q,A,Data,extra\ny,Q,A,Data\n", encoding="utf-8")
    result = _load(f)
    assert [s.id for s in result.samples] == ["y"]
    assert (result.errors[0].row, "cells for 4 header columns" in result.errors[0].message) == ("qa.csv line 2", True)
    j = tmp_path / "qa.json"
    j.write_text('[{"id": "x",', encoding="utf-8")
    assert "not valid JSON" in _load(j).errors[0].message
    jl = tmp_path / "qa.jsonl"
    jl.write_bytes(b'{"question": "Q", "answer": "A", "category": "Data"}\n[1,\n')
    result = _load(jl)
    assert len(result.samples) == 1 and result.errors[0].row == "qa.jsonl line 2"


def test_option_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown field 'questoin'"):
        _load(FIX / "astrochart_qa.json", **{"field.questoin": "q"})
    with pytest.raises(DataError, match="unknown option 'mapping'"):
        _load(FIX / "astrochart_qa.json", mapping="x")
    (tmp_path / "notes.txt").write_text("nothing here", encoding="utf-8")
    with pytest.raises(DataError, match="no .parquet/.json/.jsonl/.csv files"):
        _load(tmp_path)


def test_spellings() -> None:
    assert parse_category("KB Inference") == (AstroCategory.KB_INFERENCE, None)
    assert parse_category("kb-inference") == (AstroCategory.KB_INFERENCE, None)
    assert parse_category("KB_Summary") == (AstroCategory.KB_SUMMARY, None)
    assert parse_category("Knowledge-based summary") == (AstroCategory.KB_SUMMARY, None)
    assert parse_category("data point") == (AstroCategory.DATA, AstroAspect.POINT)
    assert parse_category("Visual/Colour") == (AstroCategory.VISUAL, AstroAspect.COLOR)
    assert parse_aspect("Data Calculation") is AstroAspect.CALCULATION
    assert parse_aspect("layout") is AstroAspect.LAYOUT
    with pytest.raises(ValueError, match="unknown aspect"):
        parse_aspect("Point cloud")
    with pytest.raises(ValueError, match="unknown category"):
        parse_category("KB")


async def test_rows_without_answer_kind_are_routed_by_category(tmp_path: Path) -> None:
    """DomainCQA §5.1 / Appendix G: Data/Point, Data/Interval → Algorithm 3; Data/Calculation and counts → exact
    match; the rest → the key-point judge. Before, a missing answer_kind column made every row open (unscored
    without key points)."""
    rows = [
        {"id": "p", "question": "What velocity (km/s) is reached at 300 Mpc?", "answer": "21390", "category": "Data",
         "aspect": "Point", "axis_min": 0, "axis_max": 32000},
        {"id": "i", "question": "Over which range of radii (kpc) is the curve flat?", "answer": "10-30",
         "category": "Data", "aspect": "Interval", "axis_min": 0, "axis_max": 50},
        {"id": "c", "question": "What is the difference between the two peaks?", "answer": "1.5", "category": "Data",
         "aspect": "Calculation"},
        {"id": "n", "question": "How many curves are drawn?", "answer": "4", "category": "Visual", "aspect": "Style"},
        {"id": "v", "question": "What colour is the 5800 K curve?", "answer": "blue", "category": "Visual",
         "aspect": "Color"},
        {"id": "s", "question": "Summarise the figure.", "answer": "Flat rotation curve.", "category": "Summary"},
        {"id": "x", "question": "What flux is reached?", "answer": "3", "category": "Data", "aspect": "Point"},
    ]
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = _load(tmp_path / "qa.jsonl")
    assert result.errors == []
    by = {s.id: s for s in result.samples}
    assert {k: scoring_kind(s) for k, s in by.items()} == {
        "p": "numeric_retrieval", "i": "numeric_retrieval", "c": "numeric_exact", "n": "numeric_exact", "v": "open",
        "s": "open", "x": "numeric_retrieval"}
    judge = build_judge("astrochart")
    answers = {"p": "At 300 Mpc the velocity is about 21,000 km/s.", "i": "from 10 to 30 kpc", "c": "Answer: 1.5",
               "n": "There are 4 curves.", "x": "3"}
    got = {k: await judge.judge(JudgeInput(question=by[k].question, references=tuple(by[k].answers),
                                           response=r, sample=by[k])) for k, r in answers.items()}
    assert got["p"].decided_by == "astro_numeric" and got["p"].score == pytest.approx(1 - 390 / 32000)
    assert got["i"].score == 1.0 and got["c"].score == 1.0 and got["n"].score == 1.0
    assert got["c"].decided_by == "astro_exact" and got["n"].decided_by == "astro_exact"
    assert got["x"].verdict == "unscored" and "astrochart/x" in got["x"].reason and "axis_min" in got["x"].reason
