"""`chartqa` adapter on the real ChartQA test files in ../shared/data/chartqa, plus bad-input paths."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from zuhyo.benchmarks import BenchmarkSource, load_benchmark
from zuhyo.errors import DataError

# ../shared/data from the project root (see /work/shared/data/SOURCES.md).
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chartqa"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="shared ChartQA data not present")


def _load(path: Path, strict: bool = False, split: str | None = None, **options: str):
    return load_benchmark("chartqa", BenchmarkSource(path=path, split=split, options=options), strict=strict)


def test_original_layout_loads_61_samples_with_every_image() -> None:
    result = _load(DATA)
    assert len(result.samples) == 61
    assert result.errors == []
    assert result.missing_images() == []
    splits = [s.split for s in result.samples]
    assert splits.count("human") == 46 and splits.count("augmented") == 15
    first = result.samples[0]
    raw = json.loads((DATA / "test" / "test_human.json").read_text(encoding="utf-8"))[0]
    assert first.id == "human/0000"
    assert (first.question, first.answer) == (raw["query"], raw["label"])
    assert first.image is not None
    assert first.image.resolve_path(result.base_dir) == DATA / "test" / "png" / raw["imgname"]
    assert first.image_type is None
    assert len({s.id for s in result.samples}) == 61


def test_ids_are_stable_and_match_row_positions() -> None:
    a, b = _load(DATA), _load(DATA / "test")
    assert [s.id for s in a.samples] == [s.id for s in b.samples]
    aug = json.loads((DATA / "test" / "test_augmented.json").read_text(encoding="utf-8"))
    by_id = {s.id: s for s in a.samples}
    assert by_id["augmented/0007"].question == aug[7]["query"]


def test_split_filter_and_bad_split() -> None:
    human = _load(DATA, split="human")
    assert len(human.samples) == 46 and {s.split for s in human.samples} == {"human"}
    with pytest.raises(DataError, match="--split must be one of"):
        _load(DATA, split="validation")


def test_single_file_with_images_option(tmp_path: Path) -> None:
    f = tmp_path / "anything.json"
    shutil.copyfile(DATA / "test" / "test_augmented.json", f)
    result = _load(f, images=str(DATA / "test" / "png"))
    assert len(result.samples) == 15 and result.missing_images() == []
    assert result.samples[0].id == "anything/0000"
    # Without the option the images are looked for beside the file, where there are none: reported, not dropped.
    assert len(_load(f).missing_images()) == 15


def test_chartqa_split_annotations_load_all_rows_and_report_missing_images() -> None:
    result = _load(DATA, annotations="split")
    assert len(result.samples) == 2373
    assert result.errors == []
    missing = result.missing_images()
    present = [s for s in result.samples if (result.base_dir / s.image.path).is_file()]
    assert len(missing) == 2373 - len(present) and 0 < len(present) < 2373
    assert all(e.field == "image" and "not found" in e.message for e in missing)
    s = next(x for x in result.samples if x.id.startswith("complex_test_human_simple/"))
    assert s.split == "human"
    assert s.metadata["chart_complexity"] == "complex" and s.metadata["question_complexity"] == "simple"
    # Pointing --path at the folder or at one file gives the same rows.
    assert [x.id for x in _load(DATA / "split_annotations").samples] == [x.id for x in result.samples]
    one = _load(DATA / "split_annotations" / "simple_test_human_simple.json")
    assert len(one.samples) == 149 and one.base_dir == DATA / "test" / "png"


def _write(tmp_path: Path, rows: object | bytes) -> Path:
    folder = tmp_path / "test"
    folder.mkdir(exist_ok=True)
    f = folder / "test_human.json"
    f.write_bytes(rows if isinstance(rows, bytes) else json.dumps(rows).encode("utf-8"))
    return tmp_path


def test_bad_rows_are_reported_with_row_and_field(tmp_path: Path) -> None:
    rows = [
        {"imgname": "a.png", "query": "Q ok?", "label": "1"},
        {"imgname": "a.png", "label": "2"},                      # missing query
        {"imgname": "a.png", "query": "Q?", "label": ["x"]},     # wrong type
        "not an object",                                         # malformed row
        {"imgname": "../../etc/passwd", "query": "Q?", "label": "3"},  # image outside the folder
        {"imgname": "a.png", "query": "  ", "label": "4"},       # empty question
        {"imgname": "a.png", "query": "Numeric label?", "label": 12.5},
    ]
    result = _load(_write(tmp_path, rows))
    assert [s.id for s in result.samples] == ["human/0000", "human/0006"]
    assert result.samples[1].answer == "12.5"
    got = {(e.row, e.field) for e in result.errors}
    assert got == {("test_human.json[1]", "query"), ("test_human.json[2]", "label"), ("test_human.json[3]", None),
                   ("test_human.json[4]", "imgname"), ("test_human.json[5]", "query")}
    assert all(e.dataset == "chartqa" for e in result.errors)
    with pytest.raises(DataError, match=r"chartqa row test_human.json\[1\] field 'query': missing field"):
        _load(tmp_path, strict=True)


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    result = _load(_write(tmp_path, '[{"imgname": "a.png", "query": "Qé", "label": "1"}]'.encode("latin-1")))
    assert len(result.errors) == 1 and "not UTF-8" in result.errors[0].message
    assert result.errors[0].row == "test_human.json"
    result = _load(_write(tmp_path, b'[{"imgname": "a.png",'))
    assert "not valid JSON" in result.errors[0].message and result.samples == []
    result = _load(_write(tmp_path, {"imgname": "a.png"}))
    assert "expected a JSON list" in result.errors[0].message
    with pytest.raises(DataError, match="not UTF-8"):
        _load(_write(tmp_path, b'["\xff"]'), strict=True)


def test_layout_and_option_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="neither test/test_human.json"):
        _load(tmp_path)
    with pytest.raises(DataError, match="unknown option 'image'"):
        _load(DATA, image="x")
    with pytest.raises(DataError, match="annotations must be"):
        _load(DATA, annotations="robust")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the `zuhyo` command line in a fresh interpreter (what the console script does)."""
    return subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_cli_bench_info_prints_61_samples() -> None:
    out = run_cli("bench", "info", "chartqa", "--path", str(DATA), "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["samples"] == 61 and info["images_missing"] == 0 and info["errors"] == 0
    assert info["splits"] == {"human": 46, "augmented": 15}


def test_cli_strict_bad_row_exits_with_message(tmp_path: Path) -> None:
    _write(tmp_path, [{"imgname": "a.png", "query": "Q?"}])
    out = run_cli("bench", "info", "chartqa", "--path", str(tmp_path), "--strict", "--json")
    assert out.returncode == 1
    assert "chartqa row test_human.json[0] field 'label': missing field" in out.stderr
