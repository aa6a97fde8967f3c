"""The ``rules`` judge: deterministic, Japanese-aware answer matching (correct / incorrect / undecided).

Order of the rules (the first that applies decides, per reference; several references: correct if any is):

1. The final answer is read from the reply (:func:`extract_final_answer`) and both sides are normalised: NFKC and
   width (jaconv), lower case, era years to Western years (令和5年 → 2023年), Markdown, quotes, copulas (です)
   and trailing punctuation stripped. Equal texts, or equal once spaces and punctuation are removed → correct.
1a. Abstentions (:mod:`~zuhyo.evaluate.judges.abstention`: unknown, わかりません, 回答できません ...) → incorrect,
   unless the reference says the question is unanswerable (then correct; a short non-abstaining answer to such a
   reference is incorrect). Abstentions must never raise a score by leaving the mean (issue 7, item 8).
2. Yes/no (はい/いいえ/yes/no/true/false/正しい/誤り): compared as booleans; a reply with no yes/no → undecided.
3. Option labels (A, (b), ①): compared as labels.
4. Lists (reference with two or more items separated by 、 , ， ・ ; or "and"): the same number of items, each
   matched by these rules. Order matters only when the question asks for one (順に, 順番, 順位, 多い順, 高い順,
   並べ, order, rank, ascending, descending ...); otherwise items are matched as a set.
5. Quantities (:func:`parse_quantity`): kanji numerals, 万/億/兆, thousands separators, decimals, %, 割, ポイント,
   units and counters. Units must agree when both sides give one (% against ポイント → undecided; the same value
   with an unknown unit spelling → undecided), except units of one dimension, which are converted (3.2トン =
   3200kg, :mod:`~zuhyo.evaluate.judges.units`). Fractions (1/2, 2分の1) are exact values (0.33 for 1/3 rounds).
   Change words (増/増加/上昇/減少/低下/前年比 ..., :func:`compare_changes`) give a direction, never a unit: the
   sizes must agree, then the directions must not disagree (a missing one is taken from the question, else
   undecided). Equal
   values → correct; a more precise answer that rounds to the reference at the reference's precision
   (12.34% for 12.3%, 12,345人 for 1.2万人) → correct; approximations (約, およそ, 程度, about) → correct within
   5 % relative difference; bounds (以上, 未満) must agree or the result is undecided; anything else → incorrect.
   A reference quantity against a longer reply: a reply that states the value among other text → undecided,
   a short reply whose values with the same unit all differ → incorrect.
6. Texts with the same wording around their numbers (2023年4月 vs 2023年5月) → their numbers decide.
7. Other text that differs → undecided (synonyms and aliases need the LLM judge), as is any long reply or a
   reference that is a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from zuhyo.evaluate.judges.abstention import is_abstention, reference_says_unanswerable
from zuhyo.evaluate.judges.answer_extraction import compact_text, extract_final_answer, normalize_text
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, VerdictLabel
from zuhyo.evaluate.judges.japanese_numbers import convert_era_years
from zuhyo.evaluate.judges.quantities import (
    MAX_UNIT_LENGTH,
    Quantity,
    is_known_unit,
    parse_quantity,
    split_direction,
)
from zuhyo.evaluate.judges.units import conversion_factor

RULES_VERSION = "2"
APPROX_TOLERANCE = Decimal("0.05")
"""Relative difference accepted when either side says the value is approximate (約, およそ, about)."""
LONG_ANSWER_CHARS = 60
"""Answers longer than this are free text: rules never call them wrong."""
SENTENCE_REFERENCE_CHARS = 30

_YES = {"はい", "yes", "y", "true", "正しい", "正", "そうです", "その通り", "合っている"}
_NO = {"いいえ", "no", "n", "false", "誤り", "誤", "正しくない", "違う", "違います"}
_LEADING_BOOL = re.compile(r"^(はい|いいえ|yes|no|true|false)(?:[、,。.!！\s]|$)")
_OPTION = re.compile(r"^(?:\(([a-z])\)|([a-z])[.)]|([a-z])|([①-⑳]))(?:\s|$)")
_ORDER_WORDS = re.compile(
    r"順に|順番|順序|順位|の順|い順|[多少高低大小]き?い?順|上位から|下位から|並べ|ランキング|\border\b|\brank|"
    r"descending|ascending|from (?:the )?(?:highest|lowest|largest|smallest|most|least)", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"\s*(?:[、，;；・]|,(?!\d{3}(?!\d))|\band\b|及び|および)\s*")
_NUMBER_IN_TEXT = re.compile(r"\d+(?:\.\d+)?")
_NUMBER_START = re.compile(r"(?<![\d.,])[-△▲]?\d[\d,.]*[万億兆千百十]*")
_Q_UP = re.compile(r"増|上昇|拡大|伸び|高ま|上が|多くな|\b(?:rise|rose|increase|grow|grew|gain|higher|up)\b")
_Q_DOWN = re.compile(r"減|低下|縮小|下落|下が|落ち|少なくな|\b(?:decrease|decline|drop|fall|fell|lower|down)\b")
_Q_CHANGE = re.compile(r"変化|増減|差|比べ|前年比|前年度比|伸び率|変動|どれだけ|どのくらい|どの程度|何ポイント|"
                       r"\b(?:change|difference|differ|compared|how much)\b")


@dataclass(frozen=True)
class Match:
    """Outcome of comparing one answer with one reference."""

    label: VerdictLabel
    reason: str


def question_asks_for_order(question: str) -> bool:
    """True when the question asks for an ordered answer (then list order matters)."""
    return _ORDER_WORDS.search(question) is not None


def _bool_of(text: str) -> bool | None:
    if text in _YES:
        return True
    if text in _NO:
        return False
    m = _LEADING_BOOL.match(text)
    if m:
        return m.group(1) in ("はい", "yes", "true")
    return None


def option_label(text: str) -> str | None:
    """The option label an answer consists of (``a``, ``(b)``, ``c.``, ``①``), or None."""
    m = _OPTION.match(text)
    if not m or (m.group(3) and len(text) > 1):
        return None
    return next(g for g in m.groups() if g)


def split_list(text: str) -> list[str]:
    """Items of a list answer (empty pieces dropped)."""
    return [p for p in _LIST_SPLIT.split(text) if p and p.strip()]


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


def compare_quantities(ref: Quantity, ans: Quantity) -> Match:
    """Rule 5 of the module docstring."""
    if ref.unit and ans.unit and ref.unit != ans.unit:
        factor = conversion_factor(ans.unit, ref.unit)
        if factor is not None:  # 3200 kg against 3.2 トン
            converted = replace(ans, value=ans.value * factor, unit=ref.unit, quantum=ans.quantum * factor)
            m = compare_quantities(ref, converted)
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
    if ref.approx or ans.approx:
        if _close(ref.value, ans.value, APPROX_TOLERANCE):
            return Match("correct", f"approximate value within {APPROX_TOLERANCE:%}")
        return Match("incorrect", f"approximate value {ans.value.normalize():f} too far from {ref.value.normalize():f}")
    if ans.quantum < ref.quantum and ans.rounded_to(ref.quantum) == ref.value:
        return Match("correct", f"{ans.value.normalize():f} rounds to the reference {ref.value.normalize():f}")
    if (ref.unit == "%") != (ans.unit == "%") and not (ref.unit and ans.unit) and (
            ref.value == ans.value * 100 or ans.value == ref.value * 100):
        return Match("undecided", "a fraction against a percentage")
    return Match("incorrect", f"value {ans.value.normalize():f}{ans.unit} differs from reference "
                              f"{ref.value.normalize():f}{ref.unit}")


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
    size = compare_quantities(replace(rq, value=abs(rq.value)), replace(aq, value=abs(aq.value)))
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


def find_quantities(text: str, unit: str) -> list[Quantity]:
    """Quantities with the given unit stated inside a longer normalised text: each Arabic number read with
    the unit right after it (``2020年は25%で`` with unit % → [25 %])."""
    found: list[Quantity] = []
    for m in _NUMBER_START.finditer(text):
        start = m.start() - 1 if m.start() > 0 and text[m.start() - 1] in "約~" else m.start()
        for end in range(m.end(), min(len(text), m.end() + MAX_UNIT_LENGTH) + 1):
            q = parse_quantity(text[start:end])
            if q is not None and q.unit == unit:
                found.append(q)
                break
    return found


def _quantity_in_longer_answer(ref: Quantity, answer: str) -> Match:
    """A reference quantity against an answer that is not one quantity."""
    if len(answer) > LONG_ANSWER_CHARS:
        return Match("undecided", "long free-text answer")
    comparable = find_quantities(answer, ref.unit)
    if not comparable:
        return Match("undecided", "answer states no comparable value")
    if any(compare_quantities(ref, q).label == "correct" for q in comparable):
        return Match("undecided", "the reference value appears in a longer answer")
    return Match("incorrect", "no value in the answer matches the reference")


def _compare_lists(question: str, refs: list[str], answers: list[str]) -> Match:
    if len(answers) == 1:
        return Match("undecided", "reference is a list, the answer is not separated into items")
    if len(refs) != len(answers):
        return Match("incorrect", f"{len(answers)} items instead of {len(refs)}")
    if question_asks_for_order(question):
        results = [compare_answer(question, r, a, in_list=True) for r, a in zip(refs, answers, strict=True)]
        if all(m.label == "correct" for m in results):
            return Match("correct", "ordered list matches item by item")
        if _compare_unordered(question, refs, answers).label == "correct":
            return Match("incorrect", "same items in a different order (the question asks for an order)")
        bad = [m for m in results if m.label == "incorrect"]
        if bad:
            return Match("incorrect", f"ordered list: {bad[0].reason}")
        return Match("undecided", "ordered list: some items undecided")
    return _compare_unordered(question, refs, answers)


def _compare_unordered(question: str, refs: list[str], answers: list[str]) -> Match:
    unused = list(answers)
    undecided = False
    for r in refs:
        hit = next((a for a in unused if compare_answer(question, r, a, in_list=True).label == "correct"), None)
        if hit is None:
            undecided = undecided or any(compare_answer(question, r, a, in_list=True).label == "undecided"
                                         for a in unused)
            if not undecided:
                return Match("incorrect", f"no item matches {r!r}")
            continue
        unused.remove(hit)
    if undecided:
        return Match("undecided", "unordered list: some items undecided")
    return Match("correct", "same items (order not asked for)")


def _number_template(text: str) -> tuple[str, list[Decimal]]:
    nums = [Decimal(n) for n in _NUMBER_IN_TEXT.findall(text)]
    return _NUMBER_IN_TEXT.sub("#", text), nums


def compare_answer(question: str, reference: str, answer: str, *, in_list: bool = False) -> Match:
    """Compare one final answer with one reference (both raw; normalised here)."""
    ref = convert_era_years(normalize_text(reference))
    ans = convert_era_years(normalize_text(answer))
    if not ans:
        return Match("incorrect", "empty answer")
    if ref == ans:
        return Match("correct", "exact match after normalisation")
    if compact_text(ref) == compact_text(ans) and compact_text(ref):
        return Match("correct", "equal ignoring spaces and punctuation")
    if reference_says_unanswerable(ref):
        if is_abstention(ans):
            return Match("correct", "the reference and the answer both say it cannot be answered")
        if len(ans) <= SENTENCE_REFERENCE_CHARS:
            return Match("incorrect", "the reference says the question cannot be answered; the answer gives one")
        return Match("undecided", "the reference says the question cannot be answered")
    if is_abstention(ans) and compact_text(ref) not in compact_text(ans):
        return Match("incorrect", "the answer abstains (unknown / cannot tell); the reference gives an answer")
    ref_bool = _bool_of(ref)
    if ref_bool is not None:
        ans_bool = _bool_of(ans)
        if ans_bool is None:
            return Match("undecided", "yes/no reference, no yes/no in the answer")
        return Match("correct" if ans_bool == ref_bool else "incorrect", "yes/no " + ("agrees" if ans_bool == ref_bool
                                                                                     else "differs"))
    ref_opt, ans_opt = option_label(ref), option_label(ans)
    if ref_opt and ans_opt:
        return Match("correct" if ref_opt == ans_opt else "incorrect", f"option {ans_opt} vs {ref_opt}")
    if not in_list:
        ref_items = split_list(ref)
        if len(ref_items) >= 2 and all(len(i) <= SENTENCE_REFERENCE_CHARS for i in ref_items):
            return _compare_lists(question, ref_items, split_list(ans))
    change = compare_changes(question, ref, ans)
    if change is not None:
        return change
    ref_core, _, ref_has_direction = split_direction(ref)
    ref_q = parse_quantity(ref_core if ref_has_direction else ref)
    if ref_q is not None:
        ans_q = parse_quantity(ans)
        if ans_q is not None:
            return compare_quantities(ref_q, ans_q)
        return _quantity_in_longer_answer(ref_q, ans)
    ref_tpl, ref_nums = _number_template(ref)
    ans_tpl, ans_nums = _number_template(ans)
    if ref_nums and ref_tpl == ans_tpl:
        same = ref_nums == ans_nums
        return Match("correct" if same else "incorrect", "same wording, numbers " + ("agree" if same else "differ"))
    if len(ref) > SENTENCE_REFERENCE_CHARS or "。" in ref:
        return Match("undecided", "reference is a sentence")
    if len(ans) > LONG_ANSWER_CHARS:
        return Match("undecided", "long free-text answer")
    if ref in ans or ans in ref:
        return Match("undecided", "one text contains the other")
    return Match("undecided", "texts differ (may be synonyms)")


def judge_rules(question: str, references: tuple[str, ...] | list[str], reply: str) -> Verdict:
    """Apply the rules to a reply against every reference: correct if any matches, else undecided if any is,
    else incorrect."""
    answer = extract_final_answer(reply)
    matches = [compare_answer(question, r, answer) for r in references]
    for label in ("correct", "undecided", "incorrect"):
        chosen = next((m for m in matches if m.label == label), None)
        if chosen is not None:
            score = {"correct": 1.0, "incorrect": 0.0}.get(label)
            return Verdict(verdict=chosen.label, score=score, reason=chosen.reason, extracted_answer=answer,
                           decided_by="rules")
    raise ValueError("judge_rules needs at least one reference")


class RulesJudge:
    """The ``rules`` judge (pure; see the module docstring for its rules)."""

    id = "rules"
    prompt_version = f"rules-{RULES_VERSION}"

    async def judge(self, item: JudgeInput) -> Verdict:
        return judge_rules(item.question, item.references, item.response)

    async def aclose(self) -> None:
        return None


@JUDGES.register("rules", "deterministic Japanese-aware matching: numbers, 万/億, %, 割, era years, units, yes/no, "
                          "lists; correct / incorrect / undecided")
def _build_rules(rest: str, options: JudgeOptions) -> RulesJudge:
    if rest:
        raise ValueError(f"the rules judge takes no argument (got 'rules:{rest}')")
    return RulesJudge()
