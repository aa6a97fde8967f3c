"""``zuhyo filter WS``: the filter stage (issue 10 item 3), every drop with a reason a person can overturn.

In order, over every figure of the workspace:

1. file checks and a minimum resolution (:mod:`checks`; HakushoBench §3.1, DomainCQA §4.1);
2. near duplicates among the figures that passed (:mod:`near_duplicates`): in each cluster the best member is
   kept - the largest, then the latest year / edition, then the first collected - and the others that verify
   against it (:mod:`duplicate_groups`) are dropped with the reason ``near duplicate of figure N`` and the
   evidence (``duplicate_of`` id and sha256, verification score, solid difference, descriptor distance); the
   features are collected batch by batch in bounded memory (:mod:`feature_store`);
3. chart/table vs. not on the survivors, through :func:`zuhyo.construct.filter.chart_classifier.run_chart_check`
   when a classifier is given or (``auto``) the workspace has a trained one.

Decisions go to the append-only ``decisions`` table in stage ``filter``, ``decided_by`` ``stage:filter``. A
figure a person has decided on in the stage (``zuhyo decide``) is never decided again; a figure the chart check
dropped stays dropped unless it now fails a check of this stage; a figure whose current decision already says
the same (decision and reason) gets nothing new, so a re-run with nothing changed records nothing. Figures
collected since the last run are hashed and clustered with all the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select

from zuhyo.construct.executor import ItemError, map_items
from zuhyo.construct.filter.checks import (
    DEFAULT_MIN_PIXELS,
    DEFAULT_MIN_SIDE,
    LOW_RESOLUTION,
    UNREADABLE,
    Unreadable,
    inspect_image,
    resolution_problem,
)
from zuhyo.construct.filter.feature_store import FeatureCollector
from zuhyo.construct.filter.near_duplicates import (
    DEFAULT_MIN_SCORE,
    FeatureArrays,
    ImageFeatures,
    PairProgress,
    best_first,
    descriptor_distance,
    near_duplicate_candidates,
    verified_pairs,
    verify_scores,
)
from zuhyo.construct.filter.regions import LOSSY_FORMATS
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.records import record_decision, record_error, resolve_error
from zuhyo.construct.workspace.scratch import scratch_dir
from zuhyo.construct.workspace.tables import DecisionRow, FigureRow
from zuhyo.schema import Decision

STAGE = "filter"
DECIDED_BY = "stage:filter"
NEAR_DUPLICATE = "near_duplicate"
NOT_CHART = "not_chart"
KEEP_REASON = "passed the file, resolution and near-duplicate checks"
#: Images per task of the image reading, and tasks submitted and not done at once: one pool for every image,
#: the driver holding the bytes of at most CHUNK * IN_FLIGHT images (and the whole features of those whose
#: results wait for an earlier one's).
CHUNK = 16
IN_FLIGHT = 32
_WRITE_BATCH = 500


class FilterReport(BaseModel):
    """The stage's result: the filter decisions in force after this run, and what this run changed."""

    checked: int = 0
    """Figures looked at."""
    kept: int = 0
    """Figures whose current filter decision is keep."""
    dropped: dict[str, int] = Field(default_factory=lambda: {UNREADABLE: 0, LOW_RESOLUTION: 0, NEAR_DUPLICATE: 0,
                                                             NOT_CHART: 0})
    """Figures whose current filter decision is drop, by check (a person's drops under ``by_person``)."""
    by_person: dict[str, int] = Field(default_factory=lambda: {"keep": 0, "drop": 0})
    """Figures a person decided on (left alone by the stage)."""
    clusters: int = 0
    """Near-duplicate clusters (two or more figures)."""
    errors: int = 0
    """Figures the stage could not check (recorded with their reason; no decision)."""
    recorded: int = 0
    """Decisions this run appended (0 when nothing changed since the last run)."""
    chart_check: str = ""
    """What the chart check did, in words (ran with which classifier, or why it was skipped)."""


@dataclass(slots=True)
class _Figure:
    """What the stage reads of a figure: a full ORM row per figure was 2.8 KB of the driver's memory (138 MiB for
    50,000 figures; bench/README.md, "Scale"), this is a tenth of that."""

    id: int
    sha256: str
    width: int | None
    height: int | None
    year: int | None
    edition: str | None
    content: float = 0.0
    """Pixels of what its image shows (:attr:`ImageFeatures.content_area`), once read."""
    lossy: bool = False
    """Its image's format is lossy (a JPEG), once read: ranked lower as a cluster's kept member
    (:data:`~zuhyo.construct.filter.near_duplicates.LOSSY_STEPS`)."""


def _history(ws: Workspace) -> tuple[list[_Figure], dict[int, list[DecisionRow]]]:
    with ws.db.read() as s:
        columns = (FigureRow.id, FigureRow.sha256, FigureRow.width, FigureRow.height, FigureRow.year,
                   FigureRow.edition)
        figures = [_Figure(*row) for row in s.execute(select(*columns).order_by(FigureRow.id))]
        history: dict[int, list[DecisionRow]] = {}
        for d in s.scalars(select(DecisionRow).where(DecisionRow.stage == STAGE).order_by(DecisionRow.id)):
            s.expunge(d)
            history.setdefault(d.figure_id, []).append(d)
    return figures, history


def _read(ws: Workspace, sha: str) -> bytes | None:
    path = ws.images.path_for(sha)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def inspect_all(ws: Workspace, shas: list[str], executor: str,
                on_item: Callable[[str, str], None] | None = None,
                keep: Callable[[ImageFeatures], ImageFeatures] | None = None
                ) -> list[ImageFeatures | Unreadable | ItemError]:
    """:func:`checks.inspect_image` of each image (by sha256), mapped on ``executor`` as one streamed map (each
    image's bytes read as its task is submitted: :data:`CHUNK`, :data:`IN_FLIGHT`); ``keep`` is applied to each
    image's features in order, as soon as those of every earlier image are in (what the result holds of
    them)."""

    def progress(i: int, result: Any) -> None:
        if on_item is not None:
            on_item(shas[i], "error" if isinstance(result, ItemError | Unreadable) else "ok")

    def kept(_index: int, result: Any) -> Any:
        return keep(result) if keep is not None and isinstance(result, ImageFeatures) else result

    return map_items(inspect_image, (_read(ws, sha) for sha in shas), executor=executor, progress=progress,
                     chunksize=CHUNK, in_flight=IN_FLIGHT, keep=kept)


def _best_first(f: _Figure) -> tuple[Any, ...]:
    """Sort key: the most content first (a lossy image's ranked lower), then the least around it
    (:func:`best_first`), then latest year, then latest edition, then the first collected."""
    return (*best_first(f.width or 0, f.height or 0, f.content, f.lossy), -(f.year or 0), _neg_text(f.edition or ""),
            f.id)


def _neg_text(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def near_duplicate_decisions(figures: list[_Figure], arrays: FeatureArrays, min_score: float = DEFAULT_MIN_SCORE,
                             executor: str | None = None, read: Callable[[str], bytes] | None = None,
                             on_phase: PairProgress | None = None
                             ) -> tuple[dict[int, tuple[str, dict[str, Any]]], int]:
    """Drops (figure id -> (reason, evidence)) for every non-best member of each near-duplicate cluster, each
    verified against the figure kept (:func:`zuhyo.construct.filter.duplicate_groups.resolve_groups`), and the
    number of clusters. Figures sharing one image (same sha256) are duplicates without verification. ``arrays``
    holds the features of the figures' images, indexed in the order of their sha256; ``read(sha256)`` gives an
    image's bytes for the second look at the pairs whose thumbnails verify (without it, thumbnails alone);
    ``on_phase(phase, done, total)`` follows the candidate pairs' verification."""
    from zuhyo.construct.filter.duplicate_groups import resolve_groups

    shas = sorted({f.sha256 for f in figures})
    index = {sha: i for i, sha in enumerate(shas)}
    if len(arrays.descriptors) != len(shas):
        raise ValueError(f"features of {len(arrays.descriptors)} images for {len(shas)}")
    images = None if read is None else (lambda i: read(shas[i]))
    pairs = verified_pairs(arrays, near_duplicate_candidates(arrays), min_score, executor, images=images,
                           progress=on_phase)
    members: dict[int, list[_Figure]] = {}
    for f in sorted(figures, key=_best_first):
        members.setdefault(index[f.sha256], []).append(f)
    best_rank = {i: k for k, i in enumerate(members)}  # images by their best figure, best first
    rank = [best_rank[i] for i in range(len(shas))]

    groups = resolve_groups(len(shas), pairs, rank, lambda todo: verify_scores(arrays, todo, min_score, images),
                            min_score)
    drops: dict[int, tuple[str, dict[str, Any]]] = {}

    def drop(f: _Figure, best: _Figure, evidence: dict[str, Any]) -> None:
        reason = f"near duplicate of figure {best.id}"
        drops[f.id] = (reason, {"of": best.id, "duplicate_of": {"id": best.id, "sha256": best.sha256},
                                "reason": reason, **evidence})

    linked = set()
    for links in groups:
        best = members[links[0].kept][0]
        for link in links:
            linked.add(link.dropped)
            for f in members[link.dropped]:
                drop(f, best, {"identical": False, "score": link.score, "solid": link.solid, "region": link.region,
                               "distance": round(descriptor_distance(arrays.descriptors, link.kept, link.dropped), 4),
                               "linked": "directly" if link.verified == "candidate" else "verified against kept"})
    for fs in members.values():  # the other figures of a kept image (or of any image) with the same bytes
        if fs[0].id in drops:
            continue
        for f in fs[1:]:
            drop(f, fs[0], {"identical": True, "score": 1.0, "distance": 0.0})
    clustered = {links[0].kept for links in groups}
    count = len(groups) + sum(1 for i, fs in members.items() if len(fs) > 1 and i not in clustered | linked)
    return drops, count


def run_filter(ws: Workspace, *, min_side: int = DEFAULT_MIN_SIDE, min_pixels: int = DEFAULT_MIN_PIXELS,
               min_score: float = DEFAULT_MIN_SCORE, classifier: str = "auto", executor: str = "local",
               on_start: Callable[[int], None] | None = None,
               on_item: Callable[[str, str], None] | None = None,
               on_phase: PairProgress | None = None) -> FilterReport:
    """Run the filter stage over the whole workspace (see the module doc); ``on_item(sha256, outcome)`` follows
    the images as they are checked, ``on_phase(phase, done, total)`` the near-duplicate pairs as they are
    verified (:data:`~zuhyo.construct.filter.near_duplicates.THUMBNAIL_PHASE`, then
    :data:`~zuhyo.construct.filter.near_duplicates.SECOND_LOOK_PHASE`)."""
    params = {"min_side": min_side, "min_pixels": min_pixels, "min_score": min_score, "classifier": classifier,
              "executor": executor}
    if classifier not in ("auto", "none"):  # a classifier that cannot run fails now, not after the images
        from zuhyo.construct.filter.chart_classifier import check_classifier

        check_classifier(ws, classifier)
    report = FilterReport()
    with ws.run(STAGE, params, lock=True) as run:
        figures, history = _history(ws)
        report.checked = len(figures)
        shas = sorted({f.sha256 for f in figures})
        if on_start is not None:
            on_start(len(shas))
        # Each image's thumbnail goes to a file as its batch comes back, when the image will be compared (it passed
        # the file and resolution checks); the results keep the small features only (issue 22: bounded memory).
        with scratch_dir(ws.root, "filter-") as tmp:  # the thumbnails' file: removed, or swept after a kill
            collected = FeatureCollector(len(shas), tmp)

            def keep(r: ImageFeatures) -> ImageFeatures:
                if resolution_problem(r.width, r.height, min_side, min_pixels) is None:
                    return collected.add(r)
                return r.without_arrays()

            try:
                results = dict(zip(shas, inspect_all(ws, shas, executor, on_item, keep), strict=True))
            except BaseException:
                collected.discard()
                raise
            wanted: dict[int, tuple[str, str, dict[str, Any]]] = {}
            passed: list[_Figure] = []
            errors: list[tuple[_Figure, str]] = []
            for f in figures:
                r = results[f.sha256]
                if isinstance(r, ItemError):
                    errors.append((f, r.error))
                elif isinstance(r, Unreadable):
                    wanted[f.id] = ("drop", f"unreadable: {r.reason}", {"check": UNREADABLE})
                elif (problem := resolution_problem(r.width, r.height, min_side, min_pixels)) is not None:
                    wanted[f.id] = ("drop", problem, {"check": LOW_RESOLUTION, "width": r.width, "height": r.height})
                else:
                    f.width, f.height = r.width, r.height  # the image's true size ranks cluster members
                    f.content, f.lossy = r.content_area, r.format in LOSSY_FORMATS
                    passed.append(f)
            del results
            arrays = collected.finish()  # indexed like the passed images' sha256, sorted
            def read(sha: str) -> bytes:
                data = _read(ws, sha)
                if data is None:
                    raise RuntimeError(f"image {sha} could not be read again for the near-duplicate check")
                return data

            drops, report.clusters = (near_duplicate_decisions(passed, arrays, min_score, executor, read, on_phase)
                                      if passed else ({}, 0))
            del arrays
        for f in passed:
            if f.id in drops:
                reason, evidence = drops[f.id]
                wanted[f.id] = ("drop", reason, {"check": NEAR_DUPLICATE, **evidence})
            else:
                wanted[f.id] = ("keep", KEEP_REASON, {})
        report.recorded = _record(ws, wanted, history, errors, run.id)
        report.errors = len(errors)
        survivors = [fid for fid, (d, _, _) in wanted.items() if d == "keep"]
        report.chart_check = _chart_check(ws, survivors, classifier, executor, run.id)
        _tally(ws, report)
        run.counts = report.model_dump(exclude={"chart_check"})
    return report


def _person(past: list[DecisionRow]) -> bool:
    return any(d.decided_by.startswith("user:") for d in past)


def _record(ws: Workspace, wanted: dict[int, tuple[str, str, dict[str, Any]]], history: dict[int, list[DecisionRow]],
            errors: list[tuple[_Figure, str]], run_id: int) -> int:
    """Append the decisions that differ from the figures' current ones; record and resolve errors."""
    todo: list[Decision] = []
    for fid, (decision, reason, evidence) in sorted(wanted.items()):
        past = history.get(fid, [])
        latest = past[-1] if past else None
        if _person(past):
            continue
        if latest is not None and latest.decision == decision and latest.reason == reason:
            continue
        if latest is not None and decision == "keep" and latest.decided_by != DECIDED_BY:
            continue  # another check of the stage (the chart check) decided after this one kept it
        todo.append(Decision(figure_id=fid, stage=STAGE, decision=decision, reason=reason, decided_by=DECIDED_BY,
                             evidence=evidence))
    for start in range(0, len(todo), _WRITE_BATCH):
        batch = todo[start:start + _WRITE_BATCH]

        def write(s: Any, batch: list[Decision] = batch) -> None:
            for d in batch:
                record_decision(s, d, run_id=run_id)

        ws.db.write_retrying(write)

    def errors_write(s: Any) -> None:
        for f, message in errors:
            record_error(s, STAGE, f"figure:{f.id}", f"figure {f.id}", f"file check failed: {message}",
                         figure_id=f.id, run_id=run_id)
        for fid in wanted:
            resolve_error(s, STAGE, f"figure:{fid}")

    ws.db.write_retrying(errors_write)
    return len(todo)


def _chart_check(ws: Workspace, figure_ids: list[int], classifier: str, executor: str, run_id: int) -> str:
    """Run the chart/table check on ``figure_ids`` when a classifier is available; say what happened."""
    if classifier == "none":
        return "skipped (--classifier none)"
    try:
        from zuhyo.construct.filter import chart_classifier
    except ImportError as e:
        return f"skipped: the chart classifier is not available ({e})"
    if classifier == "auto":
        found = chart_classifier.auto_classifier(ws)
        if found is None:
            return (f"skipped: no trained chart classifier in the workspace (train one with `zuhyo filter train "
                    f"{ws.root} --labels labels.csv`, or pass --classifier llm:SPEC)")
        classifier = found
    counts = chart_classifier.run_chart_check(ws, figure_ids, classifier, executor, None, run_id=run_id)
    return (f"{classifier}: {counts.get('checked', 0)} classified ({counts.get('not_chart', 0)} not charts), "
            f"{counts.get('skipped', 0)} left as decided, {counts.get('errors', 0)} errors")


def _tally(ws: Workspace, report: FilterReport) -> None:
    """The current filter decisions, by check."""
    _, history = _history(ws)
    for past in history.values():
        latest = past[-1]
        if latest.decided_by.startswith("user:"):
            report.by_person[latest.decision] += 1
        elif latest.decision == "keep":
            report.kept += 1
        else:
            check = (latest.evidence or {}).get("check")
            key = check if check in report.dropped else NOT_CHART
            report.dropped[key] += 1
