"""A CJK font for matplotlib, so Japanese labels render (DejaVu Sans, the default, has no kanji or kana).

IPAex Gothic from Debian's ``fonts-ipaexfont`` is preferred; other common CJK fonts are accepted; without any, the
copy of IPAex Gothic shipped in this package (``report/font_files/``, IPA Font License v1.0, licence text beside it) is
used, so reports render Japanese on a fresh machine too. The font file is
registered with ``matplotlib.font_manager`` (no font cache rebuild, no japanize-matplotlib, which breaks on
Python ≥ 3.12). No usable font is an error with the fix in its message — never tofu boxes in a paper figure.
"""

from __future__ import annotations

from pathlib import Path

from zuhyo.report.runsets import ReportError

IPAEX_GOTHIC = Path("/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf")
BUNDLED_IPAEX_GOTHIC = Path(__file__).with_name("font_files") / "ipaexg.ttf"
"""IPAex Gothic 00401, unmodified, redistributed under the IPA Font License v1.0 (see IPAexGothic-LICENSE.txt)."""
_CANDIDATE_STEMS = ("ipaexg", "ipag", "ipagp", "notosanscjk", "notosansjp", "notosanscjkjp", "sourcehansans",
                    "takaogothic", "vl-gothic", "vlgothic", "droidsansfallback")
PROBE = "正答率図表あア"
"""Characters the font must have: kanji, hiragana and katakana."""


def _covers(path: Path, text: str = PROBE) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        font = FT2Font(str(path))
    except (OSError, RuntimeError):
        return False
    return all(font.get_char_index(ord(ch)) != 0 for ch in text)


def find_cjk_font(explicit: Path | None = None) -> Path:
    """The font file to use: ``explicit`` if given, else IPAex Gothic, else any installed CJK font."""
    if explicit is not None:
        if not explicit.is_file():
            raise ReportError(f"--font {explicit}: no such file")
        if not _covers(explicit):
            raise ReportError(f"--font {explicit}: the font lacks Japanese glyphs (tested {PROBE!r})")
        return explicit
    if IPAEX_GOTHIC.is_file() and _covers(IPAEX_GOTHIC):
        return IPAEX_GOTHIC
    from matplotlib import font_manager

    for f in sorted(font_manager.findSystemFonts()):
        p = Path(f)
        key = p.stem.lower().replace("_", "").replace(" ", "")
        if any(key.startswith(s.replace("-", "")) for s in _CANDIDATE_STEMS) and _covers(p):
            return p
    if BUNDLED_IPAEX_GOTHIC.is_file() and _covers(BUNDLED_IPAEX_GOTHIC):
        return BUNDLED_IPAEX_GOTHIC
    raise ReportError("no CJK font found for the plots' Japanese labels: install IPAex Gothic "
                      f"(`apt-get install fonts-ipaexfont`, expected at {IPAEX_GOTHIC}) or pass --font PATH.ttf")


def use_cjk_font(explicit: Path | None = None) -> str:
    """Register the CJK font with matplotlib and make it the default family; returns the family name."""
    from matplotlib import font_manager, rcParams

    path = find_cjk_font(explicit)
    font_manager.fontManager.addfont(str(path))
    name = font_manager.FontProperties(fname=str(path)).get_name()
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = [name, *[f for f in rcParams["font.sans-serif"] if f != name]]
    rcParams["axes.unicode_minus"] = False  # IPAex has no U+2212 glyph in some builds; use ASCII minus
    return name
