"""Reading the final answer out of a model reply, and normalising answer text for comparison.

HakushoBench's CoT protocol asks for a last line ``Answer: $ANSWER``; its final answer is the text after the last
``Answer:`` (llm-jp/simple-evals-mm; see shared/data/notes/hakushobench_schema.md). Japanese replies often use
``答え:``, ``回答:`` or ``解答:`` instead, and models wrap answers in Markdown, LaTeX ``\\boxed{}`` or quotes.
"""

from __future__ import annotations

import re
import unicodedata

import jaconv

_MARKER = re.compile(
    r"(?:\*\*|__)?(?:final\s+answer|answer|最終回答|最終的な答え|答え|回答|解答)(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?",
    re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_QUOTE_PAIRS = (("「", "」"), ("『", "』"), ('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("`", "`"))
_TRAILING_PUNCT = "。．.、,，!！?？:：;；"
# Sentence endings that carry no content ("25%です。" answers the same as "25%").
_COPULA = re.compile(r"(?:です|でした|である|であった|だ|となっています|となっている|となります|になります|となる)$")
_ANSWER_PREFIX = re.compile(r"^(?:the\s+answer\s+is|answer\s+is|答えは|回答は|正解は)\s*[:：]?\s*", re.IGNORECASE)


def extract_final_answer(reply: str) -> str:
    """The final answer of a reply: the text after the last ``Answer:`` (``答え:``/``回答:``/``解答:``) marker,
    else the content of the last ``\\boxed{}``, else the whole reply; then cleaned by :func:`clean_answer`.

    Only the first non-empty line after the marker is kept: models often add an explanation below it.
    """
    text = reply.strip()
    markers = list(_MARKER.finditer(text))
    if markers:
        tail = text[markers[-1].end():].strip()
        lines = [ln for ln in tail.splitlines() if ln.strip()]
        text = lines[0] if lines else ""
    else:
        boxed = _BOXED.findall(text)
        if boxed:
            text = boxed[-1]
    return clean_answer(text)


def clean_answer(text: str) -> str:
    """Strip Markdown emphasis/code/list marks, LaTeX math delimiters, enclosing quotes and trailing punctuation."""
    t = text.strip()
    t = re.sub(r"^(?:[-*+•]\s+|#+\s+|\d+[.)]\s+(?=\D))", "", t)  # list bullet / heading at the start
    t = t.replace("**", "").replace("__", "")
    t = _BOXED.sub(r"\1", t)
    t = re.sub(r"^\$+|\$+$", "", t.strip())
    t = re.sub(r"^\\\(|\\\)$", "", t.strip())
    changed = True
    while changed and t:
        changed = False
        t = t.strip()
        for open_, close in _QUOTE_PAIRS:
            if len(t) >= 2 and t.startswith(open_) and t.endswith(close):
                t, changed = t[len(open_):-len(close)], True
        if t and t[-1] in _TRAILING_PUNCT and len(t) > 1:
            t, changed = t[:-1], True
    return t.strip()


def normalize_text(text: str) -> str:
    """NFKC (full-width letters/digits → ASCII, half-width kana → full-width), lower case, unified minus
    signs and long vowel marks, single spaces, no spaces next to Japanese characters, no answer prefix or
    copula, no trailing punctuation."""
    t = unicodedata.normalize("NFKC", text)
    t = jaconv.h2z(t, kana=True, ascii=False, digit=False)
    t = t.replace("\u2212", "-").replace("\u2012", "-").replace("\u2013", "-").replace("\u2014", "-")
    t = t.replace("\uff5e", "~").replace("\u301c", "~")
    t = t.lower()
    t = re.sub(r"\s+", " ", t).strip()
    # Japanese is written without spaces; a space next to a Japanese character is layout, not content.
    t = re.sub(r"(?<=[\u3000-\u30ff\u4e00-\u9fff])\s+|\s+(?=[\u3000-\u30ff\u4e00-\u9fff])", "", t)
    t = _ANSWER_PREFIX.sub("", t)
    t = clean_answer(t)
    t = _COPULA.sub("", t).strip()
    return t.rstrip(_TRAILING_PUNCT).strip() if len(t) > 1 else t


def compact_text(text: str) -> str:
    """:func:`normalize_text` without spaces or punctuation (middle dots, hyphens, brackets, quotes), except the
    marks that belong to a number (the point of 1.2, the comma of 1,234, a minus sign)."""
    t = normalize_text(text)
    out = []
    for i, ch in enumerate(t):
        if ch.isspace():
            continue
        if unicodedata.category(ch).startswith("P"):
            near_digit = (i > 0 and t[i - 1].isdigit()) or (i + 1 < len(t) and t[i + 1].isdigit())
            if not (ch in ".,-+/:" and near_digit):
                continue
        out.append(ch)
    return "".join(out)


def is_japanese(text: str) -> bool:
    """True when the text contains kana or kanji."""
    return re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) is not None
