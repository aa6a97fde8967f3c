"""DomainCQA Algorithm 3 (numeric retrieval) and exact derivation."""

from __future__ import annotations

import math

import pytest

from zuhyo.errors import DataError
from zuhyo.evaluate.metrics.astro import (
    UndecidedValues,
    astro_exact,
    astro_numeric,
    numeric_retrieval_score,
    retrieval_score,
)
from zuhyo.schema import AstroMeta, Sample


def _sample(answer: str, lo: float, hi: float, log: bool = False, question: str = "q") -> Sample:
    return Sample(id="n1", benchmark="astrochart", question=question, answers=[answer],
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


def test_several_references_and_more_predictions_pair_the_mean_with_each_reference() -> None:
    # Algorithm 3 step 8 replaces the predictions by their mean; step 10 pairs it with every reference value.
    # Comparing the two means (15 vs 15) would give 1.0.
    assert numeric_retrieval_score([5, 25, 15], [10, 20], 0, 30) == 0.0
    assert numeric_retrieval_score([5, 25, 15], [10, 20], 0, 100) == pytest.approx(0.95)
    assert numeric_retrieval_score([9, 11, 10.3, 10], [10], 0, 100) == pytest.approx(1 - 0.075 / 100)


def test_metric_parses_values_from_the_response() -> None:
    s = _sample("2.0×10^3", 0, 1e4)
    assert astro_numeric(s, "The peak is about 2,100.") == pytest.approx(0.99)
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
    ("3, 4", "4, 3", 0.0), ("3", "Answer: 3 or 4", 0.0),
])
def test_exact_derivation(reference: str, response: str, score: float) -> None:
    s = Sample(id="e", benchmark="astrochart", question="q", answers=[reference])
    assert astro_exact(s, response) == score


# DomainCQA Appendix G.1: values are extracted from the answer, not every number of the reply read by a regex.
# Each case scored 0 (or was not isolated) before the extractor existed.
@pytest.mark.parametrize(("question", "reference", "lo", "hi", "response", "score"), [
    ("What recession velocity (km/s) corresponds to a distance of 300 Mpc?", "21390", 0, 32000,
     "At 300 Mpc the velocity is about 21,000 km/s.", 1 - 390 / 32000),
    ("At what wavelength (nm) does the 5800 K curve peak?", "500", 100, 2000,
     "The 5800 K curve peaks at about 500 nm.", 1.0),
    ("What is the decline rate of SN 2011fe in B?", "1.1", 0, 2, "Δm15(B) = 1.10 mag", 1.0),
    ("What velocity does the fit give?", "21000", 0, 30000, "2.1×10^4 km s^-1", 1.0),
    ("What velocity does the fit give?", "21000", 0, 30000, "2.1 × 10⁴ km/s", 1.0),
    ("What velocity does the fit give?", "21000", 0, 30000, "about 2.1e4 km s-1", 1.0),
    ("What velocity does the fit give?", "21000", 0, 30000, "$2.1\\times10^{4}$ km s$^{-1}$", 1.0),
    ("What is the distance of the cloud?", "1 kpc", 0, 10, "1 kpc (1000 pc)", 1.0),
    ("What is the distance of the cloud (pc)?", "1000", 0, 10000, "1 kpc (1000 pc)", 1.0),
    ("What is the distance of the cloud?", "1000 pc", 0, 10000, "It is 1 kpc away.", 1.0),
    ("What is the equivalent width of the line?", "45", 0, 100,
     "The H-alpha 6563 Å line has an equivalent width of 45 Å.", 1.0),
    ("What is the age of the cluster?", "3 Gyr", 0, 14, "Answer: 3.0×10^9 yr", 1.0),
    ("What velocity?", "21000", 0, 30000, "Reading the axis at 18 and 24...\nAnswer: 21,000 km/s", 1.0),
])
def test_values_are_extracted_from_the_answer(question: str, reference: str, lo: float, hi: float,
                                              response: str, score: float) -> None:
    s = _sample(reference, lo, hi, question=question)
    assert astro_numeric(s, response) == pytest.approx(score)


def test_values_that_cannot_be_isolated_are_undecided_not_zero() -> None:
    with pytest.raises(UndecidedValues):  # two candidate values for one reference
        astro_numeric(_sample("3", 0, 10, question="What is the flux?"), "At z = 0.5 the flux is 3 mJy.")


# DomainCQA Appendix G.1, Algorithm 3 steps 5-6: "if Number of reference values > Number of predicted values then
# return S_final = 0". A reply with fewer values than the reference, or none, scores 0; it used to be undecided and
# left the mean (issue 21, item 2).
@pytest.mark.parametrize(("reference", "response"), [
    ("3", "I cannot read it."),  # no value at all: step 5 (1 > 0) → step 6
    ("3", "no idea"),
    ("3", "The flux cannot be determined from the chart."),
    ("10, 20", "Answer: 10"),  # one value for two: step 5 (2 > 1) → step 6, even though 10 is right
    ("10, 20", "The lower bound is 10."),
    ("10, 20, 30", "Answer: 10 and 20"),
    ("3", "Reading the axis at 2 and 4...\nAnswer: cannot tell"),  # the answer line abstains
])
def test_algorithm_3_steps_5_6_fewer_values_score_zero(reference: str, response: str) -> None:
    assert astro_numeric(_sample(reference, 0, 100, question="What are the values?"), response) == 0.0


def test_algorithm_3_every_step_matches_hand_computation() -> None:
    cases = [
        ("10, 20", "Answer: 11", 0.0),  # steps 5-6: 2 reference values > 1 predicted → S_final = 0
        ("10", "Answer: 8 to 14", 0.99),  # steps 7-8: the mean of the predictions, (8 + 14) / 2 = 11, R = 1/100
        ("10, 20", "Answer: 11, 25", (0.99 + 0.95) / 2),  # steps 10-20: pairs in order, (1 − R_i)·I(1 − R_i > 0.9)
        ("10, 20", "Answer: 11, 31", 0.99 / 2),  # 1 − R = 0.89 for the second pair: I(·) = 0
    ]
    for reference, response, score in cases:
        assert astro_numeric(_sample(reference, 0, 100), response) == pytest.approx(score), (reference, response)


# DomainCQA Appendix G.1, data derivation: "an LLM extracts numerical values, and correctness is determined by exact
# numerical matching". Without a model the value after the last '=' is the answer's (issue 21, item 3).
@pytest.mark.parametrize(("reference", "response"), [
    ("1500", "Answer: 6000 K - 4500 K = 1500 K"),  # was 0: three values on the answer line
    ("1500 K", "The difference is 6000 - 4500 = 1500 K. So the hotter star is 1500 K hotter."),
    ("2", "Answer: 12 / 6 = 2"),
])
def test_derivation_reads_the_value_after_the_last_equals(reference: str, response: str) -> None:
    s = Sample(id="d", benchmark="astrochart", question="By how much do they differ?", answers=[reference])
    assert astro_exact(s, response) == 1.0
    wrong = response.replace(f"= {reference.split()[0]}", "= 7")
    assert astro_exact(s, wrong) == 0.0  # a wrong result stays wrong


def test_derivation_result_not_isolated_is_undecided_never_zero() -> None:
    s = Sample(id="d", benchmark="astrochart", question="What are the two counts?", answers=["3, 5"])
    with pytest.raises(UndecidedValues, match="after the last '='"):  # one value after '=' for two references
        astro_exact(s, "Answer: a = 3, b = 5")
    with pytest.raises(UndecidedValues):
        astro_exact(Sample(id="d", benchmark="astrochart", question="q", answers=["7"]), "Answer: 3 + 4 = x")


def test_exact_derivation_extracts_values() -> None:
    s = Sample(id="e", benchmark="astrochart", question="How many curves are shown for the 5800 K model?",
               answers=["4"])
    assert astro_exact(s, "For the 5800 K model there are 4 curves.") == 1.0
    assert astro_exact(s, "There are four curves; one of them is dashed.") == 1.0  # a count in words
    assert astro_exact(s, "Answer: 5") == 0.0
    with pytest.raises(UndecidedValues):
        astro_exact(s, "Curves 2 and 3 overlap; 5 are drawn in total.")


def test_an_exponent_beyond_float_range_is_no_value_not_a_crash() -> None:
    """A hash or id in an answer ("3e577d31") reads like a number with an exponent past float range."""
    from zuhyo.evaluate.judges.numeric_values import find_quantities, prepare, reference_quantities

    assert [q.value for q in find_quantities(prepare("id 3e577d31, then 2.5"))] == [2.5]
    assert [q.value for q in reference_quantities("run 9e999 gave 4")] == [4.0]
