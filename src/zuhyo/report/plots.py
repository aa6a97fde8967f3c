"""Report figures (PNG and SVG) in the style of the papers, drawn with matplotlib's Agg backend.

- ``spread``: score spread across models per benchmark (HakushoBench Fig. 1);
- ``<bench>_direct_vs_cot``: Direct vs CoT bars per model with std error bars (HakushoBench Fig. 6);
- ``<bench>_image_type_<prompt>`` / ``<bench>_flag_<prompt>``: spread of model scores by image type (Fig. 7) and
  by question flag (Fig. 9); every category is drawn with its item count; those with fewer than ``min_items``
  items (the paper omits them) are greyed out, and the caption names them;
- ``<bench>_domaincqa_bars_<prompt>`` / ``<bench>_domaincqa_box_<prompt>``: AstroChart category bars and box plots
  (DomainCQA Figs. 5–6).

matplotlib is imported inside the functions (``zuhyo --help`` stays light).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zuhyo.report.aggregate import Aggregate
from zuhyo.report.analysis import OPEN, PROPRIETARY
from zuhyo.report.paper_tables import AXIS_ORDER, AXIS_TITLES, model_labels, prompt_label, slug
from zuhyo.report.runsets import ReportError
from zuhyo.schema import AstroCategory

Y_LABEL = "Accuracy (%) / 正答率"
GROUP_COLORS = {OPEN: "#1f77b4", PROPRIETARY: "#d62728", None: "#555555"}
GREY = "#b0b0b0"
"""Categories under ``--min-category-items``."""


@dataclass(frozen=True)
class Plot:
    """One figure written as PNG and SVG."""

    name: str
    title: str
    png: Path
    svg: Path
    caption: str


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out_dir: Path, name: str, title: str, caption: str) -> Plot:
    plt = _pyplot()
    png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(png, dpi=150, bbox_inches="tight")
        fig.savefig(svg, bbox_inches="tight")
    plt.close(fig)
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    if missing:
        raise ReportError(f"plot {name}: the font cannot draw some labels ({missing[0]}); pass --font with a font "
                          "that covers them")
    return Plot(name, title, png, svg, caption)


def spread_plot(agg: Aggregate, tags: dict[str, str], out_dir: Path) -> Plot | None:
    """Each model's mean per benchmark as a dot, one panel per prompt (HakushoBench Fig. 1 style).

    Labels are stacked so that tied or close models do not overprint each other (a thin line joins a moved
    label to its dot)."""
    plt = _pyplot()
    means = {(b, p, m): s.mean for b in agg.benchmarks for p in agg.prompts for m in agg.models
             if (rec := agg.cell(b, m, p)) is not None
             and (s := rec.score(agg.items.get(b, set()))).mean is not None}
    if not means:
        return None
    fig, axes = plt.subplots(1, len(agg.prompts), figsize=(1.2 + 2.2 * len(agg.benchmarks) * len(agg.prompts), 4),
                             sharey=True, squeeze=False, layout="constrained")
    labels = model_labels(agg.models, agg.baselines)
    for ax, p in zip(axes[0], agg.prompts, strict=True):
        for i, b in enumerate(agg.benchmarks):
            pts = [(m, 100 * v) for (bb, pp, m), v in means.items() if bb == b and pp == p and v is not None]
            if len(pts) > 1:
                ax.boxplot([v for _, v in pts], positions=[i], widths=0.5, showfliers=False)
            for j, (m, v) in enumerate(pts):
                x = i + (j - (len(pts) - 1) / 2) * 0.08
                ax.scatter([x], [v], color=GROUP_COLORS[tags.get(m)], zorder=3, s=24)
            label_x = i + (len(pts) - 1) / 2 * 0.08 + 0.12
            heights = stack_labels([v for _, v in pts], min_gap=6.0, lo=3.0, hi=97.0)
            for (m, v), y in zip(pts, heights, strict=True):
                ax.annotate(labels[m], (label_x - 0.1, v), xytext=(label_x, y), textcoords="data", fontsize=7,
                            va="center", arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "#999"}
                            if abs(y - v) > 0.5 else None)
        ax.set_xticks(range(len(agg.benchmarks)), agg.benchmarks, rotation=20)
        ax.set_xlim(-0.6, len(agg.benchmarks) - 0.1)
        ax.set_title(prompt_label(p))
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(Y_LABEL)
    fig.suptitle("Score spread across models / モデル間のスコア分布")
    caption = "One dot per model (blue: open-weight, red: proprietary, grey: untagged); box: spread across models."
    return _save(fig, out_dir, "spread", "Score spread across models per benchmark", caption)


def stack_labels(values: list[float], *, min_gap: float, lo: float = 0.0, hi: float = 100.0) -> list[float]:
    """Label heights for points at ``values`` (same order): each as close to its point as possible, at least
    ``min_gap`` apart, within [lo, hi] where the gaps allow (ties fan out around their common value)."""
    order = sorted(range(len(values)), key=lambda k: values[k])
    ys = [values[k] for k in order]
    for _ in range(len(ys) + 1):  # merge-and-centre clusters until no two labels are closer than min_gap
        placed: list[list[int]] = []
        for k in range(len(ys)):
            if placed and ys[k] - ys[placed[-1][-1]] < min_gap - 1e-9:
                placed[-1].append(k)
            else:
                placed.append([k])
        if all(len(c) == 1 for c in placed):
            break
        for cluster in placed:
            centre = sum(values[order[k]] for k in cluster) / len(cluster)
            start = centre - (len(cluster) - 1) * min_gap / 2
            for n, k in enumerate(cluster):
                ys[k] = start + n * min_gap
    for k in range(len(ys)):  # push up from the floor, then down from the ceiling, keeping the gaps
        ys[k] = max(ys[k], lo if k == 0 else ys[k - 1] + min_gap)
    for k in reversed(range(len(ys))):
        ys[k] = min(ys[k], hi if k == len(ys) - 1 else ys[k + 1] - min_gap)
    out = [0.0] * len(values)
    for k, y in zip(order, ys, strict=True):
        out[k] = y
    return out


def prompt_bars(agg: Aggregate, bench: str, out_dir: Path) -> Plot | None:
    """Direct vs CoT (and other prompts) bars per model, error bars = std over runs (HakushoBench Fig. 6)."""
    import numpy as np

    plt = _pyplot()
    universe = agg.items.get(bench, set())
    labels = model_labels(agg.models, agg.baselines)
    width = 0.8 / max(1, len(agg.prompts))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(agg.models) + 1.5), 3.8))
    x = np.arange(len(agg.models))
    drawn = False
    for k, p in enumerate(agg.prompts):
        vals, errs = [], []
        for m in agg.models:
            rec = agg.cell(bench, m, p)
            s = rec.score(universe) if rec else None
            vals.append(100 * s.mean if s and s.mean is not None else np.nan)
            errs.append(100 * s.std if s and s.std is not None else 0.0)
        drawn |= not all(np.isnan(vals))
        ax.bar(x + (k - (len(agg.prompts) - 1) / 2) * width, vals, width, yerr=errs, capsize=3,
               label=prompt_label(p))
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xticks(x, [labels[m] for m in agg.models], rotation=20, ha="right")
    ax.set_ylabel(Y_LABEL)
    ax.set_ylim(0, 100)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{bench}: Direct vs CoT")
    return _save(fig, out_dir, f"{slug(bench)}_direct_vs_cot", f"{bench}: Direct vs CoT per model",
                 "Bars: mean over runs; error bars: std over runs.")


def category_spread(agg: Aggregate, bench: str, axis: str, prompt: str, tags: dict[str, str], out_dir: Path,
                    min_items: int) -> Plot | None:
    """Box plot of model scores per category (HakushoBench Figs. 7 and 9), every category with its item count;
    categories with fewer than ``min_items`` items (which the paper omits) are drawn grey and named in the
    caption, so a small benchmark still gets a readable plot."""
    plt = _pyplot()
    cats = agg.categories(bench, axis)
    if not cats:
        return None
    order = AXIS_ORDER.get(axis, [])
    values = sorted(cats, key=lambda v: (order.index(v) if v in order else len(order), v))
    small = {v for v in values if len(cats[v]) < min_items}
    universe = agg.items.get(bench, set())
    data: list[list[tuple[str, float]]] = []
    for v in values:
        pts = []
        for m in agg.models:
            rec = agg.cell(bench, m, prompt)
            s = rec.score(universe, cats[v]) if rec else None
            if s is not None and s.mean is not None:
                pts.append((m, 100 * s.mean))
        data.append(pts)
    title = f"{bench}: {AXIS_TITLES.get(axis, axis)} ({prompt_label(prompt)})"
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(values) + 2), 4))
    for i, (v, pts) in enumerate(zip(values, data, strict=True)):
        grey = v in small
        style = {"color": GREY} if grey else {}
        ax.boxplot([[x for _, x in pts] or [float("nan")]], positions=[i], showfliers=False,
                   boxprops=style, whiskerprops=style, capprops=style,
                   medianprops={"color": GREY} if grey else {})
        for m, score in pts:
            ax.scatter([i], [score], color=GREY if grey else GROUP_COLORS[tags.get(m)], s=18, zorder=3,
                       alpha=0.6 if grey else 1.0)
    ax.set_xticks(range(len(values)), [f"{v}\n(n={len(cats[v])})" for v in values], rotation=0, fontsize=8)
    for tick, v in zip(ax.get_xticklabels(), values, strict=True):
        if v in small:
            tick.set_color(GREY)
    ax.set_xlim(-0.6, len(values) - 0.4)
    ax.set_ylabel(Y_LABEL)
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(title)
    caption = "Box: spread of the models' scores per category; dots: models; n: items in the category."
    if small:
        caption += (f" Grey: fewer than {min_items} items (left out of the paper's figures): "
                    f"{', '.join(f'{v} (n={len(cats[v])})' for v in values if v in small)}.")
    return _save(fig, out_dir, f"{slug(bench)}_{axis}_{slug(prompt)}", title, caption)


ASTRO_CATEGORIES = [c.value for c in AstroCategory]


def domaincqa_plots(agg: Aggregate, bench: str, prompt: str, out_dir: Path) -> list[Plot]:
    """AstroChart category bars per model (DomainCQA Fig. 5) and box plots across models (Fig. 6)."""
    import numpy as np

    plt = _pyplot()
    cats = agg.categories(bench, "category")
    present = [c for c in ASTRO_CATEGORIES if c in cats]
    if not present:
        return []
    universe = agg.items.get(bench, set())
    labels = model_labels(agg.models, agg.baselines)
    table: dict[str, list[float]] = {}
    for m in agg.models:
        rec = agg.cell(bench, m, prompt)
        if rec is None:
            continue
        row = []
        for c in present:
            s = rec.score(universe, cats[c])
            row.append(100 * s.mean if s.mean is not None else np.nan)
        table[m] = row
    if not table:
        return []
    plots = []
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(present) + 2), 4))
    width = 0.8 / len(table)
    x = np.arange(len(present))
    for k, (m, row) in enumerate(table.items()):
        ax.bar(x + (k - (len(table) - 1) / 2) * width, row, width, label=labels[m])
    ax.set_xticks(x, [f"{c}\n(n={len(cats[c])})" for c in present], fontsize=8)
    ax.set_ylabel("Score (%) / スコア")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{bench}: DomainCQA categories ({prompt_label(prompt)})")
    plots.append(_save(fig, out_dir, f"{slug(bench)}_domaincqa_bars_{slug(prompt)}",
                       f"{bench}: score by DomainCQA category ({prompt_label(prompt)})", "Bars: mean over runs."))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(present) + 2), 4))
    cols = [[row[i] for row in table.values() if not np.isnan(row[i])] or [np.nan] for i in range(len(present))]
    ax.boxplot(cols, positions=range(len(present)), showfliers=True)
    ax.set_xticks(range(len(present)), present, fontsize=8)
    ax.set_ylabel("Score (%) / スコア")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{bench}: spread across models ({prompt_label(prompt)})")
    plots.append(_save(fig, out_dir, f"{slug(bench)}_domaincqa_box_{slug(prompt)}",
                       f"{bench}: spread across models by DomainCQA category ({prompt_label(prompt)})",
                       "Box: distribution of the models' category scores."))
    return plots


def build_plots(agg: Aggregate, tags: dict[str, str], out_dir: Path, *, min_items: int,
                font: Path | None = None) -> list[Plot]:
    """Every figure of the report, written under ``out_dir``."""
    from zuhyo.report.fonts import use_cjk_font

    _pyplot()
    use_cjk_font(font)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    p = spread_plot(agg, tags, out_dir)
    if p:
        plots.append(p)
    for bench in agg.benchmarks:
        if len(agg.prompts) > 1 and (p := prompt_bars(agg, bench, out_dir)):
            plots.append(p)
        for prompt in agg.prompts:
            for axis in ("image_type", "flag"):
                if p := category_spread(agg, bench, axis, prompt, tags, out_dir, min_items):
                    plots.append(p)
            plots += domaincqa_plots(agg, bench, prompt, out_dir)
    return plots
