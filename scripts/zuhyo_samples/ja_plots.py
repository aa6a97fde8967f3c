"""White-paper-style chart primitives (matplotlib) for the ``sample-ja`` benchmark.

Each function draws one kind of chart onto an Axes (or a Figure) the way 情報通信白書 figures look: a caption
line "図表…" at the top left, the unit above the axis, "（出典）…" at the bottom, muted colours, values labelled.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from zuhyo_samples.common import PALETTE


def frame(caption: str, source_note: str, size: tuple[float, float] = (7.2, 4.8)) -> Figure:
    """A figure with the caption at the top left and the source note at the bottom left."""
    fig = plt.figure(figsize=size)
    fig.text(0.02, 0.975, caption, fontsize=12, va="top", ha="left")
    fig.text(0.02, 0.015, f"（出典）{source_note}", fontsize=7.5, va="bottom", ha="left", color="#333333")
    return fig


def body(fig: Figure, rect: tuple[float, float, float, float] = (0.1, 0.14, 0.86, 0.72)) -> Axes:
    """The main plotting area below the caption and above the source note."""
    ax = fig.add_axes(rect)
    ax.spines[["top", "right"]].set_visible(False)
    return ax


def unit_label(ax: Axes, unit: str) -> None:
    """Unit text above the value axis, as white papers print it: （億円）."""
    ax.text(0.0, 1.02, f"（{unit}）", transform=ax.transAxes, fontsize=8.5, ha="left", va="bottom")


def bars(ax: Axes, labels: Sequence[str], values: Sequence[float], unit: str, *, horizontal: bool = False,
         fmt: str = "{:,}", colors: Sequence[str] | None = None, highlight: int | None = None) -> None:
    """Single-series bar chart with value labels."""
    cols = list(colors) if colors else [PALETTE[0]] * len(values)
    if highlight is not None:
        cols[highlight] = PALETTE[1]
    pos = range(len(values))
    if horizontal:
        ax.barh(list(pos), values, color=cols, height=0.6)
        ax.set_yticks(list(pos), labels)
        ax.invert_yaxis()
        for i, v in enumerate(values):
            ax.text(v, i, " " + fmt.format(v), va="center", fontsize=9)
        ax.set_xlim(0, max(values) * 1.18)
    else:
        ax.bar(list(pos), values, color=cols, width=0.6)
        ax.set_xticks(list(pos), labels, fontsize=9)
        for i, v in enumerate(values):
            ax.text(i, v, fmt.format(v), ha="center", va="bottom", fontsize=9)
        ax.set_ylim(0, max(values) * 1.15)
    unit_label(ax, unit)


def grouped_bars(ax: Axes, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str,
                 fmt: str = "{:,}") -> None:
    """Several series side by side per category, with a legend and value labels."""
    n = len(series)
    width = 0.8 / n
    for k, (name, vals) in enumerate(series.items()):
        xs = [i - 0.4 + width * (k + 0.5) for i in range(len(labels))]
        ax.bar(xs, vals, width=width * 0.92, color=PALETTE[k % len(PALETTE)], label=name)
        for x, v in zip(xs, vals, strict=True):
            ax.text(x, v, fmt.format(v), ha="center", va="bottom", fontsize=7.5)
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_ylim(0, max(max(v) for v in series.values()) * 1.18)
    ax.legend(frameon=False, fontsize=8.5, loc="upper right")
    unit_label(ax, unit)


def stacked_bars(ax: Axes, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str,
                 fmt: str = "{:,}") -> None:
    """Stacked bars (one stack per category), segment values printed inside."""
    bottoms = [0.0] * len(labels)
    for k, (name, vals) in enumerate(series.items()):
        ax.bar(range(len(labels)), vals, bottom=bottoms, color=PALETTE[k % len(PALETTE)], label=name, width=0.55)
        for i, v in enumerate(vals):
            if v > 0:
                ax.text(i, bottoms[i] + v / 2, fmt.format(v), ha="center", va="center", fontsize=8, color="white")
        bottoms = [b + v for b, v in zip(bottoms, vals, strict=True)]
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_ylim(0, max(bottoms) * 1.12)
    ax.legend(frameon=False, fontsize=8.5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    unit_label(ax, unit)


def lines(ax: Axes, xs: Sequence[str], series: dict[str, Sequence[float | None]], unit: str,
          fmt: str = "{:,}", label_every: bool = True) -> None:
    """Line chart over categorical x positions (years), markers and value labels."""
    for k, (name, vals) in enumerate(series.items()):
        pts = [(i, v) for i, v in enumerate(vals) if v is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=PALETTE[k % len(PALETTE)],
                label=name, linewidth=2)
        if label_every:
            for i, v in pts:
                ax.annotate(fmt.format(v), (i, v), textcoords="offset points", xytext=(0, 7), ha="center",
                            fontsize=8)
    ax.set_xticks(range(len(xs)), xs, fontsize=9)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    if len(series) > 1:
        ax.legend(frameon=False, fontsize=8.5)
    unit_label(ax, unit)


def pie(ax: Axes, labels: Sequence[str], values: Sequence[float], *, donut: bool = False,
        value_fmt: str | None = None, center_text: str | None = None) -> None:
    """Pie or donut; wedges labelled with ``value_fmt`` of the raw value (or nothing when None)."""
    wedges, _ = ax.pie(values, colors=PALETTE[: len(values)], startangle=90, counterclock=False,
                       wedgeprops={"width": 0.45 if donut else 1.0, "edgecolor": "white"})
    import math

    for w, lab, v in zip(wedges, labels, values, strict=True):
        ang = math.radians((w.theta1 + w.theta2) / 2)
        r = 1.18
        text = lab if value_fmt is None else f"{lab}\n{value_fmt.format(v)}"
        ax.text(r * math.cos(ang), r * math.sin(ang), text, ha="center", va="center", fontsize=9)
    if center_text:
        ax.text(0, 0, center_text, ha="center", va="center", fontsize=10)
    ax.set_aspect("equal")
    ax.set_xlim(-1.55, 1.55)
    ax.set_ylim(-1.45, 1.45)


def stacked_area(ax: Axes, xs: Sequence[float], series: dict[str, Sequence[float]], unit: str,
                 xlabels: Sequence[str], fmt: str = "{:,}") -> None:
    """Stacked area over numeric x (years) with the layer values printed at each x."""
    ys = list(series.values())
    ax.stackplot(list(xs), *ys, labels=list(series.keys()), colors=PALETTE[: len(ys)], alpha=0.85)
    cum = [0.0] * len(xs)
    for vals in ys:
        for i, v in enumerate(vals):
            if v > 0:
                ax.text(xs[i], cum[i] + v / 2, fmt.format(v), ha="left" if i == 0 else "right", va="center",
                        fontsize=8.5, color="white")
        cum = [c + v for c, v in zip(cum, vals, strict=True)]
    ax.set_xticks(list(xs), list(xlabels))
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(0, max(cum) * 1.1)
    ax.legend(frameon=False, fontsize=8.5, loc="upper left")
    unit_label(ax, unit)


def scatter_labeled(ax: Axes, points: Sequence[tuple[str, float, float]], *, xlog: bool = False,
                    sizes: Sequence[float] | None = None, xlabel: str = "", ylabel: str = "") -> None:
    """Scatter (or bubble, with ``sizes``) with each point named."""
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    s = list(sizes) if sizes is not None else [40] * len(points)
    ax.scatter(xs, ys, s=s, color=PALETTE[0], alpha=0.6 if sizes is not None else 0.9, edgecolor="#123b63")
    import math

    def pos(v: float) -> float:
        return math.log10(v) if xlog else v

    lo, hi = pos(min(xs)), pos(max(xs))
    for (name, x, y) in points:
        # Labels of points in the right third go to their left so they stay inside the axes.
        right = hi > lo and (pos(x) - lo) / (hi - lo) > 0.6
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(-8 if right else 8, 6), fontsize=8,
                    ha="right" if right else "left")
    if xlog:
        ax.set_xscale("log")
    ax.margins(x=0.08, y=0.12)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.grid(color="#e5e5e5", linewidth=0.6)


def table(fig: Figure, header: Sequence[str], rows: Sequence[Sequence[str]],
          rect: tuple[float, float, float, float] = (0.04, 0.12, 0.92, 0.74), col_widths: Sequence[float] | None = None,
          ) -> None:
    """A ruled table image in white-paper style (shaded header row)."""
    ax = fig.add_axes(rect)
    ax.axis("off")
    tab = ax.table(cellText=[list(r) for r in rows], colLabels=list(header), loc="upper center",
                   cellLoc="center", colWidths=list(col_widths) if col_widths else None)
    tab.auto_set_font_size(False)
    tab.set_fontsize(10)
    tab.scale(1, 1.7)
    for (r, _c), cell in tab.get_celld().items():
        cell.set_edgecolor("#555555")
        if r == 0:
            cell.set_facecolor("#d9e4f0")
            cell.set_text_props(color="#111111")


def cards(fig: Figure, items: Sequence[tuple[str, str, str]], *, top: float = 0.84, cols: int = 3,
          height: float = 0.3) -> None:
    """Infographic cards: (heading, big number, small note) boxes laid out in a grid."""
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    w = 0.94 / cols
    for k, (head, big, note) in enumerate(items):
        r, c = divmod(k, cols)
        x0 = 0.03 + c * w
        y0 = top - (r + 1) * (height + 0.03)
        ax.add_patch(FancyBboxPatch((x0 + 0.01, y0), w - 0.02, height, boxstyle="round,pad=0.005,rounding_size=0.02",
                                    facecolor="#eef3f8", edgecolor=PALETTE[k % len(PALETTE)], linewidth=2))
        ax.text(x0 + w / 2, y0 + height * 0.8, head, ha="center", va="center", fontsize=9.5)
        ax.text(x0 + w / 2, y0 + height * 0.47, big, ha="center", va="center", fontsize=16,
                color=PALETTE[k % len(PALETTE)])
        ax.text(x0 + w / 2, y0 + height * 0.15, note, ha="center", va="center", fontsize=8, color="#333333")


def tile_map(ax: Axes, tiles: dict[str, tuple[int, int]], colors: dict[str, str], labels: dict[str, str]) -> None:
    """A tile-grid map: one square per area at (column, row); colour and label per area."""
    for name, (c, r) in tiles.items():
        ax.add_patch(Rectangle((c, -r), 0.94, 0.94, facecolor=colors.get(name, "#eeeeee"), edgecolor="white"))
        ax.text(c + 0.47, -r + 0.47, labels.get(name, name), ha="center", va="center", fontsize=6.5)
    cs = [t[0] for t in tiles.values()]
    rs = [t[1] for t in tiles.values()]
    ax.set_xlim(min(cs) - 0.2, max(cs) + 1.2)
    ax.set_ylim(-max(rs) - 0.2, -min(rs) + 1.2)
    ax.set_aspect("equal")
    ax.axis("off")


def legend_boxes(ax: Axes, entries: Sequence[tuple[str, str]], loc: str = "lower right") -> None:
    """A legend of coloured squares (for maps)."""
    handles = [Rectangle((0, 0), 1, 1, facecolor=col) for _, col in entries]
    ax.legend(handles, [t for t, _ in entries], loc=loc, frameon=False, fontsize=8.5)
