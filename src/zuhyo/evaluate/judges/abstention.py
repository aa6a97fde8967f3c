"""Abstentions and refusals ("unknown", わかりません, 回答できません) and references that say a question has no answer.

An abstention must never raise a score: left *undecided* it would leave the mean, so a model that abstains on
every hard item would score as if it had answered only the easy ones. It is *incorrect*, unless the reference
itself says the question is unanswerable (ChartQAPro's unanswerable items; its prompts ask the model to answer
"unanswerable" then), in which case it is correct.

Both functions take normalised text (:func:`~zuhyo.evaluate.judges.answer_extraction.normalize_text`: NFKC,
lower case, no trailing punctuation).
"""

from __future__ import annotations

import re

MAX_ABSTENTION_CHARS = 80
"""A longer reply is an explanation, not an abstention (the LLM judge reads those)."""

_EN_ABSTAIN = (
    r"unknown|unanswerable|not answerable|n/a|"
    r"(?:it )?(?:cannot|can ?not|can't|could not|couldn't|is not possible to|isn't possible to|"
    r"is impossible to|impossible to|unable to)(?: be)? (?:determine|determined|answer|answered|tell|told|say|"
    r"know|known|read|infer|inferred|find|found|identify|identified|be determined|be answered|be read)|"
    r"(?:i )?(?:do not|don't|dont) know|no idea|"
    r"(?:there is )?(?:not enough|insufficient|no) (?:information|data|info)|"
    r"(?:does not|doesn't|do not|don't|cannot|can't) (?:provide|give|have|contain|offer|include) "
    r"(?:enough|sufficient|the) (?:information|data)|"
    r"(?:the )?(?:information|data|answer|value) is (?:not|un)(?: )?(?:available|provided|shown|given|clear|known)|"
    r"(?:not|isn't|is not) (?:shown|given|provided|stated|specified|visible|available|clear|determinable)|"
    r"unclear|undeterminable|indeterminate|cannot answer"
)
_JA_ABSTAIN = (
    r"わかりません|分かりません|わからない|分からない|判りません|不明|不詳|"
    r"(?:回答|解答|お答え|判断|判別|特定|確認|判読|読み取り|読みとり|読み取る事|読み取ること|算出|計算|断定|推定)"
    r"(?:が|は|することが|することは|する事が)?(?:でき|出来)(?:ません|ない)|"
    r"(?:答え|読み取れ|読みとれ|読め|決め|言え|見分け)(?:られ)?(?:ません|ない)|"
    r"(?:情報|データ|記載|記述|数値|値)(?:が|は)?(?:ありません|ない|無い|ございません|不足|不十分)|"
    r"(?:示され|記載され|表示され|書かれ|描かれ)て(?:い)?(?:ません|ない)|回答不能|解答不能|判定不能|判断不能"
)
_ABSTAIN = re.compile(f"(?:{_EN_ABSTAIN}|{_JA_ABSTAIN})")
_UNANSWERABLE_REFERENCE = re.compile(
    r"^(?:unanswerable|not answerable|cannot be (?:determined|answered)|"
    r"回答不能|解答不能|回答できない|回答できません|判断できない|判断できません|答えられない)$")
_DIGIT = re.compile(r"[0-9]")


def reference_says_unanswerable(reference: str) -> bool:
    """True when the reference answer is 'the question cannot be answered' (ChartQAPro's ``Unanswerable``)."""
    return _UNANSWERABLE_REFERENCE.match(reference.strip()) is not None


def is_abstention(answer: str) -> bool:
    """True when a short answer declines to answer: it states no number and says unknown / cannot tell."""
    t = answer.strip()
    if not t or len(t) > MAX_ABSTENTION_CHARS or _DIGIT.search(t):
        return False
    return _ABSTAIN.search(t) is not None
