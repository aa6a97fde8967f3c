"""The bundled sample benchmarks `sample-ja` and `sample-astro` (rendered by scripts/render_samples.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from PIL import Image

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.schema import ASPECT_CATEGORY, AstroAspect, AstroCategory, ImageType

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "zuhyo" / "benchmarks" / "data"
WP_TEXT = SHARED_DATA / "ict-white-paper" / "data_r5.txt"  # real white-paper text: an optional extra layer
WP_URLS = SHARED_DATA / "ict-white-paper" / "url_r5.txt"
sys.path.insert(0, str(ROOT / "scripts"))

import render_samples  # noqa: E402
from zuhyo_samples import astro, astro_ccv, common  # noqa: E402


@pytest.fixture(scope="module")
def ja():  # type: ignore[no-untyped-def]
    return load_benchmark("sample-ja", strict=True)


@pytest.fixture(scope="module")
def astro_result():  # type: ignore[no-untyped-def]
    return load_benchmark("sample-astro", strict=True)


def _check_images(result) -> None:  # type: ignore[no-untyped-def]
    assert result.missing_images() == []
    for s in result.samples:
        path = s.image.resolve_path(result.base_dir)
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == s.image.sha256, s.id
        with Image.open(path) as im:
            im.load()  # a full decode, not just the header
            assert (im.width, im.height) == (s.image.width, s.image.height), s.id
            assert im.width >= 600 and im.height >= 400, s.id


def test_sample_ja_contents(ja) -> None:  # type: ignore[no-untyped-def]
    assert ja.benchmark == "sample-ja" and ja.errors == []
    assert len(ja.samples) >= 40
    assert len({s.id for s in ja.samples}) == len(ja.samples)
    types = Counter(s.image_type for s in ja.samples)
    assert len(types) >= 8 and None not in types
    for s in ja.samples:
        assert s.flags, s.id
        assert s.hakusho is not None and s.hakusho.white_paper and s.hakusho.topic_group, s.id
        assert s.source is not None and s.source.title and s.source.publisher and s.source.url, s.id
        assert any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in s.question), s.id
    _check_images(ja)


def test_sample_ja_urls_are_white_paper_pages(ja) -> None:  # type: ignore[no-untyped-def]
    if not WP_URLS.is_file():
        pytest.skip(f"{WP_URLS} not present")
    pages = set(WP_URLS.read_text(encoding="utf-8").split())
    wp = [s for s in ja.samples if s.hakusho.white_paper == "令和5年版 情報通信白書"]
    assert len(wp) >= 35
    for s in wp:
        assert s.source.url in pages, (s.id, s.source.url)


def test_sample_astro_contents(astro_result) -> None:  # type: ignore[no-untyped-def]
    samples = astro_result.samples
    assert astro_result.errors == [] and len(samples) >= 40
    assert len({s.image.sha256 for s in samples}) >= 20  # distinct charts, not QA items
    assert len({s.id for s in samples}) == len(samples)
    assert all(s.astro is not None for s in samples)
    assert {s.astro.category for s in samples} == set(AstroCategory)
    assert {s.astro.aspect for s in samples if s.astro.aspect} == set(AstroAspect)
    for s in samples:
        if s.astro.aspect is not None:
            assert ASPECT_CATEGORY[s.astro.aspect] is s.astro.category
        if s.astro.answer_kind == "numeric_retrieval":
            a = s.astro
            assert a.axis_min is not None and a.axis_max is not None and a.axis_min < a.axis_max, s.id
            assert not a.log_scale or a.axis_min > 0, s.id
            value = float(s.answer)
            if a.aspect is AstroAspect.INTERVAL:  # a span read off the axis fits within its range
                assert 0 < value <= a.axis_max - a.axis_min, s.id
            else:  # a point read off the axis lies on it
                assert a.axis_min <= value <= a.axis_max, s.id
        if s.astro.answer_kind in ("numeric_exact", "numeric_retrieval"):
            float(s.answer)
        if s.astro.answer_kind == "open":
            assert s.astro.key_points, s.id
    assert any(s.astro.log_scale for s in samples)
    _check_images(astro_result)


def test_sample_astro_ccv(astro_result) -> None:  # type: ignore[no-untyped-def]
    by_image: dict[str, list[int]] = {}
    for s in astro_result.samples:
        assert s.astro.ccv is not None and len(s.astro.ccv) == len(astro_ccv.CCV_NAMES), s.id
        assert by_image.setdefault(s.image.sha256, s.astro.ccv) == s.astro.ccv, s.id  # one CCV per chart
    # Every attribute occurs in some chart, and no chart has all of them.
    for i, name in enumerate(astro_ccv.CCV_NAMES):
        assert any(v[i] for v in by_image.values()), name
    assert all(sum(v) < len(v) for v in by_image.values())
    ccv = {s.id.rsplit("_", 1)[0]: astro_ccv.ccv_as_dict(s.astro.ccv) for s in astro_result.samples}
    assert ccv["astro_rotation"]["multi_panel"] and ccv["astro_rotation"]["error_bars"]
    assert ccv["astro_skymap"]["non_cartesian"] and ccv["astro_skymap"]["dense_points"]
    assert not ccv["astro_skymap"]["multi_panel"]
    assert ccv["astro_sunspot"]["dual_axis"] and not ccv["astro_sunspot"]["multi_panel"]
    assert ccv["astro_hr"]["colour_map"] and ccv["astro_hr"]["log_axis"] and not ccv["astro_hr"]["legend"]
    assert ccv["astro_gw"]["multi_panel"] and ccv["astro_gw"]["colour_map"]
    assert ccv["astro_snhubble"]["many_series"] and ccv["astro_snhubble"]["multi_panel"]
    assert ccv["astro_spectrum"] == dict.fromkeys(astro_ccv.CCV_NAMES, 0)
    assert not ccv["astro_hubble"]["dense_points"]  # 22 points: error-bar caps are not data points


def test_bundled_ccv_equals_ccv_of_a_fresh_drawing(astro_result) -> None:  # type: ignore[no-untyped-def]
    by_chart = {s.id.rsplit("_", 1)[0]: s.astro.ccv for s in astro_result.samples}
    for chart in astro.charts():
        assert astro.chart_ccv(chart) == by_chart[chart.id], chart.id


def test_figure_ccv_reads_the_figure() -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots()
    x = np.arange(60.0)
    ax.errorbar(x, x, yerr=1.0, fmt="o", capsize=2)  # 60 markers plus 120 cap markers
    ax.twinx().plot(x, -x)
    got = astro_ccv.ccv_as_dict(astro_ccv.figure_ccv(fig))
    plt.close(fig)
    assert got["error_bars"] and got["dual_axis"]
    assert not got["multi_panel"] and not got["dense_points"] and not got["legend"] and not got["colour_map"]

    fig = plt.figure()
    polar = fig.add_subplot(121, projection="polar")
    polar.scatter(np.linspace(0, 6, 120), np.ones(120), c=np.arange(120))
    flat = fig.add_subplot(122)
    for k in range(4):
        flat.plot(x, x * k, label=str(k))
    flat.set_yscale("log")
    flat.legend()
    flat.annotate("note", (1, 1))
    got = astro_ccv.ccv_as_dict(astro_ccv.figure_ccv(fig))
    plt.close(fig)
    assert got == {"multi_panel": 1, "log_axis": 1, "error_bars": 0, "legend": 1, "many_series": 1,
                   "annotations": 1, "dual_axis": 0, "dense_points": 1, "colour_map": 1, "non_cartesian": 1}
    with pytest.raises(ValueError, match="10 bits"):
        astro_ccv.ccv_as_dict([1, 0])


def test_bundles_stay_small() -> None:
    for name in ("sample-ja", "sample-astro"):
        total = sum(p.stat().st_size for p in (DATA / name).rglob("*") if p.is_file())
        assert total < 5 * 1024 * 1024, (name, total)
        for p in (DATA / name / "images").glob("*.png"):
            assert p.stat().st_size < 200 * 1024, p


def test_bench_info_cli_counts_image_types(ja) -> None:  # type: ignore[no-untyped-def]
    out = subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", "bench", "info", "sample-ja",
                          "--json"], capture_output=True, text=True, check=True, cwd=ROOT)
    info = json.loads(out.stdout)
    assert info["samples"] == len(ja.samples) and info["errors"] == 0 and info["images_missing"] == 0
    expected = Counter(s.image_type.value for s in ja.samples)
    assert info["image_types"] == dict(expected)
    assert set(info["image_types"]) >= {t.value for t in (ImageType.BAR, ImageType.LINE, ImageType.PIE,
                                                           ImageType.AREA, ImageType.SCATTER, ImageType.MAP,
                                                           ImageType.TABLE, ImageType.INFOGRAPHIC)}


def test_ja_answers_equal_recomputed_answers(ja) -> None:  # type: ignore[no-untyped-def]
    items = {i.id: i for i in render_samples.ja_items()}
    assert set(items) == {s.id for s in ja.samples}
    for s in ja.samples:
        item = items[s.id]
        assert s.answers == item.answer(item.data), s.id
        assert s.answers == render_samples.ja_answers(item)
        assert s.metadata["data"] == json.loads(json.dumps(item.data)), s.id


def test_astro_answers_equal_recomputed_answers(astro_result) -> None:  # type: ignore[no-untyped-def]
    by_id = {s.id: s for s in astro_result.samples}
    n = 0
    for chart in astro.charts():
        for qa in chart.qas:
            assert by_id[f"{chart.id}_{qa.suffix}"].answers == [qa.answer]
            n += 1
    assert n == len(by_id)


def test_wrong_expected_answer_is_caught() -> None:
    item = render_samples.ja_items()[0]
    bad = dataclasses.replace(item, expected="1万人")
    with pytest.raises(AssertionError, match=item.id):
        render_samples.ja_answers(bad)


def test_white_paper_quotes_are_verbatim(tmp_path: Path) -> None:
    if not WP_TEXT.is_file():
        pytest.skip(f"{WP_TEXT} not present")
    items = render_samples.ja_items()
    assert render_samples.check_quotes(items, WP_TEXT) >= 80
    altered = dataclasses.replace(items[0], quotes=("日本の研究者数は2021年において96.0万人",))
    with pytest.raises(AssertionError, match="ja_bar_01"):
        render_samples.check_quotes([altered], WP_TEXT)


@pytest.mark.parametrize("font", ["debian", "packaged"])
def test_rendering_is_byte_stable(tmp_path: Path, font: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundles were rendered with IPAex Gothic 00401 from Debian's fonts-ipaexfont; the copy packaged with zuhyo
    (the reports' fallback font) is the same file, so a machine without the Debian package renders the same bytes."""
    from zuhyo.report.fonts import BUNDLED_IPAEX_GOTHIC, IPAEX_GOTHIC

    if font == "debian" and not IPAEX_GOTHIC.is_file():
        pytest.skip(f"Debian's fonts-ipaexfont is not installed ({IPAEX_GOTHIC}); the 'packaged' case still runs")
    monkeypatch.setattr(common, "IPAEX_GOTHIC_PATHS", (IPAEX_GOTHIC if font == "debian" else BUNDLED_IPAEX_GOTHIC,))
    common.use_japanese_font()
    item = next(i for i in render_samples.ja_items() if i.id == "ja_pie_02")
    render_samples.ja_sample(item, tmp_path)
    assert (tmp_path / "images/ja_pie_02.png").read_bytes() == (DATA / "sample-ja/images/ja_pie_02.png").read_bytes()
    for chart_id in ("astro_transit", "astro_gw", "astro_skymap"):
        chart = next(c for c in astro.charts() if c.id == chart_id)
        common.save_png(chart.draw(), tmp_path / "t.png", colors=128)
        assert (tmp_path / "t.png").read_bytes() == (DATA / f"sample-astro/images/{chart_id}.png").read_bytes()


def test_missing_japanese_font_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(common, "IPAEX_GOTHIC_PATHS", (tmp_path / "no-such-font.ttf",))
    with pytest.raises(common.FontMissingError, match="fonts-ipaexfont"):
        common.use_japanese_font()
