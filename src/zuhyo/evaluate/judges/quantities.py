"""A short answer read as a quantity: value, unit, precision, approximation and bound qualifiers.

``約1億2000万人`` → 120,000,000 人 (approximate); ``3割5分`` → 35 %; ``二羽`` → 2 羽; ``12.5ポイント`` → 12.5 pt;
``500千円`` → 500,000 円; ``2023年度`` → 2023 年 (fiscal years compare with years); ``1/2`` and ``2分の1`` → 0.5
(exact). Input is normalised text (:func:`~zuhyo.evaluate.judges.answer_extraction.normalize_text`) with era
years already converted.

Change words (増/増加/上昇/拡大/減/減少/低下/縮小, increase/decrease ...) say the direction of a change, never a
unit: :func:`split_direction` takes them (and frames such as 前年比) off before a quantity is read, so
``3.2ポイント上昇`` is 3.2 pt going up, not 3.2 of a unit called ポイント上昇.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from zuhyo.evaluate.judges.english_numbers import NUMBER_WORDS, SCALES, parse_fraction_words, parse_number_words
from zuhyo.evaluate.judges.japanese_numbers import BIG_UNITS, KANJI_DIGITS, SMALL_UNITS, parse_japanese_number

_APPROX_PREFIX = re.compile(r"^(?:約|およそ|おおよそ|概ね|おおむね|ほぼ|大体|だいたい|凡そ"
                            r"|approximately|approx\.?|about|around|roughly|nearly|almost|more or less|~)\s*")
_APPROX_SUFFIX = re.compile(r"\s*(?:程度|前後|ほど|くらい|ぐらい|弱|強|余り|あまり|or so)$")
_ORDINAL_PREFIX = re.compile(r"^第\s*(?=[0-9" + "".join(KANJI_DIGITS) + "".join(SMALL_UNITS) + r"])")
_HALF = ("半分", "半数", "半")
_COMPOUND = re.compile(r"^(?P<first>[0-9]+(?:\.[0-9]+)?[^\s0-9.,半]{1,4}?)(?:(?P<half>半)|"
                       r"(?P<second>[0-9]+(?:\.[0-9]+)?[^\s0-9.,]{1,4}))$")
_BOUND_PREFIX = re.compile(r"^(?:more than|over|above|at least|less than|under|below|at most)\s+")
_BOUND_SUFFIX = re.compile(r"(?:以上|以下|未満|超え|超|を超える|を上回る|を下回る)$")
_SIGN_PREFIX = re.compile(r"^(?:-|\+|△|▲|マイナス|プラス)")
_CURRENCY_PREFIX = {"us$": "ドル", "$": "ドル", "¥": "円", "€": "ユーロ", "£": "ポンド"}
_WARI = re.compile(r"^(?P<wari>[0-9一二三四五六七八九十]+)割(?:(?P<bu>[0-9一二三四五六七八九])分)?"
                   r"(?:(?P<rin>[0-9一二三四五六七八九])厘)?$")
_FRACTION = re.compile(r"^(?P<num>[0-9]+)\s*/\s*(?P<den>[0-9]+)$")
_JA_FRACTION = re.compile(r"^(?P<den>[0-9一二三四五六七八九十百千]+)分の(?P<num>[0-9一二三四五六七八九十百千]+)$")
_UP_WORDS = ("増加|増大|増|上昇|拡大|伸び|アップ|増えた|上がった|高くなった|多くなった"
             "|increased|increase|rise|rose|up|growth|higher")
_DOWN_WORDS = ("減少|減|低下|縮小|下落|ダウン|減った|下がった|低くなった|少なくなった"
               "|decreased|decrease|decline|drop|fell|down|lower")
_VERB_ENDING = (r"(?:した|している|していた|しました|しています|となった|となっている|となりました|になった"
                r"|していること)?")
_DIRECTION_SUFFIX = re.compile(
    rf"\s*(?:の|も|だけ|分|ほど)?\s*(?:(?P<up>{_UP_WORDS})|(?P<down>{_DOWN_WORDS})){_VERB_ENDING}$")
_DIRECTION_PREFIX = re.compile(r"^(?:(?P<up>up|increased by|increase of|rose by|grew by|an increase of)"
                               r"|(?P<down>down|decreased by|decrease of|fell by|dropped by|a decrease of))\s+")
_FRAME_PREFIX = re.compile(r"^(?:対?前年(?:度|同期|同月|同日)?比|前月比|前期比|前回比"
                           r"|前年(?:度)?(?:から|より|と比べ(?:て)?)|year[- ]on[- ]year|yoy)\s*(?:で|は|、|,)?\s*")
_NUM_RUN = re.compile(r"^(?:[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?|\.[0-9]+|[" + "".join(KANJI_DIGITS)
                      + "".join(SMALL_UNITS) + "".join(BIG_UNITS) + r"])(?:[0-9.,]|[" + "".join(KANJI_DIGITS)
                      + "".join(SMALL_UNITS) + "".join(BIG_UNITS) + r"])*")

#: Spellings of one unit → the canonical spelling compared.
UNIT_ALIASES = {
    "パーセント": "%", "percent": "%", "per cent": "%", "pct": "%",
    "ポイント": "pt", "%ポイント": "pt", "%pt": "pt", "pts": "pt", "pp": "pt", "percentage points": "pt",
    "percentage point": "pt", "points": "pt", "point": "pt",
    "名": "人", "才": "歳", "年度": "年", "yen": "円", "dollars": "ドル", "dollar": "ドル", "米ドル": "ドル",
    "ヶ月": "か月", "カ月": "か月", "ヵ月": "か月", "ケ月": "か月", "箇月": "か月",
    "ヶ国": "か国", "カ国": "か国", "ヵ国": "か国", "ケ国": "か国", "箇国": "か国",
    "ヶ所": "か所", "カ所": "か所", "ヵ所": "か所", "箇所": "か所", "times": "倍", "x": "倍",
    "歳代": "代", "年間": "年", "か年": "年", "番目": "位", "ヶ月間": "か月", "か月間": "か月", "カ月間": "か月",
    # English units of answers to Japanese questions ("34 million people" for 3400万人)
    "people": "人", "persons": "人", "person": "人", "cases": "件", "case": "件", "companies": "社",
    "company": "社", "firms": "社", "households": "世帯", "household": "世帯", "countries": "か国",
    "country": "か国", "tons": "トン", "tonnes": "トン", "ton": "トン", "years": "年", "year": "年",
    "years old": "歳", "months": "か月", "month": "か月", "hours": "時間", "hour": "時間", "minutes": "分",
    "days": "日", "schools": "校", "stores": "店", "vehicles": "台", "locations": "か所", "places": "か所",
}
# Counters and units a kanji numeral may be followed by. A bare kanji run before other text is a word, not a
# number (一般, 一部, 三菱).
KANJI_COUNTERS = ("人", "名", "円", "件", "社", "個", "羽", "匹", "頭", "台", "回", "倍", "歳", "才", "年", "月", "日",
                  "時間", "分", "秒", "%", "か", "ヶ", "カ", "ヵ", "箇", "国", "校", "店", "種", "本", "枚", "冊", "隻",
                  "機", "基", "戸", "世帯", "位", "番", "等", "点", "票", "議席", "割", "県", "都", "府", "つ", "度",
                  "週", "期", "次", "段", "層", "軒", "棟", "型", "品目", "地域", "ドル", "トン",
                  "ポイント", "パーセント")
MAX_UNIT_LENGTH = 8


@dataclass(frozen=True)
class Quantity:
    """A number with its unit as stated in an answer."""

    value: Decimal
    unit: str
    """Canonical unit ('' when none): see UNIT_ALIASES."""
    quantum: Decimal
    """The step of the last stated digit in the value's own scale: 1 for 12, 0.1 for 12.3, 1000 for 1.2万."""
    approx: bool = False
    """约/およそ/程度/about...: the value is stated as approximate."""
    bound: str = ""
    """A bound qualifier (以上, 未満, more than...), '' when none."""
    exact: bool = False
    """An exact fraction (1/3): its decimal expansion has no stated precision."""

    def rounded_to(self, quantum: Decimal) -> Decimal:
        """The value rounded (half up) to a multiple of ``quantum``."""
        return (self.value / quantum).quantize(Decimal(1), rounding=ROUND_HALF_UP) * quantum


def split_direction(text: str) -> tuple[str, int | None, bool]:
    """``(text without change words, direction, whether a change word was there)``: direction +1 for
    増加/上昇/increase..., -1 for 減少/低下/decrease..., None when no word says it. Frames (前年比, 前年度から,
    year-on-year) are dropped too: ``前年比25%増`` → ("25%", +1, True)."""
    t = text.strip()
    found = False
    m = _FRAME_PREFIX.match(t)
    if m:
        t, found = t[m.end():], True
    direction: int | None = None
    m = _DIRECTION_PREFIX.match(t)
    if m:
        direction, t, found = (1 if m.group("up") else -1), t[m.end():], True
    m = _DIRECTION_SUFFIX.search(t)
    if m and (m.group("up") or m.group("down")).isascii() \
            and t[:m.start("up" if m.group("up") else "down")][-1:].isalpha():
        m = None  # "backup", "setup": an English word that merely ends like one
    if m and m.start() > 0:
        word_dir = 1 if m.group("up") else -1
        if direction is not None and direction != word_dir:
            return text, None, False  # "up ... 減少": not a plain change statement
        direction, t, found = word_dir, t[:m.start()], True
    return t.strip(), direction, found


def is_known_unit(unit: str) -> bool:
    """True for a unit or counter this module knows by name (人, 円, %, pt, kg ...): two different known units
    are different things, while an unknown spelling may be a synonym."""
    from zuhyo.evaluate.judges.units import UNIT_SCALE

    return (unit in KANJI_COUNTERS or unit in UNIT_SCALE or unit in UNIT_ALIASES.values()
            or canonical_unit(unit) != unit)


def canonical_unit(unit: str) -> str:
    u = unit.strip()
    return UNIT_ALIASES.get(u, u)


def _quantum(number_text: str, value: Decimal) -> Decimal:
    """Precision of a stated number: the place value of its last written digit, scaled by 万/億/兆 and 千/百/十."""
    scale = Decimal(1)
    body = number_text
    for big, mult in BIG_UNITS.items():
        if body.endswith(big):
            scale, body = Decimal(mult), body[:-1]
            break
    m = re.search(r"\.([0-9]+)$", body)
    if m:
        return scale * Decimal(1).scaleb(-len(m.group(1)))
    if re.search(r"[0-9]$", body):
        return scale
    if body and body[-1] in SMALL_UNITS:
        return scale * SMALL_UNITS[body[-1]]
    return scale if value == value.to_integral_value() else Decimal("0.1")


def _read_number(t: str) -> tuple[str, Decimal, Decimal] | None:
    """``(number text, value, quantum)`` of the number ``t`` starts with: digits and kanji numerals
    (:func:`parse_japanese_number`; "千円" is both a numeral and a unit prefix: 500千円 = 500,000 円), or English
    number words (:func:`~zuhyo.evaluate.judges.english_numbers.parse_number_words`: ``seven``, ``thirty-four``)."""
    m = _NUM_RUN.match(t)
    if m:
        num_text = m.group(0).rstrip(",")
        number = parse_japanese_number(num_text)
        return None if number is None else (num_text, number, _quantum(num_text, number))
    m = NUMBER_WORDS.match(t)
    if m:
        words = parse_number_words(m.group(0))
        return None if words is None else (m.group(0), words[0], words[1])
    return None


def _compound(t: str) -> tuple[Decimal, str, Decimal] | None:
    """A value written in two units of one dimension (7時間30分 = 7.5時間, 1年6か月 = 1.5年) or with 半 (1年半 =
    1.5年, 3時間半 = 3.5時間): (value, canonical unit of the first, quantum)."""
    from zuhyo.evaluate.judges.units import conversion_factor

    m = _COMPOUND.match(t)
    if not m:
        return None
    first = parse_quantity(m.group("first"))
    if first is None or not first.unit or first.exact:
        return None
    if m.group("half"):
        return first.value + Decimal("0.5"), first.unit, Decimal("0.5")
    second = parse_quantity(m.group("second") or "")
    factor = conversion_factor(second.unit, first.unit) if second is not None and second.unit else None
    if second is None or factor is None or factor >= 1:
        return None
    return first.value + second.value * factor, first.unit, second.quantum * factor


def parse_quantity(text: str) -> Quantity | None:
    """The quantity a short normalised answer states, or None when it is not a single quantity."""
    t = text.strip()
    approx = bound = ""
    m = _APPROX_PREFIX.match(t)
    if m:
        approx, t = "prefix", t[m.end():]
    m = _BOUND_PREFIX.match(t)
    if m:
        bound, t = m.group(0).strip(), t[m.end():]
    m = _APPROX_SUFFIX.search(t)
    if m:
        approx, t = "suffix", t[:m.start()]
    m = _BOUND_SUFFIX.search(t)
    if m:
        bound, t = m.group(0), t[:m.start()]
    t = t.strip()
    negative = False
    m = _SIGN_PREFIX.match(t)
    if m:
        negative, t = m.group(0) in ("-", "△", "▲", "マイナス"), t[m.end():].strip()
    unit = ""
    for sym, name in _CURRENCY_PREFIX.items():
        if t.startswith(sym):
            unit, t = name, t[len(sym):].strip()
            break
    f = _FRACTION.match(t) or _JA_FRACTION.match(t)
    if f and not unit:  # 1/2, 2分の1
        num, den = parse_japanese_number(f.group("num")), parse_japanese_number(f.group("den"))
        if num is None or not den:
            return None
        value = num / den
        return Quantity(-value if negative else value, "", Decimal(0), bool(approx), bound, exact=True)
    w = _WARI.match(t)
    if w:  # 3割5分2厘 = 35.2 %
        parsed = [parse_japanese_number(w.group(g)) if w.group(g) else Decimal(0) for g in ("wari", "bu", "rin")]
        parts = [p for p in parsed if p is not None]
        if len(parts) != 3:
            return None
        value = parts[0] * 10 + parts[1] + parts[2] / 10
        quantum = Decimal("0.1") if w.group("rin") else Decimal(1) if w.group("bu") else Decimal(10)
        return Quantity(-value if negative else value, "%", quantum, bool(approx), bound)
    if t in _HALF or parse_fraction_words(t) is not None:  # 半分, half, two thirds
        value = Decimal("0.5") if t in _HALF else parse_fraction_words(t) or Decimal(0)
        return Quantity(-value if negative else value, "", Decimal(0), bool(approx), bound, exact=True)
    t = _ORDINAL_PREFIX.sub("", t)  # 第3位 = 3位
    compound = _compound(t)
    if compound is not None:
        value, unit, quantum = compound
        return Quantity(-value if negative else value, unit, quantum, bool(approx), bound)
    read = _read_number(t)
    if read is None:
        return None
    num_text, value, quantum = read
    rest = t[len(num_text):].strip()
    words = rest.split(" ", 1)
    if words[0] in SCALES and re.search(r"[0-9]", num_text):  # 34 million, 1.5 billion
        mult = SCALES[words[0]]
        value, quantum = value * mult, quantum * mult
        rest = words[1] if len(words) > 1 else ""
    rest = rest.strip()
    if (re.search(r"[0-9]", rest) and rest not in ("m2", "m3", "km2", "cm2", "cm3")) or (
            len(rest) > MAX_UNIT_LENGTH and rest not in UNIT_ALIASES):
        return None
    if rest and not re.search(r"[0-9a-z]", num_text) and not rest.startswith(KANJI_COUNTERS):
        return None  # 一般, 三菱: a word that starts with a kanji numeral
    if rest and unit:
        return None  # "$5 million dollars"-style doubles are not worth guessing
    unit = unit or canonical_unit(rest)
    if unit.startswith("%") and unit != "%":
        unit = canonical_unit(unit)
    return Quantity(-value if negative else value, unit, quantum, bool(approx), bound)
