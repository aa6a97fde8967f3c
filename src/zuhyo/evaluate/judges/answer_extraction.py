"""Reading the final answer out of a model reply, and normalising answer text for comparison.

HakushoBench's CoT protocol asks for a last line ``Answer: $ANSWER``; its final answer is the text after the last
``Answer:`` (llm-jp/simple-evals-mm; see shared/data/notes/hakushobench_schema.md). Japanese replies often use
``答え:``, ``回答:`` or ``解答:`` instead, and models wrap answers in Markdown, LaTeX ``\\boxed{}`` or quotes.

What reaches a judge or metric is chosen by an *answer cleaning* (:func:`scored_answer`):

- ``faithful`` (the default) passes what the benchmark's official pipeline passes: for CoT replies the text after
  the last ``Answer\\s*[:：]\\s*(.+)`` match, stripped, else the whole reply (llm-jp/simple-evals-mm
  ``CoTSampler``; case-sensitive, so ``回答：`` or ``The answer is`` are not markers); for ChartQAPro's CoT prompt,
  which asks for "The answer is X" (ChartQAPro paper, Table 7), the text after the last "The answer is"; for
  Direct replies the raw reply, untouched (ChartQA's pix2struct ``relaxed_correctness`` and ChartQAPro's
  ``evaluate_predictions.py`` see the raw prediction: ``**Facebook**``, ``$12`` or ``Yes.`` are not cleaned);
- ``lenient`` adds zuhyo's cleaning on top (more answer markers such as ``回答：``/"the answer is", Markdown,
  ``$``, backquotes and trailing full stops stripped): kinder to chatty models, but not comparable with
  published numbers.
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


ANSWER_CLEANINGS = ("faithful", "lenient")
"""Names of the answer cleanings (module docstring); ``faithful`` is the default everywhere."""
DEFAULT_ANSWER_CLEANING = "faithful"
_SIMPLE_EVALS_COT = re.compile(r"Answer\s*[:：]\s*(.+)")
"""llm-jp/simple-evals-mm ``CoTSampler._ANSWER_RE`` (findall, last match, ``.strip()``; no match → the reply)."""
_CHARTQAPRO_COT = re.compile(r"[Tt]he answer is\s*[:：]?\s*(.+)")
_LENIENT_MARKERS = re.compile(
    r"(?:\*\*)?(?:final\s+answer|answer|答え|回答|解答)(?:\*\*)?\s*[:：]\s*|the\s+answer\s+is\s*[:：]?\s*",
    re.IGNORECASE,
)


def check_answer_cleaning(name: str) -> str:
    """``name`` if it is a known answer cleaning, else ValueError naming the choices."""
    if name not in ANSWER_CLEANINGS:
        raise ValueError(f"unknown answer cleaning {name!r}; choose from {', '.join(ANSWER_CLEANINGS)}")
    return name


def scored_answer(reply: str, style: str, family: str, cleaning: str = DEFAULT_ANSWER_CLEANING) -> str:
    """The text a judge or metric scores for a reply given with prompt ``style`` (direct | cot | cot+ocr) to a
    benchmark of prompt ``family`` (see :func:`zuhyo.evaluate.prompting.prompt_family`); module docstring."""
    check_answer_cleaning(cleaning)
    if cleaning == "lenient":
        return lenient_answer(reply, style)
    if style == "direct":
        return reply
    pattern = _CHARTQAPRO_COT if family == "chartqapro" else _SIMPLE_EVALS_COT
    matches = pattern.findall(reply)
    return matches[-1].strip() if matches else reply


def lenient_answer(reply: str, style: str) -> str:
    """The ``lenient`` cleaning: for CoT the first line after the last ``Answer:``/``答え:``/``回答:``/``解答:``/
    "The answer is" marker (the whole reply when there is none); then Markdown emphasis, backquotes, ``$`` and a
    trailing full stop are stripped."""
    text = reply.strip()
    if style != "direct":
        matches = list(_LENIENT_MARKERS.finditer(text))
        if matches:
            tail = text[matches[-1].end():].strip()
            text = tail.splitlines()[0].strip() if tail else ""
    text = text.strip().strip("*_`").strip()
    text = re.sub(r"^\$+|\$+$", "", text).strip()
    return text.rstrip("。．.").strip() if len(text) > 1 else text


def has_final_answer(reply: str) -> bool:
    """Whether a CoT reply states a final answer: some ``Answer:``/``答え:``/``回答:``/``解答:``/"The answer is"
    marker (the ``lenient`` markers) followed by text on its line, or a ``\\boxed{}``."""
    for m in _LENIENT_MARKERS.finditer(reply):
        rest = reply[m.end():].split("\n", 1)[0]
        if rest.strip().strip("*_`$").strip():
            return True
    return bool(_BOXED.search(reply))


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
