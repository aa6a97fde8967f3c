"""ChartQAPro's official metric, ported from vis-nlp/ChartQAPro ``evaluate_predictions.py`` (commit 4b422c6, MIT).

Per answer element: exact (case-insensitive) match when its ``Year`` flag is "YES"; otherwise numbers within 5 %
relative change (``%`` stripped, a zero target needs a zero prediction) and ANLS (threshold 0.5, case-insensitive)
for text. List answers (``[a, b]``) are scored element by element; missing or extra elements score 0; the item's
score is the mean. Quirks kept on purpose so scores match the official script:

- ``always_use_exact_match`` is computed for Fact Checking / Multi Choice but never passed by the official
  ``evaluate_predictions_chartqapro``, so those types are scored like the others (relaxed / ANLS);
- for Conversational items only the last Year flag is used;
- the reference and the prediction have leading/trailing ``.`` and newlines stripped first.

One addition: the official code indexes ``year_flags`` unguarded; an item with no flags (a sample without
ChartQAPro metadata) is treated as all "NO" instead of crashing.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from zuhyo.evaluate.metrics.base import METRICS
from zuhyo.schema import Sample

MAX_RELATIVE_CHANGE = 0.05
ANLS_THRESHOLD = 0.5


def levenshtein_distance(s1: str, s2: str) -> int:
    """Edit distance (as in the ``anls`` package the official script uses)."""
    if len(s1) > len(s2):
        s1, s2 = s2, s1
    distances = list(range(len(s1) + 1))
    for i2, c2 in enumerate(s2):
        row = [i2 + 1]
        for i1, c1 in enumerate(s1):
            row.append(distances[i1] if c1 == c2 else 1 + min(distances[i1], distances[i1 + 1], row[-1]))
        distances = row
    return distances[-1]


def anls_score(prediction: str, gold_labels: list[str], threshold: float = ANLS_THRESHOLD) -> float:
    """ANLS of the ``anls`` package (0.0.2): whitespace-collapsed, lower-cased; 1 − NL when NL < threshold else 0."""
    y_pred = " ".join(prediction.strip().lower().split())
    scores = []
    for gold in gold_labels:
        y_true = " ".join(gold.strip().lower().split())
        length = max(len(y_pred.upper()), len(y_true.upper()))
        nl = 0.0 if length == 0 else levenshtein_distance(y_pred, y_true) / length
        scores.append(1 - nl if nl < threshold else 0.0)
    return max(scores)


def fix_list_format(item: str) -> Any:
    """Quote unquoted list elements (``[a, b]`` → ``['a', 'b']``) and evaluate; the input when that fails."""
    if not isinstance(item, str):
        return item
    match = re.match(r"^\[(.*)\]$", item.strip())
    if not match:
        return item
    content = match.group(1)
    corrected = re.sub(r"(?<!['\w])(\w[^,]*?)(?!['\w])", r"'\1'", content)
    try:
        return ast.literal_eval(f"[{corrected}]")
    except (SyntaxError, ValueError):
        return item


def parse_to_list(text: str) -> list[str] | None:
    """A Python list literal as a list of stripped strings, else None."""
    if not isinstance(text, str):
        return None
    try:
        parsed = ast.literal_eval(text)
    except Exception:  # noqa: BLE001 - the official code swallows every parse failure
        return None
    if isinstance(parsed, list):
        return [str(x).strip(" '") for x in parsed]
    return None


def to_float(text: str) -> float | None:
    try:
        return float(text.strip().strip("%"))
    except ValueError:
        return None


def evaluate_single_answer(target: str, prediction: str, max_relative_change: float = MAX_RELATIVE_CHANGE) -> float:
    """One element: relaxed numeric match, else ANLS."""
    t = target.strip().strip("%").strip()
    p = prediction.strip().strip("%").strip()
    t_f, p_f = to_float(t), to_float(p)
    if t_f is not None and p_f is not None:
        if t_f == 0.0:
            return 1.0 if p_f == 0.0 else 0.0
        return 1.0 if abs(p_f - t_f) / abs(t_f) <= max_relative_change else 0.0
    return anls_score(prediction=p.lower(), gold_labels=[t.lower()], threshold=ANLS_THRESHOLD)


def relaxed_correctness_chartqapro(target: str, prediction: str, max_relative_change: float = MAX_RELATIVE_CHANGE,
                                   year_flags: list[str] | None = None,
                                   always_use_exact_match: bool = False) -> float:
    """The official per-item score (mean over list elements)."""
    fixed_t = fix_list_format(target)
    t_list = parse_to_list(str(fixed_t)) or [str(target)]
    p_list = parse_to_list(str(prediction)) or [str(prediction)]
    n = len(t_list)
    flags = list(year_flags or [])
    if len(flags) < n:
        flags = flags * n if flags else ["NO"] * n
    scores: list[float] = []
    for idx in range(max(len(t_list), len(p_list))):
        if idx >= len(t_list) or idx >= len(p_list):
            scores.append(0.0)  # more or fewer elements than needed
            continue
        t_item, p_item, flag = t_list[idx], p_list[idx], flags[idx]
        if flag.upper() == "YES" or always_use_exact_match:
            scores.append(1.0 if t_item.strip().lower() == p_item.strip().lower() else 0.0)
        else:
            scores.append(evaluate_single_answer(t_item, p_item, max_relative_change))
    return sum(scores) / len(scores) if scores else 0.0


def score_chartqapro(answer: str, prediction: str, question_type: str, year_flags: list[str]) -> float:
    """One row as ``evaluate_predictions_chartqapro`` scores it (``answer`` is the last turn's reference)."""
    gt = answer.strip(".").strip("\n")
    pred = prediction.strip(".").strip("\n")
    flags = year_flags[-1:] if question_type == "Conversational" else year_flags
    return relaxed_correctness_chartqapro(gt, pred, year_flags=flags)


@METRICS.register("chartqapro", "ChartQAPro official metric: relaxed numbers (5 %), ANLS text, exact years, "
                                "list answers element-wise (vis-nlp/ChartQAPro evaluate_predictions.py)")
def chartqapro(sample: Sample, response: str) -> float:
    """The official score of ``response`` against the sample's (last-turn) reference."""
    meta = sample.chartqapro
    qtype = meta.question_type if meta else "Factoid"
    flags = list(meta.year_flags) if meta else []
    return score_chartqapro(sample.answer, response, qtype, flags)
