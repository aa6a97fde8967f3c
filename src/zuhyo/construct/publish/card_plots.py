"""Bar charts of the ``zuhyo analyze stats`` tables, for an exported dataset's card.

One horizontal bar chart per table that has something to show: image types (HakushoBench Table 2), difficulty
flags (Table 3), sources (Table 5), CCV attribute proportions (DomainCQA Table 4) and the CCV score distribution
(DomainCQA Figure 4). Drawn with the report's matplotlib setup (Agg, a CJK font for Japanese source names) and
written as PNG and SVG by :func:`zuhyo.report.plots._save`; the tables themselves come from
:mod:`zuhyo.analysis.statistics`, never recomputed here.
"""

from __future__ import annotations

from pathlib import Path

from zuhyo.analysis.statistics import NOT_ANNOTATED, UNKNOWN, DatasetStatistics, StatTable
from zuhyo.report.plots import Plot, _pyplot, _save

#: (table key, label column, value column, caption) of each chart, in the card's order.
CHARTS = (
    ("image_types", "image type", "questions", "Questions per image type (HakushoBench Table 2 classes)."),
    ("flags", "flag", "questions", "Questions per difficulty flag; a question may carry several."),
    ("sources", "source", "questions", "Questions per source (the 20 largest)."),
    ("ccv_attributes", "attribute", "share of charts",
     "Share of charts with each Chart Complexity Vector attribute set (DomainCQA Table 4)."),
    ("ccv_scores", "score", "charts", "Charts per CCV complexity score (attributes set; DomainCQA Figure 4)."),
)
MAX_BARS = 20


def _bars(table: StatTable, label_col: str, value_col: str) -> list[tuple[str, float]]:
    li, vi = table.columns.index(label_col), table.columns.index(value_col)
    bars = [(str(r[li]), float(r[vi] or 0)) for r in table.rows if r[li] not in ("Total",)]
    if all(v == 0 or label in (NOT_ANNOTATED, UNKNOWN) for label, v in bars):
        return []  # nothing annotated: no chart
    if table.key == "sources":
        bars = sorted(bars, key=lambda b: -b[1])[:MAX_BARS]
    return bars


def statistics_plots(stats: DatasetStatistics, out_dir: Path) -> list[Plot]:
    """Draw the charts of :data:`CHARTS` that have data into ``out_dir``; returns what was written."""
    from zuhyo.report.fonts import use_cjk_font

    keys = {t.key for t in stats.tables}
    todo = [(table, vc, cap, bars) for key, lc, vc, cap in CHARTS if key in keys
            if (bars := _bars(table := stats.table(key), lc, vc))]
    if not todo:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    use_cjk_font()
    plt = _pyplot()
    plots = []
    for table, value_col, caption, bars in todo:
        share = value_col in table.share_columns
        values = [100 * v if share else v for _, v in bars]
        fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.32 * len(bars)))
        ax.barh(range(len(bars)), values, color="#1f77b4")
        ax.set_yticks(range(len(bars)), [label for label, _ in bars])
        ax.invert_yaxis()
        ax.set_xlabel(f"{value_col} (%)" if share else value_col)
        ax.set_title(table.title, fontsize=10)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.1f} %" if share else f" {int(v)}", va="center", fontsize=8)
        ax.margins(x=0.15)
        plots.append(_save(fig, out_dir, table.key, table.title, caption))
    return plots
