"""A near-duplicate corpus that is hard to overfit (issue 22): many chart and table kinds, realistic copy transforms
and a hard negative per kind, with a split by seed **and** by kind for tuning and reporting.

Every item is one of three roles, in blocks of :data:`BLOCK` items (so any prefix keeps the mix):

* **original**: a chart of one kind (:data:`TUNE_KINDS` or :data:`HELDOUT_KINDS`) whose template - style,
  palette, figure size, labels, language (about 30 % Japanese), title - and data follow from ``(seed, item)``;
* **copy** of an earlier original in the block, by one transform of :data:`TRANSFORMS` (resize, low-quality JPEG,
  crop, padding or a border in any colour, greyscale, small rotation, re-render at another DPI or size, retitle,
  colour-map change, screenshot with browser chrome, and the issue-10 mix of crop + resize + JPEG);
* **hard negative** of an earlier original: the same template with one piece of data changed (one bar, one
  slice, one cell, one series, one point, one region) - a different figure that must not be merged.

Tune on ``--seed 0 --kinds tune``; report on ``--seed 1 --kinds all`` (the tuned kinds on an unseen seed, and
kinds never tuned on). ``manifest.json`` lists every item with its role, kind, transform and original::

    python bench/hard_corpus.py /tmp/zuhyo_hard_tune --n 1000 --seed 0 --kinds tune
    python bench/hard_corpus.py /tmp/zuhyo_hard_heldout --n 2000 --seed 1 --kinds all
    python bench/near_duplicate_report.py /tmp/zuhyo_hard_heldout

With ``--slots fixed`` (the default, as every corpus before issue 22's twenty-third session) item ``i``'s kind
and, for a copy, its transform follow from ``i`` alone: every seed has the same kind meet the same transform at
the same item (a table drawn again at another size is item 135 of every seed), and a seed differs in templates
and data only. ``--slots mixed`` shifts the kinds and the transforms by amounts drawn from the seed
(:func:`slot_shifts`), so a held-out seed also pairs kinds with transforms in ways the tuning seeds never did.
"""

from __future__ import annotations

import argparse
import io
import json
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

TUNE_KINDS = ("bar", "hbar", "line", "scatter", "pie", "table", "heatmap", "multipanel", "area")
"""Kinds the detector may be tuned on."""
HELDOUT_KINDS = ("grouped_bar", "stacked_bar", "errorbar", "loglog", "donut", "dense_scatter", "map",
                 "infographic", "scanned_page", "many_lines")
"""Kinds only reported on (never looked at while tuning)."""
TRANSFORMS = ("resize", "jpeg_low", "crop", "pad_border", "greyscale", "rotate", "rerender_dpi", "rerender_size",
              "retitle", "colormap", "screenshot", "combo")
"""Copy transforms, cycled over the copies."""
BLOCK = 20
ROLES = ("original",) * 14 + ("copy",) * 3 + ("negative",) * 3
"""Role of item ``i`` by ``i % BLOCK``: 70 % originals, 15 % copies, 15 % hard negatives."""
STYLES = ("default", "ggplot", "seaborn-v0_8-whitegrid", "bmh", "fivethirtyeight", "grayscale", "classic",
          "seaborn-v0_8-pastel", "Solarize_Light2", "tableau-colorblind10")
CMAPS = ("viridis", "plasma", "magma", "cividis", "Blues", "RdYlBu", "coolwarm", "YlGn", "Greys", "inferno")
PALETTES = (None, ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"],
            ["#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99"],  # pale
            ["#444444", "#777777", "#aaaaaa", "#222222", "#999999", "#cccccc"],  # greys
            ["#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628"])
WORDS_EN = ("Sales", "Exports", "Rainfall", "Population", "Energy", "Revenue", "Visitors", "Output", "Prices",
            "Students", "Imports", "Emissions", "Survey", "Budget", "Traffic", "Patients", "Yield", "Wages")
WORDS_JA = ("売上高", "輸出額", "降水量", "人口", "エネルギー", "歳入", "訪問者数", "生産量", "物価", "学生数",
            "輸入額", "排出量", "調査", "予算", "交通量", "患者数", "収穫量", "賃金")
JA_SHARE = 0.3


def role_of(i: int) -> str:
    return ROLES[i % BLOCK]


def original_of(i: int) -> int:
    """The original a copy or hard negative ``i`` refers to: one of the 14 originals of its block, by a stride
    that spreads copies and negatives over them."""
    block = i - i % BLOCK
    return block + (i * 7 + i // BLOCK) % 14


def kinds_for(name: str) -> tuple[str, ...]:
    return {"tune": TUNE_KINDS, "heldout": HELDOUT_KINDS, "all": TUNE_KINDS + HELDOUT_KINDS}[name]


def kind_of(i: int, kinds: tuple[str, ...], shift: int = 0) -> str:
    """Kind of original ``i``: cycling over the kinds, shifted per block so each kind meets every transform, and
    by ``shift`` (:func:`slot_shifts`)."""
    k = i % BLOCK + (i // BLOCK) * 5 + shift
    return kinds[k % len(kinds)]


def transform_of(i: int, shift: int = 0) -> str:
    """Transform of copy ``i``: cycling over :data:`TRANSFORMS`, and shifted by ``shift`` (:func:`slot_shifts`)."""
    return TRANSFORMS[(i // BLOCK * 3 + i % BLOCK - 14 + shift) % len(TRANSFORMS)]


SLOTS = ("fixed", "mixed")
"""How items' kinds and transforms follow from the seed (see the module doc)."""


def slot_shifts(seed: int, slots: str, kinds: tuple[str, ...]) -> tuple[int, int]:
    """(kind shift, transform shift) of ``seed``: none for ``fixed`` slots; for ``mixed``, drawn from the seed -
    the shifts are independent, so which kind meets which transform changes from seed to seed."""
    if slots == "fixed":
        return 0, 0
    if slots != "mixed":
        raise ValueError(f"unknown slots {slots!r}: one of {', '.join(SLOTS)}")
    r = random.Random(f"{seed}:slots")
    return r.randrange(len(kinds)), r.randrange(len(TRANSFORMS))


def template(seed: int, i: int, kind: str) -> dict[str, Any]:
    """What stays the same between an original, its copies and its hard negatives."""
    r = random.Random(f"{seed}:{i}:template")
    ja = r.random() < JA_SHARE
    words = WORDS_JA if ja else WORDS_EN
    size = r.choice([(8.0, 6.0), (7.0, 5.0), (10.0, 6.0), (6.0, 6.0), (9.0, 5.0)])
    style, cmap, palette, n = r.choice(STYLES), r.choice(CMAPS), r.randrange(len(PALETTES)), r.randint(5, 10)
    word, year = r.choice(words), 2000 + r.randrange(25)
    title = f"{word}の推移（{year}年）" if ja else f"{word} ({year})"
    xlabel, ylabel = r.choice(words), r.choice(words)
    # distinct labels: two bars of one label would be drawn over each other (a hard negative changing the hidden one
    # would be no different)
    labels = r.sample(words, 12) if ja else [f"{chr(65 + k)}{r.randrange(10)}" for k in range(12)]
    return {"kind": kind, "ja": ja, "style": style, "cmap": cmap, "palette": palette, "size": size, "dpi": 100,
            "n": n, "title": title, "xlabel": xlabel, "ylabel": ylabel, "labels": labels,
            "layout": r.randrange(1000)}


def data(seed: int, i: int, kind: str, n: int) -> dict[str, Any]:
    """The data of chart ``i``: arrays by name; ``main`` is the one a hard negative changes."""
    import numpy as np

    rng = np.random.default_rng([seed, i, 1])
    walk = lambda s, t: np.cumsum(rng.normal(0, 1, (s, t)), axis=1) + rng.uniform(5, 20, (s, 1))  # noqa: E731
    shapes: dict[str, Any] = {
        "bar": lambda: rng.uniform(5, 100, n), "hbar": lambda: rng.uniform(5, 100, n),
        "grouped_bar": lambda: rng.uniform(5, 110, (3, n)), "stacked_bar": lambda: rng.uniform(5, 60, (3, n)),
        "line": lambda: walk(int(rng.integers(1, 4)), 30), "many_lines": lambda: walk(10, 40),
        "scatter": lambda: rng.normal(0, 1, (2, 2, 60)), "dense_scatter": lambda: rng.normal(0, 1, (3, 2, 700)),
        "pie": lambda: rng.uniform(5, 40, 6), "donut": lambda: rng.uniform(5, 40, 5),
        "table": lambda: rng.integers(10, 9999, (n, 5)).astype(float), "heatmap": lambda: rng.uniform(0, 1, (8, 10)),
        "multipanel": lambda: rng.uniform(5, 100, (4, 8)), "area": lambda: np.abs(walk(3, 20)),
        "errorbar": lambda: rng.uniform(10, 50, (2, 8)), "loglog": lambda: rng.uniform(0.5, 2.5, (3, 2)),
        "map": lambda: rng.uniform(0, 1, 30), "infographic": lambda: rng.integers(5, 95, 4).astype(float),
        "scanned_page": lambda: rng.uniform(5, 100, 6),
    }
    return {"main": shapes[kind](), "err": rng.uniform(1, 6, (2, 8))}


def hard_negative(d: dict[str, Any], kind: str, seed: int, i: int) -> dict[str, Any]:
    """``d`` with one piece changed: one series (scatters, lines, log-log), else one element (a bar, a slice, a
    cell, a region, a number) by 20-45 %."""
    import numpy as np

    rng = np.random.default_rng([seed, i, 2])
    main = np.array(d["main"], dtype=float)
    if kind in ("scatter", "dense_scatter", "many_lines", "line", "loglog"):
        s = int(rng.integers(len(main)))
        main[s] = main[s][::-1] if kind in ("many_lines", "line") else main[s] + rng.normal(0, 0.6, main[s].shape)
        if kind == "loglog":
            main[s] = main[s] * np.array([1.0, 0.7])
    else:
        flat = main.reshape(-1)
        k = int(rng.integers(len(flat)))
        factor = rng.choice([-1, 1]) * rng.uniform(0.2, 0.45)
        flat[k] = flat[k] * (1 + factor) if kind not in ("heatmap", "map") else (flat[k] + 0.5) % 1.0
        if kind in ("table", "infographic"):
            flat[k] = round(flat[k])
    return {**d, "main": main}


def render(t: dict[str, Any], d: dict[str, Any], *, title: str | None = None, dpi: int | None = None,
           size: tuple[float, float] | None = None, recolour: bool = False) -> bytes:
    """PNG bytes of a chart of template ``t`` with data ``d`` (optionally another title, DPI, size or colours)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from hard_corpus_kinds import DRAW

    style = t["style"]
    cmap, palette = t["cmap"], PALETTES[t["palette"]]
    if recolour:  # another colour map / palette, the same everything else
        cmap = CMAPS[(CMAPS.index(cmap) + 3) % len(CMAPS)]
        palette = PALETTES[(t["palette"] + 2) % len(PALETTES)] or PALETTES[1]
    rc: dict[str, Any] = {"font.family": ["DejaVu Sans", "IPAexGothic"], "axes.unicode_minus": False}
    if palette is not None:
        rc["axes.prop_cycle"] = matplotlib.cycler(color=palette)
    with plt.style.context(style), plt.rc_context(rc):
        fig = plt.figure(figsize=size or t["size"], dpi=dpi or t["dpi"])
        DRAW[t["kind"]](fig, t, d, cmap)
        fig.suptitle(title if title is not None else t["title"])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    if t["kind"] == "scanned_page":
        from hard_corpus_kinds import scanned_look

        return scanned_look(buf.getvalue(), t["layout"])
    return buf.getvalue()


def transform(name: str, t: dict[str, Any], d: dict[str, Any], seed: int, i: int) -> tuple[bytes, str]:
    """The copy's bytes and file suffix for transform ``name`` of the original of template ``t`` and data ``d``."""
    from hard_corpus_kinds import screenshot
    from PIL import Image, ImageOps

    r = random.Random(f"{seed}:{i}:copy")
    if name == "rerender_dpi":
        return render(t, d, dpi=r.choice([60, 72, 80, 150, 180])), "png"
    if name == "rerender_size":
        w, h = t["size"]
        return render(t, d, size=(w * r.uniform(0.85, 1.2), h * r.uniform(0.85, 1.2))), "png"
    if name == "retitle":
        words = WORDS_JA if t["ja"] else WORDS_EN
        return render(t, d, title=f"Figure {r.randint(1, 99)}: {r.choice(words)}"), "png"
    if name == "colormap":
        return render(t, d, recolour=True), "png"
    im = Image.open(io.BytesIO(render(t, d))).convert("RGB")
    w, h = im.size
    fmt, quality = "png", 90
    if name == "resize":
        s = r.choice([r.uniform(0.45, 0.8), r.uniform(1.2, 1.6)])
        im = im.resize((round(w * s), round(h * s)), Image.Resampling.LANCZOS)
    elif name == "jpeg_low":
        fmt, quality = "jpg", r.randint(12, 35)
    elif name == "crop":
        cx, cy = r.uniform(0.02, 0.08), r.uniform(0.02, 0.08)
        x, y = r.uniform(0, cx) * w, r.uniform(0, cy) * h
        im = im.crop((round(x), round(y), round(x + (1 - cx) * w), round(y + (1 - cy) * h)))
    elif name == "pad_border":
        colour = r.choice([(255, 255, 255), (0, 0, 0), (128, 128, 128), (240, 236, 220), (210, 225, 240),
                           tuple(r.randrange(256) for _ in range(3))])
        sides = [round(r.uniform(0.02, 0.12) * (w if k % 2 == 0 else h)) for k in range(4)]
        im = ImageOps.expand(im, border=tuple(sides), fill=colour)  # type: ignore[arg-type]
        if r.random() < 0.5:  # and a thin frame line inside it
            im = ImageOps.expand(im, border=r.randint(1, 4), fill=(r.randrange(256),) * 3)
    elif name == "greyscale":
        im = im.convert("L")
        fmt, quality = r.choice([("png", 90), ("jpg", 75)])
    elif name == "rotate":
        im = im.rotate(r.choice([-1, 1]) * r.uniform(0.4, 1.5), resample=Image.Resampling.BICUBIC,
                       fillcolor=(255, 255, 255))
    elif name == "screenshot":
        im = screenshot(im, r)
        fmt, quality = "jpg", 85
    elif name == "combo":  # issue 10's copies: crop, resize, JPEG
        cx, cy = r.uniform(0.02, 0.08), r.uniform(0.02, 0.08)
        x, y = r.uniform(0, cx) * w, r.uniform(0, cy) * h
        im = im.crop((round(x), round(y), round(x + (1 - cx) * w), round(y + (1 - cy) * h)))
        s = r.uniform(0.6, 1.4)
        im = im.resize((round(im.width * s), round(im.height * s)), Image.Resampling.LANCZOS)
        fmt, quality = "jpg", r.randint(20, 70)
    else:
        raise ValueError(f"unknown transform {name}")
    out = io.BytesIO()
    im.save(out, format="JPEG" if fmt == "jpg" else "PNG", quality=quality)
    return out.getvalue(), fmt


def item(seed: int, i: int, kinds: tuple[str, ...], slots: str = "fixed") -> tuple[dict[str, Any], bytes, str]:
    """Item ``i``'s manifest entry, bytes and suffix."""
    kind_shift, transform_shift = slot_shifts(seed, slots, kinds)
    role = role_of(i)
    o = i if role == "original" else original_of(i)
    kind = kind_of(o, kinds, kind_shift)
    t = template(seed, o, kind)
    d = data(seed, o, kind, t["n"])
    entry: dict[str, Any] = {"role": role, "kind": kind, "ja": t["ja"]}
    if role == "original":
        return entry, render(t, d), "png"
    entry["original"] = o
    if role == "negative":
        return entry, render(t, hard_negative(d, kind, seed, i)), "png"
    name = transform_of(i, transform_shift)
    entry["transform"] = name
    raw, suffix = transform(name, t, d, seed, i)
    return entry, raw, suffix


def make_item(args: tuple[str, int, int, str, str]) -> dict[str, Any]:
    folder, seed, i, kinds, slots = args
    done = Path(folder) / f"{i:06d}.json"
    if done.exists():
        entry: dict[str, Any] = json.loads(done.read_text())
        return entry
    entry, raw, suffix = item(seed, i, kinds_for(kinds), slots)
    entry["file"] = f"{i:06d}.{suffix}"
    (Path(folder) / entry["file"]).write_bytes(raw)
    done.write_text(json.dumps(entry))
    return entry


def build_corpus(folder: Path, n: int, seed: int, kinds: str, workers: int = 2, slots: str = "fixed"
                 ) -> dict[str, Any]:
    """Generate (or complete) ``n`` items in ``folder``; returns (and writes) the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest_path = folder / "manifest.json"
    if manifest_path.exists() and json.loads(manifest_path.read_text()).get("slots", "fixed") != slots:
        raise SystemExit(f"{folder} holds a corpus with other slots than {slots!r}: use another folder")
    todo = [(str(folder), seed, i, kinds, slots) for i in range(n)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            entries = list(pool.map(make_item, todo, chunksize=8))
    else:
        entries = [make_item(x) for x in todo]
    manifest = {"seed": seed, "kinds": kinds, "slots": slots, "items": entries}
    manifest_path.write_text(json.dumps(manifest))
    return manifest


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--kinds", choices=("tune", "heldout", "all"), default="all")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--slots", choices=SLOTS, default="fixed",
                   help="fixed: each item's kind and transform as in every seed; mixed: shifted by the seed")
    args = p.parse_args()
    m = build_corpus(args.folder, args.n, args.seed, args.kinds, args.workers, args.slots)
    roles = [e["role"] for e in m["items"]]
    print(f"{len(roles)} items ({roles.count('copy')} copies, {roles.count('negative')} hard negatives) "
          f"in {args.folder}")


if __name__ == "__main__":
    main()
