"""The chart/table-vs-not classifier: `zuhyo filter train` on a generated corpus, the filter's chart check
(decisions, re-runs, a person's decision kept), the LLM classifier against a real local HTTP server."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

MEXT_CH5 = Path("/work/shared/data/mext_whitepaper_pdf/mext_r06_kagaku_gijutsu_innovation_hakusho_ch5.pdf")


# ---- a small real corpus: matplotlib charts and tables vs. photo-like images, textures, portraits, logos ----

def _chart(i: int) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1000 + i)
    styles = ["default", "ggplot", "bmh", "seaborn-v0_8-whitegrid", "fivethirtyeight", "grayscale"]
    kind = i % 7
    with plt.style.context(styles[(i // 7) % len(styles)]):
        fig, ax = plt.subplots(figsize=(rng.uniform(4, 8), rng.uniform(3, 6)))
        n = int(rng.integers(5, 12))
        x, y = np.arange(n), rng.uniform(1, 100, n)
        if kind == 0:
            ax.bar(x, y)
        elif kind == 1:
            ax.plot(x, y, marker="o")
            ax.plot(x, y[::-1])
        elif kind == 2:
            ax.scatter(rng.normal(size=80), rng.normal(size=80))
        elif kind == 3:
            ax.pie(y[:5], labels=[f"cat{k}" for k in range(5)])
        elif kind == 4:
            ax.barh(x, y)
            ax.bar_label(ax.containers[0], fmt="%.0f")
        elif kind == 5:
            ax.hist(rng.normal(size=400), bins=20)
        else:
            ax.axis("off")
            cells = [[f"{v:.1f}" for v in rng.uniform(0, 1000, 4)] for _ in range(n)]
            ax.table(cellText=cells, colLabels=["A", "B", "C", "D"], loc="center")
        ax.set_title(f"Figure {i}: series")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=60)
        plt.close(fig)
    return buf.getvalue()


def _smooth_noise(rng: np.random.Generator, h: int, w: int, scale: int) -> np.ndarray:
    from PIL import Image

    small = rng.normal(size=(max(2, h // scale), max(2, w // scale), 3))
    small = (small - small.min()) / (np.ptp(small) + 1e-9) * 255
    return np.asarray(Image.fromarray(np.uint8(small)).resize((w, h), Image.Resampling.BICUBIC), np.float32)


def _photo(i: int) -> bytes:
    """Photo-like: a landscape (sky gradient, textured ground), a texture, a portrait-ish blob on a blurred
    background, or blurred objects on a gradient; sensor noise and JPEG on all."""
    from PIL import Image, ImageDraw, ImageFilter

    rng = np.random.default_rng(2000 + i)
    h, w = int(rng.integers(200, 400)), int(rng.integers(260, 520))
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    base = np.stack([rng.uniform(40, 200) + 60 * yy, rng.uniform(40, 200) + 50 * xx,
                     rng.uniform(40, 200) - 40 * yy], -1)
    kind = i % 4
    if kind == 0:
        img = base + 0.5 * _smooth_noise(rng, h, w, 8) - 60 + rng.normal(0, 6, (h, w, 3))
    elif kind == 1:
        img = 0.6 * _smooth_noise(rng, h, w, 4) + 0.4 * _smooth_noise(rng, h, w, 32) + rng.normal(0, 10, (h, w, 3))
    elif kind == 2:
        img = 0.7 * _smooth_noise(rng, h, w, 16) + rng.normal(0, 4, (h, w, 3))
        cy, cx = h * rng.uniform(0.35, 0.55), w * rng.uniform(0.4, 0.6)
        r = ((yy * max(h, w) - cy) / (0.3 * h)) ** 2 + ((xx * max(h, w) - cx) / (0.2 * w)) ** 2
        skin = np.array([rng.uniform(170, 230), rng.uniform(120, 170), rng.uniform(90, 140)])
        m = np.clip(1.2 - r, 0, 1)[..., None]
        img = img * (1 - m) + (skin - 40 * r[..., None]) * m
    else:
        im = Image.fromarray(np.uint8(np.clip(base + rng.normal(0, 8, (h, w, 3)), 0, 255)))
        d = ImageDraw.Draw(im)
        for _ in range(int(rng.integers(3, 9))):
            x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
            d.ellipse([x0, y0, x0 + int(rng.integers(20, 120)), y0 + int(rng.integers(20, 120))],
                      fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
        img = np.asarray(im.filter(ImageFilter.GaussianBlur(3)), np.float32) + rng.normal(0, 6, (h, w, 3))
    buf = io.BytesIO()
    Image.fromarray(np.uint8(np.clip(img, 0, 255))).save(buf, format="JPEG", quality=int(rng.integers(60, 95)))
    return buf.getvalue()


def _logo(i: int) -> bytes:
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(3000 + i)
    s = int(rng.integers(120, 300))
    im = Image.new("RGBA", (s, s), (255, 255, 255, 0)) if i % 2 else Image.new("RGB", (s, s), (255, 255, 255))
    d = ImageDraw.Draw(im)
    c = tuple(int(v) for v in rng.integers(0, 255, 3))
    d.ellipse([s * 0.1, s * 0.1, s * 0.9, s * 0.9], fill=c)
    d.polygon([(s * 0.5, s * 0.2), (s * 0.8, s * 0.75), (s * 0.2, s * 0.75)], fill=(255, 255, 255))
    if i % 3 == 0:
        d.text((s * 0.35, s * 0.45), "ACME", fill=c)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def write_corpus(folder: Path, charts: int, photos: int, logos: int, offset: int = 0) -> dict[str, int]:
    """Write the corpus into ``folder``; {sha256: 1 chart | 0 not chart}."""
    folder.mkdir(parents=True, exist_ok=True)
    truth = {}
    for name, make, n, y in (("chart", _chart, charts, 1), ("photo", _photo, photos, 0), ("logo", _logo, logos, 0)):
        for i in range(offset, offset + n):
            data = make(i)
            (folder / f"{name}_{i:03d}.{'jpg' if name == 'photo' else 'png'}").write_bytes(data)
            truth[hashlib.sha256(data).hexdigest()] = y
    return truth


def write_labels(path: Path, truth: dict[str, int]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sha256", "label"])
        for sha, y in truth.items():
            w.writerow([sha, "chart" if y else "not_chart"])
    return path


def figure_ids(ws_root: Path) -> dict[str, int]:
    from sqlalchemy import select

    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.tables import FigureRow

    with Workspace.open(ws_root) as w, w.db.read() as s:
        return {r.sha256: r.id for r in s.scalars(select(FigureRow))}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], dict]:
    """A workspace with 84 charts/tables and 84 non-charts, labelled, and the CLI's training report."""
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.workspace import Workspace

    root = tmp_path_factory.mktemp("clf")
    truth = write_corpus(root / "train", 84, 60, 24)
    with Workspace.init(root / "ws") as w:
        collect_folder(w, root / "train")
    report = run_cli_json("filter", "train", str(root / "ws"), "--labels",
                          str(write_labels(root / "labels.csv", truth)), "--no-ocr")
    return root / "ws", truth, report


def test_train_reports_held_out_precision_and_recall_and_stores_the_model(trained: tuple[Path, dict, dict]) -> None:
    ws, truth, report = trained
    assert report["used"] == report["figures"] == len(truth) == 168 and report["errors"] == 0
    assert (report["train"], report["test"]) == (126, 42) and report["charts"] == 84
    held = report["held_out"]
    # measured 1.00 / 0.95 on seed 0 (1.00 / 1.00 on seeds 1-3): synthetic non-charts are easy; 0.9 leaves room
    assert held["precision"] >= 0.9 and held["recall"] >= 0.9, held
    model = json.loads((ws / "models" / "chart_classifier.json").read_text())
    assert model["features"][:2] == ["distinct_colours", "top8_colour_share"]
    assert not any(f.startswith("text_") for f in model["features"])  # --no-ocr
    assert len(model["weights"]) == len(model["features"]) and model["trained"]["train"] == 126
    assert model["trained"]["date"].startswith("20")


def test_chart_check_records_decisions_and_rerun_adds_nothing(trained: tuple[Path, dict, dict],
                                                              tmp_path: Path) -> None:
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.filter.chart_classifier import run_chart_check
    from zuhyo.construct.workspace import Workspace

    ws, _, _ = trained
    # unseen figures (other seeds) collected into the same workspace
    new_truth = write_corpus(tmp_path / "new", 14, 8, 6, offset=500)
    with Workspace.open(ws) as w:
        collect_folder(w, tmp_path / "new")
    ids = figure_ids(ws)
    new_ids = [ids[sha] for sha in new_truth]
    seen: list[tuple[int, str]] = []
    with Workspace.open(ws) as w:
        counts = run_chart_check(w, new_ids, "features", "local", lambda fid, outcome: seen.append((fid, outcome)))
        again = run_chart_check(w, new_ids, "features", "local", None)
        rows = _decisions(w, new_ids)
    assert counts["checked"] == 28 and counts["errors"] == 0 and counts["chart"] + counts["not_chart"] == 28
    assert sorted(f for f, _ in seen) == sorted(new_ids)
    assert again == {"checked": 0, "chart": 0, "not_chart": 0, "errors": 0, "skipped": 28}
    right = sum((rows[ids[sha]][-1].decision == "keep") == bool(y) for sha, y in new_truth.items())
    assert right >= 25, f"{right}/28 unseen figures classified right"  # measured 28/28
    d = rows[new_ids[-1]][-1]  # a logo
    assert d.stage == "filter" and d.decided_by.startswith("classifier:features@")
    assert d.decision == "drop" and d.reason.startswith("not a chart/table (photo, illustration, logo or portrait), p=")
    assert 0 <= d.evidence["probability"] < 0.5 and "edge_density" in d.evidence["features"]
    assert all(len(v) == 1 for v in rows.values())


def _decisions(w: object, ids: list[int]) -> dict[int, list]:
    from sqlalchemy import select

    from zuhyo.construct.workspace.tables import DecisionRow

    out: dict[int, list] = {}
    with w.db.read() as s:  # type: ignore[attr-defined]
        for d in s.scalars(select(DecisionRow).where(DecisionRow.figure_id.in_(ids)).order_by(DecisionRow.id)):
            out.setdefault(d.figure_id, []).append(d)
    return out


def test_a_new_model_reclassifies_but_keeps_a_persons_decision_and_other_checks_drops(
        trained: tuple[Path, dict, dict], tmp_path: Path) -> None:
    from zuhyo.construct.filter.chart_classifier import run_chart_check
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.records import record_decision
    from zuhyo.schema import Decision

    ws, truth, _ = trained
    ids = figure_ids(ws)
    charts = [ids[s] for s, y in truth.items() if y][:3]
    photos = [ids[s] for s, y in truth.items() if not y][:3]
    todo = charts + photos
    with Workspace.open(ws) as w:
        first = run_chart_check(w, todo, "features", "local", None)
    assert first["checked"] == 6
    # a person overturns the drop of a photo; another check drops a chart as a duplicate
    run_cli("decide", str(ws), str(photos[0]), "keep", "--reason", "it is a chart after all")
    with Workspace.open(ws) as w, w.db.write() as s:
        record_decision(s, Decision(figure_id=charts[0], stage="filter", decision="drop",
                                    reason="near duplicate of figure 1", decided_by="check:near_duplicates"))
    # a retrained model (other parameters: another model id) re-classifies the rest
    path = ws / "models" / "chart_classifier.json"
    saved = path.read_text()
    model = json.loads(saved)
    model["bias"] += 0.01
    path.write_text(json.dumps(model))
    try:
        with Workspace.open(ws) as w:
            again = run_chart_check(w, todo, "features", "local", None)
            rows = _decisions(w, todo)
    finally:
        path.write_text(saved)
    assert again["checked"] == 4 and again["skipped"] == 2
    assert rows[photos[0]][-1].decided_by.startswith("user:") and rows[photos[0]][-1].decision == "keep"
    assert rows[charts[0]][-1].decided_by == "check:near_duplicates"
    assert len(rows[photos[1]]) == 2 and rows[photos[1]][0].decided_by != rows[photos[1]][1].decided_by


def test_unreadable_image_is_an_error_and_the_rest_go_on(trained: tuple[Path, dict, dict], tmp_path: Path) -> None:
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.filter.chart_classifier import run_chart_check
    from zuhyo.construct.workspace import Workspace

    ws, _, _ = trained
    truth = write_corpus(tmp_path / "broken", 2, 1, 0, offset=700)
    with Workspace.open(ws) as w:
        collect_folder(w, tmp_path / "broken")
        ids = figure_ids(ws)
        shas = list(truth)
        w.images.path_for(shas[0]).unlink()  # type: ignore[union-attr]
        w.images.path_for(shas[1]).write_bytes(b"\x89PNG\r\n\x1a\n garbage")  # type: ignore[union-attr]
        counts = run_chart_check(w, [ids[s] for s in shas], "features", "local", None)
        status = json.loads(run_cli("status", str(ws), "--json").stdout)
    assert counts["errors"] == 2 and counts["checked"] == 1
    assert "filter" in json.dumps(status)


def test_no_model_unknown_and_torchvision_classifiers_fail_with_one_line(tmp_path: Path) -> None:
    from zuhyo.construct.filter.chart_classifier import ClassifierError, run_chart_check
    from zuhyo.construct.workspace import Workspace

    with Workspace.init(tmp_path / "ws") as w:
        with pytest.raises(ClassifierError, match="no chart classifier in .*zuhyo filter train"):
            run_chart_check(w, [], "features", "local", None)
        with pytest.raises(ClassifierError, match="no resnet18 chart classifier in .*--kind resnet18 --weights"):
            run_chart_check(w, [], "torchvision", "local", None)  # the alias of resnet18
        with pytest.raises(ClassifierError, match="unknown classifier 'resnet'"):
            run_chart_check(w, [], "resnet", "local", None)


def test_train_rejects_bad_labels_naming_the_line(trained: tuple[Path, dict, dict], tmp_path: Path) -> None:
    ws, truth, _ = trained
    bad = tmp_path / "bad.csv"
    sha = next(iter(truth))
    bad.write_text(f"sha256,label\n{sha},chart\n{sha},maybe\n")
    proc = run_cli("filter", "train", str(ws), "--labels", str(bad), check=False)
    assert proc.returncode == 1 and "line 3: label must be chart or not_chart, got 'maybe'" in proc.stdout + proc.stderr
    few = tmp_path / "few.csv"
    few.write_text(f"sha256,label\n{sha},chart\n")
    proc = run_cli("filter", "train", str(ws), "--labels", str(few), check=False)
    assert proc.returncode == 1 and "at least 2 readable figures of each class" in proc.stdout + proc.stderr


def test_ocr_text_density_features_when_rapidocr_is_installed() -> None:
    pytest.importorskip("rapidocr", reason="RapidOCR (the [ocr] extra) is not installed")
    from zuhyo.construct.filter.chart_features import feature_names, image_features

    names = feature_names(True)
    table, photo = image_features((_chart(6), True)), image_features((_photo(1), True))
    t, p = dict(zip(names, table, strict=True)), dict(zip(names, photo, strict=True))
    assert t["text_boxes"] > np.log1p(10) and t["text_area_share"] > 0.02  # a table of numbers is mostly text
    assert p["text_boxes"] < t["text_boxes"]


# ---- the LLM classifier, against a real local OpenAI-compatible server ----

def test_llm_classifier_valid_fenced_invalid_and_refusal_replies(fake_server, tmp_path: Path) -> None:
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.filter.chart_classifier import run_chart_check
    from zuhyo.construct.workspace import Workspace

    folder = tmp_path / "imgs"
    folder.mkdir()
    names = {"a.png": _chart(0), "b.jpg": _photo(0), "c.png": _chart(1), "d.png": _logo(0)}
    for n, data in names.items():
        (folder / n).write_bytes(data)
    (tmp_path / "captions.csv").write_text("file,caption\na.png,CAP-A\nb.jpg,CAP-B\nc.png,CAP-C\nd.png,CAP-D\n")
    server = fake_server(answers={
        "CAP-A": '{"chart": true, "kind": "bar chart"}',
        "CAP-B": '```json\n{"chart": false, "kind": "photo"}\n```',
        "CAP-C": '{"chart": yes, "kind": "line chart"',
        "CAP-D": "I'm sorry, but I can't help with identifying this image.",
    })
    spec = f"llm:openai:vlm@{server.base_url}"
    with Workspace.init(tmp_path / "ws") as w:
        collect_folder(w, folder, captions=tmp_path / "captions.csv")
        ids = {sha: fid for sha, fid in figure_ids(tmp_path / "ws").items()}
        by_name = {n: ids[hashlib.sha256(d).hexdigest()] for n, d in names.items()}
        counts = run_chart_check(w, list(by_name.values()), spec, "local", None)
        rows = _decisions(w, list(by_name.values()))
        requests = server.state.requests
        again = run_chart_check(w, list(by_name.values()), spec, "local", None)
    assert counts == {"checked": 2, "chart": 1, "not_chart": 1, "errors": 2, "skipped": 0}
    assert requests == 1 + 1 + 3 + 3  # invalid replies asked 3 times, then an error: never guessed
    assert rows[by_name["a.png"]][0].decision == "keep"
    b = rows[by_name["b.jpg"]][0]
    assert b.decision == "drop" and b.reason.startswith("not a chart/table (photo)")
    assert b.decided_by.startswith("classifier:llm@openai:vlm@") and b.evidence["kind"] == "photo"
    assert by_name["c.png"] not in rows and by_name["d.png"] not in rows
    # the re-run asks only about the two errors
    assert again["skipped"] == 2 and again["errors"] == 2 and server.state.requests == requests + 6


# ---- real data: the MEXT chapter 5 PDF (a portrait, a QR code, icons ... and one bar chart) ----

@pytest.mark.skipif(not MEXT_CH5.is_file(), reason=f"real data absent: {MEXT_CH5}")
def test_mext_bar_chart_is_kept_by_the_model_trained_on_the_generated_corpus(trained: tuple[Path, dict, dict]) -> None:
    """The chapter's stacked bar chart (497×447, CMYK) is a chart to the pixel-feature model trained on the
    generated corpus. Measured limitation (docs/build.md): the same model also calls the chapter's flat icons
    (portrait silhouettes 68×82, the mascot, the QR code) charts, p 0.95-1.0; with RapidOCR text density the
    portraits and the mascot fall to 0.30-0.49, and labels from one's own corpus are what fixes it."""
    import pymupdf

    from zuhyo.construct.filter.chart_features import image_features
    from zuhyo.construct.filter.chart_model import ChartModel

    ws, _, _ = trained
    model = ChartModel.load(ws / "models" / "chart_classifier.json")
    doc = pymupdf.open(MEXT_CH5)
    images = {}
    for page in doc:
        for info in page.get_images(full=True):
            pix = pymupdf.Pixmap(doc, info[0])
            images[(pix.width, pix.height)] = pymupdf.Pixmap(pymupdf.csRGB, pix).tobytes("png")
    assert (497, 447) in images and (68, 82) in images, sorted(images)
    p_chart = float(model.probabilities([image_features((images[(497, 447)], False))])[0])
    assert p_chart >= 0.9


def test_a_model_trained_with_ocr_needs_rapidocr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from zuhyo.construct.filter.chart_classifier import ClassifierError, run_chart_check
    from zuhyo.construct.filter.chart_features import feature_names
    from zuhyo.construct.filter.chart_model import ChartModel
    from zuhyo.construct.workspace import Workspace

    names = list(feature_names(True))
    with Workspace.init(tmp_path / "ws") as w:
        ChartModel(names, [0.0] * len(names), [1.0] * len(names), [0.1] * len(names), 0.0).save(
            w.root / "models" / "chart_classifier.json")
        monkeypatch.setitem(sys.modules, "rapidocr", None)
        with pytest.raises(ClassifierError, match=r"trained with OCR features: pip install 'zuhyo\[ocr\]'"):
            run_chart_check(w, [], "features", "local", None)
