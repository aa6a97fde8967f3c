"""The chart and table kinds of `bench/hard_corpus.py`: one drawing function per kind, plus the scanned-page look
and the browser-screenshot chrome. Each drawing function takes the figure, the template (what an original shares
with its copies and hard negatives), the data and the colour map."""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from typing import Any

Draw = Callable[[Any, dict[str, Any], dict[str, Any], str], None]


def _ax(fig: Any, t: dict[str, Any]) -> Any:
    ax = fig.add_subplot(111)
    ax.set_xlabel(t["xlabel"])
    ax.set_ylabel(t["ylabel"])
    return ax


def _bar(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    y = d["main"]
    _ax(fig, t).bar(t["labels"][:len(y)], y)


def _hbar(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    y = d["main"]
    _ax(fig, t).barh(t["labels"][:len(y)], y)


def _grouped_bar(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    import numpy as np

    ax = _ax(fig, t)
    y = d["main"]
    x = np.arange(y.shape[1])
    for k, row in enumerate(y):
        ax.bar(x + (k - 1) * 0.27, row, width=0.27, label=f"S{k + 1}")
    ax.set_xticks(x, t["labels"][:len(x)])
    ax.legend()


def _stacked_bar(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    import numpy as np

    ax = _ax(fig, t)
    y = d["main"]
    bottom = np.zeros(y.shape[1])
    for k, row in enumerate(y):
        ax.bar(t["labels"][:y.shape[1]], row, bottom=bottom, label=f"S{k + 1}")
        bottom = bottom + row
    ax.legend(fontsize=8)


def _line(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = _ax(fig, t)
    for row in d["main"]:
        ax.plot(row, marker="o", markersize=3)


def _many_lines(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = _ax(fig, t)
    for k, row in enumerate(d["main"]):
        ax.plot(row, linewidth=0.8, label=f"L{k}")
    ax.legend(fontsize=6, ncol=2)


def _scatter(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = _ax(fig, t)
    for xy in d["main"]:
        ax.scatter(xy[0], xy[1], s=18)


def _dense_scatter(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = _ax(fig, t)
    for k, xy in enumerate(d["main"]):
        ax.scatter(xy[0] + k, xy[1], s=2, alpha=0.6)


def _pie(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    y = d["main"]
    fig.add_subplot(111).pie(y, labels=t["labels"][:len(y)], autopct="%1.0f%%")


def _donut(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    y = d["main"]
    ax = fig.add_subplot(111)
    ax.pie(y, labels=t["labels"][:len(y)], wedgeprops={"width": 0.4}, pctdistance=0.8, autopct="%1.0f%%")
    ax.text(0, 0, f"{y.sum():.0f}", ha="center", va="center", fontsize=16)


def _table(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = fig.add_subplot(111)
    ax.axis("off")
    v = d["main"]
    cols = [t["xlabel"], t["ylabel"], "2021", "2022", "2023"][:v.shape[1]]
    tab = ax.table(cellText=[[f"{x:,.0f}" for x in row] for row in v], colLabels=cols,
                   rowLabels=t["labels"][:len(v)], loc="center")
    tab.scale(1, 1.6)


def _heatmap(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = fig.add_subplot(111)
    im = ax.imshow(d["main"], cmap=cmap, aspect="auto")
    fig.colorbar(im, ax=ax)
    ax.set_yticks(range(8), t["labels"][:8])


def _multipanel(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    for k, row in enumerate(d["main"]):
        ax = fig.add_subplot(2, 2, k + 1)
        if (t["layout"] + k) % 2:
            ax.bar(range(len(row)), row)
        else:
            ax.plot(row, marker=".")
        ax.set_title(t["labels"][k], fontsize=9)


def _area(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    _ax(fig, t).stackplot(range(d["main"].shape[1]), d["main"])


def _errorbar(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    ax = _ax(fig, t)
    for k, row in enumerate(d["main"]):
        ax.errorbar(range(len(row)), row, yerr=d["err"][k], capsize=3, marker="s", markersize=3)


def _loglog(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    import numpy as np

    ax = _ax(fig, t)
    x = np.logspace(0, 3, 40)
    for slope, scale in d["main"]:
        ax.loglog(x, scale * x ** (-slope + 1.5), linewidth=1)
    ax.grid(True, which="both", linewidth=0.3)


def _map(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    """A choropleth of 30 regions: a Voronoi partition (of the template) coloured by the data."""
    import numpy as np

    rng = np.random.default_rng(t["layout"])
    centres = rng.uniform(0, 1, (30, 2))
    yy, xx = np.mgrid[0:1:120j, 0:1:160j]
    region = np.argmin((xx[..., None] - centres[:, 0]) ** 2 + (yy[..., None] - centres[:, 1]) ** 2, axis=2)
    inside = (xx - 0.5) ** 2 / 0.25 + (yy - 0.5) ** 2 / 0.22 < 1
    values = np.where(inside, d["main"][region], np.nan)
    ax = fig.add_subplot(111)
    im = ax.imshow(values, cmap=cmap)
    ax.contour(region, levels=np.arange(30) + 0.5, colors="k", linewidths=0.3)
    ax.axis("off")
    fig.colorbar(im, ax=ax, shrink=0.7)


def _infographic(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    import matplotlib.pyplot as plt

    ax = fig.add_axes((0, 0, 1, 0.9))
    ax.axis("off")
    colours = plt.get_cmap(cmap)([0.2, 0.4, 0.6, 0.8])
    for k, v in enumerate(d["main"]):
        x = 0.03 + k * 0.245
        ax.add_patch(plt.Rectangle((x, 0.35), 0.22, 0.55, color=colours[k]))
        ax.text(x + 0.11, 0.68, f"{v:.0f}%", ha="center", fontsize=26, color="white", weight="bold")
        ax.text(x + 0.11, 0.45, t["labels"][k], ha="center", fontsize=10, color="white")
        ax.add_patch(plt.Rectangle((x, 0.1), 0.22 * v / 100, 0.08, color=colours[k]))
        ax.add_patch(plt.Rectangle((x, 0.1), 0.22, 0.08, fill=False, edgecolor="grey"))


def _scanned_page(fig: Any, t: dict[str, Any], d: dict[str, Any], cmap: str) -> None:
    """A page: lines of (fake) text around a small bar chart."""
    rng = random.Random(t["layout"])
    page = fig.add_axes((0, 0, 1, 0.92))
    page.axis("off")
    page.set_xlim(0, 1)
    page.set_ylim(0, 1)
    for k in range(7):
        y = 0.97 - k * 0.035
        page.plot([0.06, 0.06 + rng.uniform(0.5, 0.88)], [y, y], color="0.35", linewidth=3)
    for k in range(5):
        y = 0.2 - k * 0.035
        page.plot([0.06, 0.06 + rng.uniform(0.5, 0.88)], [y, y], color="0.35", linewidth=3)
    ax = fig.add_axes((0.15, 0.32, 0.7, 0.38))
    y = d["main"]
    ax.bar(t["labels"][:len(y)], y, color="0.3")


def scanned_look(png: bytes, layout: int) -> bytes:
    """The rendered page as if scanned: a yellowish tint, a little blur and noise (fixed per template)."""
    import numpy as np
    from PIL import Image, ImageFilter

    im = Image.open(io.BytesIO(png)).convert("RGB").filter(ImageFilter.GaussianBlur(0.8))
    a = np.asarray(im).astype(np.float32) * np.array([0.97, 0.95, 0.86]) + np.array([4, 4, 10])
    a += np.random.default_rng(layout).normal(0, 4, a.shape)
    out = io.BytesIO()
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(out, format="PNG")
    return out.getvalue()


def screenshot(im: Any, r: random.Random) -> Any:
    """``im`` inside a browser window: a tab bar and an address bar on top, a frame, a scroll bar."""
    from PIL import Image, ImageDraw

    w, h = im.size
    bar = round(h * r.uniform(0.05, 0.09))
    dark = r.random() < 0.5
    chrome = (40, 42, 48) if dark else (222, 225, 230)
    canvas = Image.new("RGB", (w + 14 + 4, h + bar + 4), chrome)
    canvas.paste(im, (2, bar + 2))
    draw = ImageDraw.Draw(canvas)
    for k in range(r.randint(2, 4)):
        draw.rectangle((8 + k * 130, 3, 130 + k * 130, bar // 2), fill=(70, 72, 80) if dark else (245, 245, 245))
    draw.rounded_rectangle((60, bar // 2 + 3, w - 60, bar - 4), radius=6, fill=(25, 25, 30) if dark else "white")
    draw.text((72, bar // 2 + 5), "https://www.example.go.jp/hakusho/r05/figure.html",
              fill=(200, 200, 200) if dark else (60, 60, 60))
    draw.rectangle((w + 4, bar + 2 + r.randint(0, h // 3), w + 14, bar + h // 2), fill=(150, 150, 150))
    return canvas


DRAW: dict[str, Draw] = {
    "bar": _bar, "hbar": _hbar, "grouped_bar": _grouped_bar, "stacked_bar": _stacked_bar, "line": _line,
    "many_lines": _many_lines, "scatter": _scatter, "dense_scatter": _dense_scatter, "pie": _pie,
    "donut": _donut, "table": _table, "heatmap": _heatmap, "multipanel": _multipanel, "area": _area,
    "errorbar": _errorbar, "loglog": _loglog, "map": _map, "infographic": _infographic,
    "scanned_page": _scanned_page,
}
