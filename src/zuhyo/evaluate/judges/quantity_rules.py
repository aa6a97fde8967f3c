"""Rule 5 of the ``rules`` judge (:mod:`zuhyo.evaluate.judges.rules`): quantities compared.

Values, units and precision are read by :func:`~zuhyo.evaluate.judges.quantities.parse_quantity`. A hedge word
(約, 程度, およそ, ほぼ, approximately) marks a value as approximate and widens nothing (issue 21): HakushoBench's
judge accepts surface variation (§3.2 "7" vs "seven", §3.3 "minor surface variations"), not a different value.
Where the rounding itself is ambiguous (a reference that is itself approximate, a value halfway between two
roundings) the result is undecided, for the LLM stage of ``cascade:``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal

from zuhyo.evaluate.judges.answer_forms import SPAN_UNITS, has_negation, qualified_after, split_candidates, split_range
from zuhyo.evaluate.judges.base import VerdictLabel
from zuhyo.evaluate.judges.quantities import MAX_UNIT_LENGTH, Quantity, is_known_unit, parse_quantity, split_direction
from zuhyo.evaluate.judges.units import conversion_factor

LONG_ANSWER_CHARS = 60
"""Answers longer than this are free text: rules never call them wrong."""
APPROX_TOLERANCE = Decimal("0.05")
"""A reference that is itself approximate (約100万人) against another value within this relative difference is
undecided (the chart's printed value is unknown); a hedge in the answer widens nothing."""

_NUMBER_START = re.compile(r"(?<![\d.,])[-△▲]?\d[\d,.]*[万億兆千百十]*")
_Q_UP = re.compile(r"増|上昇|拡大|伸び|高ま|上が|多くな|\b(?:rise|rose|increase|grow|grew|gain|higher|up)\b")
_Q_DOWN = re.compile(r"減|低下|縮小|下落|下が|落ち|少なくな|\b(?:decrease|decline|drop|fall|fell|lower|down)\b")
_Q_POINTS = re.compile(r"ポイント|percentage points?|%\s*pt|\bpts?\b|\bpp\b", re.IGNORECASE)
_Q_SCALE = re.compile(r"何\s*(?P<small>百|千)?(?P<big>万|億|兆)|何\s*(?P<thousand>千)(?=[^万億兆])"
                      r"|(?:単位\s*[:：]?\s*|[(（]\s*)(?P<usmall>百|千)?(?P<ubig>万|億|兆)")
_EQUALS = re.compile(r"[=≈≒]")

_Q_CHANGE = re.compile(r"変化|増減|差|比べ|前年比|前年度比|伸び率|変動|どれだけ|どのくらい|どの程度|何ポイント|"
                       r"\b(?:change|difference|differ|compared|how much)\b")



@dataclass(frozen=True)
class Match:
    """Outcome of comparing one answer with one reference."""

    label: VerdictLabel
    reason: str


def result_of_equation(answer: str) -> str:
    """The text after the last ``=`` (or ≈) of a derivation (``520万人-400万人=120万人`` → ``120万人``), else the
    answer: the stated result, not the operands."""
    parts = _EQUALS.split(answer)
    return parts[-1].strip() if len(parts) > 1 else answer


def _close(a: Decimal, b: Decimal, tol: Decimal) -> bool:
    if a == b:
        return True
    return abs(a - b) <= tol * max(abs(a), abs(b))


def question_direction(question: str) -> int | None:
    """+1 when the question asks how much something rose (増加, 上昇, increase), -1 for a fall, else None."""
    up, down = _Q_UP.search(question) is not None, _Q_DOWN.search(question) is not None
    return 1 if up and not down else -1 if down and not up else None


def question_asks_for_change(question: str) -> bool:
    """True when the question asks for the size of a change or difference (増減, 差, 変化, 何ポイント, change)."""
    return (_Q_CHANGE.search(question) is not None or _Q_UP.search(question) is not None
            or _Q_DOWN.search(question) is not None)


def _compare_fraction(ref: Quantity, ans: Quantity) -> Match:
    """An exact fraction (1/3) against a decimal (0.33) or another fraction."""
    if ref.value == ans.value:
        return Match("correct", f"same value {ref.value.normalize():f}")
    frac, dec = (ref, ans) if ref.exact else (ans, ref)
    if dec.exact:
        return Match("incorrect", "different fractions")
    value = frac.value * 100 if dec.unit == "%" else frac.value
    frac = replace(frac, value=value)
    if frac.rounded_to(dec.quantum) == dec.value:
        if dec.quantum <= Decimal("0.01") or dec.unit == "%" and dec.quantum <= 1:
            return Match("correct", f"the fraction rounds to {dec.value.normalize():f}")
        return Match("undecided", f"the fraction only roughly equals {dec.value.normalize():f}")
    return Match("incorrect", f"fraction {value.normalize():f} differs from {dec.value.normalize():f}")


def question_asks_for_points(question: str) -> bool:
    """True when the question asks for percentage points (何ポイント, percentage points): then % = ポイント."""
    return _Q_POINTS.search(question) is not None


def question_scale(question: str) -> Decimal | None:
    """The scale a question asks its number in: 何万人 → 10^4, 何億円 → 10^8, 何千件 → 10^3, （万人） → 10^4."""
    m = _Q_SCALE.search(question)
    if not m:
        return None
    small, big = m.group("small") or m.group("usmall"), m.group("big") or m.group("ubig")
    if m.group("thousand"):
        return Decimal(1000)
    value = Decimal({"百": 100, "千": 1000}.get(small or "", 1))
    return value * {"万": 10**4, "億": 10**8, "兆": 10**12}[big]


def compare_quantities(ref: Quantity, ans: Quantity, question: str = "") -> Match:
    """Rule 5 of the module docstring."""
    if {ref.unit, ans.unit} == {"%", "pt"} and question_asks_for_points(question):
        ref, ans = replace(ref, unit="pt"), replace(ans, unit="pt")
    if ref.unit and ans.unit and ref.unit != ans.unit:
        factor = conversion_factor(ans.unit, ref.unit)
        if factor is not None:  # 3200 kg against 3.2 トン
            converted = replace(ans, value=ans.value * factor, unit=ref.unit, quantum=ans.quantum * factor)
            m = compare_quantities(ref, converted, question)
            return Match(m.label, f"{m.reason} (converted from {ans.unit})")
        if {ref.unit, ans.unit} == {"%", "pt"}:
            return Match("undecided", f"percent against percentage points ({ref.unit} vs {ans.unit})")
        if ref.value == ans.value and not (is_known_unit(ref.unit) and is_known_unit(ans.unit)):
            return Match("undecided", f"same value, other unit (maybe a synonym): {ans.unit} vs {ref.unit}")
        return Match("incorrect", f"unit differs: {ans.unit} vs reference {ref.unit}")
    if ref.exact or ans.exact:
        return _compare_fraction(ref, ans)
    if ref.bound != ans.bound:
        return Match("undecided", f"bound differs: {ans.bound or 'none'} vs reference {ref.bound or 'none'}")
    if ref.value == ans.value:
        return Match("correct", f"same value {ref.value.normalize():f}{ref.unit}")
    if ans.quantum < ref.quantum and abs(ans.value - ref.value) * 2 == ref.quantum and \
            (ans.value / ref.quantum).quantize(Decimal(1), rounding=ROUND_HALF_EVEN) * ref.quantum == ref.value:
        return Match("undecided", f"{ans.value.normalize():f} is halfway: it rounds to the reference only to even")
    if ans.quantum < ref.quantum and ans.rounded_to(ref.quantum) == ref.value:
        return Match("correct", f"{ans.value.normalize():f} rounds to the reference {ref.value.normalize():f}")
    if ref.approx:  # 約100万人: the reference itself is rounded; the chart's printed value is unknown
        if _close(ref.value, ans.value, APPROX_TOLERANCE):
            return Match("undecided", f"the reference is approximate; {ans.value.normalize():f} is within "
                                      f"{APPROX_TOLERANCE:.0%} of it")
        return Match("incorrect", f"value {ans.value.normalize():f} too far from the approximate reference "
                                  f"{ref.value.normalize():f}")
    if ans.approx:  # 約12.9% for 12.3%, 約80万人 for 77万人: a hedge widens nothing
        return Match("incorrect", f"hedged value {ans.value.normalize():f}{ans.unit} differs from reference "
                                  f"{ref.value.normalize():f}{ref.unit} (a hedge widens nothing)")
    if (ref.unit == "%") != (ans.unit == "%") and not (ref.unit and ans.unit) and (
            ref.value == ans.value * 100 or ans.value == ref.value * 100):
        return Match("undecided", "a fraction against a percentage")
    return Match("incorrect", f"value {ans.value.normalize():f}{ans.unit} differs from reference "
                              f"{ref.value.normalize():f}{ref.unit}")


def compare_in_question_scale(question: str, ref: Quantity, ans: Quantity, answer: str) -> Match:
    """:func:`compare_quantities`, also reading a bare number in the scale the question asks for (6676 answers
    何万人 as 6676万人)."""
    plain = compare_quantities(ref, ans, question)
    scale = question_scale(question)
    if plain.label == "correct" or ans.unit or scale is None or re.search(r"[万億兆千百]|[a-z]", answer):
        return plain
    scaled = compare_quantities(ref, replace(ans, value=ans.value * scale, quantum=ans.quantum * scale), question)
    if scaled.label == "correct":
        return Match("correct", f"{scaled.reason} (the answer's number in the question's scale ×{scale:,})")
    return plain if plain.label == scaled.label else Match("undecided", f"{plain.reason}; in the question's "
                                                                       f"scale: {scaled.reason}")


def _direction_of(q: Quantity, word_direction: int | None, text: str) -> int | None:
    if word_direction is not None:
        return word_direction
    return -1 if q.value < 0 else 1 if text.startswith("+") else None


def compare_changes(question: str, ref: str, ans: str) -> Match | None:
    """Rule 5a: a change stated with a direction word (3.2ポイント上昇, 25%増, 前年比25%の増加) or a sign against
    one stated without; None when neither side states a change. The sizes must agree; then the directions must
    not disagree: a missing direction is filled from the question (何ポイント上昇したか) or left undecided."""
    r_core, r_word_dir, r_word = split_direction(ref)
    a_core, a_word_dir, a_word = split_direction(ans)
    rq, aq = parse_quantity(r_core), parse_quantity(a_core)
    if rq is None or aq is None:
        return None
    if not (r_word or a_word) and not (rq.value == -aq.value != 0 and question_direction(question) == -1):
        return None  # signs alone: only "how much did it fall?" answered with -3.2 for 3.2 (or the reverse)
    r_dir, a_dir = _direction_of(rq, r_word_dir, r_core), _direction_of(aq, a_word_dir, a_core)
    size = compare_quantities(replace(rq, value=abs(rq.value)), replace(aq, value=abs(aq.value)), question)
    if size.label != "correct":
        return Match(size.label, f"size of the change: {size.reason}")
    q_dir = question_direction(question)
    if r_dir is not None and a_dir is not None:
        return Match("correct", "same change and direction") if r_dir == a_dir else \
            Match("incorrect", "the change goes the other way")
    if r_dir is not None:
        if q_dir == r_dir:
            return Match("correct", "same size; the question names the direction")
        return Match("undecided", "same size, but the answer gives no direction")
    if a_dir is not None:
        if q_dir is not None and q_dir != a_dir:
            return Match("undecided", "same size, but the answer's direction contradicts the question")
        if q_dir is None and not question_asks_for_change(question):
            return Match("undecided", "the answer states a change; the question may not ask for one")
        return Match("correct", "same size of change; the direction word is not a unit")
    return Match("correct", f"same size of change ({size.reason})")


def find_quantities(text: str, unit: str) -> list[tuple[Quantity, int, int]]:
    """Quantities with the given unit stated inside a longer normalised text, with their spans: each Arabic
    number read with the unit right after it (``2020年は25%で`` with unit % → [(25 %, 6, 9)])."""
    found: list[tuple[Quantity, int, int]] = []
    for m in _NUMBER_START.finditer(text):
        start = m.start() - 1 if m.start() > 0 and text[m.start() - 1] in "約~" else m.start()
        for end in range(m.end(), min(len(text), m.end() + MAX_UNIT_LENGTH) + 1):
            q = parse_quantity(text[start:end])
            if q is not None and q.unit == unit:
                found.append((q, start, end))
                break
    return found


def quantity_in_longer_answer(question: str, ref: Quantity, answer: str) -> Match:
    """A reference quantity against an answer that is not one quantity: a sentence decides only when it states
    exactly one value with the reference's unit, unqualified (no bound, change, range or alternative next to
    it), and does not negate; when no value with that unit matches, it is incorrect."""
    if len(answer) > LONG_ANSWER_CHARS:
        return Match("undecided", "long free-text answer")
    found = find_quantities(answer, ref.unit)
    if not found:
        return Match("undecided", "answer states no comparable value")
    labels = {compare_quantities(ref, q, question).label for q, _, _ in found}
    if "correct" not in labels:
        if "undecided" in labels:
            return Match("undecided", "a value in the answer may match the reference")
        return Match("incorrect", "no value in the answer matches the reference")
    if has_negation(answer) or split_candidates(answer) is not None:
        return Match("undecided", "the reference value appears in an answer that negates or offers alternatives")
    plain = {q.value: q for q, start, end in found if not qualified_after(answer, start, end)}
    if len(plain) == 1 and compare_quantities(ref, next(iter(plain.values())), question).label == "correct":
        return Match("correct", "the answer's one stated value with this unit is the reference (in a sentence)")
    return Match("undecided", "the reference value appears among other or qualified values in a longer answer")


def _range_of(text: str) -> tuple[Quantity, Quantity] | None:
    ends = split_range(text)
    if ends is None:
        return None
    a, b = parse_quantity(ends[0]), parse_quantity(ends[1])
    if a is None or b is None or a.unit != b.unit or (a.unit and not is_known_unit(a.unit)):
        return None  # 350件から400件に増加: not a range of one unit
    return a, b


def compare_ranges(question: str, ref: str, ans: str) -> Match | None:
    """Ranges (20~30代 = 20代から30代): both ends must agree; a range for one reference value is a hedge."""
    ref_range, ans_range = _range_of(ref), _range_of(ans)
    if ref_range and ans_range:
        labels = [compare_quantities(r, a, question).label for r, a in zip(ref_range, ans_range, strict=True)]
        if all(label == "correct" for label in labels):
            return Match("correct", "same range")
        if "incorrect" in labels:
            return Match("incorrect", "the ranges' ends differ")
        return Match("undecided", "range ends cannot be compared")
    if ref_range and parse_quantity(ans) is not None:
        return Match("undecided", "the reference is a range, the answer one value")
    ref_q = parse_quantity(ref)
    if ans_range and ref_q is not None:
        if ref_q.unit.endswith(SPAN_UNITS) or ref_q.bound or ref_q.approx:
            return Match("undecided", f"a range against {ref_q.unit or 'a bounded value'} (itself a span)")
        return Match("incorrect", "the answer gives a range for one reference value (a hedge)")
    return None


