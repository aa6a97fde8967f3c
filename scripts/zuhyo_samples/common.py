"""Shared pieces of the sample renderers: the Japanese font, deterministic PNG output, number notation.

Everything here is deterministic: no dates in PNG metadata, fixed DPI, palette PNGs, so re-running the
renderer gives byte-identical files on the same matplotlib/Pillow versions.
"""

from __future__ import annotations

import io
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless rendering; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

#: IPAex Gothic from Debian's fonts-ipaexfont (the font HakushoBench-style charts are rendered with).
IPAEX_GOTHIC_PATHS = (
    Path("/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf"),
    Path("/usr/share/fonts/truetype/fonts-japanese-gothic.ttf"),
)

DPI = 130
#: White-paper-like palette (muted blues/greens/oranges, as in 情報通信白書 figures).
PALETTE = ["#1f5f9f", "#e07b39", "#4a9a5b", "#c0392b", "#8e6fb5", "#7f8c8d", "#d4a017", "#2c8c99"]


class FontMissingError(RuntimeError):
    """The Japanese font is not installed; rendering would produce tofu boxes."""


def use_japanese_font() -> str:
    """Register IPAex Gothic and make it matplotlib's default family; raise when it is not installed."""
    for path in IPAEX_GOTHIC_PATHS:
        if path.is_file():
            font_manager.fontManager.addfont(str(path))
            name = font_manager.FontProperties(fname=str(path)).get_name()
            plt.rcParams["font.family"] = name
            plt.rcParams["axes.unicode_minus"] = False  # IPAex has no U+2212 glyph
            return name
    raise FontMissingError(
        "IPAex Gothic not found (looked at " + ", ".join(str(p) for p in IPAEX_GOTHIC_PATHS)
        + "); install Debian's fonts-ipaexfont so Japanese text does not render as empty boxes")


def save_png(fig: Figure, path: Path, colors: int = 96) -> None:
    """Save ``fig`` as a small, deterministic palette PNG (no timestamps or software tags)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    buf.seek(0)
    with Image.open(buf) as im:
        rgb = im.convert("RGB")
    # Median-cut quantisation is deterministic and keeps anti-aliased text legible at 96 colours.
    pal = rgb.quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path.parent.mkdir(parents=True, exist_ok=True)
    pal.save(path, format="PNG", optimize=True)


def round_half_up(x: float, digits: int = 0) -> Decimal:
    """Round like Japanese statistics tables do (0.5 up), not banker's rounding."""
    q = Decimal(1).scaleb(-digits)
    return Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP)


def fixed(x: float, digits: int = 1) -> str:
    """``x`` rounded half-up to ``digits`` decimals, as text ("4.6")."""
    return f"{round_half_up(x, digits):f}"


def comma(n: int) -> str:
    """Thousands separators: 8534 → "8,534"."""
    return f"{n:,}"


def oku_yen(oku: int) -> str:
    """An amount in 億円 in the white papers' notation: 12038 → "1兆2,038億円", 3963 → "3,963億円"."""
    cho, rest = divmod(oku, 10_000)
    if cho and rest:
        return f"{cho}兆{rest:,}億円"
    if cho:
        return f"{cho}兆円"
    return f"{rest:,}億円"


def man(n: int, unit: str) -> str:
    """A count in the 万 notation: 379277 → "37万9,277人"."""
    m, rest = divmod(n, 10_000)
    if m and rest:
        return f"{m}万{rest:,}{unit}"
    if m:
        return f"{m}万{unit}"
    return f"{rest:,}{unit}"


def man_from_man(n_man: int, unit: str) -> str:
    """A count given in 万 units in the 億/万 notation: 69182 → "6億9,182万台"."""
    oku, rest = divmod(n_man, 10_000)
    if oku and rest:
        return f"{oku}億{rest:,}万{unit}"
    if oku:
        return f"{oku}億{unit}"
    return f"{rest:,}万{unit}"
