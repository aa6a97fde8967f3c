"""Checks on a drafted QA pair before anyone spends time on it (``zuhyo draft``).

- **leak**: the answer can be read off the question itself: the normalised answer occurs in the normalised
  question as a whole token (a number inside a longer number, a word inside a longer word, does not count).
  Such a question fails HakushoBench §3.2 requirement (a), "unanswerable from the question text alone";
- **duplicate**: the question repeats another item of the same figure: equal after normalisation, or
  near-identical (:data:`NEAR_DUPLICATE` similarity of the normalised texts);
- **yes/no** and **multiple choice** forms, which HakushoBench §3.2 avoids ("avoiding multiple-choice and yes/no
  questions, which can be solved without the image or by random guessing").

Each check returns a short reason or None; the caller stores a failing draft with status ``rejected`` and the
reason, never drops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from zuhyo.evaluate.judges.answer_extraction import compact_text, normalize_text
from zuhyo.evaluate.judges.astro_routing import question_options

#: Similarity (:class:`difflib.SequenceMatcher` ratio of the normalised questions) from which two questions of one
#: figure count as the same question.
NEAR_DUPLICATE = 0.9

_YES_NO_ANSWERS = frozenset({"yes", "no", "true", "false", "correct", "incorrect", "はい", "いいえ", "ええ",
                             "いや", "そうです", "違います", "ちがいます", "正しい", "誤り"})
_YES_NO_QUESTION = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|shall|may|might)\b"
    r"|かどうか|か否か|はい\s*(?:か|or|/)\s*いいえ|\byes\s*(?:or|/)\s*no\b",
    re.IGNORECASE)
_CHOICE_QUESTION = re.compile(r"選択肢|次のうち|から選|以下のうち|which of the following|choose (?:one|from)|"
                              r"select (?:one|from)|\boptions?\s*:", re.IGNORECASE)
_ALNUM = "0-9a-z\u00c0-\u024f"


def leak_reason(question: str, answer: str) -> str | None:
    """Why the answer is given away by the question (it occurs in it), or None."""
    ans = normalize_text(answer)
    q = normalize_text(question)
    if not ans or not q:
        return None
    pattern = rf"(?<![{_ALNUM}.]){re.escape(ans)}(?![{_ALNUM}]|\.\d)"
    if re.search(pattern, q):
        return f"the answer {answer.strip()[:80]!r} appears in the question"
    compact_ans = compact_text(answer)
    if len(compact_ans) >= 4 and compact_ans in compact_text(question):
        return f"the answer {answer.strip()[:80]!r} appears in the question"
    return None


def duplicate_reason(question: str, others: Iterable[tuple[int, str]]) -> str | None:
    """Why ``question`` repeats one of ``others`` (``(item id, question)`` of the same figure), or None."""
    q = normalize_text(question)
    for item_id, other in others:
        o = normalize_text(other)
        if q == o:
            return f"same question as QA item {item_id}"
        ratio = SequenceMatcher(None, q, o, autojunk=False).ratio()
        if ratio >= NEAR_DUPLICATE:
            return f"near-identical to QA item {item_id} (similarity {ratio:.2f})"
    return None


def yes_no_reason(question: str, answer: str) -> str | None:
    """Why this is a yes/no question (HakushoBench §3.2 avoids them), or None."""
    if normalize_text(answer) in _YES_NO_ANSWERS or compact_text(answer) in _YES_NO_ANSWERS:
        return f"a yes/no question (answer {answer.strip()[:40]!r})"
    if _YES_NO_QUESTION.search(question.strip()):
        return "a yes/no question (asked as one)"
    return None


def choice_reason(question: str) -> str | None:
    """Why this is a multiple-choice question (HakushoBench §3.2 avoids them), or None."""
    options = question_options(question)
    if len(options) >= 2:
        return f"a multiple-choice question ({len(options)} labelled options)"
    if _CHOICE_QUESTION.search(question):
        return "a multiple-choice question (asks to choose among given options)"
    return None
