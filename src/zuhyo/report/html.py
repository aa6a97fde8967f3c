"""The self-contained HTML report: summary, tables, plots and a filterable list of failed items.

Everything is inlined — plots and item thumbnails as ``data:`` URIs, CSS and a little vanilla JavaScript in the
page — so ``index.html`` opens from disk, offline, and can be mailed as one file.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zuhyo.report.aggregate import Aggregate
from zuhyo.report.paper_tables import model_labels, prompt_label
from zuhyo.report.plots import Plot
from zuhyo.report.tables import COUNTS_NOTE, Table
from zuhyo.schema import Sample

TEMPLATES = Path(__file__).parent / "templates"
THUMB_PX = 240


@dataclass(frozen=True)
class FailedItem:
    """One item-run that a model did not get right: incorrect, errored or unscored."""

    model: str
    benchmark: str
    sample_id: str
    prompt: str
    run_index: int
    kind: str
    """incorrect (judge said wrong or score < 1), error (model call failed), unscored (judge undecided/failed)."""
    question: str
    reference: str
    response: str
    reason: str
    score: float | None
    thumbnail: str | None
    """data: URI of a small JPEG of the item's image when a local or embedded image exists, or of an SVG
    placeholder saying why it cannot be shown."""

    def to_json(self, thumb_key: str | None) -> dict[str, Any]:
        """The row as the page's script reads it; the thumbnail by key into a shared map (one copy per image)."""
        return {"model": self.model, "bench": self.benchmark, "id": self.sample_id, "prompt": self.prompt,
                "run": self.run_index, "kind": self.kind, "question": self.question, "reference": self.reference,
                "response": self.response, "reason": self.reason, "score": self.score, "thumb": thumb_key}


@dataclass(frozen=True)
class FailedList:
    """The failed item-runs listed in the report, and the counts of all of them (listed or not)."""

    items: list[FailedItem]
    """Interleaved round-robin over (model, benchmark) groups, so the first rows show every model and benchmark."""
    totals: dict[str, int]
    """model → failed item-runs."""
    counts: dict[str, dict[str, dict[str, int]]]
    """model → benchmark → kind (incorrect, error, unscored) → item-runs."""


def failure_reason(kind: str, reason: str, extracted: str | None, reference: str, decided_by: str,
                   metrics: dict[str, float]) -> str:
    """Why the item failed, never empty: the judge's own reason, else one made from what it decided on (numeric
    metrics give a score and the values they compared, not a sentence)."""
    if reason.strip():
        return reason
    by = decided_by or "the judge"
    if kind == "unscored":
        return f"{by} could not decide"
    answer = "no answer was extracted" if extracted in (None, "") else f"answer {extracted!r}"
    parts = [f"{by}: {answer} does not match the reference {reference!r}"]
    if metrics:
        parts.append(", ".join(f"{k} {v:.3g}" for k, v in sorted(metrics.items())))
    return "; ".join(parts)


def thumbnail_uri(sample: Sample | None, base_dir: Path | None, max_px: int = THUMB_PX) -> str | None:
    """A small inlined copy of the sample's image; None when there is no local/embedded image to read; a
    placeholder naming the reason when there is one but it cannot be shown (missing, not a regular file, too
    large, not decodable, a decompression bomb...). The report never fails on an image."""
    if sample is None or sample.image is None:
        return None
    data = sample.image.data
    if data is None:
        path = sample.image.resolve_path(base_dir)
        if path is None:
            return None
        from zuhyo.errors import ImageError
        from zuhyo.images.localfile import read_regular_file

        try:
            data = read_regular_file(path, label=path.name)
        except ImageError as e:
            return placeholder_uri(str(e))
    try:
        return _thumbnail(data, max_px)
    except Exception as e:  # noqa: BLE001 - Pillow raises many types (DecompressionBombError, SyntaxError...)
        return placeholder_uri(f"cannot thumbnail image: {type(e).__name__}: {e}")


def _thumbnail(data: bytes, max_px: int) -> str:
    from PIL import Image

    from zuhyo.images.prepare import MAX_SOURCE_PIXELS

    with Image.open(io.BytesIO(data)) as im:
        w, h = im.size
        if w * h > MAX_SOURCE_PIXELS:
            raise ValueError(f"{w}x{h} image exceeds {MAX_SOURCE_PIXELS:,} pixels (decompression-bomb guard)")
        im.thumbnail((max_px, max_px))
        buf = io.BytesIO()
        im.convert("RGB").save(buf, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def placeholder_uri(reason: str, max_px: int = THUMB_PX) -> str:
    """A grey SVG box that says why the image is not shown (inlined like a thumbnail; text XML-escaped)."""
    from xml.sax.saxutils import escape

    words, lines, line = reason.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > 34:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines = ([*lines, line] if line else lines)[:8]
    text = "".join(f'<tspan x="8" dy="14">{escape(ln[:60])}</tspan>' for ln in ["image not shown:", *lines])
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{max_px}" height="{max_px // 2}">'
           f"<title>{escape(reason)}</title>"
           f'<rect width="100%" height="100%" fill="#eee" stroke="#999"/>'
           f'<text font-family="sans-serif" font-size="11" fill="#333" y="4">{text}</text></svg>')
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def collect_failed(agg: Aggregate, *, max_per_model: int = 0) -> FailedList:
    """Every failed item-run (incorrect, errored, unscored), counted per model and benchmark, and listed
    interleaved across benchmarks — at most ``max_per_model`` per model when it is positive (0: all)."""
    groups: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    totals: dict[str, int] = {}
    counts: dict[str, dict[str, dict[str, int]]] = {}
    merged = agg.merged
    for key in sorted(merged.predictions):
        bench, sid, model, prompt, run = key
        p = merged.predictions[key]
        judge = agg.judge_for.get(bench)
        j = merged.judgments.get((*key, judge)) if judge else None
        if p.status != "ok":
            kind, reason, score = "error", p.error or p.outcome or "model call failed", None
        elif j is None:
            kind, reason, score = "unscored", "not judged", None
        elif j.verdict in ("undecided", "unscored") or j.score is None:
            kind, reason, score = "unscored", j.reason, None
        elif j.score < 1.0:
            kind, reason, score = "incorrect", j.reason, j.score
        else:
            continue
        totals[model] = totals.get(model, 0) + 1
        per_kind = counts.setdefault(model, {}).setdefault(bench, {})
        per_kind[kind] = per_kind.get(kind, 0) + 1
        groups.setdefault((model, bench), []).append((key, p, j, kind, reason, score))
    order = sorted(groups, key=lambda mb: (agg.models.index(mb[0]) if mb[0] in agg.models else len(agg.models),
                                           mb[0], mb[1]))
    listed: dict[str, int] = {}
    thumbs: dict[tuple[str, str], str | None] = {}
    out: list[FailedItem] = []
    for rank in range(max((len(g) for g in groups.values()), default=0)):
        for mb in order:
            if rank >= len(groups[mb]) or (max_per_model > 0 and listed.get(mb[0], 0) >= max_per_model):
                continue
            listed[mb[0]] = listed.get(mb[0], 0) + 1
            key, p, j, kind, reason, score = groups[mb][rank]
            bench, sid, model, prompt, run = key
            sample = merged.samples.get((bench, sid))
            if (bench, sid) not in thumbs:
                thumbs[(bench, sid)] = thumbnail_uri(sample, merged.base_dirs.get(bench))
            reference = " | ".join(sample.answers) if sample else ""
            if j is not None:
                reason = failure_reason(kind, reason, j.extracted_answer or p.answer, reference, j.decided_by,
                                        j.metrics)
            out.append(FailedItem(model, bench, sid, prompt, run, kind,
                                  sample.question if sample else "(sample not loaded)", reference, p.response or "",
                                  reason, score, thumbs[(bench, sid)]))
    return FailedList(out, totals, counts)


def failed_page_data(failed: FailedList, labels: dict[str, str]) -> dict[str, Any]:
    """What the page's script renders: the rows, one thumbnail per image, the labels of models and prompts."""
    thumbs: dict[str, str] = {}
    keys: dict[str, str] = {}
    rows = []
    for f in failed.items:
        key = None
        if f.thumbnail is not None:
            key = keys.setdefault(f.thumbnail, f"t{len(keys)}")
            thumbs[key] = f.thumbnail
        rows.append(f.to_json(key))
    return {"rows": rows, "thumbs": thumbs, "labels": labels,
            "prompts": {f.prompt: prompt_label(f.prompt) for f in failed.items}}


def _data_uri(path: Path, mime: str) -> str:
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def render_html(*, agg: Aggregate, tables: list[Table], plots: list[Plot], failed: FailedList,
                max_per_model: int, overview: dict[str, Any], problems: list[dict[str, str]], out: Path) -> Path:
    """Write ``out`` (index.html) from the Jinja2 template."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    labels = model_labels(agg.models, agg.baselines)
    listed: dict[str, int] = {}
    for f in failed.items:
        listed[f.model] = listed.get(f.model, 0) + 1
    html = env.get_template("report.html.j2").render(
        overview=overview, tables=tables, counts_note=COUNTS_NOTE, problems=problems,
        plots=[{"name": p.name, "title": p.title, "caption": p.caption, "src": _data_uri(p.png, "image/png")}
               for p in plots],
        failed_data=failed_page_data(failed, labels), failed_counts=failed.counts, failed_totals=failed.totals,
        failed_listed=listed, models=[(m, labels[m]) for m in agg.models], labels=labels,
        benchmarks=agg.benchmarks, prompts=[(p, prompt_label(p)) for p in agg.prompts],
        max_per_model=max_per_model, kinds=("incorrect", "error", "unscored"))
    out.write_text(html, encoding="utf-8")
    return out
