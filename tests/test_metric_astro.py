"""DomainCQA Algorithm 3 (numeric retrieval) and exact derivation."""

from __future__ import annotations

import math

import pytest

from zuhyo.errors import DataError
from zuhyo.evaluate.metrics.astro import astro_exact, astro_numeric, numeric_retrieval_score, retrieval_score
from zuhyo.schema import AstroMeta, Sample


def _sample(answer: str, lo: float, hi: float, log: bool = False) -> Sample:
    return Sample(id="n1", benchmark="astrochart", question="q", answers=[answer],
                  astro=AstroMeta(qa_type="FQA", category="Data", aspect="Point", answer_kind="numeric_retrieval",
                                  axis_min=lo, axis_max=hi, log_scale=log))


def test_relative_error_over_axis_range() -> None:
    assert retrieval_score(53, 50, 0, 100, False) == pytest.approx(0.97)
    assert retrieval_score(5.3, 5.0, 0, 10, False) == pytest.approx(0.97)  # same relative reading error
    assert retrieval_score(60, 50, 0, 100, False) == 0.0  # 1 − R = 0.9 is not > 0.9
    assert retrieval_score(59.9, 50, 0, 100, False) == pytest.approx(0.901)


def test_log_axis_in_log10_space() -> None:
    # axis 1e0..1e4 spans 4 decades; reading 1.2e2 for 1e2 is off by log10(1.2) decades
    assert retrieval_score(120, 100, 1, 1e4, True) == pytest.approx(1 - math.log10(1.2) / 4)
    assert retrieval_score(-5, 100, 1, 1e4, True) == 0.0


def test_counting_rules() -> None:
    assert numeric_retrieval_score([50], [50, 60], 0, 100) == 0.0  # fewer predicted values than references
    assert numeric_retrieval_score([48, 52], [50], 0, 100) == pytest.approx(1.0)  # more → their mean
    assert numeric_retrieval_score([40, 70], [50], 0, 100) == pytest.approx(0.95)
    assert numeric_retrieval_score([52, 63], [50, 60], 0, 100) == pytest.approx((0.98 + 0.97) / 2)


def test_metric_parses_values_from_the_response() -> None:
    s = _sample("2.0×10^3", 0, 1e4)
    assert astro_numeric(s, "The peak is about 2,100.") == pytest.approx(0.99)
    assert astro_numeric(s, "no idea") == 0.0
    log_s = _sample("1e-3", 1e-6, 1, log=True)
    assert astro_numeric(log_s, "roughly 1.1 \\times 10^{-3}") == pytest.approx(1 - math.log10(1.1) / 6)


def test_not_applicable_and_bad_data() -> None:
    plain = Sample(id="p", benchmark="x", question="q", answers=["1"])
    assert astro_numeric(plain, "1") is None
    with pytest.raises(DataError, match="astrochart/n1"):
        astro_numeric(_sample("5", 0, 0), "5")
    with pytest.raises(DataError, match="log axis"):
        astro_numeric(_sample("5", 0, 10, log=True), "5")
    with pytest.raises(DataError, match="no number"):
        astro_numeric(_sample("about half", 0, 10), "5")


@pytest.mark.parametrize(("reference", "response", "score"), [
    ("1200", "1,200", 1.0), ("1200", "1.2e3", 1.0), ("1200", "1.2×10^3", 1.0), ("1200", "1200.0 km/s", 1.0),
    ("1200", "1201", 0.0), ("0.35", "0.350", 1.0), ("-2.5", "−2.5", 1.0), ("3, 4", "3 and 4", 1.0),
    ("3, 4", "4, 3", 0.0), ("3", "3 or 4", 0.0),
])
def test_exact_derivation(reference: str, response: str, score: float) -> None:
    s = Sample(id="e", benchmark="astrochart", question="q", answers=[reference])
    assert astro_exact(s, response) == score
