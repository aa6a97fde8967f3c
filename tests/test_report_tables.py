"""Table rendering: Markdown cells, tidy CSV, LaTeX booktabs rules and escaping."""

from __future__ import annotations

import csv
import io

import pytest

from zuhyo.report.tables import (
    Cell,
    Column,
    Counts,
    Row,
    Table,
    latex_escape,
    render_csv,
    render_latex,
    render_markdown,
)


def _table() -> Table:
    cols = [Column("hakusho", "Direct"), Column("hakusho", "CoT"), Column("astro_x", "Direct")]
    rows = [
        Row("Qwen 7B", [Cell(0.6123, 0.0101, (0.55, 0.67), "†", Counts(300, 2, 1, 0)),
                        Cell(0.7, None, None, "", Counts(100, 0, 0, 200)), Cell(text="n/a")], "Open-weight"),
        Row("GPT_5 & co", [Cell(0.8, 0.02, None, "", Counts(303, 0, 0, 0)),
                           Cell(0.85, 0.0, None, "‡", Counts(303, 0, 0, 0)), Cell(None, None, None, "",
                                                                               Counts(0, 3, 0, 0))], "Proprietary"),
    ]
    return Table("main", "Accuracy (%) 50% & more", cols, rows, notes=["† p < 0.05 vs the best model."])


def test_markdown_has_expected_cells_and_groups():
    md = render_markdown(_table())
    lines = md.splitlines()
    n = "n (s/u/e/m, coverage)"
    assert lines[2] == f"| Model | hakusho Direct | {n} | hakusho CoT | {n} | astro_x Direct | {n} |"
    # coverage (scored / all item-runs) beside each mean: 100 of 300 is a third of the items
    assert "| Qwen 7B | 61.2 ± 1.0† | 300/2/1/0 (99%) | 70.0 | 100/0/0/200 (33%) | n/a |  |" in lines
    assert "| GPT_5 & co | 80.0 ± 2.0 | 303/0/0/0 (100%) | 85.0 ± 0.0‡ | 303/0/0/0 (100%) | — | 0/3/0/0 (0%) |" \
        in lines
    assert lines.index("| *Open-weight* | | | | | | |") < lines.index("| *Proprietary* | | | | | | |")
    assert "† p < 0.05 vs the best model.  " in lines and any(ln.startswith(f"{n}: item-runs") for ln in lines)


def test_csv_is_tidy_and_unrounded():
    rows = list(csv.DictReader(io.StringIO(render_csv(_table()))))
    assert len(rows) == 6
    first = rows[0]
    assert (first["row_group"], first["row"], first["column_group"], first["column"]) == \
        ("Open-weight", "Qwen 7B", "hakusho", "Direct")
    assert float(first["mean_pct"]) == pytest.approx(61.23) and float(first["std_pct"]) == pytest.approx(1.01)
    assert float(first["ci_low_pct"]) == pytest.approx(55) and first["markers"] == "†"
    assert (first["n_scored"], first["n_unscored"], first["n_errors"], first["n_missing"]) == ("300", "2", "1", "0")
    assert float(rows[1]["coverage_pct"]) == pytest.approx(100 / 3, abs=1e-3)
    assert rows[2]["text"] == "n/a" and rows[2]["mean_pct"] == "" and rows[2]["coverage_pct"] == ""
    assert rows[5]["mean_pct"] == "" and rows[5]["n_unscored"] == "3"


def test_latex_booktabs_structure_and_escaping():
    tex = render_latex(_table())
    lines = tex.splitlines()
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert rule in lines
    assert lines.index("\\toprule") < lines.index("\\midrule") < lines.index("\\bottomrule")
    assert "\\begin{tabular}{lrrrrrr}" in lines
    assert " & \\multicolumn{4}{c}{hakusho} & \\multicolumn{2}{c}{astro\\_x} \\\\" in lines
    assert "\\cmidrule(lr){2-5} \\cmidrule(lr){6-7}" in lines
    assert ("Qwen 7B & 61.2 $\\pm$ 1.0\\textsuperscript{\\dag} & {\\scriptsize 300/2/1/0 (99\\%)} & 70.0 & "
            "{\\scriptsize 100/0/0/200 (33\\%)} & n/a &  \\\\") in lines
    assert "GPT\\_5 \\& co" in tex and "\\caption{Accuracy (\\%) 50\\% \\& more}" in tex
    assert "\\multicolumn{7}{l}{\\textit{Proprietary}} \\\\" in lines
    # Each group heading after the first is separated by a rule.
    prop = lines.index("\\multicolumn{7}{l}{\\textit{Proprietary}} \\\\")
    assert lines[prop - 1] == "\\midrule"


def test_latex_escape_specials():
    assert latex_escape("p < 0.05, Δ ≥ 1 ± 2 —") == "p $<$ 0.05, $\\Delta$ $\\geq$ 1 $\\pm$ 2 --"
    assert latex_escape("a_b%c$d#e{f}~^\\") == ("a\\_b\\%c\\$d\\#e\\{f\\}\\textasciitilde{}\\textasciicircum{}"
                                                 "\\textbackslash{}")


def test_row_with_wrong_cell_count_is_rejected():
    with pytest.raises(ValueError, match="row 'x' has 1 cells for 2 columns"):
        Table("t", "t", [Column("", "a"), Column("", "b")], [Row("x", [Cell(0.1)])])
