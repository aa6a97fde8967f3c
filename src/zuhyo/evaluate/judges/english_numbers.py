"""English number words: ``seven``, ``twenty-one``, ``three hundred and five``, ``thirty-four million``, and
fractions in words (``half``, ``two thirds``, ``a quarter``).

HakushoBench §3.2 names the surface variation its judge must accept: "7" vs "seven". Models answer Japanese
questions in English too ("34 million people" for 3400万人), so the ``rules`` judge
(:func:`~zuhyo.evaluate.judges.quantities.parse_quantity`) and the AstroChart value extractor
(:mod:`~zuhyo.evaluate.judges.numeric_values`) share this one parser. Input is lower-case text.
"""

from __future__ import annotations

import re
from decimal import Decimal

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORD_VALUE: dict[str, int] = {**{w: i for i, w in enumerate(_ONES)}, **_TENS, "dozen": 12}
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
                 "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7,
                 "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10}
_WORD = "|".join(sorted([*_WORD_VALUE, *SCALES], key=len, reverse=True))
NUMBER_WORDS = re.compile(rf"(?<![a-z])(?:{_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_WORD}))*(?![a-z])")
"""A run of number words (``thirty-four million``, ``one hundred and five``)."""
_FRACTION = re.compile(rf"^(?:(?P<num>a|an|one|{'|'.join(_ONES[1:])})[\s-]+)?(?P<den>{'|'.join(_DENOMINATORS)})$")


def parse_number_words(text: str) -> tuple[Decimal, Decimal] | None:
    """``(value, quantum)`` of a whole string of number words, or None. The quantum is the place of the last
    word (``thirty-four million`` → 10^6, ``seven`` → 1), like the last written digit of a numeral.

    ``a hundred`` / ``a thousand`` count as one; two small numbers in a row (``one two``) are not a number."""
    words = [w for w in re.split(r"\s+|-", text.strip()) if w and w != "and"]
    if words[:1] in (["a"], ["an"]) and len(words) > 1 and words[1] in SCALES:
        words[0] = "one"
    if not words or words[0] in SCALES:
        return None
    total, current, last = 0, None, "scale"
    quantum = 1
    for w in words:
        if w in _WORD_VALUE:
            v = _WORD_VALUE[w]
            kind = "tens" if w in _TENS else "small"
            # after a tens word only 1-9 may follow (twenty-one); after a small number only a scale (one two: no)
            if last == "small" or (last == "tens" and (kind == "tens" or not 1 <= v <= 9)):
                return None
            current, last, quantum = (current or 0) + v, kind, 1
        elif w == "hundred":
            if last == "hundred" or (current is not None and current >= 100):
                return None
            current, last, quantum = (current or 1) * 100, "hundred", 100
        elif w in SCALES:
            if last == "scale" and current is None and total:
                return None  # "million thousand"
            total += (current if current is not None else 1) * SCALES[w]
            current, last, quantum = None, "scale", SCALES[w]
        else:
            return None
    return Decimal(total + (current or 0)), Decimal(quantum)


def parse_fraction_words(text: str) -> Decimal | None:
    """``half`` / ``a half`` / ``one half`` → 0.5, ``two thirds`` → 2/3, ``a quarter`` → 0.25; else None."""
    m = _FRACTION.match(text.strip())
    if not m:
        return None
    num = m.group("num")
    n = 1 if num in (None, "a", "an") else _ONES.index(num)
    return Decimal(n) / Decimal(_DENOMINATORS[m.group("den")])


def find_number_words(text: str) -> list[tuple[Decimal, int, int]]:
    """``(value, start, end)`` of each run of number words in lower-case free text ("one of" is not a count)."""
    found = []
    for m in NUMBER_WORDS.finditer(text):
        if re.match(r"\s+of\b", text[m.end():]) and m.group(0) == "one":
            continue
        parsed = parse_number_words(m.group(0))
        if parsed is not None:
            found.append((parsed[0], m.start(), m.end()))
    return found
