"""Caption lines, source lines and era years of Japanese white papers (and generic "Figure 3" captions).

HakushoBench §3.1 collects every chart and table image of a white paper's HTML edition together with its
caption; this module reads the caption *line* that white papers print next to each figure:

- ``図表1-1-2-1　移動通信システムの進化`` (情報通信白書), ``図表I-2-1-1 …`` (防衛白書, Roman chapter),
- ``第3-3-12図 製品輸入比率の推移``, ``付図3-3 …``, ``コラム3-5図 …`` (経済白書), ``表1-2 …``,
- ``■第１-３-１図／…`` (full-width digits, 科学技術・イノベーション白書),
- the generic ``Figure 3: …``, ``Fig. 2a …``, ``Table 1. …``;

the source line printed under it (``（出典）総務省作成資料``, ``資料：…``, ``出典：…``), and era years
(令和5年 → 2023, 平成31年 and 令和元年 → 2019, R5 → 2023). All functions are pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from pydantic import BaseModel

from zuhyo.evaluate.judges.japanese_numbers import ERAS, era_to_western, parse_japanese_number

# One number of a figure label: Arabic digits (ASCII or full width), Roman numerals (ASCII, full width or the
# Unicode Roman numeral block), or a single Latin letter (付図A-1, Figure S1).
_PART = r"(?:[0-9０-９]+|[IVXＩＶＸⅠ-Ⅻ]+(?![A-Za-z])|[A-Z](?=[0-9０-９]))"
_SEP = r"[-‐‑–—―−－ー.．]"
#: A figure number: parts joined by hyphens (any dash), optionally a lower-case letter suffix (2a) or (1).
NUMBER = rf"{_PART}[0-9０-９]*(?:{_SEP}{_PART}[0-9０-９]*)*(?:[a-z](?![a-z]))?"
# What separates the label from the title: spaces (also U+3000), a slash, a colon, a full stop (not one inside a
# longer number: "Figure 1.1.6を基に" is body text, not "Figure 1.1" titled "6を…"); or nothing at the end.
_AFTER = r"(?:[\s　]*(?:[／/:：]|[.．](?![0-9０-９]))[\s　]*|[\s　]+|$)"
_BULLET = r"^[\s　]*[■□◆◇●○▲△▼▽・]?[\s　]*"

#: The built-in caption patterns, in the order they are tried. Each has the named groups ``label`` (the label
#: as written, e.g. ``第3-3-12図``), ``number`` (``3-3-12``) and ``title``.
DEFAULT_CAPTION_PATTERNS: tuple[str, ...] = (
    _BULLET + rf"(?P<label>図表[\s　]*(?P<number>{NUMBER})){_AFTER}(?P<title>.*)$",
    _BULLET + rf"(?P<label>第[\s　]*(?P<number>{NUMBER})[\s　]*[図表]){_AFTER}(?P<title>.*)$",
    _BULLET + rf"(?P<label>付[図表][\s　]*(?P<number>{NUMBER})){_AFTER}(?P<title>.*)$",
    _BULLET + rf"(?P<label>コラム[\s　]*(?P<number>{NUMBER})[\s　]*[図表]){_AFTER}(?P<title>.*)$",
    _BULLET + rf"(?P<label>[図表][\s　]*(?P<number>{NUMBER})){_AFTER}(?P<title>.*)$",
    _BULLET + rf"(?P<label>(?i:figure|fig\.?|table|chart|exhibit)[\s　]*(?P<number>{NUMBER})){_AFTER}(?P<title>.*)$",
)

#: The built-in source-line patterns; the named group ``source`` is the source text.
DEFAULT_SOURCE_PATTERNS: tuple[str, ...] = (
    r"^[\s　]*[（(]?[\s　]*(?:出典|資料|出所|データ出典)[\s　]*[）)][\s　]*[:：]?[\s　]*(?P<source>.+)$",
    r"^[\s　]*(?:出典|資料|出所|データ出典)[\s　]*[:：][\s　]*(?P<source>.+)$",
    r"^[\s　]*(?i:sources?)[\s　]*[:：][\s　]*(?P<source>.+)$",
)

_ERA_YEAR = re.compile(r"(明治|大正|昭和|平成|令和)[\s　]*(元|[0-9０-９]+|[〇一二三四五六七八九十]+)[\s　]*(?=年)")
_ERA_LETTER_YEAR = re.compile(r"(?<![A-Za-z])([MTSHRmtshr])[\s　]*(元|[0-9０-９]{1,2})(?=年|[^0-9０-９A-Za-z]|$)")
_ERA_LETTERS = {"m": "明治", "t": "大正", "s": "昭和", "h": "平成", "r": "令和"}


class Caption(BaseModel):
    """A parsed caption line."""

    label: str
    """The label as written, width-folded: ``図表1-1-2-1``, ``第3-3-12図``, ``Figure 2a``."""
    figure_number: str
    """The number alone, width-folded, any dash written ``-``: ``1-1-2-1``, ``I-2-1-1``, ``3-5``, ``3.1``."""
    title: str
    """The caption text after the label (may be empty)."""
    line: str
    """The whole line, stripped."""


def fold_width(text: str) -> str:
    """Full-width digits, Latin letters, dashes and Roman numerals to ASCII (NFKC), leaving the rest as written."""
    out = []
    for ch in text:
        if ch.isdigit() or "Ａ" <= ch <= "ｚ" or "Ⅰ" <= ch <= "ⅿ" or ch in "－．":
            out.append(unicodedata.normalize("NFKC", ch))
        elif ch in "‐‑–—―−ー":
            out.append("-")
        else:
            out.append(ch)
    return "".join(out)


def compile_patterns(patterns: Sequence[str], required_groups: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """Compile regular expressions, checking that each has the named groups a caller reads."""
    compiled = []
    for pattern in patterns:
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        missing = [g for g in required_groups if g not in rx.groupindex]
        if missing:
            raise ValueError(f"pattern {pattern!r} lacks the named group(s) {', '.join(missing)}")
        compiled.append(rx)
    return tuple(compiled)


DEFAULT_CAPTION_RES = compile_patterns(DEFAULT_CAPTION_PATTERNS, ("label", "number", "title"))
DEFAULT_SOURCE_RES = compile_patterns(DEFAULT_SOURCE_PATTERNS, ("source",))


def parse_caption(line: str, patterns: Sequence[re.Pattern[str]] = DEFAULT_CAPTION_RES) -> Caption | None:
    """The caption of a caption line, or None when the line does not start with a figure label.

    ``parse_caption("図表1-1-2-1　移動通信システムの進化")`` →
    ``Caption(label="図表1-1-2-1", figure_number="1-1-2-1", title="移動通信システムの進化", ...)``.
    A label must be followed by a separator (space, ／, ：, ．) or the end of the line, so body text that merely
    begins with a reference ("図表1-2に示す…") is not a caption.
    """
    text = line.strip()
    for rx in patterns:
        m = rx.match(text)
        if m is None:
            continue
        number = fold_width(m.group("number")).strip("-")
        label = " ".join(fold_width(m.group("label")).split())
        if not label[:1].isascii():  # Japanese labels are written without spaces: 第 3-3-12 図 → 第3-3-12図
            label = label.replace(" ", "")
        return Caption(label=label, figure_number=number, title=m.group("title").strip(), line=text)
    return None


def parse_source_line(line: str, patterns: Sequence[re.Pattern[str]] = DEFAULT_SOURCE_RES) -> str | None:
    """The source named by a source line (``（出典）総務省作成資料`` → ``総務省作成資料``), else None."""
    text = line.strip()
    for rx in patterns:
        m = rx.match(text)
        if m is not None:
            return m.group("source").strip()
    return None


def _western(era: str, raw: str) -> int | None:
    if raw == "元":
        return era_to_western(era, 1)
    n = parse_japanese_number(fold_width(raw))
    if n is None or n != int(n) or not 1 <= int(n) <= 64:
        return None
    return era_to_western(era, int(n))


def era_years(text: str, letters: bool = False) -> list[int]:
    """Western years of the era years in ``text``, in order: ``令和5年`` → 2023, ``平成元年度`` → 1989.

    With ``letters`` also the abbreviations ``R5``, ``H29`` (only worth it in short strings such as a URL path or
    an edition title, where ``H2`` is unlikely to be something else).
    """
    found: list[tuple[int, int]] = []
    for m in _ERA_YEAR.finditer(text):
        year = _western(m.group(1), m.group(2))
        if year is not None:
            found.append((m.start(), year))
    if letters:
        for m in _ERA_LETTER_YEAR.finditer(text):
            year = _western(_ERA_LETTERS[m.group(1).lower()], m.group(2))
            if year is not None:
                found.append((m.start(), year))
    return [year for _, year in sorted(found)]


def first_era_year(text: str, letters: bool = False) -> int | None:
    """The Western year of the first era year in ``text``, or None."""
    years = era_years(text, letters=letters)
    return years[0] if years else None


__all__ = ["DEFAULT_CAPTION_PATTERNS", "DEFAULT_SOURCE_PATTERNS", "ERAS", "Caption", "compile_patterns",
           "era_years", "first_era_year", "fold_width", "parse_caption", "parse_source_line"]
