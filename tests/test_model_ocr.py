"""The ``ocr`` baseline: pure answering heuristics on synthetic boxes, and RapidOCR on rendered and real charts.

Rendered charts are the suite's own (tests/fixtures/chartqa); real ChartQA charts come from ../shared/data when present.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_CHARTS
from PIL import Image

from zuhyo.models.base import MODEL_BACKENDS, BackendOptions, ChatRequest, PermanentModelError, PreparedImage
from zuhyo.models.ocr_answer import (
    answer_from_boxes,
    detect_language,
    extract_question,
    numbers_in,
    question_kind,
)
from zuhyo.models.ocr_layout import OcrBox, classify_boxes, parse_number, reading_order_text

IPAEX = Path("/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf")
DIRECT_JA = "\n上記の質問に対して、正確かつ簡潔に答えてください。"
COT_JA = (
    "\n上記の質問に対して、ステップバイステップで考えてから答えてください。\n"
    "最後の行は 'Answer: $ANSWER' の形式で、正確かつ簡潔に回答してください。"
)


def box(text: str, x0: float, y0: float, x1: float, y1: float, score: float = 0.99) -> OcrBox:
    return OcrBox(text, x0, y0, x1, y1, score)


def hbar_chart() -> list[OcrBox]:
    """A horizontal bar chart: categories left, value labels at the bar ends, an x axis 0..60 with a title."""
    rows = [("Japan", "42%"), ("Korea", "35%"), ("China", "58%"), ("India", "12%")]
    out = [box("Share of adults online", 100, 5, 330, 25)]
    for i, (label, value) in enumerate(rows):
        y = 50 + 40 * i
        out.append(box(label, 10, y, 60, y + 18))
        out.append(box(value, 80 + 5 * len(label) + 4 * int(value[:2]), y, 120 + 4 * int(value[:2]), y + 18))
    for j, tick in enumerate(("0", "20", "40", "60")):
        out.append(box(tick, 70 + 80 * j, 220, 85 + 80 * j, 236))
    out.append(box("Percent of adults", 150, 245, 260, 262))
    out.append(box("© Statista 2021", 300, 280, 400, 295))
    return out


def prepared(data: bytes) -> PreparedImage:
    with Image.open(io.BytesIO(data)) as im:
        w, h = im.size
    return PreparedImage(data, "image/png", w, h, hashlib.sha256(data).hexdigest())


def png_bytes(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


# --- pure heuristics ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("37%", 37.0),
        ("1,413,640", 1413640.0),
        ("1 413 640", 1413640.0),
        ("▲3.2", -3.2),
        ("−5", -5.0),
        ("5.2万人", 5.2),
        ("20.98 m²", 20.98),
        ("$12.5bn", 12.5),
        ("Media 51", None),
        ("Q2 2020", None),
        ("800 000 1 000 000 1 200 000", None),
        ("Japan", None),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_numbers_in_japanese_and_english_text() -> None:
    assert numbers_in("人口が700万人以上の県") == [700.0]
    assert numbers_in("Is it 1,413,640 or -5.5 in 2020?") == [1413640.0, -5.5, 2020.0]


def test_extract_question_drops_hakusho_instructions() -> None:
    assert extract_question("大阪府の人口は？" + COT_JA) == "大阪府の人口は？"
    assert extract_question("Answer briefly.\nQuestion: What is X?\n\nThink first.") == "What is X?"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is the share in Japan?", "value"),
        ("Is the value of Japan greater than 40?", "yesno"),
        ("Which country has the highest share?", "extreme_max"),
        ("Which country has the lowest share?", "extreme_min"),
        ("How many countries have more than 30%?", "count"),
        ("Which country is shown in red?", "label"),
        ("日本の割合は何%ですか？", "value"),
        ("日本の割合は40%を超えていますか？", "yesno"),
        ("割合が最も高い国はどこですか？", "extreme_max"),
        ("割合が30%以上の国はいくつありますか？", "count"),
    ],
)
def test_question_kind(question: str, kind: str) -> None:
    assert question_kind(question) == kind


def test_classify_excludes_ticks_axis_title_and_boilerplate() -> None:
    cls = classify_boxes(hbar_chart())
    assert sorted(v for _, v in cls.values) == [12.0, 35.0, 42.0, 58.0]  # ticks 0..60 are not values
    labels = {b.text for b in cls.labels}
    assert {"Japan", "Korea", "China", "India"} <= labels
    assert "Percent of adults" not in labels  # below the x-axis tick row: an axis title
    assert "© Statista 2021" not in labels


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the share of adults online in Korea?", "35"),
        ("Which country has the highest share?", "China"),
        ("Which country has the lowest share?", "India"),
        ("How many countries have more than 30%?", "3"),
        ("How many countries have a share higher than Korea?", "2"),
        ("Is the share in Japan greater than 40%?", "Yes"),
        ("Is the share in India more than 40%?", "No"),
        ("Is the share in Korea 35%?", "Yes"),
        ("Which country has 12%?", "India"),
    ],
)
def test_answers_on_synthetic_bar_chart(question: str, answer: str) -> None:
    assert answer_from_boxes(question + "\nAnswer the question using a single word or phrase.", hbar_chart()) == answer


def test_answer_without_text_is_unknown_in_the_question_language() -> None:
    assert answer_from_boxes("What is the value?", []) == "unknown"
    assert answer_from_boxes("値は何ですか？" + DIRECT_JA, []) == "不明"
    assert answer_from_boxes("最も多いのはどれですか？", []) == "不明"
    assert answer_from_boxes("Is it above 5?", []) == "Yes"
    assert detect_language("値は？") == "ja" and detect_language("value?") == "en"


def test_reading_order_joins_visual_lines() -> None:
    boxes = [box("36", 200, 101, 220, 119), box("The Daily Show", 10, 100, 120, 120), box("Title", 10, 10, 80, 30)]
    assert reading_order_text(boxes) == "Title\nThe Daily Show 36"


# --- RapidOCR on real charts --------------------------------------------------------------------------------------


def _chart_bytes(chart: str, request: pytest.FixtureRequest) -> bytes:
    """``fixture:NAME`` (tests/fixtures/chartqa/render.py) or ``shared:NAME`` (real ChartQA; skips when absent)."""
    layer, name = chart.split(":")
    if layer == "fixture":
        return (FIXTURE_CHARTS / name).read_bytes()
    shared: Path = request.getfixturevalue("shared_data")
    return (shared / "chartqa" / "test" / "png" / name).read_bytes()


@pytest.fixture(scope="module")
def reader():  # type: ignore[no-untyped-def]
    pytest.importorskip("rapidocr", reason="the ocr backend needs rapidocr (pip install 'zuhyo[ocr]')")
    from zuhyo.models.ocr import OcrReader

    return OcrReader()


@pytest.fixture(scope="module")
def japanese_chart() -> bytes:
    """A horizontal bar chart with Japanese labels, rendered with the IPAex Gothic font."""
    if not IPAEX.is_file():
        pytest.skip(f"IPAex font not installed at {IPAEX} (Debian fonts-ipaexfont)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(IPAEX))
    family = font_manager.FontProperties(fname=str(IPAEX)).get_name()
    labels = ["東京都", "大阪府", "北海道", "福岡県", "愛知県"]
    values = [1404, 878, 514, 512, 749]
    with plt.rc_context({"font.family": family}):
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        bars = ax.barh(labels[::-1], values[::-1], color="#4a7ebb")
        for b, v in zip(bars, values[::-1], strict=True):
            ax.text(b.get_width() + 15, b.get_y() + b.get_height() / 2, f"{v:,}", va="center", fontsize=12)
        ax.set_title("都道府県別の人口（万人）")
        ax.set_xlabel("人口（万人）")
        ax.set_xlim(0, 1700)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return buf.getvalue()


@pytest.mark.parametrize("chart", ["fixture:late_night_viewers.png", "shared:10222.png"])
def test_ocr_reads_english_bar_chart(reader, chart: str, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    from zuhyo.models.ocr import reading_order_text as text_of

    data = _chart_bytes(chart, request)
    before = reader.images_read
    text = text_of(reader.read(data))
    assert "The Daily Show" in text
    assert "The Daily Show 36" in text.splitlines()  # label and value on one reading-order line
    # ChartQA test row of 10222.png, mirrored by the rendered chart: "What's the median age of the daily show viewers?"
    assert answer_from_boxes("What's the median age of the daily show viewers?", reader.read(data)) == "36"
    assert reader.images_read == before + 1  # the second read came from the cache


@pytest.mark.parametrize("chart", ["fixture:web_shops_followers.png", "shared:two_col_40229.png"])
def test_ocr_answers_statista_style_chart(reader, chart: str, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    data = _chart_bytes(chart, request)
    boxes = reader.read(data)
    # ChartQA test rows for this chart
    assert answer_from_boxes("How many Instagram followers did na-kd.com have in 2018?", boxes) == "1413640"
    assert answer_from_boxes("What was Sweden's most popular web shop?", boxes) == "na-kd.com"


def test_ocr_answers_rendered_japanese_chart(reader, japanese_chart: bytes) -> None:  # type: ignore[no-untyped-def]
    boxes = reader.read(japanese_chart)
    text = reading_order_text(boxes)
    for label in ("東京都", "大阪府", "北海道", "福岡県"):
        assert label in text
    assert answer_from_boxes("大阪府の人口は何万人ですか？" + DIRECT_JA, boxes) == "878"
    assert answer_from_boxes("北海道の人口は何万人ですか？" + DIRECT_JA, boxes) == "514"
    assert answer_from_boxes("人口が最も多いのはどの都道府県ですか？" + DIRECT_JA, boxes) == "東京都"
    assert answer_from_boxes("人口が最も少ないのはどの都道府県ですか？" + DIRECT_JA, boxes) == "福岡県"
    assert answer_from_boxes("人口が700万人以上の都道府県はいくつありますか？" + DIRECT_JA, boxes) == "3"
    assert answer_from_boxes("北海道の人口は600万人以上ですか？" + DIRECT_JA, boxes) == "いいえ"


async def test_backend_ocrs_each_image_once_and_formats_cot(reader, japanese_chart: bytes) -> None:  # type: ignore[no-untyped-def]
    from zuhyo.models.ocr import OcrBackend

    backend = OcrBackend("ocr", BackendOptions(), reader=reader)
    assert backend.is_baseline
    before = reader.images_read
    image = prepared(japanese_chart)
    requests = [ChatRequest(prompt="大阪府の人口は何万人ですか？" + p, image=image) for p in (DIRECT_JA, COT_JA) * 3]
    replies = await asyncio.gather(*(backend.generate(r) for r in requests))
    assert reader.images_read - before <= 1  # Direct + CoT × 3 runs concurrently: one OCR (or none if cached)
    assert replies[0].text == "878"
    assert replies[1].text.splitlines()[-1] == "Answer: 878"
    assert all(r.text == replies[i % 2].text for i, r in enumerate(replies))
    await backend.aclose()


async def test_backend_survives_images_without_text_and_rejects_corrupt_ones(reader) -> None:  # type: ignore[no-untyped-def]
    from zuhyo.models.ocr import OcrBackend

    backend = OcrBackend("ocr", BackendOptions(), reader=reader)
    blank = prepared(png_bytes(Image.new("RGB", (320, 240), "white")))
    assert (await backend.generate(ChatRequest(prompt="値は何ですか？" + DIRECT_JA, image=blank))).text == "不明"
    assert (await backend.generate(ChatRequest(prompt="What is the value?", image=None))).text == "unknown"
    bad = PreparedImage(b"not an image", "image/png", 1, 1, "ab" * 32)
    with pytest.raises(PermanentModelError, match="sha256=abab"):
        await backend.generate(ChatRequest(prompt="What is the value?", image=bad))


@pytest.mark.parametrize("chart", ["fixture:late_night_viewers.png", "shared:10222.png"])
def test_ocr_text_is_reading_order(reader, chart: str, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    from zuhyo.models.ocr import ocr_text

    text = ocr_text(_chart_bytes(chart, request))
    lines = text.splitlines()
    assert lines.index("The Daily Show 36") < lines.index("The Colbert Report 33")
    assert ocr_text(png_bytes(Image.new("RGB", (200, 100), "white"))) == ""


def test_ocr_spec_is_registered_and_takes_no_arguments() -> None:
    from zuhyo.models import build_backend, ensure_registered

    ensure_registered()
    assert "ocr" in MODEL_BACKENDS
    backend = build_backend("ocr")
    assert backend.spec == "ocr" and backend.is_baseline
    with pytest.raises(PermanentModelError, match="takes no arguments"):
        build_backend("ocr:large")


def test_importing_backends_loads_no_heavy_library() -> None:
    code = (
        "import sys, zuhyo.models.ocr, zuhyo.models.hf, zuhyo.models.ocr_answer;"
        "heavy = [m for m in ('rapidocr', 'onnxruntime', 'torch', 'transformers') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
