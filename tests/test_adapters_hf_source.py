"""Shared source reading (hf_source): image cells, split choice, options, table files."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest
from datasets import Dataset, DatasetDict

from zuhyo.benchmarks.base import BenchmarkSource, RowErrors
from zuhyo.benchmarks.hf_source import check_options, image_ref_from_cell, open_rows
from zuhyo.errors import DataError

PNG = (Path(__file__).parent / "fixtures" / "adapters" / "bar_chart.png").read_bytes()


def test_image_cells() -> None:
    ref = image_ref_from_cell({"bytes": PNG, "path": "x.png"}, None)
    assert ref.data == PNG and ref.sha256 == hashlib.sha256(PNG).hexdigest() and ref.mime == "image/png"
    assert image_ref_from_cell({"bytes": None, "path": "/cache/x.png"}, None).path == "/cache/x.png"
    assert image_ref_from_cell(PNG, None).data == PNG
    assert image_ref_from_cell(base64.b64encode(PNG).decode(), None).data == PNG
    assert image_ref_from_cell("data:image/png;base64," + base64.b64encode(PNG).decode(), None).data == PNG
    assert image_ref_from_cell("https://example.org/a.png", None).url == "https://example.org/a.png"
    assert image_ref_from_cell("figs/a.JPG", None).path == "figs/a.JPG"
    for bad, msg in ((b"", "empty image bytes"), (b"hello", "not a PNG/JPEG"), ("???", "neither a URL"),
                     ({"bytes": None, "path": None}, "neither bytes nor a path"), (3.5, "got float"),
                     ("data:text/plain;base64,aGk=", "unsupported data URI"), ("  ", "empty image reference")):
        with pytest.raises(ValueError, match=msg):
            image_ref_from_cell(bad, None)


def _dd(tmp_path: Path, splits: tuple[str, ...]) -> Path:
    DatasetDict({s: Dataset.from_dict({"question": [f"{s}-q"]}) for s in splits}).save_to_disk(str(tmp_path / "d"))
    return tmp_path / "d"


def test_split_choice(tmp_path: Path) -> None:
    path = _dd(tmp_path, ("train", "test"))
    errors = RowErrors("x", strict=False)
    assert open_rows(BenchmarkSource(path=path), errors, default_split="test").rows[0].record == {"question": "test-q"}
    rows = open_rows(BenchmarkSource(path=path, split="train"), errors, default_split="test")
    assert (rows.split, rows.rows[0].record["question"]) == ("train", "train-q")
    with pytest.raises(DataError, match="several splits"):
        open_rows(BenchmarkSource(path=path), errors)
    with pytest.raises(DataError, match="no split 'dev'; splits: train, test"):
        open_rows(BenchmarkSource(path=path, split="dev"), errors)


def test_unsupported_file_and_options(tmp_path: Path) -> None:
    f = tmp_path / "rows.xlsx"
    f.write_bytes(b"PK")
    with pytest.raises(DataError, match="unsupported file type"):
        open_rows(BenchmarkSource(path=f), RowErrors("x", strict=False))
    with pytest.raises(DataError, match="unknown option 'colour'; known options: images, field.*"):
        check_options(BenchmarkSource(options={"colour": "x"}), "x", ("images",), prefixes=("field.",))
    check_options(BenchmarkSource(options={"field.id": "x", "images": "y"}), "x", ("images",), prefixes=("field.",))


def test_registering_adapters_imports_nothing_heavy() -> None:
    import subprocess

    code = ("import sys; from zuhyo.benchmarks import ensure_registered; ensure_registered(); "
            "print(sorted(m for m in ('torch', 'transformers', 'ray', 'rapidocr', 'datasets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
