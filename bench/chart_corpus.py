"""A corpus of matplotlib charts with planted near duplicates, for `bench/near_duplicates.py` and the filter tests.

Issue 10 "Performance": charts of 10 kinds in 6 styles, about 800x600, with 5 % near duplicates (resized
0.6-1.4x, JPEG q20-70, cropped 2-8 %, retitled). Item ``i`` is an original chart, except every 20th item
(``i % 20 == 19``), which is a near duplicate of an original among the ten before it (:func:`original_of`), so
any prefix of the corpus keeps the 5 % rate and the 5k/10k/20k runs can share one generated corpus. Kind and
style cycle independently of the data, so many charts share a kind and a style and differ only in their data
(the hard negatives).

    python bench/chart_corpus.py /tmp/zuhyo_charts --n 10000 --workers 2

writes ``NNNNNN.png`` / ``NNNNNN.jpg`` and ``manifest.json`` (``{"files": [...], "duplicate_of": {file: file}}``);
an existing corpus of at least ``n`` items is reused.
"""

from __future__ import annotations

import argparse
import io
import json
import random
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

KINDS = ("bar", "barh", "line", "scatter", "pie", "hist", "area", "stacked", "box", "step")
STYLES = ("default", "ggplot", "seaborn-v0_8-whitegrid", "bmh", "fivethirtyeight", "grayscale")
DUP_EVERY = 20
WORDS = ("Sales", "Exports", "Rainfall", "Population", "Energy", "Revenue", "Visitors", "Output", "Prices",
         "Students", "Imports", "Emissions", "Survey", "Budget", "Traffic")


def kind_style(i: int) -> tuple[str, str]:
    return KINDS[i % len(KINDS)], STYLES[(i // len(KINDS)) % len(STYLES)]


def original_of(i: int) -> int:
    """The original that near duplicate ``i`` copies: one of the ten items before it, so every kind gets copies."""
    return i - 1 - (i // DUP_EVERY) % 10


def render_chart(i: int, title: str | None = None) -> bytes:
    """PNG bytes of chart ``i`` (800x600): its kind, style and data follow from ``i``; ``title`` replaces its own."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    kind, style = kind_style(i)
    rng = np.random.default_rng(i)
    words = random.Random(i)
    own_title = f"{words.choice(WORDS)} by {words.choice(WORDS).lower()}, {2000 + i % 25}"
    title = own_title if title is None else title
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
        n = int(rng.integers(4, 12))
        labels = [f"{chr(65 + k)}{i % 7}" for k in range(n)]
        y = rng.uniform(1, 100, n)
        if kind == "bar":
            ax.bar(labels, y)
        elif kind == "barh":
            ax.barh(labels, y)
        elif kind == "line":
            x = np.arange(30)
            for _ in range(int(rng.integers(1, 4))):
                ax.plot(x, np.cumsum(rng.normal(0, 1, 30)), marker="o", markersize=3)
        elif kind == "scatter":
            ax.scatter(rng.normal(0, 1, 80), rng.normal(0, 1, 80), s=rng.uniform(5, 60, 80))
        elif kind == "pie":
            ax.pie(y[:6], labels=labels[:6], autopct="%1.0f%%")
        elif kind == "hist":
            ax.hist(rng.normal(rng.uniform(-2, 2), rng.uniform(0.5, 2), 500), bins=int(rng.integers(10, 30)))
        elif kind == "area":
            x = np.arange(20)
            walks = np.abs(rng.normal(0, 1, (3, 20)).cumsum(axis=1)) * rng.uniform(0.5, 5, (3, 1))
            ax.stackplot(x, walks + rng.uniform(0.5, 3, (3, 1)))
        elif kind == "stacked":
            y2 = rng.uniform(1, 60, n)
            ax.bar(labels, y)
            ax.bar(labels, y2, bottom=y)
        elif kind == "box":
            ax.boxplot([rng.normal(rng.uniform(0, 5), rng.uniform(0.5, 2), 50) for _ in range(min(n, 6))])
        else:
            x = np.arange(25)
            ax.step(x, np.cumsum(rng.uniform(-1, 2, 25)))
            ax.step(x, np.cumsum(rng.uniform(-1, 2, 25)))
        ax.set_title(title)
        ax.set_xlabel(words.choice(WORDS))
        ax.set_ylabel(words.choice(WORDS))
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return buf.getvalue()


def near_duplicate(original: int, seed: int) -> bytes:
    """A near duplicate of chart ``original``: retitled (half of them), cropped 2-8 %, resized 0.6-1.4x, JPEG
    q20-70."""
    from PIL import Image

    rng = random.Random(seed)
    retitle = rng.random() < 0.5
    data = render_chart(original, title=f"Figure {rng.randint(1, 99)}: {rng.choice(WORDS)}" if retitle else None)
    im = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = im.size
    cx, cy = rng.uniform(0.02, 0.08), rng.uniform(0.02, 0.08)  # fraction removed in each axis
    left, top = rng.uniform(0, cx) * w, rng.uniform(0, cy) * h
    im = im.crop((round(left), round(top), round(left + (1 - cx) * w), round(top + (1 - cy) * h)))
    scale = rng.uniform(0.6, 1.4)
    im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    im.save(out, format="JPEG", quality=rng.randint(20, 70))
    return out.getvalue()


def item_name(i: int) -> str:
    return f"{i:06d}.jpg" if i % DUP_EVERY == DUP_EVERY - 1 else f"{i:06d}.png"


def write_item(folder: str, i: int, original: Callable[[int], bytes], copy: Callable[[int, int], bytes]) -> str:
    """Write item ``i`` unless it is on disk: ``copy(original_of(i), i)`` for a copy, else ``original(i)``;
    its file name."""
    path = Path(folder) / item_name(i)
    if not path.exists():
        data = copy(original_of(i), i) if i % DUP_EVERY == DUP_EVERY - 1 else original(i)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # a killed run leaves no half-written image
    return path.name


def make_item(args: tuple[str, int]) -> str:
    return write_item(*args, render_chart, near_duplicate)


def build_corpus(folder: Path, n: int, workers: int = 2,
                 make: Callable[[tuple[str, int]], str] = make_item) -> dict[str, object]:
    """Generate (or complete) the corpus of ``n`` items in ``folder`` (item ``i`` written by ``make((folder,
    i))``, which returns its file name; `bench/scale_corpus.py` draws other charts); returns the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    todo = [(str(folder), i) for i in range(n)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            files = list(pool.map(make, todo, chunksize=16))
    else:
        files = [make(t) for t in todo]
    copies = [i for i in range(n) if i % DUP_EVERY == DUP_EVERY - 1]
    manifest = {"files": files, "duplicate_of": {item_name(i): item_name(original_of(i)) for i in copies}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    m = build_corpus(args.folder, args.n, args.workers)
    print(f"{len(m['files'])} charts ({len(m['duplicate_of'])} near duplicates) in {args.folder}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
