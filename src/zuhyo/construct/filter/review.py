"""A page to check the filter's near-duplicate decisions by eye (``zuhyo filter WS --review-html OUT``): each
cluster's kept figure and the figures dropped as its duplicates, side by side, with the score and the command that
overrules a drop (``zuhyo decide``).

The clusters are read back from the workspace's current filter decisions (a drop whose evidence names
``duplicate_of``), so the page shows what is in force, a person's overrulings included (they are no longer drops
of the stage). Images are linked, not embedded (a page for 100,000 figures stays small): their paths relative to
the page's folder, loaded lazily by the browser.
"""

from __future__ import annotations

import html
import os
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from zuhyo.construct.workspace import Workspace


class ReviewFigure(BaseModel):
    """One figure of a cluster, as the page shows it."""

    id: int
    """The figure's id (what ``zuhyo decide`` takes)."""
    sha256: str
    """Its image's sha256."""
    width: int | None = None
    """Its width in pixels, when the filter measured it."""
    height: int | None = None
    """Its height in pixels."""
    image: str | None = None
    """Path of its image file, or None when the store has lost it."""
    score: float | None = None
    """For a dropped figure: its verification score against the kept one (1.0 for identical bytes)."""
    reason: str = ""
    """For a dropped figure: the stage's reason."""


class ReviewCluster(BaseModel):
    """A kept figure and the figures the filter dropped as its near duplicates."""

    kept: ReviewFigure
    """The figure kept (the largest, then the latest year / edition, then the first collected)."""
    dropped: list[ReviewFigure]
    """The figures dropped as its duplicates, lowest score first (the likeliest mistakes on top)."""


def review_clusters(ws: Workspace) -> list[ReviewCluster]:
    """The near-duplicate clusters in force, lowest score first (by their lowest member)."""
    from zuhyo.construct.workspace.queries import list_figures

    figures = {f["id"]: f for f in list_figures(ws, stage="filter")}

    def figure(f: dict[str, Any], score: float | None = None, reason: str = "") -> ReviewFigure:
        path = ws.images.path_for(f["sha256"])
        return ReviewFigure(id=f["id"], sha256=f["sha256"], width=f.get("width"), height=f.get("height"),
                            image=None if path is None else str(path), score=score, reason=reason)

    by_kept: dict[int, list[ReviewFigure]] = {}
    for f in figures.values():
        dup = f.get("duplicate_of")
        if f["decisions"].get("filter") != "drop" or not isinstance(dup, dict):
            continue
        by_kept.setdefault(int(dup["id"]), []).append(figure(f, dup.get("score"), str(dup.get("reason", ""))))
    out = []
    for kept_id, dropped in by_kept.items():
        if kept_id not in figures:
            continue
        dropped.sort(key=lambda d: (d.score if d.score is not None else 1.0, d.id))
        out.append(ReviewCluster(kept=figure(figures[kept_id]), dropped=dropped))
    return sorted(out, key=lambda c: (c.dropped[0].score or 1.0, c.kept.id))


def write_review_html(ws: Workspace, out: Path) -> int:
    """Write the review page to ``out``; returns the number of clusters on it."""
    clusters = review_clusters(ws)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_review_html(clusters, ws.root, out.parent), encoding="utf-8")
    return len(clusters)


def render_review_html(clusters: list[ReviewCluster], workspace: Path, folder: Path) -> str:
    """The page's HTML; image paths relative to ``folder`` (where the page lies)."""

    def cell(f: ReviewFigure, role: str) -> str:
        src = "" if f.image is None else html.escape(os.path.relpath(f.image, folder))
        img = (f'<img src="{src}" loading="lazy" alt="figure {f.id}">' if src else "<p>(image missing)</p>")
        size = f"{f.width}×{f.height}" if f.width and f.height else ""
        lines = [f"<b>{role} figure {f.id}</b> {size}", f"<code>{f.sha256[:16]}</code>"]
        if f.score is not None:
            ws = shlex.quote(str(workspace))
            lines.append(f"score {f.score:.4f} — {html.escape(f.reason)}")
            lines.append(f"<code>zuhyo decide {html.escape(ws)} {f.id} keep --reason 'not a duplicate'</code>")
        return f'<figure class="{role}">{img}<figcaption>{"<br>".join(lines)}</figcaption></figure>'

    body = []
    for k, c in enumerate(clusters, 1):
        cells = [cell(c.kept, "kept")] + [cell(d, "dropped") for d in c.dropped]
        body.append(f'<section id="cluster-{c.kept.id}"><h2>Cluster {k}: kept figure {c.kept.id}, '
                    f'{len(c.dropped)} dropped</h2><div class="row">{"".join(cells)}</div></section>')
    style = ("body{font-family:sans-serif;margin:1em} .row{display:flex;gap:12px;overflow-x:auto} "
             "figure{margin:0;max-width:360px} img{max-width:360px;max-height:280px;border:1px solid #ccc} "
             ".kept img{border:3px solid #2a7} .dropped img{border:3px solid #c44} figcaption{font-size:12px} "
             "section{border-bottom:1px solid #ddd;padding:8px 0}")
    intro = (f"<h1>Near duplicates: {len(clusters)} clusters</h1><p>Each row: the kept figure (green), then the "
             "figures dropped as its duplicates (red), lowest score first. To overrule a drop, run the command "
             "under it.</p>")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>zuhyo filter review</title>'
            f"<style>{style}</style></head><body>{intro}{''.join(body)}</body></html>")
