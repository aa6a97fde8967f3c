"""`zuhyo filter WS` on SQLite: file checks, minimum resolution, near duplicates among real matplotlib charts
(same-kind charts with other data must stay apart; resized/recompressed/cropped/retitled copies must cluster),
person overrides, re-run idempotence, the --json shape."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import run_cli, run_cli_json
from postgres_cluster import PostgresCluster, postgres  # noqa: F401 - the session fixture

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("matplotlib", reason="the test corpus is rendered with matplotlib")

ROOT = Path(__file__).resolve().parents[1]


def bench_module(name: str) -> ModuleType:
    """bench/NAME.py, loaded from its file once and registered by its name (the generators import one another
    by module name)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def chart_corpus() -> ModuleType:
    """bench/chart_corpus.py (the benchmark's generator), loaded from its file."""
    return bench_module("chart_corpus")


# Charts 0, 60 and 120 are all bar charts in the default style (kind = i % 10, style = i // 10 % 6) that differ
# only in their data; 4 and 64 are pies, 8 and 68 box plots. Each of 0, 64 and 8 gets two near duplicates.
ORIGINALS = (0, 60, 120, 4, 64, 8, 68, 13)
COPIES = {"copy_0a": (0, 101), "copy_0b": (0, 202), "copy_64": (64, 303), "copy_8": (8, 404), "copy_8b": (8, 505)}


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from PIL import Image

    cc = chart_corpus()
    folder = tmp_path_factory.mktemp("charts")
    for i in ORIGINALS:
        (folder / f"chart_{i:03d}.png").write_bytes(cc.render_chart(i))
    for name, (original, seed) in COPIES.items():
        (folder / f"{name}.jpg").write_bytes(cc.near_duplicate(original, seed))
    small = Image.open(io.BytesIO(cc.render_chart(2))).resize((120, 90))
    small.save(folder / "small.png")
    return folder


@pytest.fixture
def ws(tmp_path: Path, images: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    report = run_cli_json("collect", "folder", str(path), str(images))
    assert report["errors"] == 0
    return path


def _figures(ws: Path) -> dict[str, dict]:
    return {Path(f["locator"]).stem: f for f in run_cli_json("figures", str(ws))["figures"]}


def _filter_decision(fig: dict, ws: Path) -> dict:
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.queries import _current_decisions

    with Workspace.open(ws) as w, w.db.read() as s:
        rows = [r for r in s.scalars(_current_decisions()) if r.figure_id == fig["id"] and r.stage == "filter"]
        assert len(rows) == 1, f"figure {fig['locator']} has {len(rows)} current filter decisions"
        return {"decision": rows[0].decision, "reason": rows[0].reason, "evidence": rows[0].evidence,
                "by": rows[0].decided_by}


def test_filter_drops_copies_small_and_corrupt_images_keeps_same_kind_charts(ws: Path, tmp_path: Path):
    figs = _figures(ws)
    # A stored image damaged on disk after collection: truncated in place.
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        path = w.images.path_for(figs["chart_013"]["sha256"])
        assert path is not None
        data = path.read_bytes()
        path.chmod(0o644)
        path.write_bytes(data[: len(data) // 3])

    page = tmp_path / "review" / "near-duplicates.html"
    report = run_cli_json("filter", str(ws), "--classifier", "none", "--review-html", str(page))
    assert set(report) >= {"checked", "kept", "dropped", "clusters", "errors"}
    assert set(report["dropped"]) == {"low_resolution", "unreadable", "near_duplicate", "not_chart"}
    assert report["checked"] == len(figs) == 14
    assert report["dropped"] == {"low_resolution": 1, "unreadable": 1, "near_duplicate": 5, "not_chart": 0}
    assert report["clusters"] == 3
    assert report["kept"] == 7 and report["errors"] == 0

    decisions = {name: _filter_decision(f, ws) for name, f in figs.items()}
    # Bar charts of one kind and style with other data are not duplicates of each other.
    for name in ("chart_060", "chart_120", "chart_004", "chart_068"):
        assert decisions[name]["decision"] == "keep", (name, decisions[name])
    assert decisions["small"]["decision"] == "drop" and "low resolution: 120x90" in decisions["small"]["reason"]
    assert decisions["chart_013"]["decision"] == "drop"
    assert decisions["chart_013"]["reason"].startswith("unreadable: ")
    # Each cluster keeps exactly one member (the PNG original: a JPEG copy, resized 0.6-1.4x, would be kept only
    # with more than twice its pixels); the others name it, with the verification evidence.
    for members in (("chart_000", "copy_0a", "copy_0b"), ("chart_064", "copy_64"), ("chart_008", "copy_8", "copy_8b")):
        kept = [m for m in members if decisions[m]["decision"] == "keep"]
        assert kept == [members[0]], (members, decisions)
        best = figs[kept[0]]
        assert all(figs[m]["width"] * figs[m]["height"] < 2 * best["width"] * best["height"] for m in members)
        for m in members:
            if m != kept[0]:
                d = decisions[m]
                assert d["reason"] == f"near duplicate of figure {best['id']}"
                assert d["evidence"]["check"] == "near_duplicate" and d["evidence"]["of"] == best["id"]
                assert "distance" in d["evidence"]
                # Verified against the kept one itself (never joined through another member, issue 22): a
                # candidate pair, or a pair scored when the cluster was resolved.
                assert d["evidence"]["score"] >= 0.86 and d["evidence"]["solid"] <= 3
                assert d["evidence"]["linked"] in ("directly", "verified against kept")
                assert d["by"] == "stage:filter"

    listed = run_cli_json("figures", str(ws), "--stage", "filter", "--decision", "drop")
    assert listed["count"] == 7
    # Each drop says why, and a near duplicate names the figure it duplicates (id and sha256) with the score.
    shown = {f["id"]: f for f in listed["figures"]}
    assert shown[figs["small"]["id"]]["decision"]["reason"].startswith("low resolution")
    assert "duplicate_of" not in shown[figs["small"]["id"]]
    clusters = {}  # kept figure -> the dropped ones
    for members in (("chart_000", "copy_0a", "copy_0b"), ("chart_064", "copy_64"), ("chart_008", "copy_8", "copy_8b")):
        kept = next(m for m in members if decisions[m]["decision"] == "keep")
        best = figs[kept]
        clusters[best["id"]] = sorted(figs[m]["id"] for m in members if m != kept)
        for m in members:
            if m != kept:
                dup = shown[figs[m]["id"]]["duplicate_of"]
                assert (dup["id"], dup["sha256"]) == (best["id"], best["sha256"])
                assert dup["score"] >= 0.86 and dup["reason"] == f"near duplicate of figure {best['id']}"

    # The review page shows each cluster: the kept figure, then its dropped figures, with images that load.
    import re

    text = page.read_text()
    sections = re.findall(r'<section id="cluster-(\d+)">(.*?)</section>', text, flags=re.S)
    assert sorted(int(k) for k, _ in sections) == sorted(clusters)
    for kept_id, body in sections:
        assert re.findall(r"<b>(?:kept|dropped) figure (\d+)</b>", body)[0] == kept_id
        assert sorted(map(int, re.findall(r"<b>dropped figure (\d+)</b>", body))) == clusters[int(kept_id)]
        sources = re.findall(r'<img src="([^"]+)"', body)
        assert len(sources) == 1 + len(clusters[int(kept_id)])
        assert all((page.parent / src).is_file() for src in sources)
        assert "zuhyo decide" in body


def test_rerun_records_nothing_new_and_person_decisions_stand(ws: Path, images: Path, tmp_path: Path):
    first = run_cli_json("filter", str(ws), "--classifier", "none")
    assert first["recorded"] == first["checked"] == 14
    again = run_cli_json("filter", str(ws), "--classifier", "none")
    assert again["recorded"] == 0
    assert {k: again[k] for k in ("kept", "dropped", "clusters")} == {k: first[k] for k in ("kept", "dropped",
                                                                                           "clusters")}

    figs = _figures(ws)
    dup = next(n for n in ("copy_0a", "copy_0b", "chart_000") if _filter_decision(figs[n], ws)["decision"] == "drop")
    run_cli("decide", str(ws), str(figs[dup]["id"]), "keep", "--reason", "a different edition, worth keeping")
    run_cli("decide", str(ws), str(figs["chart_060"]["id"]), "drop", "--reason", "axis labels unreadable")
    after = run_cli_json("filter", str(ws), "--classifier", "none")
    assert after["recorded"] == 0
    assert after["by_person"] == {"keep": 1, "drop": 1}
    assert _filter_decision(figs[dup], ws)["decision"] == "keep"
    assert _filter_decision(figs["chart_060"], ws)["by"].startswith("user:")
    status = {f["id"]: f["status"] for f in run_cli_json("figures", str(ws))["figures"]}
    assert status[figs[dup]["id"]] == "kept" and status[figs["chart_060"]["id"]] == "dropped"

    # A figure collected since the last run is checked against all the others.
    cc = chart_corpus()
    more = tmp_path / "more"
    more.mkdir()
    (more / "late_copy_120.jpg").write_bytes(cc.near_duplicate(120, 606))
    run_cli_json("collect", "folder", str(ws), str(more))
    late = run_cli_json("filter", str(ws), "--classifier", "none")
    assert late["recorded"] >= 1 and late["dropped"]["near_duplicate"] == after["dropped"]["near_duplicate"] + 1
    new = _figures(ws)["late_copy_120"]
    decided = _filter_decision(new, ws)
    if decided["decision"] == "drop":
        assert decided["reason"] == f"near duplicate of figure {figs['chart_120']['id']}"
    else:  # the copy is larger than its original: the original is dropped in its favour
        assert _filter_decision(figs["chart_120"], ws)["reason"] == f"near duplicate of figure {new['id']}"


def test_min_side_and_min_pixels_options(ws: Path):
    report = run_cli_json("filter", str(ws), "--classifier", "none", "--min-side", "700")
    # Originals are 800x600 (shorter side 600), so all but the enlarged copies fail --min-side 700.
    assert report["dropped"]["low_resolution"] >= 8
    figs = _figures(ws)
    reason = _filter_decision(figs["chart_060"], ws)["reason"]
    assert reason == "low resolution: 800x600, shorter side under 700 px"
    report = run_cli_json("filter", str(ws), "--classifier", "none", "--min-side", "10", "--min-pixels", "500000")
    assert _filter_decision(figs["chart_060"], ws)["reason"] == \
        "low resolution: 800x600 = 480,000 pixels, under 500,000"
    assert _filter_decision(figs["small"], ws)["decision"] == "drop"


def test_filter_run_is_the_default_subcommand_and_says_when_chart_check_is_skipped(ws: Path):
    done = run_cli("filter", "run", str(ws))
    out = done.stdout  # the summary is the result: stdout
    assert "chart check: skipped: no trained chart classifier" in out
    assert "figures checked" in out
    # The progress (stderr) follows the images, then the near-duplicate pairs phase by phase.
    assert "checking images" in done.stderr and "14/14" in done.stderr
    assert "comparing thumbnails" in done.stderr and "second looks" in done.stderr


def test_filter_on_postgres(postgres: PostgresCluster, images: Path, tmp_path: Path):  # noqa: F811
    path = tmp_path / "pgws"
    run_cli("init", str(path), "--db", postgres.create_database("zuhyo_filter"))
    run_cli_json("collect", "folder", str(path), str(images))
    first = run_cli_json("filter", str(path), "--classifier", "none")
    assert (first["checked"], first["dropped"]["near_duplicate"], first["dropped"]["low_resolution"]) == (14, 5, 1)
    figs = _figures(path)
    run_cli("decide", str(path), str(figs["small"]["id"]), "keep", "--reason", "readable enough")
    again = run_cli_json("filter", str(path), "--classifier", "none")
    assert again["recorded"] == 0 and again["by_person"]["keep"] == 1
    assert run_cli_json("status", str(path))["database"] == "postgresql"


def test_chart_check_runs_on_the_survivors_when_the_workspace_has_a_trained_model(tmp_path: Path):
    import numpy as np
    from PIL import Image

    cc = chart_corpus()
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(10):
        (folder / f"chart_{i}.png").write_bytes(cc.render_chart(i * 7))
    rng = np.random.default_rng(0)
    for i in range(10):  # photograph-like: smooth colour fields with sensor noise
        base = Image.fromarray(rng.uniform(0, 255, (8, 8, 3)).astype(np.uint8)).resize((640, 480),
                                                                                     Image.Resampling.BICUBIC)
        noisy = np.asarray(base, dtype=float) + rng.normal(0, 25, (480, 640, 3))
        Image.fromarray(noisy.clip(0, 255).astype(np.uint8)).save(folder / f"photo_{i}.jpg")
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    run_cli_json("collect", "folder", str(ws), str(folder))
    figs = _figures(ws)
    labels = tmp_path / "labels.csv"
    labels.write_text("figure_id,label\n" + "".join(
        f"{f['id']},{'chart' if name.startswith('chart') else 'not_chart'}\n" for name, f in figs.items()))
    run_cli("filter", "train", str(ws), "--labels", str(labels))

    report = run_cli_json("filter", str(ws))  # --classifier auto: the trained model
    assert report["chart_check"].startswith("features: 20 classified")
    assert report["dropped"]["not_chart"] == 10 and report["kept"] == 10
    assert _filter_decision(figs["photo_3"], ws)["by"].startswith("classifier:features@")
    again = run_cli_json("filter", str(ws))
    assert again["recorded"] == 0 and again["dropped"]["not_chart"] == 10 and again["kept"] == 10


def test_of_a_chart_its_screenshot_and_a_padded_copy_the_chart_itself_is_kept(tmp_path: Path) -> None:
    """The member kept is the one showing the most content, then the least around it: a screenshot and a padded
    copy are larger images than their original but show the same content (issue 22's ranking was by image
    size, so the screenshot was kept)."""
    from PIL import Image, ImageOps
    from test_construct_filter_near_duplicates import PALETTE, VALUES, _bars, _encoded, _screenshot

    folder = tmp_path / "imgs"
    folder.mkdir()
    original = _bars(VALUES, PALETTE)
    (folder / "original.png").write_bytes(original)
    (folder / "screenshot.jpg").write_bytes(_screenshot(original, dark=True))
    padded = ImageOps.expand(Image.open(io.BytesIO(original)).convert("RGB"), border=(70, 30, 50, 40),
                             fill=(230, 225, 205))
    (folder / "padded.png").write_bytes(_encoded(padded))
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    run_cli("collect", "folder", str(ws), str(folder))
    report = run_cli_json("filter", str(ws), "--classifier", "none")
    assert report["dropped"]["near_duplicate"] == 2 and report["kept"] == 1
    figs = _figures(ws)
    area = {name: f["width"] * f["height"] for name, f in figs.items()}
    assert area["screenshot"] > area["original"] and area["padded"] > area["original"]
    decisions = {name: _filter_decision(f, ws) for name, f in figs.items()}
    assert decisions["original"]["decision"] == "keep"
    for copy in ("screenshot", "padded"):
        assert decisions[copy]["reason"] == f"near duplicate of figure {figs['original']['id']}"


def test_a_lossless_original_is_kept_over_its_copy_enlarged_as_a_jpeg(tmp_path: Path) -> None:
    """A JPEG copy enlarged 1.3x shows more pixels than its PNG original, yet the original is kept: a lossy image
    ranks one doubling of content lower (``LOSSY_STEPS``), so recompression does not decide what the cluster's
    other members are verified against. One enlarged 2.4x (more than twice the pixels) is kept over it."""
    from PIL import Image
    from test_construct_filter_near_duplicates import PALETTE, VALUES, _bars, _encoded

    from zuhyo.construct.filter.near_duplicates import best_first

    original = _bars(VALUES, PALETTE)
    im = Image.open(io.BytesIO(original)).convert("RGB")
    for scale, kept in ((1.3, "original"), (2.4, "enlarged")):
        folder = tmp_path / f"imgs{scale}"
        folder.mkdir()
        (folder / "original.png").write_bytes(original)
        big = im.resize((round(im.width * scale), round(im.height * scale)), Image.Resampling.LANCZOS)
        (folder / "enlarged.jpg").write_bytes(_encoded(big, "JPEG", quality=60))
        ws = tmp_path / f"ws{scale}"
        run_cli("init", str(ws))
        run_cli("collect", "folder", str(ws), str(folder))
        report = run_cli_json("filter", str(ws), "--classifier", "none")
        assert report["dropped"]["near_duplicate"] == 1
        figs = _figures(ws)
        assert _filter_decision(figs[kept], ws)["decision"] == "keep"
    assert best_first(1040, 650, 1040 * 650) < best_first(800, 500, 800 * 500)  # without lossy: the larger first
    assert best_first(800, 500, 800 * 500) < best_first(1040, 650, 1040 * 650, lossy=True)
