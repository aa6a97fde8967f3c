"""The report's tables, in the shapes of the papers.

- ``main``: HakushoBench Table 4 — rows are models (grouped open-weight / proprietary when tagged), columns are
  benchmark × {Direct, CoT}, cells mean ± std over runs in %.
- ``<bench>_image_type_<prompt>`` / ``<bench>_flag_<prompt>``: HakushoBench breakdowns by image type and by
  difficulty flag (any other category axis present, e.g. ChartQAPro question type, gets the same table).
- ``<bench>_domaincqa_<prompt>``: DomainCQA Table 2 — Visual {All, Color, Style, Text, Layout}, Data {All, Point,
  Interval, Calculation}, Inference, Summary, KB-Inference, KB-Summary, Overall.
- ``<bench>_metrics``: accuracy and the judgment metrics (ROUGE-L, BLEU-4, L3Score, ...) per prompt.
- ``gap``: open-weight vs proprietary; ``comparisons``: every paired test behind the markers.
"""

from __future__ import annotations

import re

from zuhyo.report.aggregate import Aggregate, CellRecords
from zuhyo.report.analysis import GROUP_LABELS, MARK_VS_BEST, MARK_VS_DIRECT, OPEN, PROPRIETARY, Analysis
from zuhyo.report.tables import Cell, Column, Counts, Row, Table
from zuhyo.schema import AstroAspect, AstroCategory, Flag, ImageType

PROMPT_LABELS = {"direct": "Direct", "cot": "CoT", "cot+ocr": "CoT+OCR"}
AXIS_TITLES = {"image_type": "Image type", "flag": "Question flag", "category": "Category", "aspect": "Aspect",
               "qa_type": "QA type", "question_type": "Question type", "charxiv_kind": "CharXiv kind",
               "split": "Split"}
AXIS_ORDER: dict[str, list[str]] = {"image_type": [t.value for t in ImageType], "flag": [f.value for f in Flag]}
BREAKDOWN_AXES = ("image_type", "flag", "question_type", "charxiv_kind", "split")
METRIC_LABELS = {"rouge_l": "ROUGE-L", "bleu4": "BLEU-4", "l3score": "L3Score", "keypoint_score": "Key-point",
                 "astro_numeric": "Numeric (Alg. 3)", "astro_exact": "Exact"}


def prompt_label(prompt: str) -> str:
    return PROMPT_LABELS.get(prompt, prompt)


def model_labels(models: list[str], baselines: frozenset[str] = frozenset()) -> dict[str, str]:
    """Short display names: ``openai:NAME@URL`` → NAME (the full spec where two would collide); floors such as
    the OCR baseline are marked "(baseline)"."""
    short = {m: (m.split(":", 1)[1].split("@", 1)[0] if m.startswith("openai:") else m) for m in models}
    counts: dict[str, int] = {}
    for s in short.values():
        counts[s] = counts.get(s, 0) + 1
    return {m: (s if counts[s] == 1 else m) + (" (baseline)" if m in baselines else "") for m, s in short.items()}


def slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower() or "x"


def ordered_models(agg: Aggregate, tags: dict[str, str]) -> list[tuple[str, str | None]]:
    """(model, row group) in table order: open-weight, then proprietary, then untagged — when any tag is given."""
    if not tags:
        return [(m, None) for m in agg.models]
    order = [(OPEN, GROUP_LABELS[OPEN]), (PROPRIETARY, GROUP_LABELS[PROPRIETARY]), (None, "Untagged")]
    return [(m, label) for g, label in order for m in agg.models if tags.get(m) == g]


def score_cell(rec: CellRecords | None, universe: set[str], subset: set[str] | None = None, *, markers: str = "",
               ci: tuple[float, float] | None = None) -> Cell:
    if rec is None:
        return Cell(text="n/a")
    s = rec.score(universe, subset)
    return Cell(s.mean, s.std, ci, markers, Counts(s.n_scored, s.n_unscored, s.n_errors, s.n_missing))


def _markers(agg: Aggregate, an: Analysis, rec: CellRecords | None) -> str:
    if rec is None:
        return ""
    out = ""
    vb = an.vs_best.get(rec.key)
    if vb is not None and vb.significant and (vb.diff or 0) < 0:
        out += MARK_VS_BEST
    vd = an.vs_direct.get(rec.key)
    if vd is not None and vd.significant:
        out += MARK_VS_DIRECT
    return out


def legend(an: Analysis, runs: int) -> list[str]:
    return [f"Cells: mean ± sample std (ddof = 1) over {runs} run(s), in %; each run's score is the mean over the "
            "items it scored.",
            f"{MARK_VS_BEST} p < 0.05 vs the best model of the column; {MARK_VS_DIRECT} p < 0.05 vs Direct for the "
            "same model (McNemar's exact test on binary item scores, else a paired bootstrap; items scored by both "
            f"only; {an.n_resamples} resamples, seed {an.seed}).",
            f"95 % CIs (percentile bootstrap over items, runs averaged per item, {an.n_resamples} resamples, seed "
            f"{an.seed}) are in the CSV files and the JSON output."]


def main_table(agg: Aggregate, an: Analysis, tags: dict[str, str]) -> Table:
    """HakushoBench Table 4 shape."""
    labels = model_labels(agg.models, agg.baselines)
    columns = [Column(b, prompt_label(p)) for b in agg.benchmarks for p in agg.prompts]
    rows = []
    for m, group in ordered_models(agg, tags):
        cells = []
        for b in agg.benchmarks:
            for p in agg.prompts:
                rec = agg.cell(b, m, p)
                ci = an.ci.get(rec.key) if rec else None
                cells.append(score_cell(rec, agg.items.get(b, set()), markers=_markers(agg, an, rec),
                                        ci=(ci.low, ci.high) if ci else None))
        rows.append(Row(labels[m], cells, group))
    judges = "; ".join(f"{b}: {agg.judge_for.get(b) or 'none'}" for b in agg.benchmarks)
    notes = legend(an, agg.merged.runs) + [f"Judge per benchmark — {judges}."]
    if any(p.kind == "item_set_mismatch" for p in an.problems):
        notes.append("Warning: in some columns the models were scored on different item sets (see the counts and "
                     "the data problems); each mean is over its own items, paired tests over the shared items only.")
    return Table("main", "Accuracy (%) by benchmark and prompt", columns, rows, notes=notes)


def category_table(agg: Aggregate, bench: str, axis: str, prompt: str, tags: dict[str, str],
                   min_items: int) -> Table | None:
    cats = agg.categories(bench, axis)
    if not cats:
        return None
    order = AXIS_ORDER.get(axis, [])
    values = sorted(cats, key=lambda v: (order.index(v) if v in order else len(order), v))
    universe = agg.items.get(bench, set())
    columns = [Column(AXIS_TITLES.get(axis, axis), f"{v} (n={len(cats[v])})") for v in values]
    columns.append(Column("", "All"))
    labels = model_labels(agg.models, agg.baselines)
    rows = []
    for m, group in ordered_models(agg, tags):
        rec = agg.cell(bench, m, prompt)
        cells = [score_cell(rec, universe, cats[v]) for v in values] + [score_cell(rec, universe)]
        rows.append(Row(labels[m], cells, group))
    small = [f"{v} ({len(cats[v])})" for v in values if len(cats[v]) < min_items]
    notes = [f"Mean ± std over runs in %, per {AXIS_TITLES.get(axis, axis).lower()}; n = items in the category"
             + (" (an item can have several flags)." if axis == "flag" else ".")]
    if small:
        notes.append(f"Fewer than {min_items} items (grey in the plots): {', '.join(small)}.")
    return Table(f"{slug(bench)}_{axis}_{slug(prompt)}", f"{bench} — accuracy (%) by "
                 f"{AXIS_TITLES.get(axis, axis).lower()}, {prompt_label(prompt)}", columns, rows, notes=notes)


def domaincqa_table(agg: Aggregate, bench: str, prompt: str, tags: dict[str, str]) -> Table | None:
    """DomainCQA Table 2 shape over the items with AstroChart metadata."""
    astro = {sid for (b, sid), s in agg.merged.samples.items() if b == bench and s.astro is not None}
    if not astro:
        return None
    by_cat = agg.categories(bench, "category")
    by_aspect = agg.categories(bench, "aspect")
    spec: list[tuple[Column, set[str]]] = []
    for cat, aspects in ((AstroCategory.VISUAL, ("Color", "Style", "Text", "Layout")),
                         (AstroCategory.DATA, ("Point", "Interval", "Calculation"))):
        spec.append((Column(cat.value, "All"), by_cat.get(cat.value, set())))
        spec += [(Column(cat.value, a), by_aspect.get(AstroAspect(a).value, set())) for a in aspects]
    for cat in (AstroCategory.INFERENCE, AstroCategory.SUMMARY, AstroCategory.KB_INFERENCE, AstroCategory.KB_SUMMARY):
        spec.append((Column("", cat.value), by_cat.get(cat.value, set())))
    spec.append((Column("", "Overall"), astro))
    universe = agg.items.get(bench, set())
    labels = model_labels(agg.models, agg.baselines)
    rows = []
    for m, group in ordered_models(agg, tags):
        rec = agg.cell(bench, m, prompt)
        rows.append(Row(labels[m], [score_cell(rec, universe, ids) if ids else Cell(text="—")
                                    for _, ids in spec], group))
    counts = ", ".join(f"{c.label if not c.group or c.label != 'All' else c.group} {len(ids)}"
                       for c, ids in spec if c.label == "All" or not c.group)
    return Table(f"{slug(bench)}_domaincqa_{slug(prompt)}", f"{bench} — score (%) by DomainCQA category, "
                 f"{prompt_label(prompt)}", [c for c, _ in spec], rows,
                 notes=[f"Items per category: {counts}. Overall is over the {len(astro)} AstroChart items."])


def metrics_table(agg: Aggregate, bench: str, tags: dict[str, str]) -> Table | None:
    """Accuracy and every judgment metric present (ROUGE-L, BLEU-4, L3Score, ...), per prompt."""
    names: set[str] = set()
    for key, cell_records in agg.cells.items():
        if key.benchmark == bench:
            names |= {n for n, runs in cell_records.metrics.items() if any(runs.values())}
    if not names:
        return None
    known = [n for n in METRIC_LABELS if n in names]
    metrics = known + sorted(names - set(known))
    columns = []
    for p in agg.prompts:
        columns.append(Column(prompt_label(p), "Accuracy"))
        columns += [Column(prompt_label(p), METRIC_LABELS.get(n, n)) for n in metrics]
    universe = agg.items.get(bench, set())
    labels = model_labels(agg.models, agg.baselines)
    rows = []
    for m, group in ordered_models(agg, tags):
        cells: list[Cell] = []
        for p in agg.prompts:
            rec = agg.cell(bench, m, p)
            cells.append(score_cell(rec, universe))
            for n in metrics:
                if rec is None:
                    cells.append(Cell(text="n/a"))
                    continue
                s = rec.score(universe)
                mean, std, count = rec.metric_score(n)
                judged = s.n_scored + s.n_unscored
                cells.append(Cell(mean, std, counts=Counts(count, judged - count, s.n_errors, s.n_missing)))
        rows.append(Row(labels[m], cells, group))
    return Table(f"{slug(bench)}_metrics", f"{bench} — accuracy and text metrics (×100)", columns, rows,
                 notes=["Metric cells: per run, the mean over the item-runs that have the metric (scored or not by "
                        "the judge); then mean ± std over runs. For metrics, 'u' counts judged item-runs without "
                        "that metric."])


def gap_table(an: Analysis, labels: dict[str, str]) -> Table | None:
    if not an.gaps:
        return None
    rows = []
    for g in an.gaps:
        test = g["test"]
        assert isinstance(test, dict)
        p = test.get("p_value")
        rows.append(Row(f"{g['benchmark']} {prompt_label(str(g['prompt']))}", [
            Cell(text=labels.get(str(g["best_proprietary"]), str(g["best_proprietary"]))),
            Cell(text=labels.get(str(g["best_open"]), str(g["best_open"]))),
            Cell(float(g["best_gap"])),  # type: ignore[arg-type]
            Cell(float(g["group_mean_gap"])),  # type: ignore[arg-type]
            Cell(text="—" if p is None else f"{p:.3g} ({test['test']}, n={test['n_common']})")]))
    cols = [Column("Best", "Proprietary"), Column("Best", "Open-weight"), Column("Gap (pp)", "Best"),
            Column("Gap (pp)", "Group means"), Column("", "p (best vs best)")]
    return Table("gap", "Open-weight vs proprietary gap (percentage points)", cols, rows, row_header="Benchmark",
                 show_counts=False, notes=["Gap = proprietary − open-weight; 'Group means' compares the mean of the "
                                           "models' scores in each group."])


def comparisons_table(agg: Aggregate, an: Analysis) -> Table | None:
    labels = model_labels(agg.models, agg.baselines)
    rows = []
    for kind, table in (("vs best", an.vs_best), ("vs Direct", an.vs_direct)):
        for key, c in sorted(table.items(), key=lambda kv: (kv[0].benchmark, kv[0].prompt, kv[0].model)):
            other = labels.get(c.b, c.b) if kind == "vs best" else "Direct"
            rows.append(Row(f"{key.benchmark} {prompt_label(key.prompt)} {labels[key.model]}", [
                Cell(text=f"{kind}: {other}"), Cell(c.diff),
                Cell(text="—" if c.p_value is None else f"{c.p_value:.3g}"), Cell(text=c.test),
                Cell(text=f"{c.n_common}" + (f" (+{c.only_in_a}/+{c.only_in_b} unpaired)" if c.mismatched else ""))]))
    if not rows:
        return None
    cols = [Column("", "Comparison"), Column("", "Δ (pp)"), Column("", "p"), Column("", "Test"),
            Column("", "Paired items")]
    return Table("comparisons", "Paired significance tests behind the markers", cols, rows, row_header="Cell",
                 show_counts=False, notes=["Δ = this cell − the other, over the paired items only (runs averaged "
                                           "per item)."])


def build_tables(agg: Aggregate, an: Analysis, tags: dict[str, str], *, min_items: int) -> list[Table]:
    """All tables of the report, in reading order."""
    tables = [main_table(agg, an, tags)]
    for bench in agg.benchmarks:
        for prompt in agg.prompts:
            for axis in BREAKDOWN_AXES:
                t = category_table(agg, bench, axis, prompt, tags, min_items)
                if t is not None:
                    tables.append(t)
            t = domaincqa_table(agg, bench, prompt, tags)
            if t is not None:
                tables.append(t)
        t = metrics_table(agg, bench, tags)
        if t is not None:
            tables.append(t)
    for t in (gap_table(an, model_labels(agg.models, agg.baselines)), comparisons_table(agg, an)):
        if t is not None:
            tables.append(t)
    return tables
