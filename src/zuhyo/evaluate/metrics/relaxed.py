"""ChartQA relaxed accuracy (Masry et al., "ChartQA", Findings of ACL 2022, evaluation metric).

The paper accepts a numeric answer within 5 % of the gold answer (to tolerate small inaccuracies of reading
values off a chart) and requires an exact match for non-numeric answers. The reference implementation is
``relaxed_correctness`` in google-research/pix2struct (``pix2struct/metrics.py``), ported here as is: a number
ending in % is divided by 100, a zero target falls back to string comparison, strings compare case-insensitively.
"""

from __future__ import annotations

from zuhyo.evaluate.metrics.base import METRICS
from zuhyo.schema import Sample

MAX_RELATIVE_CHANGE = 0.05


def _to_float(text: str) -> float | None:
    try:
        if text.endswith("%"):
            # Convert percentages to floats.
            return float(text.rstrip("%")) / 100.0
        return float(text)
    except ValueError:
        return None


def relaxed_correctness(target: str, prediction: str, max_relative_change: float = MAX_RELATIVE_CHANGE) -> bool:
    """pix2struct's ``relaxed_correctness``: within 5 % relative change for numbers, else exact (case-insensitive).

    A target of 0 is compared as a string (the relative change is undefined), as in the reference code.
    """
    prediction_float = _to_float(prediction)
    target_float = _to_float(target)
    if prediction_float is not None and target_float:
        relative_change = abs(prediction_float - target_float) / abs(target_float)
        return relative_change <= max_relative_change
    return prediction.lower() == target.lower()


@METRICS.register("chartqa_relaxed", "ChartQA relaxed accuracy: numbers within 5 % relative, else exact "
                                     "case-insensitive match (pix2struct relaxed_correctness); best over references")
def chartqa_relaxed(sample: Sample, response: str) -> float:
    """1.0 when the response is relaxed-correct against any reference answer, else 0.0.

    The response is compared as given, like pix2struct's ``relaxed_accuracy`` (no normalisation): ``" Yes "`` or
    ``"Yes."`` do not match ``Yes``. Answer cleaning, when wanted, happens before (``--answer-cleaning lenient``).
    """
    return 1.0 if any(relaxed_correctness(ref.strip(), response) for ref in sample.answers) else 0.0
