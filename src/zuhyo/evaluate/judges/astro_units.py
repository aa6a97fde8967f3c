"""Physical units written after a number in an astronomy answer: recognition, canonical form, conversion.

Used by the AstroChart value extractor (:mod:`zuhyo.evaluate.judges.numeric_values`) to keep a unit with its
number ("21,000 km/s", "2.1×10^4 km s^-1", "1 kpc (1000 pc)") and to compare a predicted value with a reference
given in another unit of the same dimension (kpc vs pc, Gyr vs yr, Å vs nm). Units are case-sensitive (Mpc is
not mpc, MeV is not meV), unlike the rules judge's Japanese units (:mod:`zuhyo.evaluate.judges.units`), which are
read after lower-casing. Only units of one dimension are converted; magnitudes, dex, % and temperatures are
compared as written.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Base units: symbol → (dimension, factor to the dimension's reference unit).
_BASE: dict[str, tuple[str, float]] = {
    "m": ("L", 1.0), "pc": ("L", 3.0856775814913673e16), "AU": ("L", 1.495978707e11), "au": ("L", 1.495978707e11),
    "ly": ("L", 9.4607304725808e15), "Å": ("L", 1e-10), "R⊙": ("L", 6.957e8), "Rsun": ("L", 6.957e8),
    "s": ("T", 1.0), "sec": ("T", 1.0), "min": ("T", 60.0), "h": ("T", 3600.0), "hr": ("T", 3600.0),
    "d": ("T", 86400.0), "day": ("T", 86400.0), "days": ("T", 86400.0), "yr": ("T", 3.15576e7),
    "year": ("T", 3.15576e7), "years": ("T", 3.15576e7),
    "g": ("M", 1e-3), "M⊙": ("M", 1.98847e30), "Msun": ("M", 1.98847e30),
    "eV": ("E", 1.602176634e-19), "erg": ("E", 1e-7), "J": ("E", 1.0),
    "W": ("P", 1.0), "L⊙": ("P", 3.828e26), "Lsun": ("P", 3.828e26),
    "Hz": ("F", 1.0), "Jy": ("Jy", 1.0),
    "deg": ("A", 1.0), "°": ("A", 1.0), "degree": ("A", 1.0), "degrees": ("A", 1.0),
    "arcmin": ("A", 1 / 60), "′": ("A", 1 / 60), "arcsec": ("A", 1 / 3600), "″": ("A", 1 / 3600),
    "′′": ("A", 1 / 3600), "mas": ("A", 1 / 3.6e6), "rad": ("A", 180 / math.pi),
    "K": ("K", 1.0), "mag": ("mag", 1.0), "dex": ("dex", 1.0), "%": ("%", 1.0), "percent": ("%", 1.0),
    "sr": ("sr", 1.0),
}
_PREFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "c": 1e-2, "m": 1e-3, "μ": 1e-6, "u": 1e-6, "n": 1e-9,
             "p": 1e-12}
_PREFIXABLE = ("m", "pc", "s", "yr", "g", "eV", "J", "W", "Hz", "Jy")
_TOKENS: dict[str, tuple[str, float]] = dict(_BASE)
for _base in _PREFIXABLE:
    for _p, _f in _PREFIXES.items():
        _TOKENS.setdefault(_p + _base, (_BASE[_base][0], _f * _BASE[_base][1]))
_TOKENS.pop("Ms", None)  # "Ms" is not a unit anyone means here
_TOKENS["kG"] = ("B", 1e3)  # bare G (gauss) is left out: too easily a stray capital

_TOKEN_RE = "|".join(re.escape(t) for t in sorted(_TOKENS, key=len, reverse=True))
_EXP = r"(?:\^\{?[-+]?\d+\}?|[-]\d+(?![\d.])|\d(?![\d.]))?"
#: One unit token with an optional exponent ("s^-1", "s^{-1}", "s-1", "cm3"), not followed by a letter.
UNIT_TOKEN = rf"(?:{_TOKEN_RE})(?![A-Za-z]){_EXP}"
#: A unit: tokens joined by spaces, "/", "·" or "." ("km s^-1 Mpc^-1", "erg/s/cm^2", "M⊙ yr^-1").
UNIT = rf"{UNIT_TOKEN}(?:\s?(?:/|·|⋅|\.|\s)\s?{UNIT_TOKEN})*"
_PART = re.compile(rf"(/)?\s?({_TOKEN_RE})(\^\{{?[-+]?\d+\}}?|-\d+|\d)?")


@dataclass(frozen=True)
class Unit:
    """A parsed unit: tokens with integer exponents, in the order written."""

    parts: tuple[tuple[str, int], ...]

    @property
    def canonical(self) -> str:
        """``km s^-1`` and ``km/s`` both read ``km s^-1``."""
        return " ".join(t if e == 1 else f"{t}^{e}" for t, e in self.parts)

    def dimension(self) -> tuple[tuple[str, int], ...]:
        dims: dict[str, int] = {}
        for t, e in self.parts:
            d = _TOKENS[t][0]
            dims[d] = dims.get(d, 0) + e
        return tuple(sorted((d, e) for d, e in dims.items() if e))

    def factor(self) -> float:
        return math.prod(_TOKENS[t][1] ** e for t, e in self.parts)


def parse_unit(text: str) -> Unit | None:
    """The unit written in ``text`` (which must be a whole :data:`UNIT` match), or None."""
    parts: list[tuple[str, int]] = []
    for m in _PART.finditer(text):
        exp = int(m.group(3).strip("^{}")) if m.group(3) else 1
        parts.append((m.group(2), -exp if m.group(1) else exp))
    return Unit(tuple(parts)) if parts else None


def convert(value: float, src: Unit, dst: Unit) -> float | None:
    """``value`` in ``src`` expressed in ``dst``; None when the dimensions differ or cannot be converted."""
    if src.canonical == dst.canonical:
        return value
    dim = src.dimension()
    if dim != dst.dimension() or any(d in ("K", "mag", "dex", "%") for d, _ in dim):
        return None
    return value * src.factor() / dst.factor()
