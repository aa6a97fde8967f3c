"""Chart/table vs. not (photographs, illustrations, logos, portraits): training and the filter's check.

DomainCQA §4.1 keeps only charts from its arXiv figure pool with a ResNet-18 chart-vs-other classifier (94.45 %
precision); HakushoBench §3.1 removes photographs (18,539 images → 5,903 candidates with the low-resolution and
near-duplicate filters). Classifiers (``--classifier``):

- ``features`` (default): the workspace's own light model (:mod:`chart_model`) on CPU image features
  (:mod:`chart_features`), trained by ``zuhyo filter train WS --labels labels.csv``; features are computed with
  :func:`zuhyo.construct.executor.map_items`, so on local processes or Ray workers.
- ``llm:<model spec>``: a vision-language model through the model backends (:mod:`chart_llm`).
- ``resnet18`` (alias ``torchvision``): DomainCQA's ResNet-18, written in plain torch (:mod:`chart_resnet`, no
  torchvision) and fine-tuned from a local torchvision ImageNet checkpoint by ``zuhyo filter train WS --labels
  labels.csv --kind resnet18 --weights resnet18-f37072fd.pth``; needs torch (the ``[hf]`` extra).

``auto`` (the filter's default) uses the ``features`` model when the workspace has one, else the ``resnet18``
model when it has that, else skips the check (:func:`auto_classifier`).

Every verdict is a decision in stage ``filter`` (keep or drop, with the probability and features as evidence),
``decided_by`` ``classifier:<name>@<model id>``. A figure a person has decided on in the stage is never
re-classified, a figure another filter check dropped is left dropped, and a re-run with the same model adds nothing.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from zuhyo.construct.filter.chart_model import MODEL_FILE, RESNET_FILE, ChartModel, ClassifierError
from zuhyo.construct.workspace.records import record_decision, record_error, resolve_error
from zuhyo.construct.workspace.tables import DecisionRow, FigureRow
from zuhyo.schema import Decision

if TYPE_CHECKING:
    from zuhyo.construct.filter.chart_llm import Verdict
    from zuhyo.construct.workspace import Workspace

STAGE = "filter"
THRESHOLD = 0.5
#: Figures read, classified and recorded per batch (bounds memory; a crash loses at most one batch's verdicts).
BATCH = 256
NOT_CHART = "photo, illustration, logo or portrait"
ProgressFn = Callable[[int, str], None]
"""``progress(figure_id, outcome)`` with outcome chart | not_chart | error | skipped."""


def model_path(ws: Workspace) -> Path:
    return ws.root / MODEL_FILE


def resnet_path(ws: Workspace) -> Path:
    return ws.root / RESNET_FILE


def auto_classifier(ws: Workspace) -> str | None:
    """What ``--classifier auto`` uses: the features model, else a fine-tuned resnet18, else nothing."""
    if model_path(ws).is_file():
        return "features"
    if resnet_path(ws).is_file():
        return "resnet18"
    return None


def load_model(ws: Workspace) -> ChartModel:
    path = model_path(ws)
    if not path.is_file():
        raise ClassifierError(f"no chart classifier in {path}: train one with `zuhyo filter train {ws.root} "
                              "--labels labels.csv`, or use --classifier llm:SPEC")
    try:
        return ChartModel.load(path)
    except ValueError as e:
        raise ClassifierError(str(e)) from None


def image_bytes(ws: Workspace, sha: str) -> bytes:
    path = ws.images.path_for(sha)
    if path is None:
        raise FileNotFoundError(f"image {sha[:12]} is not in the image store")
    return path.read_bytes()


def _pending(ws: Workspace, figure_ids: list[int], decided_by: str) -> tuple[list[tuple[int, str, str]], list[int]]:
    """(figure id, sha256, caption) of the figures to classify, and the ids left alone (see the module doc)."""
    todo, skipped = [], []
    with ws.db.read() as s:
        rows = {r.id: r for r in s.scalars(select(FigureRow).where(FigureRow.id.in_(figure_ids)))}
        history: dict[int, list[DecisionRow]] = {}
        for d in s.scalars(select(DecisionRow).where(DecisionRow.stage == STAGE, DecisionRow.figure_id.in_(figure_ids))
                           .order_by(DecisionRow.id)):
            history.setdefault(d.figure_id, []).append(d)
        for fid in figure_ids:
            row = rows.get(fid)
            if row is None:
                raise ClassifierError(f"figure {fid} is not in the workspace")
            past = history.get(fid, [])
            latest = past[-1] if past else None
            if (any(d.decided_by.startswith("user:") for d in past)
                    or any(d.decided_by == decided_by for d in past)
                    or (latest is not None and latest.decision == "drop"
                        and not latest.decided_by.startswith("classifier:"))):
                skipped.append(fid)
            else:
                todo.append((fid, row.sha256, row.caption or ""))
    return todo, skipped


def _record(ws: Workspace, fid: int, decision: Decision | None, error: str | None, run_id: int | None) -> None:
    key = f"chart:{fid}"

    def write(s: Any) -> None:
        if decision is not None:
            record_decision(s, decision, run_id=run_id)
            resolve_error(s, STAGE, key)
        else:
            record_error(s, STAGE, key, f"figure {fid}", f"chart check: {error}", figure_id=fid, run_id=run_id)

    ws.db.write_retrying(write)


def run_chart_check(ws: Workspace, figure_ids: list[int], classifier: str = "features", executor: str = "local",
                    progress: ProgressFn | None = None, *, run_id: int | None = None) -> dict[str, int]:
    """Classify ``figure_ids`` chart/table vs. not and record a keep/drop decision for each.

    Returns counts: checked (verdicts recorded now), chart, not_chart, errors, skipped (a person's decision,
    another check's drop, or already decided by this model).
    """
    kind = _kind(classifier)
    if kind == "features":
        return _run_features(ws, figure_ids, executor, progress, run_id)
    if kind == "llm":
        return _run_llm(ws, figure_ids, classifier[4:].strip(), progress, run_id)
    return _run_resnet(ws, figure_ids, progress, run_id)


def _kind(classifier: str) -> str:
    """features | resnet18 | llm for a ``--classifier`` spec (``torchvision`` is resnet18's alias)."""
    if classifier == "features":
        return "features"
    if classifier in ("resnet18", "torchvision"):
        return "resnet18"
    if classifier.startswith("llm:") and classifier[4:].strip():
        return "llm"
    raise ClassifierError(f"unknown classifier {classifier!r} (use features, resnet18, llm:SPEC)")


def check_classifier(ws: Workspace, classifier: str) -> None:
    """Raise :class:`ClassifierError` now when ``classifier`` cannot run on ``ws`` (unknown spec, no trained
    model, no torch), so that a stage says so before it spends minutes on the images."""
    kind = _kind(classifier)
    if kind == "features":
        load_model(ws)
    elif kind == "resnet18":
        _require_resnet(ws)
        _torch_modules()


def _require_resnet(ws: Workspace) -> None:
    if not resnet_path(ws).is_file():
        raise ClassifierError(f"no resnet18 chart classifier in {resnet_path(ws)}: fine-tune one with `zuhyo filter "
                              f"train {ws.root} --labels labels.csv --kind resnet18 --weights resnet18-f37072fd.pth`")


def _counts(skipped: list[int], progress: ProgressFn | None) -> dict[str, int]:
    for fid in skipped:
        if progress is not None:
            progress(fid, "skipped")
    return {"checked": 0, "chart": 0, "not_chart": 0, "errors": 0, "skipped": len(skipped)}


def _tally(counts: dict[str, int], fid: int, outcome: str, progress: ProgressFn | None) -> None:
    counts["errors" if outcome == "error" else outcome] += 1
    if outcome != "error":
        counts["checked"] += 1
    if progress is not None:
        progress(fid, outcome)


def _run_features(ws: Workspace, figure_ids: list[int], executor: str, progress: ProgressFn | None,
                  run_id: int | None) -> dict[str, int]:
    from zuhyo.construct.executor import ItemError, map_items
    from zuhyo.construct.filter.chart_features import image_features

    model = load_model(ws)
    with_ocr = any(f.startswith("text_") for f in model.features)
    if with_ocr:
        from zuhyo.construct.filter.chart_features import ocr_available

        if not ocr_available():
            raise ClassifierError(f"the chart classifier {model_path(ws)} was trained with OCR features: "
                                  "pip install 'zuhyo[ocr]', or retrain with --no-ocr")
    by = f"classifier:features@{model.model_id}"
    todo, skipped = _pending(ws, figure_ids, by)
    counts = _counts(skipped, progress)
    for start in range(0, len(todo), BATCH):
        batch = todo[start:start + BATCH]
        items: list[tuple[bytes, bool] | None] = []
        read_errors: dict[int, str] = {}
        for fid, sha, _ in batch:
            try:
                items.append((image_bytes(ws, sha), with_ocr))
            except OSError as e:
                read_errors[fid] = f"{type(e).__name__}: {e}"
                items.append(None)
        vectors = map_items(image_features, [it for it in items if it is not None], executor=executor)
        it = iter(vectors)
        for (fid, _, _), item in zip(batch, items, strict=True):
            vec = next(it) if item is not None else None
            if vec is None or isinstance(vec, ItemError):
                _record(ws, fid, None, read_errors.get(fid) or str(vec), run_id)
                _tally(counts, fid, "error", progress)
                continue
            p = float(model.probabilities([vec])[0])
            _verdict(ws, fid, p, by, {"features": dict(zip(model.features, vec, strict=True))}, counts, progress,
                     run_id)
    return counts


def _verdict(ws: Workspace, fid: int, p: float, by: str, evidence: dict[str, Any], counts: dict[str, int],
             progress: ProgressFn | None, run_id: int | None) -> None:
    """Record a probability classifier's keep/drop for ``fid`` (p = p(chart)) and count it."""
    chart = p >= THRESHOLD
    reason = f"chart/table, p={p:.2f}" if chart else f"not a chart/table ({NOT_CHART}), p={1 - p:.2f}"
    decision = Decision(figure_id=fid, stage=STAGE, decision="keep" if chart else "drop", reason=reason,
                        decided_by=by, evidence={"probability": round(p, 4), **evidence})
    _record(ws, fid, decision, None, run_id)
    _tally(counts, fid, "chart" if chart else "not_chart", progress)


def _torch_modules() -> Any:
    try:
        from zuhyo.construct.filter import chart_resnet
    except ImportError as e:
        raise ClassifierError(f"the resnet18 classifier needs torch ({e}): pip install 'zuhyo[hf]'") from None
    return chart_resnet


def _run_resnet(ws: Workspace, figure_ids: list[int], progress: ProgressFn | None,
                run_id: int | None) -> dict[str, int]:
    _require_resnet(ws)
    chart_resnet = _torch_modules()
    import numpy as np
    import torch

    net, size, mid = chart_resnet.load(ws.root)
    by = f"classifier:resnet18@{mid}"
    todo, skipped = _pending(ws, figure_ids, by)
    counts = _counts(skipped, progress)
    step = chart_resnet.BATCH
    for start in range(0, len(todo), step):
        ok: list[tuple[int, np.ndarray]] = []
        for fid, sha, _ in todo[start:start + step]:
            try:
                ok.append((fid, chart_resnet.preprocess(image_bytes(ws, sha), size)))
            except (OSError, ValueError) as e:
                _record(ws, fid, None, f"{type(e).__name__}: {e}", run_id)
                _tally(counts, fid, "error", progress)
        if ok:
            probs = chart_resnet.probabilities(net, torch.from_numpy(np.stack([a for _, a in ok])))
            for (fid, _), p in zip(ok, probs, strict=True):
                _verdict(ws, fid, float(p), by, {"image_size": size}, counts, progress, run_id)
    return counts


def _run_llm(ws: Workspace, figure_ids: list[int], spec: str, progress: ProgressFn | None,
             run_id: int | None, backend: Any = None) -> dict[str, int]:
    from zuhyo.construct.filter.chart_llm import PROMPT, classify_all
    from zuhyo.prompts import load_prompt

    by = f"classifier:llm@{spec}#prompt-v{load_prompt(PROMPT).version}"
    todo, skipped = _pending(ws, figure_ids, by)
    counts = _counts(skipped, progress)

    def done(fid: int, result: Verdict | Exception) -> None:
        from zuhyo.construct.filter.chart_llm import Verdict

        if not isinstance(result, Verdict):
            _record(ws, fid, None, f"{type(result).__name__}: {result}", run_id)
            _tally(counts, fid, "error", progress)
            return
        reason = "chart/table" if result.chart else f"not a chart/table ({result.kind})"
        decision = Decision(figure_id=fid, stage=STAGE, decision="keep" if result.chart else "drop",
                            reason=f"{reason}, {spec}", decided_by=by,
                            evidence={"chart": result.chart, "kind": result.kind, "reply": result.reply[:500]})
        _record(ws, fid, decision, None, run_id)
        _tally(counts, fid, "chart" if result.chart else "not_chart", progress)

    for start in range(0, len(todo), BATCH):
        items: list[tuple[int, bytes, str]] = []
        for fid, sha, caption in todo[start:start + BATCH]:
            try:
                items.append((fid, image_bytes(ws, sha), caption))
            except OSError as e:
                done(fid, e)
        classify_all(spec, items, on_done=done, backend=backend)
    return counts


def read_labels(path: Path) -> list[tuple[str, int]]:
    """``(figure ref, 1 chart | 0 not_chart)`` rows of a labels CSV (columns figure_id or sha256, and label)."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            cols = {c.strip().lower(): c for c in reader.fieldnames or []}
            ref_col = cols.get("figure_id") or cols.get("figure") or cols.get("id") or cols.get("sha256")
            label_col = cols.get("label")
            if ref_col is None or label_col is None:
                raise ClassifierError(f"{path}: needs a figure_id (or sha256) column and a label column")
            out = []
            for n, row in enumerate(reader, start=2):
                ref, label = (row.get(ref_col) or "").strip(), (row.get(label_col) or "").strip().lower()
                if label in ("chart", "table"):
                    out.append((ref, 1))
                elif label in ("not_chart", "not-chart", "other"):
                    out.append((ref, 0))
                else:
                    raise ClassifierError(f"{path} line {n}: label must be chart or not_chart, got {label!r}")
    except OSError as e:
        raise ClassifierError(f"cannot read labels {path}: {e}") from None
    return out


def _labelled(ws: Workspace, labels: Path) -> tuple[int, int, list[tuple[int, bytes, int]], list[str]]:
    """The labels CSV's row count, the figures it names, (figure id, image bytes, label) of each labelled figure
    (a figure labelled twice: the last label counts) and the figures whose image cannot be read."""
    from zuhyo.construct.workspace.db import WorkspaceError
    from zuhyo.construct.workspace.queries import resolve_figure

    rows = read_labels(labels)
    refs: dict[int, tuple[str, int]] = {}
    with ws.db.read() as s:
        for ref, y in rows:
            try:
                row = resolve_figure(s, ref)
            except WorkspaceError as e:
                raise ClassifierError(f"{labels}: {e}") from None
            refs[row.id] = (row.sha256, y)
    items, errors = [], []
    for fid, (sha, y) in refs.items():
        try:
            items.append((fid, image_bytes(ws, sha), y))
        except OSError as e:
            errors.append(f"figure {fid}: {e}")
    return len(rows), len(refs), items, errors


def _check_test_fraction(test_fraction: float) -> None:
    if not 0.0 < test_fraction < 1.0:
        raise ClassifierError(f"--test-fraction must be between 0 and 1, got {test_fraction}")


def _enough(labels: Path, y_ok: list[int]) -> None:
    if len(set(y_ok)) < 2 or min(y_ok.count(0), y_ok.count(1)) < 2:
        raise ClassifierError(f"{labels}: training needs at least 2 readable figures of each class "
                              f"(chart {y_ok.count(1)}, not_chart {y_ok.count(0)})")


def train_chart_classifier(ws: Workspace, labels: Path, *, executor: str = "local", ocr: bool = False,
                           test_fraction: float = 0.25, seed: int = 0,
                           progress: Callable[[int, Any], None] | None = None) -> dict[str, Any]:
    """Train the ``features`` classifier on the labelled figures and store it in ``WS/models/``.

    ``ocr``: add RapidOCR's text density (slow: seconds per image). Returns the report: counts, held-out
    precision/recall of the chart class (seeded stratified split), the model file and id. Figures whose image
    cannot be read are counted in ``errors`` and left out.
    """
    import numpy as np

    from zuhyo.construct.executor import ItemError, map_items
    from zuhyo.construct.filter.chart_features import feature_names, image_features, ocr_available
    from zuhyo.construct.filter.chart_model import train_and_evaluate

    _check_test_fraction(test_fraction)
    with_ocr = ocr
    if with_ocr and not ocr_available():
        raise ClassifierError("--ocr needs RapidOCR: pip install 'zuhyo[ocr]'")
    n_rows, n_figures, labelled, errors = _labelled(ws, labels)
    vectors = map_items(image_features, [(data, with_ocr) for _, data, _ in labelled], executor=executor,
                        progress=progress)
    x = [v for v in vectors if not isinstance(v, ItemError)]
    y_ok = [y for v, (_, _, y) in zip(vectors, labelled, strict=True) if not isinstance(v, ItemError)]
    errors += [f"figure {fid}: {v}" for (fid, _, _), v in zip(labelled, vectors, strict=True)
               if isinstance(v, ItemError)]
    _enough(labels, y_ok)
    model, report = train_and_evaluate(np.array(x, float), np.array(y_ok), list(feature_names(with_ocr)),
                                       test_fraction=test_fraction, seed=seed)
    path = model_path(ws)
    model.save(path)
    return {"kind": "features", "labelled": n_rows, "figures": n_figures, "used": len(x), "errors": len(errors),
            "error_items": errors[:20], **report, "ocr": with_ocr,
            "model": str(path), "model_id": model.model_id}


def train_resnet_classifier(ws: Workspace, labels: Path, weights: Path, *, epochs: int = 5, train_all: bool = False,
                            image_size: int = 224, test_fraction: float = 0.25, seed: int = 0) -> dict[str, Any]:
    """Fine-tune the ``resnet18`` classifier from the torchvision checkpoint ``weights`` on the labelled figures
    (:func:`chart_resnet.fine_tune`) and store it in ``WS/models/chart_resnet18.pt``. Returns the report like
    :func:`train_chart_classifier`'s; unreadable or undecodable images are counted in ``errors`` and left out."""
    import time

    _check_test_fraction(test_fraction)
    if epochs < 1 or image_size < 32:
        raise ClassifierError(f"--epochs must be at least 1 and --image-size at least 32 (got {epochs}, {image_size})")
    if not weights.is_file():
        raise ClassifierError(f"weights file {weights} does not exist (a torchvision resnet18 checkpoint, "
                              "e.g. resnet18-f37072fd.pth)")
    chart_resnet = _torch_modules()
    started = time.monotonic()
    net = chart_resnet.pretrained(weights)  # a wrong file fails before the images are read
    n_rows, n_figures, labelled, errors = _labelled(ws, labels)
    arrays, y_ok = [], []
    for fid, data, y in labelled:
        try:
            arrays.append(chart_resnet.preprocess(data, image_size))
            y_ok.append(y)
        except ValueError as e:
            errors.append(f"figure {fid}: {e}")
    _enough(labels, y_ok)
    net, report = chart_resnet.fine_tune(net, arrays, y_ok, epochs=epochs, train_all=train_all, seed=seed,
                                         test_fraction=test_fraction)
    info = {"weights": str(weights.resolve()), "weights_sha256": chart_resnet.sha256_file(weights),
            "image_size": image_size, "labelled": n_rows, "figures": n_figures,
            "used": len(arrays), "errors": len(errors), **report,
            "seconds": round(time.monotonic() - started, 1)}
    meta = chart_resnet.save(net, ws.root, info)
    return {"kind": "resnet18", **info, "error_items": errors[:20], "model": str(resnet_path(ws)),
            "model_id": meta["model_id"]}
