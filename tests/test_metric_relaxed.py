"""ChartQA relaxed accuracy (pix2struct relaxed_correctness), on real ChartQA test labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zuhyo.evaluate.metrics.relaxed import chartqa_relaxed, relaxed_correctness
from zuhyo.schema import Sample

CHARTQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chartqa" / "test"


@pytest.mark.parametrize(("target", "prediction", "expected"), [
    ("100", "105", True),        # exactly 5 %
    ("100", "105.1", False),
    ("100", "95", True),
    ("12%", "0.12", True),       # a percentage is divided by 100
    ("12%", "12", False),        # ... so 12 is 100x off
    ("0", "0", True),            # zero target: string comparison
    ("0", "0.0", False),
    ("-20", "-19.5", True),
    ("Yes", "yes", True),        # case-insensitive exact match for text
    ("United States", "US", False),
    ("1,000", "1000", False),    # float("1,000") fails: exact string match only
])
def test_relaxed_correctness_cases(target: str, prediction: str, expected: bool) -> None:
    assert relaxed_correctness(target, prediction) is expected


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_real_chartqa_labels() -> None:
    if not CHARTQA.exists():
        pytest.skip(f"ChartQA test data not at {CHARTQA}")
    rows = json.loads((CHARTQA / "test_human.json").read_text()) + json.loads(
        (CHARTQA / "test_augmented.json").read_text())
    assert len(rows) == 61
    numeric = 0
    for row in rows:
        s = Sample(id=row["imgname"], benchmark="chartqa", question=row["query"], answers=[row["label"]])
        assert chartqa_relaxed(s, row["label"]) == 1.0
        # pix2struct compares the raw prediction: padding is not stripped (cleaning is --answer-cleaning lenient).
        assert chartqa_relaxed(s, f" {row['label']} ") == (1.0 if _is_number(row["label"]) else 0.0)
        try:
            value = float(row["label"])
        except ValueError:
            assert chartqa_relaxed(s, row["label"] + " x") == 0.0
            continue
        if value == 0:
            continue
        numeric += 1
        assert chartqa_relaxed(s, repr(value * 1.04)) == 1.0
        assert chartqa_relaxed(s, repr(value * 1.06)) == 0.0
    assert numeric > 20


def test_best_over_references() -> None:
    s = Sample(id="x", benchmark="chartqa", question="q", answers=["10", "20"])
    assert chartqa_relaxed(s, "20.5") == 1.0
    assert chartqa_relaxed(s, "15") == 0.0
