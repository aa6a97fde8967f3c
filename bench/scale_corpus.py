"""A large corpus of simple charts drawn with Pillow, for timing and memory of `zuhyo filter` at 5k-100k images.

Issue 22 "Scale": matplotlib renders ~25 charts a second on a core, so 100,000 of `bench/hard_corpus.py`'s charts
would take hours; this corpus is for time and memory, not for the detector's quality (that is
`bench/hard_corpus.py`'s job). Each item is a 640x480 bar, line or scatter chart with axes, ticks, a title and
its own data (seeded by the item number), so most pairs are look-alike charts of one template; every 20th item is
a copy of one of the ten items before it (resized 0.6-0.9x, JPEG q30-70), so any prefix keeps the 5 % rate and
the 5k/20k/100k runs share one corpus.

    python bench/scale_corpus.py /tmp/zuhyo_scale --n 100000 --workers 2

writes ``NNNNNN.png`` / ``NNNNNN.jpg`` and ``manifest.json`` (``{"files": [...], "duplicate_of": {file: file}}``);
items already on disk are kept.
"""

from __future__ import annotations

import argparse
import io
import random
from pathlib import Path

from chart_corpus import build_corpus, write_item

SIZE = (640, 480)
PALETTES = (((31, 119, 180), (255, 127, 14), (44, 160, 44)), ((80, 80, 80), (150, 150, 150), (20, 20, 20)),
            ((228, 26, 28), (55, 126, 184), (77, 175, 74)), ((120, 170, 220), (250, 200, 120), (180, 220, 160)))
WORDS = ("Sales", "Exports", "Rainfall", "Population", "Energy", "Revenue", "Visitors", "Output", "Prices")


def render_chart(i: int) -> bytes:
    """PNG bytes of chart ``i``: kind, palette, data and title follow from ``i``."""
    from PIL import Image, ImageDraw

    rng = random.Random(i)
    im = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(im)
    left, top, right, bottom = 60, 50, SIZE[0] - 20, SIZE[1] - 50
    draw.line([(left, top), (left, bottom), (right, bottom)], fill="black", width=2)
    step = rng.choice((10, 20, 50))
    for k in range(6):  # y ticks and grid
        y = bottom - k * (bottom - top) // 5
        draw.line([(left - 5, y), (left, y)], fill="black")
        draw.line([(left + 1, y), (right, y)], fill=(225, 225, 225))
        draw.text((left - 35, y - 6), str(k * step), fill="black")
    draw.text((left, 15), f"{rng.choice(WORDS)} by region, {1990 + i % 35} (item {i})", fill="black")
    palette = PALETTES[i % len(PALETTES)]
    kind = ("bar", "line", "scatter")[(i // 3) % 3]
    n = rng.randint(4, 12)
    width = (right - left) / n
    for s in range(1 if kind == "bar" else rng.randint(1, 3)):
        values = [rng.uniform(0.05, 0.95) for _ in range(n)]
        points = [(left + width * (k + 0.5), bottom - v * (bottom - top)) for k, v in enumerate(values)]
        colour = palette[s % len(palette)]
        if kind == "bar":
            for x, y in points:
                draw.rectangle([x - width * 0.35, y, x + width * 0.35, bottom - 1], fill=colour)
        elif kind == "line":
            draw.line(points, fill=colour, width=2)
        else:
            for x, y in points:
                draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colour)
    for k in range(n):
        draw.text((left + width * (k + 0.3), bottom + 8), f"{chr(65 + k)}{i % 9}", fill="black")
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def copy_of(original: int, seed: int) -> bytes:
    """A copy of chart ``original``: resized 0.6-0.9x and saved as JPEG q30-70."""
    from PIL import Image

    rng = random.Random(seed)
    im = Image.open(io.BytesIO(render_chart(original))).convert("RGB")
    scale = rng.uniform(0.6, 0.9)
    im = im.resize((round(im.width * scale), round(im.height * scale)), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    im.save(out, format="JPEG", quality=rng.randint(30, 70))
    return out.getvalue()


def make_item(args: tuple[str, int]) -> str:
    return write_item(*args, render_chart, copy_of)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    m = build_corpus(args.folder, args.n, args.workers, make=make_item)
    print(f"{len(m['files'])} charts ({len(m['duplicate_of'])} copies) in {args.folder}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
