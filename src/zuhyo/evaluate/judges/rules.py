"""The ``rules`` judge: deterministic, Japanese-aware answer matching (correct / incorrect / undecided).

Order of the rules (the first that applies decides, per reference; several references: correct if any is):

1. The final answer is read from the reply (:func:`extract_final_answer`) and both sides are normalised: NFKC and
   width (jaconv), lower case, era years to Western years (令和5年 → 2023年), Markdown, quotes, copulas (です)
   and trailing punctuation stripped. Equal texts, or equal once spaces and punctuation are removed → correct.
1a. Abstentions (:mod:`~zuhyo.evaluate.judges.abstention`: unknown, わかりません, 回答できません ...) → incorrect,
   unless the reference says the question is unanswerable (then correct; a short non-abstaining answer to such a
   reference is incorrect). Abstentions must never raise a score by leaving the mean (issue 7, item 8).
1b. Alternatives (:func:`~zuhyo.evaluate.judges.answer_forms.split_candidates`: 3か4, 北海道または青森県, 3 or 4,
   either A or B): every alternative the reference → correct; one of them → incorrect (a hedge: the HakushoBench
   judge prompt answers no "if there is any ... ambiguity"); all wrong → incorrect; else undecided.
2. Yes/no (はい/いいえ/yes/no/true/false/正しい/誤り): compared as booleans; a reply with no yes/no → undecided.
3. Option labels (A, (b), ①): compared as labels.
4. Lists (reference with two or more items separated by 、 , ， ・ ; or "and"): the same number of items, each
   matched by these rules. Order matters only when the question asks for one (順に, 順番, 順位, 多い順, 首位,
   並べ, order, rank, ascending, descending ...); otherwise items are matched as a set.
4a. Trend words on both sides (増加傾向, 減少した, 横ばい): the directions decide.
4b. Ranges (20~30代 = 20代から30代): both ends decide; a range for one reference value is a hedge → incorrect
   (undecided when the reference is itself a span: 60代).
5. Quantities (:mod:`~zuhyo.evaluate.judges.quantity_rules`, read by :func:`parse_quantity`: kanji numerals,
   English number words, 万/億/兆, %, 割, ポイント, 半分, units, counters, 7時間30分). Units of one dimension are
   converted; % = ポイント when the question asks for points; a bare number answers in the question's scale
   (何万人); the value after the last ``=`` of a derivation is the answer's. Equal values, or a more precise
   answer that rounds to the reference → correct; a hedge (約, 程度, およそ, ほぼ, approximately) widens nothing:
   a hedged different value → incorrect; a reference that is itself approximate → undecided within 5 %; in a
   sentence, exactly one unqualified value with the reference's unit decides.
6. Texts with the same wording around their numbers (2023年4月 vs 2023年5月) → their numbers decide.
6a. Prefectures and countries (:mod:`~zuhyo.evaluate.judges.entities`): one canonical name → correct, another
   member → incorrect; a choice question answered with its other alternative → incorrect; the reference stated
   first with added context (製造業（自動車）, 製造業が最も多い) → correct unless negated, ranked lower or hedged.
7. Other text that differs → undecided (synonyms and aliases need the LLM judge), as is any long reply or a
   reference that is a sentence.

``docs/judges.md`` states each rule with examples and says which are the papers' and which are zuhyo's own.
"""

from __future__ import annotations

import re
from decimal import Decimal

from zuhyo.evaluate.judges.abstention import is_abstention, reference_says_unanswerable
from zuhyo.evaluate.judges.answer_extraction import compact_text, extract_final_answer, normalize_text
from zuhyo.evaluate.judges.answer_forms import has_negation, split_candidates, trend_of
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict
from zuhyo.evaluate.judges.entities import entities_in, entity_of
from zuhyo.evaluate.judges.japanese_numbers import convert_era_years
from zuhyo.evaluate.judges.quantities import parse_quantity, split_direction
from zuhyo.evaluate.judges.quantity_rules import (
    LONG_ANSWER_CHARS,
    Match,
    compare_changes,
    compare_in_question_scale,
    compare_ranges,
    quantity_in_longer_answer,
    result_of_equation,
)

RULES_VERSION = "3"
SENTENCE_REFERENCE_CHARS = 30

_YES = {"はい", "yes", "y", "true", "正しい", "正", "そうです", "その通り", "合っている"}
_NO = {"いいえ", "no", "n", "false", "誤り", "誤", "正しくない", "違う", "違います"}
_LEADING_BOOL = re.compile(r"^(はい|いいえ|yes|no|true|false)(?:[、,。.!！\s]|$)")
_OPTION = re.compile(r"^(?:\(([a-z])\)|([a-z])[.)]|([a-z])|([①-⑳]))(?:\s|$)")
_ORDER_WORDS = re.compile(
    r"順に|順番|順序|順位|の順|い順|首位|[1一]位と|[1一]番目と|[多少高低大小]き?い?順|上位から|下位から|並べ|ランキング|\border\b|\brank|"
    r"descending|ascending|from (?:the )?(?:highest|lowest|largest|smallest|most|least)", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"\s*(?:[、，;；・]|,(?!\d{3}(?!\d))|\band\b|及び|および)\s*")
_NUMBER_IN_TEXT = re.compile(r"\d+(?:\.\d+)?")
_RANK_WORDS = re.compile(r"次い|次に|[2-9二三四五六七八九]番目|第[2-9二三四五]|[2-9二三四五]位|second|third")
_HIGH = re.compile(r"(?:最も|一番)(?:多|高|大)|最[多高大]")
_LOW = re.compile(r"(?:最も|一番)(?:少|低|小)|最[少低小]")
_Q_CHOICE = re.compile(r"どちら|どっち|いずれ|のうち|\bwhich\b|\bor\b|か、|かを")


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


def _compare_candidates(question: str, reference: str, answer: str) -> Match | None:
    """An answer offering alternatives (3か4, 北海道または青森県, 3 or 4): a hedge. Every alternative the reference →
    correct; one of them → incorrect (the judge prompt's "any ambiguity"); all wrong → incorrect."""
    candidates = split_candidates(answer)
    if candidates is None or parse_quantity(answer) is not None or split_candidates(reference) is not None:
        return None
    labels = [compare_answer(question, reference, c, in_list=True).label for c in candidates]
    if all(label == "correct" for label in labels):
        return Match("correct", "every alternative in the answer is the reference")
    if "correct" in labels:
        return Match("incorrect", f"the answer hedges between {len(candidates)} alternatives, one of them the "
                                  "reference")
    if all(label == "incorrect" for label in labels):
        return Match("incorrect", "the answer offers alternatives, none of them the reference")
    return Match("undecided", "the answer offers alternatives; some cannot be compared")


def _compare_entities(question: str, ref: str, ans: str) -> Match | None:
    """Prefectures and countries (:mod:`~zuhyo.evaluate.judges.entities`): same canonical name → correct, another
    member of the set → incorrect; in a sentence, decided only when it names members of one set unnegated."""
    ref_e = entity_of(ref)
    if ref_e is None:
        return None
    ans_e = entity_of(ans)
    if ans_e is not None:
        if ans_e == ref_e:
            return Match("correct", f"the same {ref_e[0]}: {ref_e[1]}")
        if ans_e[0] == ref_e[0]:
            return Match("incorrect", f"another {ref_e[0]}: {ans_e[1]} vs {ref_e[1]}")
        return None
    if len(ans) > LONG_ANSWER_CHARS or has_negation(ans) or split_candidates(ans) is not None:
        return None
    named = {e for e in entities_in(ans) if e[0] == ref_e[0]}
    if named == {ref_e} and not _RANK_WORDS.search(ans) and not _opposite_superlative(question, ans):
        return Match("correct", f"the answer names {ref_e[1]} and no other {ref_e[0]}")
    if named and ref_e not in named:
        return Match("incorrect", f"the answer names another {ref_e[0]} ({', '.join(sorted(n for _, n in named))})")
    return None


def _text_in_sentence(question: str, ref: str, ans: str) -> Match | None:
    """The reference text stated first with a note: ``製造業（自動車）``, ``製造業が最も多い`` (HakushoBench's judge
    accepts added context that still contains the answer exactly) — unless the rest negates, ranks it lower,
    or offers alternatives."""
    if not ans.startswith(ref) or len(ref) < 2 or len(ans) > SENTENCE_REFERENCE_CHARS * 2:
        return None
    rest = ans[len(ref):]
    if not re.match(r"^(?:\(|が|は|で[、,]|であり|で最|。|、|,)", rest):
        return None
    if has_negation(rest) or split_candidates(ans) is not None or _RANK_WORDS.search(rest) or \
            _opposite_superlative(question, rest):
        return Match("undecided", "the reference appears in a sentence that qualifies it")
    return Match("correct", "the answer states the reference first, with added context")


def _opposite_superlative(question: str, text: str) -> bool:
    """The answer calls it the highest where the question asks for the lowest, or the reverse."""
    q_high, q_low = re.search(r"[多高大]", question), re.search(r"[少低小]", question)
    return bool((_HIGH.search(text) and not q_high) or (_LOW.search(text) and not q_low))


def _other_alternative_of_question(question: str, ref: str, ans: str) -> Match | None:
    """A choice question (男性と女性のどちらが多いか, increase or decrease?) answered with the other alternative it
    names: incorrect."""
    q = compact_text(question)
    r, a = compact_text(ref), compact_text(ans)
    if len(r) < 2 or len(a) < 2 or r in a or a in r or not _Q_CHOICE.search(normalize_text(question)):
        return None
    if r in q and a in q:
        return Match("incorrect", "the answer is the other alternative the question names")
    return None


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
    if not in_list:
        alternatives = _compare_candidates(question, reference, answer)
        if alternatives is not None:
            return alternatives
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
    ref_trend, ans_trend = trend_of(ref), trend_of(ans)
    if ref_trend is not None and ans_trend is not None:
        return Match("correct" if ref_trend == ans_trend else "incorrect", "trend words " + (
            "agree" if ref_trend == ans_trend else "differ"))
    ranges = compare_ranges(question, ref, ans)
    if ranges is not None:
        return ranges
    change = compare_changes(question, ref, ans)
    if change is not None:
        return change
    ref_core, _, ref_has_direction = split_direction(ref)
    ref_q = parse_quantity(ref_core if ref_has_direction else ref)
    if ref_q is not None:
        result = result_of_equation(ans)  # 520万人-400万人=120万人: the result
        ans_q = parse_quantity(result)
        if ans_q is not None:
            m = compare_in_question_scale(question, ref_q, ans_q, result)
            return m if result == ans else Match(m.label, f"{m.reason} (the value after the last '=')")
        return quantity_in_longer_answer(question, ref_q, ans)
    ref_tpl, ref_nums = _number_template(ref)
    ans_tpl, ans_nums = _number_template(ans)
    if ref_nums and ref_tpl == ans_tpl:
        same = ref_nums == ans_nums
        return Match("correct" if same else "incorrect", "same wording, numbers " + ("agree" if same else "differ"))
    for rule in (_compare_entities(question, ref, ans), _other_alternative_of_question(question, ref, ans),
                 _text_in_sentence(question, ref, ans)):
        if rule is not None:
            return rule
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
