"""Japanese-aware numbers: kanji numerals, 万/億/兆 units, era years, 割, and numbers found in free text.

All functions expect text already passed through :func:`~zuhyo.evaluate.judges.answer_extraction.normalize_text`
(NFKC, lower case) unless they say otherwise. Values are :class:`~decimal.Decimal` so that 0.1 + 0.2 compares
exactly and the number of stated decimals survives (it sets the precision of a reference value).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

KANJI_DIGITS = {"〇": 0, "零": 0, "一": 1, "壱": 1, "二": 2, "弐": 2, "三": 3, "参": 3, "四": 4, "五": 5, "六": 6,
                "七": 7, "八": 8, "九": 9}
SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
BIG_UNITS = {"万": 10**4, "億": 10**8, "兆": 10**12}

#: Japanese eras: first Western year of each (year 1, 元年, of the era).
ERAS = {"明治": 1868, "大正": 1912, "昭和": 1926, "平成": 1989, "令和": 2019}
_ERA_LETTERS = {"m": "明治", "t": "大正", "s": "昭和", "h": "平成", "r": "令和"}
_KANJI_NUM_CHARS = "".join(KANJI_DIGITS) + "".join(SMALL_UNITS)

_ERA_YEAR = re.compile(r"(明治|大正|昭和|平成|令和)\s*(元|[0-9]+|[" + _KANJI_NUM_CHARS + r"]+)\s*(?=年)")
_ERA_LETTER_YEAR = re.compile(r"(?<![a-z])([mtshr])\s*(元|[0-9]{1,2})\s*(?=年)")
_ARABIC = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?|\.[0-9]+")


def era_to_western(era: str, year: int) -> int:
    """``("令和", 5)`` → 2023 (year 1 is 元年)."""
    return ERAS[era] + year - 1


def convert_era_years(text: str) -> str:
    """Rewrite era years as Western years: 令和5年 → 2023年, 平成元年度 → 1989年度, 昭和64年 → 1989年, R5年 → 2023年."""

    def repl(m: re.Match[str]) -> str:
        raw = m.group(2)
        n = 1 if raw == "元" else parse_japanese_number(raw)
        if n is None:
            return m.group(0)
        return str(era_to_western(m.group(1), int(n)))

    text = _ERA_YEAR.sub(repl, text)

    def repl_letter(m: re.Match[str]) -> str:
        raw = m.group(2)
        return str(era_to_western(_ERA_LETTERS[m.group(1)], 1 if raw == "元" else int(raw)))

    return _ERA_LETTER_YEAR.sub(repl_letter, text)


def _parse_small(part: str) -> Decimal | None:
    """A number below 10,000 written with Arabic digits and/or kanji: 2300, 二千三百, 2千3百, 二〇二三, 3.5."""
    if part == "":
        return None
    total = Decimal(0)
    current: Decimal | None = None
    kanji_run = False  # previous token was a kanji digit (positional notation such as 二〇二三)
    i = 0
    while i < len(part):
        ch = part[i]
        m = _ARABIC.match(part, i)
        if m:
            if current is not None:
                return None
            current = Decimal(m.group(0).replace(",", ""))
            kanji_run = False
            i = m.end()
            continue
        if ch in KANJI_DIGITS:
            d = Decimal(KANJI_DIGITS[ch])
            current = current * 10 + d if (current is not None and kanji_run) else d if current is None else None
            if current is None:
                return None
            kanji_run = True
        elif ch in SMALL_UNITS:
            total += (current if current is not None else Decimal(1)) * SMALL_UNITS[ch]
            current, kanji_run = None, False
        else:
            return None
        i += 1
    return total + (current if current is not None else Decimal(0))


def parse_japanese_number(text: str) -> Decimal | None:
    """The value of a whole-string number: ``1億2000万`` → 120000000, ``二千三百`` → 2300, ``3.5万`` → 35000,
    ``1,234.5`` → 1234.5, ``十二`` → 12. Returns None when the string is not entirely a number."""
    s = text.strip()
    if not s or not re.search(r"[0-9" + _KANJI_NUM_CHARS + r"]", s):
        return None
    total = Decimal(0)
    last_big = None
    parts = re.split(r"([万億兆])", s)
    # parts: [small, big, small, big, ..., small]
    for idx in range(0, len(parts) - 1, 2):
        small, big = parts[idx], parts[idx + 1]
        value = _parse_small(small)
        if value is None:
            return None
        unit = BIG_UNITS[big]
        if last_big is not None and unit >= last_big:
            return None  # units must decrease: 1億2000万, never 2000万1億
        last_big = unit
        total += value * unit
    tail = parts[-1]
    if tail:
        value = _parse_small(tail)
        if value is None:
            return None
        total += value
    return total


def decimal_places(number_text: str) -> int:
    """Digits after the decimal point of the first Arabic number in ``number_text`` (0 if none)."""
    m = _ARABIC.search(number_text)
    if not m or "." not in m.group(0):
        return 0
    return len(m.group(0).split(".")[1])


def to_decimal(text: str) -> Decimal | None:
    """``float``-like parsing into a Decimal (``1e3``, ``-2.5``); None when not a number."""
    try:
        d = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


# Numbers in free text, for metrics that read several values from a reply (DomainCQA numeric retrieval):
# scientific notation (1.2e-3, 1.2×10^-3, 1.2 x 10^{-3}, $10^{5}$), thousands separators, signs, 万/億/兆.
_SCI = re.compile(
    r"(?:(?<![\w.])(?P<sign>[-+]))?\s*(?P<mant>\d+(?:\.\d+)?|\.\d+)?\s*(?:(?:×|x|\*|\\times|\\cdot|·)\s*)?10\s*\^\s*\{?\s*"
    r"(?P<exp>[-+]?\d+)\s*\}?")
_PLAIN = re.compile(r"(?:(?<![\w.])(?P<sign>[-+△▲]))?"
                    r"(?P<num>\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?|\.\d+)"
                    r"(?P<big>(?:[万億兆])+)?(?![\d.])")


def parse_numbers(text: str) -> list[float]:
    """Every number in ``text`` in reading order, as floats.

    Handles ``1,234.5``, ``-3``, ``1.2e-3``, ``1.2×10^-3`` / ``1.2 \\times 10^{-3}`` / ``10^{5}``, Unicode minus,
    △/▲ (Japanese negative marks), and 万/億/兆 after digits (``1.2万`` → 12000). A comma followed by exactly three
    digits is a thousands separator; any other comma separates values (``1.5, 2.5``).
    """
    from zuhyo.evaluate.judges.answer_extraction import normalize_text

    t = normalize_text(text)
    values: list[tuple[int, float]] = []
    taken: list[tuple[int, int]] = []
    for m in _SCI.finditer(t):
        mant = float(m.group("mant")) if m.group("mant") else 1.0
        v = mant * 10.0 ** int(m.group("exp"))
        values.append((m.start(), -v if m.group("sign") == "-" else v))
        taken.append((m.start(), m.end()))
    for m in _PLAIN.finditer(t):
        if any(a <= m.start() < b for a, b in taken):
            continue
        v = float(m.group("num").replace(",", ""))
        for big in m.group("big") or "":
            v *= BIG_UNITS[big]
        if m.group("sign") in ("-", "△", "▲"):
            v = -v
        values.append((m.start(), v))
    return [v for _, v in sorted(values)]
