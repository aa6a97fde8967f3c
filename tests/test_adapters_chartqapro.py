"""`chartqapro` adapter on rows built in the published shape (JSON fixture, parquet with raw image bytes)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zuhyo.benchmarks import BenchmarkSource, load_benchmark
from zuhyo.errors import DataError

FIX = Path(__file__).parent / "fixtures" / "adapters" / "chartqapro"
PNG = (FIX / "bar_chart.png").read_bytes()
ROWS = json.loads((FIX / "chartqapro_rows.json").read_text(encoding="utf-8"))


def _load(source: BenchmarkSource, strict: bool = False):
    return load_benchmark("chartqapro", source, strict=strict)


def _parquet(path: Path, rows: list[dict]) -> Path:
    """ChartQAPro's HF parquet shape: list<string> Question/Answer/Year, string Question Type, binary image."""
    schema = pa.schema([("Question", pa.list_(pa.string())), ("Answer", pa.list_(pa.string())),
                        ("Question Type", pa.string()), ("Year", pa.list_(pa.string())), ("image", pa.binary()),
                        ("Paragraph", pa.string())])
    table = pa.Table.from_pylist(rows, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def _check_fixture_samples(samples) -> None:
    assert [s.id for s in samples] == ["0000", "0001", "0002"]
    single, conv, fact = samples
    assert (single.question, single.answers, single.context) == ("Which bar is the tallest?", ["Orange"], [])
    assert single.chartqapro.question_type == "Factoid" and single.chartqapro.year_flags == ["NO"]
    assert single.source is None  # an empty Paragraph is no context
    # Multi-turn: the last turn is graded, the earlier ones are context in order.
    assert conv.question.startswith("In which year") and conv.answers == ["2021"]
    assert [(t.question, t.answer) for t in conv.context] == [("How many bars are there?", "3"),
                                                              ("Which one is the shortest?", "Green")]
    assert conv.chartqapro.year_flags == ["NO", "NO", "YES"]
    assert conv.source.context == "Three measurements taken one year apart."
    assert fact.chartqapro.question_type == "Fact Checking"


def test_json_rows_with_base64_path_and_data_uri_images() -> None:
    result = _load(BenchmarkSource(path=FIX / "chartqapro_rows.json"))
    assert result.errors == [] and result.missing_images() == []
    _check_fixture_samples(result.samples)
    single, conv, fact = result.samples
    assert single.image.data == PNG and single.image.mime == "image/png" and fact.image.data == PNG
    assert conv.image.resolve_path(result.base_dir).read_bytes() == PNG


def test_parquet_with_raw_image_bytes(tmp_path: Path) -> None:
    rows = [{**r, "image": PNG, "Paragraph": r.get("Paragraph")} for r in ROWS]
    f = _parquet(tmp_path / "test.parquet", rows)
    result = _load(BenchmarkSource(path=f))
    assert result.errors == []
    _check_fixture_samples(result.samples)
    assert all(s.image.data == PNG for s in result.samples)


def test_hf_id_as_local_folder_uses_datasets_and_split(tmp_path: Path) -> None:
    rows = [{**r, "image": PNG, "Paragraph": r.get("Paragraph")} for r in ROWS]
    _parquet(tmp_path / "repo" / "data" / "test-00000-of-00001.parquet", rows)
    result = _load(BenchmarkSource(hf_id=str(tmp_path / "repo"), cache_dir=tmp_path / "cache"))
    assert result.errors == []
    _check_fixture_samples(result.samples)
    assert {s.split for s in result.samples} == {"test"}
    with pytest.raises(DataError, match="no split 'validation'; splits: test"):
        _load(BenchmarkSource(hf_id=str(tmp_path / "repo"), split="validation", cache_dir=tmp_path / "cache"))


def test_save_to_disk_folder(tmp_path: Path) -> None:
    from datasets import Dataset, DatasetDict

    rows = [{**r, "image": PNG, "Paragraph": r.get("Paragraph") or ""} for r in ROWS]
    DatasetDict({"test": Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "disk"))
    result = _load(BenchmarkSource(path=tmp_path / "disk"))
    assert result.errors == []
    _check_fixture_samples(result.samples)


def test_unreachable_hf_id_is_a_clear_error(tmp_path: Path) -> None:
    # Offline mode must be set before huggingface_hub is imported, hence a fresh interpreter (and no network use).
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    out = subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", "bench", "info", "chartqapro",
                          "--hf", "nobody/NoSuchChartQAPro", "--cache-dir", str(tmp_path / "cache")],
                         capture_output=True, text=True, timeout=120, check=False, env=env)
    assert out.returncode == 1
    assert "cannot load dataset 'nobody/NoSuchChartQAPro'" in out.stderr


def test_bad_rows_name_row_and_field(tmp_path: Path) -> None:
    good = ROWS[0]
    bad_rows = [
        good,
        {k: v for k, v in good.items() if k != "Answer"},                     # missing field
        {**good, "Question": ["a", "b"]},                                      # 2 questions, 1 answer
        {**good, "Question Type": "Trivia"},                                   # unknown type
        {**good, "Year": ["MAYBE"]},                                           # bad year flag
        {**good, "Answer": [3]},                                               # wrong element type
        {**good, "image": base64.b64encode(b"GIF0 not really").decode()},     # not an image
        {**good, "image": 42},                                                 # wrong type
        ["not", "an", "object"],
        {**good, "Question": {"q": 1}},                                        # wrong container type
    ]
    f = tmp_path / "rows.json"
    f.write_text(json.dumps(bad_rows), encoding="utf-8")
    result = _load(BenchmarkSource(path=f))
    assert [s.id for s in result.samples] == ["0000"]
    got = [(e.row, e.field) for e in result.errors]
    assert got == [("rows.json[1]", "Answer"), ("rows.json[2]", "Answer"), ("rows.json[3]", "Question Type"),
                   ("rows.json[4]", "Year"), ("rows.json[5]", "Answer[0]"), ("rows.json[6]", "image"),
                   ("rows.json[7]", "image"), ("rows.json[8]", None), ("rows.json[9]", "Question")]
    assert all(e.dataset == "chartqapro" for e in result.errors)
    with pytest.raises(DataError, match=r"chartqapro row rows.json\[1\] field 'Answer': missing field"):
        _load(BenchmarkSource(path=f), strict=True)


def test_bad_files(tmp_path: Path) -> None:
    f = tmp_path / "rows.json"
    f.write_bytes(json.dumps(ROWS[:1], ensure_ascii=False).replace("tallest", "höchste").encode("latin-1"))
    result = _load(BenchmarkSource(path=f))
    assert result.samples == [] and "not UTF-8" in result.errors[0].message
    f.write_text("[{", encoding="utf-8")
    assert "not valid JSON" in _load(BenchmarkSource(path=f)).errors[0].message
    p = tmp_path / "broken.parquet"
    p.write_bytes(b"PAR1 this is not parquet")
    result = _load(BenchmarkSource(path=p))
    assert result.errors[0].row == "broken.parquet" and "not a readable Parquet file" in result.errors[0].message
    jl = tmp_path / "rows.jsonl"
    jl.write_bytes(json.dumps(ROWS[0]).encode() + b"\n{oops\n" + b'{"Question": ["\xff"]}\n')
    result = _load(BenchmarkSource(path=jl))
    assert len(result.samples) == 1
    assert [(e.row, e.message.split(" ")[0]) for e in result.errors] == [("rows.jsonl line 2", "not"),
                                                                        ("rows.jsonl line 3", "not")]
    assert "UTF-8" in result.errors[1].message


def test_duplicate_ids_and_unknown_option(tmp_path: Path) -> None:
    f = tmp_path / "rows.json"
    f.write_text(json.dumps([{**ROWS[0], "id": "x"}, {**ROWS[2], "id": "x"}]), encoding="utf-8")
    result = _load(BenchmarkSource(path=f))
    assert [s.id for s in result.samples] == ["x"] and result.errors[0].field == "id"
    with pytest.raises(DataError, match="unknown option 'images'"):
        _load(BenchmarkSource(path=f, options={"images": "x"}))


def test_default_source_is_the_hf_dataset() -> None:
    from zuhyo.benchmarks import BENCHMARKS, ensure_registered

    ensure_registered()
    default = BENCHMARKS.get("chartqapro").default_source()
    assert (default.hf_id, default.split) == ("ahmed-masry/ChartQAPro", "test")
