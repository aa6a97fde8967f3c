"""Which scorer an AstroChart item gets (DomainCQA §5.1 "Metrics", Appendix G), and multiple-choice matching.

DomainCQA scores numerical responses in two ways and everything else with an LLM judge (§5.1, Appendix G):

- **data retrieval** ("plotted points or data ranges": Data/Point, Data/Interval) → Algorithm 3
  (``numeric_retrieval``);
- **data derivation** ("the number of bars, colors, or legends, as well as math reasoning": Data/Calculation, and
  questions that count structural elements) → exact numeric match after extraction (``numeric_exact``);
- **open-ended responses** (everything else) → the LLM key-point judge (``open``).

An explicit ``sample.astro.answer_kind`` wins. Without one the kind is derived here, not by the loader, so rows
from any adapter (``astrochart``, ``local`` JSONL with an ``astro`` object) are routed alike:

- Data/Point and Data/Interval → ``numeric_retrieval`` (an item without ``axis_min``/``axis_max`` is then
  unscored, with the reason: Algorithm 3 needs the axis range);
- Data/Calculation → ``numeric_exact``;
- Data without an aspect → ``numeric_retrieval`` when the axis range is given, else ``numeric_exact`` (the paper
  does not say; a reading needs an axis, a derivation does not);
- a Visual or Data question that asks to count ("how many", "number of") with a whole-number reference →
  ``numeric_exact`` (structural-element counts are data derivation in Appendix G.1);
- everything else → ``open``. ``choice`` is never derived: say so with ``answer_kind``.
"""

from __future__ import annotations

import re
from typing import Literal

from zuhyo.evaluate.judges.answer_extraction import extract_final_answer, normalize_text
from zuhyo.evaluate.judges.base import Verdict
from zuhyo.evaluate.judges.numeric_values import reference_quantities
from zuhyo.evaluate.judges.rules import option_label
from zuhyo.schema import AstroAspect, AstroCategory, Sample

AnswerKind = Literal["numeric_retrieval", "numeric_exact", "open", "choice"]

_COUNT_QUESTION = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE)
_NEGATION = re.compile(r"(?:\bnot|n't|\bno|\bnever|\bneither|\bnor)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_LABELLED_OPTION = re.compile(r"(?:^|\s|[:;,])\(?([A-Ha-h])[).]\s+(.+?)(?=\s+\(?[A-Ha-h][).]\s|[;,]?\s*$|\?|\n)")


def scoring_kind(sample: Sample) -> AnswerKind:
    """The answer kind that decides how ``sample`` is scored (see the module docstring)."""
    meta = sample.astro
    if meta is None:
        raise ValueError(f"{sample.key}: not an AstroChart item (no astro metadata)")
    if meta.answer_kind is not None:
        return meta.answer_kind
    if meta.aspect in (AstroAspect.POINT, AstroAspect.INTERVAL):
        return "numeric_retrieval"
    if meta.aspect is AstroAspect.CALCULATION:
        return "numeric_exact"
    if meta.category in (AstroCategory.VISUAL, AstroCategory.DATA) and _COUNT_QUESTION.search(sample.question) \
            and all(_whole_number(a) for a in sample.answers):
        return "numeric_exact"
    if meta.category is AstroCategory.DATA:
        return "numeric_retrieval" if meta.axis_min is not None and meta.axis_max is not None else "numeric_exact"
    return "open"


def _whole_number(answer: str) -> bool:
    values = reference_quantities(answer)
    return len(values) == 1 and values[0].value.is_integer() and values[0].value >= 0


def question_options(question: str) -> dict[str, str]:
    """Labelled options listed in a question (``(A) red (B) blue``, ``A. red; B. blue``): label → text."""
    return {m.group(1).lower(): normalize_text(m.group(2)) for m in _LABELLED_OPTION.finditer(question)}


def _mentions(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` as whole words, not negated just before ("not blue")."""
    for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text):
        if not _NEGATION.search(text[:m.start()]):
            return True
    return False


def match_choice(references: tuple[str, ...] | list[str], answer: str, question: str = "") -> Verdict:
    """Compare the option an answer chooses with the reference option.

    The answer chooses an option by its label (``B``, ``(b)``), by being the option's text, or by naming exactly
    one option in a sentence ("The T = 10000 K curve is blue." chooses ``blue``). With the options listed in the
    question, naming two of them is *undecided*; without a list, the reference's text named (and not negated) in
    the final answer is the choice. Otherwise the answer chose another option: incorrect.
    """
    final = normalize_text(extract_final_answer(answer))
    ans_label = option_label(final)
    options = question_options(question)
    named = [label for label, text in options.items() if text and _mentions(final, text)]
    for ref in references:
        r = normalize_text(ref)
        r_label = option_label(r)
        r_text = normalize_text(re.sub(r"^\(?[a-h][).]\s+", "", r)) if r_label else r
        if r_label is None:
            r_label = next((label for label, text in options.items() if text == r_text), None)
        if (r_label and ans_label and r_label == ans_label) or r == final or (r_text and r_text == final):
            return _choice("correct", "same option", answer)
        if ans_label is None and options:
            if len(named) > 1:
                return _choice("undecided", f"the answer names several options ({', '.join(named)})", answer)
            if named and named[0] == r_label:
                return _choice("correct", f"the answer names option {named[0]}", answer)
        elif ans_label is None and r_text and _mentions(final, r_text):
            return _choice("correct", f"the answer names the reference option {r_text!r}", answer)
    return _choice("incorrect", "different option", answer)


def _choice(label: Literal["correct", "incorrect", "undecided"], reason: str, answer: str) -> Verdict:
    score = {"correct": 1.0, "incorrect": 0.0}.get(label)
    return Verdict(verdict=label, score=score, reason=reason, extracted_answer=answer, decided_by="rules")
