"""The suite's own data (tests/fixtures) is complete, consistent with its generator, and documented."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

from conftest import FIXTURE_CHARTQA, FIXTURE_CHARTS, FIXTURES
from PIL import Image

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark


def _render_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fixture_render", FIXTURE_CHARTQA / "render.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_chartqa_fixture_loads_completely(chartqa_dir: Path) -> None:
    result = load_benchmark("chartqa", BenchmarkSource(path=chartqa_dir), strict=True)
    assert result.errors == [] and result.missing_images() == []
    assert len(result.samples) == 61 and len({s.question for s in result.samples}) == 61
    assert Counter(s.id.split("/")[0] for s in result.samples) == {"human": 46, "augmented": 15}
    used = {s.image.resolve_path(result.base_dir).name for s in result.samples}
    assert used == {p.name for p in FIXTURE_CHARTS.glob("*.png")} and len(used) == 14
    for path in FIXTURE_CHARTS.glob("*.png"):
        with Image.open(path) as im:
            im.load()


def test_qa_files_equal_the_generator() -> None:
    """Answers are computed from the data the charts are drawn from; the committed JSON is what render.py writes."""
    files = _render_module().qa_files()
    for name, rows in files.items():
        assert json.loads((FIXTURE_CHARTQA / "test" / name).read_text(encoding="utf-8")) == rows, name
    names = {r["imgname"] for rows in files.values() for r in rows}
    assert names == {p.name for p in FIXTURE_CHARTS.glob("*.png")}


def test_every_fixture_folder_has_provenance() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for folder in (p for p in FIXTURES.iterdir() if p.is_dir()):
        assert f"`{folder.name}/" in readme, f"tests/fixtures/{folder.name}/ has no provenance row in README.md"
