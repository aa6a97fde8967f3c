"""Shapes of a short answer the ``rules`` judge reads before comparing values (zuhyo's own rules, issue 21).

- **Candidates** (:func:`split_candidates`): an answer that offers two or more alternatives — ``3か4``,
  ``北海道または青森県``, ``3 or 4``, ``either A or B``, ``AもしくはB`` — is a hedge. The HakushoBench judge prompt
  (after HLE) answers 'no' "if there is any inconsistency, ambiguity, non-equivalency".
- **Ranges** (:func:`split_range`): ``20~30代``, ``20代から30代まで``, ``2010年~2015年``, ``10 to 20%``.
- **Sentence context** (:func:`qualified_after`, :func:`has_negation`): words after a value that change what it
  says (以上, 未満, から, 増加, or ...), and negations (ではない, 以外, not).
- **Trend words** (:func:`trend_of`): 増加傾向 / 減少した / 横ばい as +1 / −1 / 0.

All functions take normalised text (:func:`~zuhyo.evaluate.judges.answer_extraction.normalize_text`).
"""

from __future__ import annotations

import re

_OR_WORDS = re.compile(r"\s*(?:または|もしくは|あるいは|ないしは|又は|若しくは|或いは|\bor\b)\s*")
_EITHER = re.compile(r"^(?:either|whether)\s+")
_BOUND_ALTERNATIVE = re.compile(r"^(?:more|less|fewer|so|above|below|higher|lower|greater|smaller|over|under|"
                                r"later|earlier|それ以上|それ以下|それ以上の|それ未満)$")
_CHOICE_TAIL = re.compile(r"(?:の)?(?:どちらか(?:一方)?|いずれか|どれか|のどちら)$|か$")
# "か" between two candidates: after a digit, kanji, katakana or a unit, before a digit, kanji or katakana, and
# not the counter か of か月/か国/か所/か年/か条/か村.
_KA = re.compile(r"(?<=[0-9%\u4e00-\u9fff\u30a0-\u30ff])か(?=[0-9\u4e00-\u9fff\u30a0-\u30ff])(?![月国所年条村])")
_KA_WORDS = ("確", "僅", "静", "豊", "遥", "何", "誰", "幾", "細", "愚", "浅", "暖", "温", "柔", "速", "密", "朗")
_RANGE = re.compile(r"^(?P<a>.+?)\s*(?:~|から|\bto\b|ないし)\s*(?P<b>.+?)(?:まで)?(?:の間|の範囲)?$")
_DASH_RANGE = re.compile(r"^(?P<a>[0-9][0-9.,]*[^\s0-9.,-]*)\s*-\s*(?P<b>[0-9][0-9.,]*\D*)$")
_BETWEEN = re.compile(r"^between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$")
SPAN_UNITS = ("代", "年代", "台")
"""Units that name a span themselves: 60代 is 60–69 歳, so a range may answer one."""

_NEGATION = re.compile(r"ではな|じゃな|でな[いく]|ありません|ません|(?<![少危幼切汚])ない|(?<![少危幼切汚])なく|"
                       r"以外|除[くい]|違[いう]|誤[りっ]|"
                       r"\bnot\b|n't\b|\bnever\b|\bexcept\b|\bexcluding\b|\bother than\b|\binstead\b")
_QUALIFIER = re.compile(
    r"^\s*(?:の|も|と|が|に)?\s*(?:以上|以下|未満|超|を超|を上回|を下回|より|近く|弱|強|前後|程度|ほど|くらい|ぐらい|余り|"
    r"から|まで|~|-|か(?![月国所年条村])|または|もしくは|増|減|上昇|低下|拡大|縮小|伸び|下落|アップ|ダウン|"
    r"以降|以前|台|\bor\b|\bto\b|\bmore\b|\bless\b|\bfewer\b|\bhigher\b|\blower\b|\bincrease|\bdecrease|\bup\b|"
    r"\bdown\b|\bover\b|\bunder\b|\babove\b|\bbelow\b)")
_QUALIFIER_BEFORE = re.compile(r"(?:前年|前年度|前回|前月|以前|当初|から|より|over|under|above|below|than|from|"
                               r"more than|less than|at least|at most)\s*(?:の|は|が|で)?\s*$")
_UP = (r"増加|増大|上昇|拡大|伸び|増え|上が|高ま|多くな|急増|微増|増|右肩上がり"
       r"|increas\w*|ris(?:e|es|ing|en)|rose|grow\w*|grew|up(?:ward)?")
_DOWN = (r"減少|低下|縮小|下落|減っ|下が|低くな|少なくな|急減|微減|減|右肩下がり"
         r"|decreas\w*|declin\w*|fall\w*|fell|drop\w*|down(?:ward)?")
_FLAT = r"横ばい|変わらない|変化なし|変化していない|ほぼ一定|一定|flat|unchanged|stable"
_TREND_END = r"(?:傾向)?(?:にある|が続いている|が続く|している|してきた|した|している|ている|てきた|た|ing|ed)?$"
_TREND = re.compile(rf"^(?:(?P<up>{_UP})|(?P<down>{_DOWN})|(?P<flat>{_FLAT})){_TREND_END}")


def split_candidates(text: str) -> list[str] | None:
    """The alternatives an answer offers (``3か4`` → [3, 4]; ``北海道または青森県のどちらか`` → [北海道, 青森県]),
    or None when it offers one answer."""
    t = _EITHER.sub("", text.strip())
    parts = [p for p in _OR_WORDS.split(t) if p]
    if len(parts) < 2:
        body = _CHOICE_TAIL.sub("", t) if _KA.search(t) else t
        parts = [p for p in _KA.split(body) if p]
        if len(parts) < 2 or any(p.endswith(_KA_WORDS) for p in parts[:-1]):
            return None
    parts = [_CHOICE_TAIL.sub("", p).strip(" ,、") for p in parts]
    if any(not p or len(p) > 30 or _BOUND_ALTERNATIVE.match(p) for p in parts):  # "1000 or more": a bound
        return None
    unit = _trailing_unit(parts[-1])
    return [p + unit if unit and re.fullmatch(r"[0-9.,]+", p) else p for p in parts]


def _trailing_unit(text: str) -> str:
    m = re.match(r"^[0-9.,]+(?P<unit>\D{1,8})$", text)
    return m.group("unit") if m else ""


def split_range(text: str) -> tuple[str, str] | None:
    """The two ends of a range answer (``20~30代`` → (20代, 30代); ``20代から30代まで``; ``between 10 and 20%``),
    the unit of the upper end lent to a lower end written without one; None when the text is not one range."""
    t = text.strip()
    m = _BETWEEN.match(t) or _RANGE.match(t) or _DASH_RANGE.match(t)
    if not m:
        return None
    a, b = m.group("a").strip(), m.group("b").strip()
    if not a or not b or not re.match(r"[-0-9]", a) or not re.match(r"[-0-9]", b):
        return None
    unit = _trailing_unit(b)
    if unit and re.fullmatch(r"[0-9.,]+", a):
        a += unit
    return a, b


def has_negation(text: str) -> bool:
    """True when the text negates or excludes something (ではない, 以外, 違う, not, except)."""
    return _NEGATION.search(text) is not None


def qualified_after(text: str, start: int, end: int) -> bool:
    """True when the value at ``text[start:end]`` is qualified by the words around it: a bound (以上, 未満, を超える,
    more than), a change (増加, 減少), the start of a range or list of alternatives (から, ~, か, or), or a frame
    before it (前年の …, from …) — the sentence may not state it as the answer."""
    return _QUALIFIER.match(text[end:]) is not None or _QUALIFIER_BEFORE.search(text[:start]) is not None


def trend_of(text: str) -> int | None:
    """+1 for an answer that says "it rose" (増加, 増加傾向, 上昇している, increased), −1 for a fall, 0 for no change
    (横ばい, ほぼ一定), None when the answer is not just a trend."""
    m = _TREND.match(text.strip())
    if not m:
        return None
    return 1 if m.group("up") else -1 if m.group("down") else 0
