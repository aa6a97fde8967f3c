"""AstroChart (DomainCQA) numeric metrics.

``astro_numeric`` is DomainCQA's numeric data-retrieval score (DomainCQA paper, evaluation of numeric data
retrieval, Algorithm 3): a value read off a chart is judged by its error relative to the range of the axis it is read
from, so reading 10.4 on a 0–100 axis is as good as 1.04 on a 0–10 axis:

    R = |pred − ref| / (axis_max − axis_min)          (log10 of all four on a logarithmic axis)
    score = (1 − R) if 1 − R > 0.9 else 0

Several values: fewer predicted values than references → 0; more predicted values than references → their
mean is used as the prediction (with several references, the predictions' mean is compared with the
references' mean); the same number → values are paired in order and the per-value scores are averaged
("multiple reference values averaged"). A non-positive value cannot lie on a log axis: such a prediction
scores 0; a non-positive reference or axis bound there is bad data and raises :class:`DataError`.

``astro_exact`` is the data-derivation score: the parsed numbers must equal the reference numbers exactly
(same count, same values in order, formatting-tolerant: 1,200 = 1200.0 = 1.2e3 = 1.2×10^3).
"""

from __future__ import annotations

import math

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.japanese_numbers import parse_numbers
from zuhyo.evaluate.metrics.base import METRICS
from zuhyo.schema import Sample

SCORE_FLOOR = 0.9
"""Algorithm 3 keeps the score only when 1 − R exceeds this."""
EXACT_REL_TOL = 1e-9
"""Floating-point slack for "exact" equality (1.2e3 parsed from text vs 1200)."""


def retrieval_score(pred: float, ref: float, axis_min: float, axis_max: float, log_scale: bool) -> float:
    """Algorithm 3 for one value: (1 − R)·[1 − R > 0.9] with R the error relative to the axis range."""
    if log_scale:
        if pred <= 0:
            return 0.0
        pred, ref, axis_min, axis_max = (math.log10(v) for v in (pred, ref, axis_min, axis_max))
    span = abs(axis_max - axis_min)
    r = abs(pred - ref) / span
    return 1.0 - r if 1.0 - r > SCORE_FLOOR else 0.0


def numeric_retrieval_score(preds: list[float], refs: list[float], axis_min: float, axis_max: float,
                            log_scale: bool = False) -> float:
    """Algorithm 3 over several values (see the module docstring for the counting rules)."""
    if not refs:
        raise ValueError("no reference value")
    if len(preds) < len(refs):
        return 0.0
    if len(preds) > len(refs):
        pred_mean = sum(preds) / len(preds)
        ref_mean = sum(refs) / len(refs)
        return retrieval_score(pred_mean, ref_mean, axis_min, axis_max, log_scale)
    scores = [retrieval_score(p, r, axis_min, axis_max, log_scale) for p, r in zip(preds, refs, strict=True)]
    return sum(scores) / len(scores)


def _reference_values(sample: Sample, answer: str) -> list[float]:
    values = parse_numbers(answer)
    if not values:
        raise DataError(f"{sample.key}: reference answer {answer!r} contains no number")
    return values


@METRICS.register("astro_numeric", "DomainCQA Algorithm 3 numeric retrieval: error relative to the axis range "
                                   "(log10 on log axes), (1−R) if 1−R > 0.9 else 0")
def astro_numeric(sample: Sample, response: str) -> float | None:
    """Algorithm 3 score of the numbers in ``response``; None for samples without AstroChart axis metadata."""
    meta = sample.astro
    if meta is None or meta.axis_min is None or meta.axis_max is None:
        return None
    lo, hi = meta.axis_min, meta.axis_max
    if lo == hi:
        raise DataError(f"{sample.key}: axis_min equals axis_max ({lo}); the axis range must not be empty")
    if meta.log_scale and (lo <= 0 or hi <= 0):
        raise DataError(f"{sample.key}: log axis bounds must be positive (axis_min={lo}, axis_max={hi})")
    preds = parse_numbers(response)
    best = 0.0
    for answer in sample.answers:
        refs = _reference_values(sample, answer)
        if meta.log_scale and any(r <= 0 for r in refs):
            raise DataError(f"{sample.key}: reference value {answer!r} is not positive on a log axis")
        best = max(best, numeric_retrieval_score(preds, refs, lo, hi, meta.log_scale))
    return best


@METRICS.register("astro_exact", "DomainCQA data derivation: exact numeric match of the parsed numbers "
                                 "(formatting-tolerant)")
def astro_exact(sample: Sample, response: str) -> float:
    """1.0 when the response's numbers equal some reference's numbers (same count, in order), else 0.0."""
    preds = parse_numbers(response)
    for answer in sample.answers:
        refs = _reference_values(sample, answer)
        if len(preds) == len(refs) and all(math.isclose(p, r, rel_tol=EXACT_REL_TOL, abs_tol=0.0)
                                           for p, r in zip(preds, refs, strict=True)):
            return 1.0
    return 0.0
