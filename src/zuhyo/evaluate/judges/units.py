"""Units of one dimension that convert into each other (3.2トン = 3,200 kg, 1.5時間 = 90分, 2 km = 2,000 m).

Spellings are the canonical units of :func:`~zuhyo.evaluate.judges.quantities.canonical_unit` after
normalisation (NFKC, lower case: ``km²`` → ``km2``, ``MW`` → ``mw``). Only units whose meaning is unambiguous
are listed: bare ``m`` for minutes is not. 年 converts to months only (1.5年 = 18か月): a year label such as
2019年 is never compared with a number of months.
"""

from __future__ import annotations

from decimal import Decimal

_D = Decimal
#: unit → (dimension, factor to the dimension's base unit).
UNIT_SCALE: dict[str, tuple[str, Decimal]] = {
    # mass (base: kg)
    "t": ("mass", _D(1000)), "トン": ("mass", _D(1000)), "kg": ("mass", _D(1)), "キログラム": ("mass", _D(1)),
    "キロ": ("mass", _D(1)), "g": ("mass", _D("0.001")), "グラム": ("mass", _D("0.001")),
    "mg": ("mass", _D("0.000001")), "ミリグラム": ("mass", _D("0.000001")), "千トン": ("mass", _D(1000000)),
    "万トン": ("mass", _D(10000000)),
    # length (base: m)
    "km": ("length", _D(1000)), "キロメートル": ("length", _D(1000)), "m": ("length", _D(1)),
    "メートル": ("length", _D(1)), "cm": ("length", _D("0.01")), "センチメートル": ("length", _D("0.01")),
    "センチ": ("length", _D("0.01")), "mm": ("length", _D("0.001")), "ミリメートル": ("length", _D("0.001")),
    # area (base: m2)
    "km2": ("area", _D(1000000)), "平方キロメートル": ("area", _D(1000000)), "ha": ("area", _D(10000)),
    "ヘクタール": ("area", _D(10000)), "m2": ("area", _D(1)), "平方メートル": ("area", _D(1)),
    # volume (base: l)
    "kl": ("volume", _D(1000)), "キロリットル": ("volume", _D(1000)), "m3": ("volume", _D(1000)),
    "立方メートル": ("volume", _D(1000)), "l": ("volume", _D(1)), "リットル": ("volume", _D(1)),
    "ml": ("volume", _D("0.001")), "ミリリットル": ("volume", _D("0.001")),
    # duration (base: s)
    "週": ("time", _D(604800)), "週間": ("time", _D(604800)), "日": ("time", _D(86400)),
    "日間": ("time", _D(86400)), "時間": ("time", _D(3600)), "分": ("time", _D(60)), "分間": ("time", _D(60)),
    "秒": ("time", _D(1)), "秒間": ("time", _D(1)),
    # calendar durations (base: month): 1.5年 = 18か月. A year label (2019年) never meets a month count.
    "年": ("months", _D(12)), "か月": ("months", _D(1)),
    # energy (base: kWh) and power (base: kW)
    "twh": ("energy", _D(10**9)), "gwh": ("energy", _D(10**6)), "mwh": ("energy", _D(1000)),
    "kwh": ("energy", _D(1)), "wh": ("energy", _D("0.001")),
    "gw": ("power", _D(10**6)), "mw": ("power", _D(1000)), "kw": ("power", _D(1)), "w": ("power", _D("0.001")),
}


def conversion_factor(unit: str, to_unit: str) -> Decimal | None:
    """The factor that turns a value in ``unit`` into ``to_unit`` (both of one dimension), else None."""
    a, b = UNIT_SCALE.get(unit), UNIT_SCALE.get(to_unit)
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[1] / b[1]
