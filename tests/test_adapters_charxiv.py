"""`charxiv` adapter on the real CharXiv val files, checked against upstream's own query builders."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from zuhyo.benchmarks import BenchmarkSource, load_benchmark
from zuhyo.benchmarks.charxiv import descriptive_question, get_number_instruction
from zuhyo.errors import DataError

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "charxiv"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="shared CharXiv data not present")


def _load(path: Path, strict: bool = False, split: str | None = None, **options: str):
    return load_benchmark("charxiv", BenchmarkSource(path=path, split=split, options=options), strict=strict)


def _upstream() -> dict[str, Any]:
    """Upstream's descriptive/reasoning utils, executed with their `constants` module (CharXiv @ 7ebe88f)."""
    constants = types.ModuleType("constants")
    with warnings.catch_warnings():  # upstream's prompt strings hold LaTeX backslashes ("\\g"): not our concern
        warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
        code = compile((DATA / "src_constants.py").read_text(encoding="utf-8"), "constants.py", "exec")
    exec(code, constants.__dict__)
    saved = sys.modules.get("constants")
    sys.modules["constants"] = constants
    try:
        ns: dict[str, Any] = {}
        for name in ("src_descriptive_utils.py", "src_reasoning_utils.py"):
            mod: dict[str, Any] = {"__name__": name}
            exec(compile((DATA / name).read_text(encoding="utf-8"), name, "exec"), mod)
            ns.update(mod)
        return ns
    finally:
        if saved is None:
            del sys.modules["constants"]
        else:
            sys.modules["constants"] = saved


@pytest.fixture(scope="module")
def val():
    return _load(DATA)


def test_val_counts_1000_reasoning_and_4000_descriptive(val) -> None:
    kinds = [s.charxiv.kind for s in val.samples]
    assert kinds.count("reasoning") == 1000
    descriptive = json.loads((DATA / "data_descriptive_val.json").read_text(encoding="utf-8"))
    assert kinds.count("descriptive") == sum(len(d["qids"]) for d in descriptive.values()) == 4000
    assert val.errors == []
    assert len({s.id for s in val.samples}) == 5000


def test_questions_equal_upstream_query_builders(val) -> None:
    up = _upstream()
    descriptive = json.loads((DATA / "data_descriptive_val.json").read_text(encoding="utf-8"))
    reasoning = json.loads((DATA / "data_reasoning_val.json").read_text(encoding="utf-8"))
    by_id = {s.id: s for s in val.samples}
    dq = up["build_descriptive_quries"](descriptive, "images")
    assert len(dq) == 4000
    for key, q in dq.items():
        s = by_id[f"descriptive/{key}"]
        assert s.question == q["question"]
        assert s.charxiv.qid == q["qid"]
    rq = up["build_reasoning_queries"](reasoning, "images")
    for fid, q in rq.items():
        s = by_id[f"reasoning/{fid}"]
        assert s.question == q["question"]
        assert s.metadata["raw_question"] == q["raw_question"]
        assert s.charxiv.inst_category == q["inst_category"]
    for ans in ("3", "0.25", "12.0", "1.2.3"):
        assert get_number_instruction(ans) == up["get_number_instruction"](ans)


def test_metadata_and_answers(val) -> None:
    by_id = {s.id: s for s in val.samples}
    d = by_id["descriptive/0_0"]
    assert d.answer == "60"
    assert (d.charxiv.figure_id, d.charxiv.qid, d.charxiv.subplot_loc, d.charxiv.num_subplots) == (0, 7, [1, 2], 2)
    assert d.charxiv.subject == "cs"
    assert d.source is not None and d.source.paper_id == "2004.10956"
    assert d.metadata["chart_types"] == ["Line Chart"]
    assert d.question.startswith("For the subplot at row 1 and column 2, what is the spatially highest labeled tick")
    r = by_id["reasoning/2"]
    assert (r.answer, r.charxiv.inst_category, r.charxiv.kind) == ("lambda_L = 0.13", 1, "reasoning")
    text_loc = [s for s in val.samples if isinstance(s.charxiv.subplot_loc, str) and s.charxiv.qid not in (18, 19)]
    assert text_loc and all(s.question.startswith(f"For {s.charxiv.subplot_loc}, ") for s in text_loc)
    layout = [s for s in val.samples if s.charxiv.qid in (18, 19)]
    assert layout and all(s.question.startswith("What is the") for s in layout)


def test_images_are_referenced_and_reported_missing(val, tmp_path: Path) -> None:
    missing = val.missing_images()
    assert len(missing) == 5000 and all(e.field == "image" for e in missing)
    assert val.samples[0].image.path == f"{val.samples[0].charxiv.figure_id}.jpg"
    img_dir = tmp_path / "imgs"
    img_dir.mkdir()
    shutil.copyfile(Path(__file__).parent / "fixtures" / "adapters" / "bar_chart.jpg", img_dir / "0.jpg")
    result = _load(DATA, images=str(img_dir), kind="descriptive")
    have = [s for s in result.samples if s.charxiv.figure_id == 0]
    assert len(have) == 4 and len(result.missing_images()) == 4000 - 4


def test_kind_option_and_upstream_layout(tmp_path: Path) -> None:
    assert len(_load(DATA, kind="reasoning").samples) == 1000
    # The upstream checkout layout: data/<kind>_val.json without the data_ prefix.
    (tmp_path / "data").mkdir()
    shutil.copyfile(DATA / "data_reasoning_val.json", tmp_path / "data" / "reasoning_val.json")
    result = _load(tmp_path, kind="reasoning")
    assert len(result.samples) == 1000 and result.samples[0].charxiv.subject is None
    with pytest.raises(DataError, match="lacks descriptive_val.json"):
        _load(tmp_path)
    with pytest.raises(DataError, match="kind must be"):
        _load(DATA, kind="all")
    with pytest.raises(DataError, match="--split must be"):
        _load(DATA, split="train")


def _write(tmp_path: Path, descriptive: Any, reasoning: Any) -> Path:
    for name, data in (("descriptive", descriptive), ("reasoning", reasoning)):
        f = tmp_path / f"{name}_val.json"
        f.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode("utf-8"))
    return tmp_path


def test_bad_rows_name_row_and_field(tmp_path: Path) -> None:
    descriptive = {
        "1": {"figure_id": 1, "num_subplots": 1, "subplot_loc": [0, 0], "qids": [1, 20, 3], "answers": ["T", "x", 5]},
        "2": {"figure_id": 3, "num_subplots": 1, "subplot_loc": [0, 0], "qids": [1], "answers": ["T"]},
        "4": {"figure_id": 4, "num_subplots": 1, "subplot_loc": None, "qids": [1], "answers": ["T"]},
        "5": {"figure_id": 5, "num_subplots": 1, "subplot_loc": [0, 0], "qids": [1, 2], "answers": ["T"]},
        "6": {"figure_id": 6, "num_subplots": "one", "subplot_loc": [0, 0], "qids": [1], "answers": ["T"]},
        "7": {"figure_id": 7, "num_subplots": 1, "subplot_loc": [0, 0], "qids": [1], "answers": [None]},
    }
    reasoning = {
        "1": {"figure_id": 1, "query": "Q?", "answer": "A", "inst_category": 1},
        "2": {"figure_id": 2, "query": "Q?", "answer": "A", "inst_category": 7},
        "3": {"figure_id": 3, "answer": "A", "inst_category": 1},
        "4": {"figure_id": 4, "query": "Q?", "answer": None, "inst_category": 1},
        "5": [1, 2],
    }
    result = _load(_write(tmp_path, descriptive, reasoning))
    assert sorted(s.id for s in result.samples) == ["descriptive/1_0", "reasoning/1"]
    got = {(e.row, e.field) for e in result.errors}
    assert got == {("1", "qids[1]"), ("1", "answers[2]"), ("2", "figure_id"), ("4", "subplot_loc"), ("5", "answers"),
                   ("6", "num_subplots"), ("7", "answers[0]"), ("2", "inst_category"), ("3", "query"),
                   ("4", "answer"), ("5", None)}
    assert any("withholds" in e.message for e in result.errors)
    with pytest.raises(DataError, match="charxiv row 1 field 'qids\\[1\\]'"):
        _load(tmp_path, strict=True)


def test_bad_files(tmp_path: Path) -> None:
    result = _load(_write(tmp_path, b"\xff\xfe{}", b"{\"0\": "))
    by_row = {e.row: e.message for e in result.errors}
    assert len(result.errors) == 2
    assert "not UTF-8" in by_row["descriptive_val.json"] and "not valid JSON" in by_row["reasoning_val.json"]
    result = _load(_write(tmp_path, [1, 2], {}))
    assert "expected a JSON object keyed by figure id" in result.errors[0].message


def test_descriptive_question_rejects_bad_location() -> None:
    with pytest.raises(ValueError, match="invalid subplot_loc"):
        descriptive_question(1, 3)


def test_cli_bench_info_charxiv() -> None:
    out = subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", "bench", "info", "charxiv",
                          "--path", str(DATA), "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["samples"] == 5000
    assert info["charxiv_kinds"] == {"descriptive": 4000, "reasoning": 1000}
    assert info["errors"] == 0 and info["images_missing"] == 5000
