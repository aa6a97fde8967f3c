"""A small table model and its renderers: Markdown, CSV (tidy: one line per cell) and LaTeX (booktabs).

Scores are fractions in [0, 1] in the model and shown ×100 (percent, or ×100 points for ROUGE-L/BLEU-4). Every
score cell carries its counts — scored / unscored / errored / missing item-runs — and its coverage (scored / all)
shown next to it: a ``n`` column after each score column in Markdown and LaTeX, separate fields in the CSV.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Counts:
    """Item-run counts behind a score (summed over runs)."""

    scored: int
    unscored: int
    errors: int
    missing: int

    @property
    def coverage(self) -> float | None:
        """Scored item-runs over all item-runs (None when there are none)."""
        total = self.scored + self.unscored + self.errors + self.missing
        return self.scored / total if total else None

    def short(self) -> str:
        cov = self.coverage
        return f"{self.scored}/{self.unscored}/{self.errors}/{self.missing}" + (
            "" if cov is None else f" ({100 * cov:.0f}%)")


@dataclass(frozen=True)
class Cell:
    """One table cell: a score (mean ± std over runs), its markers and counts, or plain text."""

    mean: float | None = None
    std: float | None = None
    ci: tuple[float, float] | None = None
    markers: str = ""
    counts: Counts | None = None
    text: str | None = None

    def display(self, digits: int = 1) -> str:
        if self.text is not None:
            return self.text
        if self.mean is None:
            return "—"
        out = f"{100 * self.mean:.{digits}f}"
        if self.std is not None:
            out += f" ± {100 * self.std:.{digits}f}"
        return out + self.markers


@dataclass(frozen=True)
class Column:
    group: str
    """Top header (benchmark, category family); may be empty."""
    label: str
    """Sub header (Direct / CoT, category)."""


@dataclass
class Row:
    label: str
    cells: list[Cell]
    group: str | None = None
    """Row group heading (Open-weight / Proprietary), when the rows are grouped."""


@dataclass
class Table:
    """A report table; ``name`` is the file stem of its .md/.csv/.tex files."""

    name: str
    title: str
    columns: list[Column]
    rows: list[Row]
    row_header: str = "Model"
    notes: list[str] = field(default_factory=list)
    show_counts: bool = True

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row.cells) != len(self.columns):
                raise ValueError(f"table {self.name}: row {row.label!r} has {len(row.cells)} cells for "
                                 f"{len(self.columns)} columns")


COUNTS_HEADER = "n (s/u/e/m, coverage)"
COUNTS_NOTE = ("n (s/u/e/m, coverage): item-runs scored / unscored (judge undecided or failed) / errored (model "
               "call failed) / missing (no prediction), summed over runs, and the scored share; only scored "
               "item-runs enter a mean, so a low coverage means the score speaks for part of the items only.")


def _grouped_rows(table: Table) -> list[tuple[str | None, Row | None]]:
    """Rows with a (heading, None) entry before each new row group."""
    out: list[tuple[str | None, Row | None]] = []
    current: str | None = None
    for row in table.rows:
        if row.group is not None and row.group != current:
            out.append((row.group, None))
            current = row.group
        out.append((None, row))
    return out


def _header_label(col: Column) -> str:
    return f"{col.group} {col.label}".strip() if col.group else col.label


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(table: Table) -> str:
    """GitHub-flavoured Markdown: a title line, the table, then notes."""
    head = [table.row_header]
    for col in table.columns:
        head.append(_header_label(col))
        if table.show_counts:
            head.append(COUNTS_HEADER)
    lines = [f"**{_md_escape(table.title)}**", "", "| " + " | ".join(_md_escape(h) for h in head) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(head) - 1)) + "|"]
    for heading, row in _grouped_rows(table):
        if row is None:
            lines.append(f"| *{_md_escape(heading or '')}* |" + " |" * (len(head) - 1))
            continue
        cells = [_md_escape(row.label)]
        for cell in row.cells:
            cells.append(_md_escape(cell.display()))
            if table.show_counts:
                cells.append(cell.counts.short() if cell.counts else "")
        lines.append("| " + " | ".join(cells) + " |")
    notes = list(table.notes) + ([COUNTS_NOTE] if table.show_counts else [])
    if notes:
        lines.append("")
        lines += [f"{_md_escape(n)}  " for n in notes]
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("table", "row_group", "row", "column_group", "column", "mean_pct", "std_pct", "ci_low_pct",
              "ci_high_pct", "markers", "n_scored", "n_unscored", "n_errors", "n_missing", "coverage_pct", "text")


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.4f}"


def render_csv(table: Table) -> str:
    """Tidy CSV: one line per cell with the unrounded score (×100) and its counts."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for row in table.rows:
        for col, cell in zip(table.columns, row.cells, strict=True):
            c = cell.counts
            w.writerow([table.name, row.group or "", row.label, col.group, col.label, _pct(cell.mean),
                        _pct(cell.std), _pct(cell.ci[0]) if cell.ci else "", _pct(cell.ci[1]) if cell.ci else "",
                        cell.markers, *(("", "", "", "", "") if c is None else (
                            c.scored, c.unscored, c.errors, c.missing, _pct(c.coverage))), cell.text or ""])
    return buf.getvalue()


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_MARKERS = {"†": r"\textsuperscript{\dag}", "‡": r"\textsuperscript{\ddag}", "<": "$<$", ">": "$>$",
                  "≥": r"$\geq$", "≤": r"$\leq$", "Δ": r"$\Delta$", "±": r"$\pm$", "—": "--"}


def latex_escape(text: str) -> str:
    out = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
    for mark, tex in _LATEX_MARKERS.items():
        out = out.replace(mark, tex)
    return out


def render_latex(table: Table) -> str:
    """A booktabs table (\\toprule, \\cmidrule per column group, \\midrule, \\bottomrule); needs
    ``\\usepackage{booktabs}`` (and a CJK package such as xeCJK when labels are Japanese)."""
    per_col = 2 if table.show_counts else 1
    ncols = 1 + per_col * len(table.columns)
    spec = "l" + ("rr" if table.show_counts else "r") * len(table.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             rf"\caption{{{latex_escape(table.title)}}}", rf"\label{{tab:{table.name}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    groups: list[tuple[str, int, int]] = []  # (name, first column, last column), 1-based over data columns
    for i, col in enumerate(table.columns):
        first = 2 + i * per_col
        if groups and groups[-1][0] == col.group:
            groups[-1] = (col.group, groups[-1][1], first + per_col - 1)
        else:
            groups.append((col.group, first, first + per_col - 1))
    if any(g for g, _, _ in groups):
        head = [""]
        rules = []
        for name, a, b in groups:
            head.append(rf"\multicolumn{{{b - a + 1}}}{{c}}{{{latex_escape(name)}}}")
            if name:
                rules.append(rf"\cmidrule(lr){{{a}-{b}}}")
        lines.append(" & ".join(head) + r" \\")
        lines.append(" ".join(rules))
    sub = [latex_escape(table.row_header)]
    for col in table.columns:
        sub.append(latex_escape(col.label))
        if table.show_counts:
            sub.append(r"{\scriptsize n}")
    lines += [" & ".join(sub) + r" \\", r"\midrule"]
    first_group = True
    for heading, row in _grouped_rows(table):
        if row is None:
            if not first_group:
                lines.append(r"\midrule")
            first_group = False
            lines.append(rf"\multicolumn{{{ncols}}}{{l}}{{\textit{{{latex_escape(heading or '')}}}}} \\")
            continue
        cells = [latex_escape(row.label)]
        for cell in row.cells:
            cells.append(latex_escape(cell.display()))
            if table.show_counts:
                cells.append(rf"{{\scriptsize {latex_escape(cell.counts.short())}}}" if cell.counts else "")
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = list(table.notes) + ([COUNTS_NOTE] if table.show_counts else [])
    if notes:
        lines.append(r"\par\smallskip{\footnotesize " + r" \\ ".join(latex_escape(n) for n in notes) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
