"""AstroChart (DomainCQA) numeric metrics (DomainCQA §5.1 "Metrics" and Appendix G.1).

``astro_numeric`` is DomainCQA's numeric data-retrieval score (Appendix G.1, Algorithm 3): a value read off a
chart is judged by its error relative to the range of the axis it is read from, so reading 10.4 on a 0–100 axis
is as good as 1.04 on a 0–10 axis:

    R = |pred − ref| / (axis_max − axis_min)          (log10 of all four on a logarithmic axis)
    score = (1 − R) if 1 − R > 0.9 else 0

Algorithm 3's counting rules, literally: fewer predicted values than reference values → 0 (step 5–6); more
predicted values than reference values → "compute the mean of predicted values" (step 7–8); then pairs
(Predict_i, True_i) are scored and averaged (steps 10–20). With one reference value the mean is paired with it.
**Reading where Algorithm 3 is not defined** — several references and more predictions: step 8 replaces the
predictions by their mean, so the mean is paired with *every* reference value (Predict_i = mean for all i) and the
pair scores are averaged. Refs [10, 20] and preds [5, 25, 15] on a 0–30 axis thus score 0 (15 is 5 off each), not 1
as comparing the two means would give. Equal counts pair the values in order.

``astro_exact`` is the data-derivation score (Appendix G.1: "an LLM extracts numerical values, and correctness is
determined by exact numerical matching"): the extracted values must equal the reference values exactly (same
count, same values in order; 1,200 = 1200.0 = 1.2e3 = 1.2×10^3; a value in another unit of the same dimension is
converted to the reference's unit first).

Values are extracted by :mod:`zuhyo.evaluate.judges.numeric_values` (the registered metrics use its deterministic
extractor; ``astrochart:<model spec>`` passes the LLM's values to the same scoring functions). A response with
fewer values than the reference, or none (an abstention), scores 0 as Algorithm 3 steps 5–6 say; when the
extractor finds more values in free text than it can tell apart, the metrics raise :class:`UndecidedValues`: the
item is unscored, never 0. ``astro_exact`` reads derivations after their last ``=`` (``6000 K - 4500 K = 1500 K``
→ 1500 K). A non-positive predicted value cannot lie on a log axis and scores 0; a non-positive reference
or axis bound there is bad data and raises :class:`DataError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.numeric_values import Extraction, Quantity, extract_values, reference_quantities
from zuhyo.evaluate.metrics.base import METRICS
from zuhyo.schema import Sample

SCORE_FLOOR = 0.9
"""Algorithm 3 keeps the score only when 1 − R exceeds this."""
EXACT_REL_TOL = 1e-9
"""Floating-point slack for "exact" equality (1.2e3 parsed from text vs 1200)."""


class UndecidedValues(ValueError):
    """The deterministic extractor could not tell the response's values apart: the item is unscored, not 0."""


def retrieval_score(pred: float, ref: float, axis_min: float, axis_max: float, log_scale: bool) -> float:
    """Algorithm 3 for one value: (1 − R)·[1 − R > 0.9] with R the error relative to the axis range."""
    if log_scale:
        if pred <= 0:
            return 0.0
        pred, ref, axis_min, axis_max = (math.log10(v) for v in (pred, ref, axis_min, axis_max))
    span = abs(axis_max - axis_min)
    r = abs(pred - ref) / span
    return 1.0 - r if 1.0 - r > SCORE_FLOOR else 0.0


def numeric_retrieval_score(preds: Sequence[float], refs: Sequence[float], axis_min: float, axis_max: float,
                            log_scale: bool = False) -> float:
    """Algorithm 3 over several values (see the module docstring for the counting rules and their reading)."""
    if not refs:
        raise ValueError("no reference value")
    if len(preds) < len(refs):
        return 0.0
    if len(preds) > len(refs):
        mean = sum(preds) / len(preds)
        preds = [mean] * len(refs)
    scores = [retrieval_score(p, r, axis_min, axis_max, log_scale) for p, r in zip(preds, refs, strict=True)]
    return sum(scores) / len(scores)


def exact_score(preds: Sequence[float], refs: Sequence[float]) -> float:
    """1.0 when the predicted values equal the reference values (same count, in order), else 0.0."""
    same = len(preds) == len(refs) and all(math.isclose(p, r, rel_tol=EXACT_REL_TOL, abs_tol=0.0)
                                           for p, r in zip(preds, refs, strict=True))
    return 1.0 if same else 0.0


def reference_values(sample: Sample, answer: str) -> list[Quantity]:
    """The values of one reference answer; a reference without a number is bad data."""
    values = reference_quantities(answer)
    if not values:
        raise DataError(f"{sample.key}: reference answer {answer!r} contains no number")
    return values


def axis_range(sample: Sample) -> tuple[float, float, bool] | None:
    """(axis_min, axis_max, log_scale) of a numeric-retrieval item; None without axis metadata."""
    meta = sample.astro
    if meta is None or meta.axis_min is None or meta.axis_max is None:
        return None
    lo, hi = meta.axis_min, meta.axis_max
    if lo == hi:
        raise DataError(f"{sample.key}: axis_min equals axis_max ({lo}); the axis range must not be empty")
    if meta.log_scale and (lo <= 0 or hi <= 0):
        raise DataError(f"{sample.key}: log axis bounds must be positive (axis_min={lo}, axis_max={hi})")
    return lo, hi, meta.log_scale


def in_reference_units(preds: Sequence[Quantity], refs: Sequence[Quantity]) -> list[float]:
    """Predicted values converted to the unit of the reference value they are compared with (the first
    reference's unit for extra values); values without a unit, or in an unconvertible unit, as written."""
    return [p.in_unit(refs[min(i, len(refs) - 1)].unit) for i, p in enumerate(preds)]


def score_retrieval(sample: Sample, refs: Sequence[Quantity], preds: Sequence[Quantity]) -> float:
    """Algorithm 3 for extracted values against one reference answer's values."""
    axis = axis_range(sample)
    if axis is None:
        raise DataError(f"{sample.key}: numeric retrieval needs axis_min and axis_max (Algorithm 3 divides by "
                        "the axis range)")
    lo, hi, log = axis
    ref_values = [r.value for r in refs]
    if log and any(r <= 0 for r in ref_values):
        raise DataError(f"{sample.key}: reference value {ref_values} is not positive on a log axis")
    return numeric_retrieval_score(in_reference_units(preds, refs), ref_values, lo, hi, log)


def score_exact(refs: Sequence[Quantity], preds: Sequence[Quantity]) -> float:
    """Exact numeric match of extracted values against one reference answer's values."""
    return exact_score(in_reference_units(preds, refs), [r.value for r in refs])


def best_score(sample: Sample, references: Sequence[Sequence[Quantity]], extractions: Sequence[Extraction],
               retrieval: bool) -> tuple[float, Extraction] | None:
    """The best score over the reference answers (each scored with the extraction made for it: Algorithm 3 when
    ``retrieval``, else exact match), with the extraction that gave it; None when no extraction was decided."""
    best: tuple[float, Extraction] | None = None
    for refs, ext in zip(references, extractions, strict=True):
        if ext.values is None:
            continue
        value = score_retrieval(sample, refs, ext.values) if retrieval else score_exact(refs, ext.values)
        if best is None or value > best[0]:
            best = (value, ext)
    return best


def deterministic_extractions(sample: Sample, response: str, derivation: bool = False
                              ) -> tuple[list[list[Quantity]], list[Extraction]]:
    """Each reference answer's values, and the response's values extracted for it without a model
    (``derivation``: data-derivation items, read after the last ``=``)."""
    references = [reference_values(sample, a) for a in sample.answers]
    return references, [extract_values(response, sample.question, len(r), r[0].unit, derivation=derivation)
                        for r in references]


def _metric(sample: Sample, response: str, retrieval: bool) -> float:
    references, extractions = deterministic_extractions(sample, response, derivation=not retrieval)
    best = best_score(sample, references, extractions, retrieval)
    if best is None:
        raise UndecidedValues(f"{sample.key}: {extractions[0].reason}")
    return best[0]


@METRICS.register("astro_numeric", "DomainCQA Algorithm 3 numeric retrieval: error relative to the axis range "
                                   "(log10 on log axes), (1−R) if 1−R > 0.9 else 0; values extracted "
                                   "deterministically; fewer values than the reference → 0; not isolated → "
                                   "unscored")
def astro_numeric(sample: Sample, response: str) -> float | None:
    """Algorithm 3 score of the values in ``response``; None for samples without AstroChart axis metadata."""
    if axis_range(sample) is None:
        return None
    return _metric(sample, response, retrieval=True)


@METRICS.register("astro_exact", "DomainCQA data derivation: exact numeric match of the extracted values "
                                 "(formatting- and unit-tolerant; a derivation read after its last '='); "
                                 "not isolated → unscored")
def astro_exact(sample: Sample, response: str) -> float:
    """1.0 when the response's values equal some reference's values (same count, in order), else 0.0."""
    return _metric(sample, response, retrieval=False)
