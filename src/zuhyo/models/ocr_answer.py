"""Answering a chart question from OCR boxes alone: the heuristics behind the ``ocr`` baseline.

Everything here is a pure function over ``(question, boxes)``. The baseline is a *floor*: it answers with what a
reader who sees only the chart's text and where it sits (no bars, lines or colours) would guess.

The rules, in order:

1. **The question** is cut out of the templated prompt (:func:`extract_question`): a ``Question:``/``質問：``
   marker wins; otherwise lines that are answering instructions (``上記の質問に対して…``, ``Answer:`` format
   lines, "answer with a single word…") are dropped.
2. **Boxes are classified** (:func:`classify_boxes`). Dropped: publisher boilerplate (``©``, ``Source:``,
   ``出典``, share-button captions) and low-confidence reads (< 0.9: icons mistaken for digits). *Values* are
   boxes that are one number (``37%``, ``1,413,640``, ``▲3.2``, ``5.2万人``) except *axis ticks* (four or more
   numbers in one column or row stepping evenly) and *years* (1900–2100, which are categories). *Labels* are
   text boxes and years, except *captions* (boxes wider than 45 % of the text extent or longer than 6 words)
   and *axis titles* (text beyond an axis' tick labels).
3. **Each value belongs to its nearest label** (:func:`owner_of`), "nearest" by :func:`aligned_distance`, which
   prefers the same row (horizontal gap) or the same column (vertical gap) and counts other pairs' centre
   distance twice. A bar's value label sits next to its category label, so this pairs them.
4. **Entities of the question are matched** to labels (:func:`match_labels`) after NFKC and case folding: English
   by content words (tolerating OCR misspellings), Japanese by character bigrams. A label matches when at least
   half its units occur in the question; the best-matching labels are those with the highest matched fraction.
5. **The kind of question** (:func:`question_kind`) picks the answer:

   - *value* — the value owned by a best-matching label (the nearest one if none owns any); no match: the
     largest value;
   - *count* (how many … more than N / than X; いくつ … 以上) — how many values pass the comparison, against the
     number in the question or the value of the matched label;
   - *yes/no* — the matched label's value compared with the number in the question (greater / less / equal by
     the wording); undecidable: ``Yes``/``はい``, the more frequent answer;
   - *extreme* (which … highest / 最も多い …) — the owner of the largest (smallest) value;
   - *label* (which / who / どれ …) — the owner of a value the question names, else of the largest value.

With no usable text the answer is ``unknown``/``不明``. Answers are in the question's language
(:func:`detect_language`); English numbers are bare (ChartQA's relaxed accuracy parses them), Japanese numbers
keep a CJK unit read with them (``5.2万人``), which the rules judge understands.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from zuhyo.models.ocr_layout import (
    Classified,
    OcrBox,
    aligned_distance,
    classify_boxes,
    format_number,
    normalize,
    number_unit,
    owner_of,
)

Language = Literal["ja", "en"]
QuestionKind = Literal["yesno", "count", "extreme_max", "extreme_min", "label", "value"]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
_NUMBER_IN_TEXT = re.compile(r"(?<![0-9A-Za-z.])[-−▲△]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
"""A number in free text; Japanese text runs straight into numbers (が700万人), so only ASCII blocks a match."""
_WORD = re.compile(r"[a-z0-9]+(?:['’.-][a-z0-9]+)*")
_EN_STOPWORDS = frozenset(
    "a an the of in on at to for by and or is are was were be been what which who whom whose when where how "
    "many much does do did has have had this that these those it its as from with than value number chart graph "
    "shown show percentage percent share there their per".split()
)
_INSTRUCTION_MARKERS = (
    "上記の質問",
    "answer:",
    "$answer",
    "answer the question",
    "single word or phrase",
    "step by step",
    "ステップバイステップ",
    "簡潔に",
    "回答してください",
    "答えてください",
)
_QUESTION_MARKER = re.compile(r"(?:^|\n)\s*(?:question|質問|問題|問い)\s*[:：]\s*(.+?)(?:\n\s*\n|$)", re.I | re.S)
_JA_WH = re.compile(r"何|いくつ|いくら|どれ|どの|どこ|どちら|いつ|誰|だれ|なぜ|どう|どんな|どのくらい")
_JA_WHICH = re.compile(r"どれ|どの|どこ|どちら|誰|だれ")
_JA_WHICH_EXTREME = re.compile(r"どれ|どの|どこ|どちら|何年|いつ|誰|どんな|項目|国|地域")
_JA_EXTREME = re.compile(r"最も|もっとも|一番|いちばん|最大|最小|最高|最低|最多|最少")
_JA_LOW = re.compile(r"最小|最低|最少|少な|低い|小さ|短い")
_MORE = re.compile(r"\b(greater|more|higher|larger|bigger|older|exceeds?|above|over)\b|以上|超|より(多|大|高)|上回")
_LESS = re.compile(r"\b(less|smaller|lower|fewer|younger|below|under)\b|以下|未満|より(少|小|低)|下回")
_JA_COUNT = re.compile(r"いくつ|何個|何か国|何カ国|何ヵ国|何件|何種類|何項目")
_YES = {"ja": "はい", "en": "Yes"}
_NO = {"ja": "いいえ", "en": "No"}
_UNKNOWN = {"ja": "不明", "en": "unknown"}


def detect_language(text: str) -> Language:
    """``ja`` when the text holds kana or kanji, else ``en``."""
    return "ja" if _CJK.search(text) else "en"


def numbers_in(text: str) -> list[float]:
    """All numbers written in free text (the question), with separators and Japanese minus signs handled."""
    out = []
    for tok in _NUMBER_IN_TEXT.findall(unicodedata.normalize("NFKC", text)):
        neg = tok[0] in "-−▲△"
        v = float(tok.lstrip("-−▲△").replace(",", ""))
        out.append(-v if neg else v)
    return out


def extract_question(prompt: str) -> str:
    """The question inside a templated prompt (rule 1 of the module docstring)."""
    m = _QUESTION_MARKER.search(prompt)
    if m:
        return m.group(1).strip()
    kept = [ln.strip() for ln in prompt.splitlines() if ln.strip()]
    kept = [ln for ln in kept if not any(mk in ln.casefold() for mk in _INSTRUCTION_MARKERS)]
    return "\n".join(kept) if kept else prompt.strip()


def question_kind(question: str) -> QuestionKind:
    """Which of the answer rules applies (rule 5)."""
    q = normalize(question)
    if detect_language(q) == "ja":
        if _JA_EXTREME.search(q) and _JA_WHICH_EXTREME.search(q):
            return "extreme_min" if _JA_LOW.search(q) else "extreme_max"
        if _JA_WHICH.search(q):
            return "label"
        if _JA_COUNT.search(q):
            return "count"
        if not _JA_WH.search(q) and re.search(r"か\s*[?？]?\s*$", q):
            return "yesno"
        return "value"
    first = q.split(" ", 1)[0] if q else ""
    if first in {"is", "are", "does", "do", "did", "was", "were", "can", "has", "have", "will", "should", "could"}:
        return "yesno"
    which = re.search(r"\b(which|who|whose|what (?:country|year|category|sector|region|company|brand|item|group))\b", q)
    superlative = re.search(r"\b(most|least|highest|lowest|largest|smallest|biggest|greatest|fewest)\b", q)
    asks_value = re.search(r"\b(value|number|percentage|share|rate|amount|total|how much|how many|sum|average)\b", q)
    if which or re.match(r"(in )?when\b", q) or (superlative and not asks_value):
        if re.search(r"\b(least|lowest|smallest|minimum|fewest|min)\b", q):
            return "extreme_min"
        if re.search(r"\b(most|highest|largest|biggest|maximum|greatest|max|dominates?|top|popular|best)\b", q):
            return "extreme_max"
        return "label"
    return "count" if q.startswith("how many") or " how many " in q else "value"


def question_units(text: str) -> set[str]:
    """Matching units of a text: English content words and CJK character bigrams (single CJK chars alone)."""
    t = normalize(text)
    units = {w for w in _WORD.findall(t) if w not in _EN_STOPWORDS and (len(w) > 1 or w.isdigit())}
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]+", t):
        units |= {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
    return units


def label_match(label: str, question_units_: set[str]) -> float:
    """Fraction of the label's units found in the question (a word within OCR-typo distance counts)."""
    units = question_units(label)
    if not units:
        return 0.0
    hit = 0
    for u in units:
        if u in question_units_:
            hit += 1
        elif len(u) >= 4 and u.isascii():
            if any(len(q) >= 4 and difflib.SequenceMatcher(None, u, q).ratio() >= 0.85 for q in question_units_):
                hit += 1
    return hit / len(units)


def match_labels(question: str, labels: Sequence[OcrBox]) -> list[tuple[OcrBox, float]]:
    """Labels the question names with their matched fraction, best first (more units first among equals)."""
    qu = question_units(question)
    out = []
    for b in labels:
        frac = label_match(b.text, qu)
        if frac >= 0.5:
            out.append((b, frac))
    return sorted(out, key=lambda p: (-p[1], -len(question_units(p[0].text))))


def answer_from_boxes(prompt: str, boxes: Sequence[OcrBox]) -> str:
    """The baseline's answer to ``prompt`` about a chart whose OCR gave ``boxes`` (never raises on empty input)."""
    question = extract_question(prompt)
    lang = detect_language(question)
    kind = question_kind(question)
    cls = classify_boxes(boxes)
    matched = match_labels(question, cls.labels)
    if kind == "yesno":
        return _answer_yes_no(question, cls, matched, lang)
    if kind in ("extreme_max", "extreme_min", "label"):
        return _answer_label(question, kind, cls, matched, lang)
    if kind == "count":
        counted = _count_values(question, cls, matched)
        if counted is not None:
            return str(counted)
    found = _value_of_labels(cls, matched)
    if found is None and cls.values:
        found = max(cls.values, key=lambda p: p[1])
    return _format_value(found, lang) if found is not None else _UNKNOWN[lang]


def _format_value(found: tuple[OcrBox, float], lang: Language) -> str:
    box, value = found
    text = format_number(value)
    if lang == "ja":
        unit = number_unit(box.text)
        if _CJK.search(unit):
            text += unit
    return text


def _answer_yes_no(question: str, cls: Classified, matched: list[tuple[OcrBox, float]], lang: Language) -> str:
    asked = _asked_numbers(question)
    found = _value_of_labels(cls, matched)
    if not asked or found is None:
        return _YES[lang]
    ok = _compare(question, found[1], asked[-1], approx_equal=True)
    return _YES[lang] if ok else _NO[lang]


def _count_values(question: str, cls: Classified, matched: list[tuple[OcrBox, float]]) -> int | None:
    """How many values pass the question's comparison (None when it states none)."""
    q = normalize(question)
    if not (_MORE.search(q) or _LESS.search(q)):
        return None
    asked = _asked_numbers(question)
    found = _value_of_labels(cls, matched)
    threshold = asked[-1] if asked else (found[1] if found is not None else None)
    if threshold is None:
        return None
    return sum(_compare(question, v, threshold, approx_equal=False) for _, v in cls.values)


def _compare(question: str, value: float, target: float, approx_equal: bool) -> bool:
    """``value`` against ``target`` as the question words it (以上/以下 include the bound)."""
    q = normalize(question)
    if _MORE.search(q):
        return value >= target if "以上" in q else value > target
    if _LESS.search(q):
        return value <= target if "以下" in q else value < target
    return approx_equal and math.isclose(value, target, rel_tol=0.01, abs_tol=1e-9)


def _asked_numbers(question: str) -> list[float]:
    """Numbers in the question other than years (those name categories)."""
    return [n for n in numbers_in(question) if not (1900 <= n <= 2100 and n == int(n))]


def _answer_label(
    question: str, kind: QuestionKind, cls: Classified, matched: list[tuple[OcrBox, float]], lang: Language
) -> str:
    named = {id(b) for b, _ in matched}
    candidates = [b for b in cls.labels if id(b) not in named] or list(cls.labels)
    if not candidates:
        return _UNKNOWN[lang]
    if not cls.values:
        return candidates[0].text.strip()
    anchor: OcrBox | None = None
    if kind == "label":
        asked = numbers_in(question)
        hits = [b for b, v in cls.values if any(math.isclose(v, a, rel_tol=1e-6) for a in asked)]
        anchor = hits[0] if hits else None
    if anchor is None:
        pick = min if kind == "extreme_min" else max
        anchor = pick(cls.values, key=lambda p: p[1])[0]
    owner = owner_of(anchor, candidates)
    return owner.text.strip() if owner is not None else _UNKNOWN[lang]


def _value_of_labels(cls: Classified, matched: list[tuple[OcrBox, float]]) -> tuple[OcrBox, float] | None:
    """The value owned by a best-matching label, nearest first; if they own none, the nearest value (rule 5)."""
    if not matched or not cls.values:
        return None
    best = matched[0][1]
    top = [b for b, w in matched if w >= best - 1e-9]
    owned = [(lab, vb, v) for vb, v in cls.values for lab in top if owner_of(vb, cls.labels) is lab]
    pool = owned or [(lab, vb, v) for lab in top for vb, v in cls.values]
    lab, vb, v = min(pool, key=lambda t: aligned_distance(t[0], t[1]))
    return vb, v
