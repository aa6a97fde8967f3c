"""Published scores beside the measured ones (`zuhyo report --reference-scores FILE|NAME`).

A reference CSV has the columns ``benchmark, model, prompt, category, score, std, source`` (``score`` and ``std``
in percent; ``std`` may be empty) and optionally ``measured_model`` (the spec or short name of the measured model
the row is for). ``category`` is empty for the overall score or ``axis=value`` for a breakdown (``category=Data``,
``aspect=Color``, ``image_type=Map``); ``prompt`` is ``direct``, ``cot`` or ``best`` (the paper quotes a score
without naming the setting: compared with the better of the measured prompts).

A published row is matched to a measured model by ``measured_model``, else by name: the model's spec, its short
name, or the ``reference_names`` of a model preset serving the same model id (case, spaces, ``-`` and ``_``
ignored). Bundled tables, by name:

- ``domaincqa-table2``: DomainCQA Table 2 (AstroChart accuracy, every model and category, as printed);
- ``hakushobench-text``: the HakushoBench scores the paper's text states (§6.1, §6.2); its Table 4 is an image in
  the text zuhyo ships, so only these numbers are given.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from zuhyo.report.runsets import ReportError
from zuhyo.report.tables import Cell, Column, Row, Table

BUNDLED = {"domaincqa-table2": "domaincqa_table2.csv", "hakushobench-text": "hakushobench_text.csv"}
_COLUMNS = ("benchmark", "model", "prompt", "category", "score")


@dataclass(frozen=True)
class ReferenceScore:
    """One published score (a fraction in [0, 1], like zuhyo's)."""

    benchmark: str
    model: str
    prompt: str
    category: str
    score: float
    std: float | None
    source: str
    measured_model: str = ""


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _percent(raw: str, where: str) -> float | None:
    raw = raw.strip().rstrip("%")
    if not raw:
        return None
    try:
        return float(raw) / 100
    except ValueError:
        raise ReportError(f"{where}: {raw!r} is not a number (scores are in percent)") from None


def load_reference_scores(spec: str) -> list[ReferenceScore]:
    """The rows of a reference CSV: a bundled table's name (see the module doc) or a file path."""
    if spec in BUNDLED:
        text = resources.files("zuhyo.report").joinpath("reference", BUNDLED[spec]).read_text(encoding="utf-8")
        label = spec
    else:
        path = Path(spec)
        if not path.is_file():
            raise ReportError(f"--reference-scores {spec}: no such file and no bundled table of that name "
                              f"(bundled: {', '.join(BUNDLED)})")
        text, label = path.read_text(encoding="utf-8-sig"), str(path)
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ReportError(f"{label}: missing column {missing[0]!r} (expected {', '.join(_COLUMNS)}[, std, source, "
                          f"measured_model])")
    rows = []
    for i, r in enumerate(reader, start=2):
        where = f"{label} line {i}"
        score = _percent(r["score"], where)
        if score is None:
            raise ReportError(f"{where}: empty score")
        prompt = (r["prompt"] or "best").strip()
        category = (r["category"] or "").strip()
        if category and "=" not in category:
            raise ReportError(f"{where}: category {category!r} must be axis=value (e.g. aspect=Color) or empty")
        rows.append(ReferenceScore(r["benchmark"].strip(), r["model"].strip(), prompt, category, score,
                                   _percent(r.get("std") or "", where), (r.get("source") or "").strip(),
                                   (r.get("measured_model") or "").strip()))
    return rows


def model_names(models: list[str], labels: dict[str, str]) -> dict[str, set[str]]:
    """Measured model spec → the normalised names a published table may call it by."""
    from zuhyo.models.presets import load_presets

    presets = list(load_presets().values())
    out: dict[str, set[str]] = {}
    for m in models:
        names = {_norm(m), _norm(labels.get(m, m))}
        model_id = m.split(":", 1)[1].rsplit("@", 1)[0] if m.startswith("openai:") else m
        for p in presets:
            if p.model == model_id:
                names |= {_norm(n) for n in (p.name, *p.reference_names)}
        out[m] = names
    return out


def _measured(cell: dict[str, Any], category: str) -> tuple[float | None, float | None]:
    if not category:
        return cell.get("mean"), cell.get("std")
    axis, _, value = category.partition("=")
    got = (cell.get("by_category") or {}).get(axis, {}).get(value)
    return (got.get("mean"), got.get("std")) if got else (None, None)


def compare(refs: list[ReferenceScore], cells: list[dict[str, Any]], models: list[str],
            labels: dict[str, str]) -> tuple[list[dict[str, Any]], list[ReferenceScore]]:
    """(matched rows: published beside measured with the difference in points, unmatched published rows)."""
    names = model_names(models, labels)
    matched: list[dict[str, Any]] = []
    unmatched: list[ReferenceScore] = []
    for ref in refs:
        want = _norm(ref.measured_model) if ref.measured_model else _norm(ref.model)
        candidates = [c for c in cells if c["benchmark"] == ref.benchmark and want in names.get(c["model"], set())
                      and (ref.prompt == "best" or c["prompt"] == ref.prompt)]
        scored: list[tuple[dict[str, Any], float, float | None]] = []
        for c in candidates:
            mean, std = _measured(c, ref.category)
            if mean is not None:
                scored.append((c, mean, std))
        if not scored:
            unmatched.append(ref)
            continue
        cell, mean, std = max(scored, key=lambda s: s[1])
        diff = round(100 * (mean - ref.score), 6)
        matched.append({"benchmark": ref.benchmark, "published_model": ref.model, "model": cell["model"],
                        "prompt": ref.prompt, "measured_prompt": cell["prompt"], "category": ref.category,
                        "published": ref.score, "published_std": ref.std, "measured": mean, "measured_std": std,
                        "difference_points": diff, "source": ref.source})
    return matched, unmatched


def reference_table(matched: list[dict[str, Any]], unmatched: list[ReferenceScore], label: str) -> Table:
    """Published | measured | difference (measured − published, points), one row per matched published score."""
    rows = []
    for m in matched:
        prompt = m["prompt"] if m["prompt"] != "best" else f"best ({m['measured_prompt']})"
        title = " · ".join(x for x in (m["benchmark"], m["published_model"], prompt, m["category"]) if x)
        rows.append(Row(title, [Cell(m["published"], m["published_std"]), Cell(m["measured"], m["measured_std"]),
                                Cell(text=f"{m['difference_points']:+.1f}")]))
    notes = [f"Published scores from {label} beside the measured ones; difference = measured − published, in "
             f"points. 'best': the paper quotes the score without naming the prompt; compared with the better "
             f"measured prompt."]
    if unmatched:
        names = sorted({f"{u.benchmark}/{u.model}" for u in unmatched})
        notes.append(f"{len(unmatched)} published scores have no measured counterpart (not run, or named "
                     f"differently: add a measured_model column): {', '.join(names[:12])}"
                     + (f" and {len(names) - 12} more" if len(names) > 12 else ""))
    return Table(name="reference_scores", title="Published vs measured scores",
                 columns=[Column("", "Published"), Column("", "Measured"), Column("", "Δ (points)")],
                 rows=rows, row_header="Benchmark · model · prompt · category", notes=notes, show_counts=False)
