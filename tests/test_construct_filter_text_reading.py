"""The second look's text reading (:mod:`zuhyo.construct.filter.text_reading`, RapidOCR: the ``[ocr]`` extra): a
label drawn again reads alike where a changed number does not; an axis labelled anew on the same scale (a chart
drawn again at another figure size: 0, 2, 4, 6 against 0, 2.5, 5, 7.5) is one axis, where another scale, a number
changed in a row or a column of a table, or a bar beside the labels is not; and a small multiple drawn again at
another figure size, its every panel labelled anew, is merged by the second look where the same chart with one
bar changed is not."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("rapidocr", reason="the [ocr] extra reads the text")
pytest.importorskip("matplotlib", reason="the text and charts are drawn with matplotlib's fonts")


def _differs(a: np.ndarray, b: np.ndarray) -> tuple[tuple[int, int, int, int], np.ndarray]:
    """The box (x, y, w, h) and mask of where two lumas differ by more than 40 levels."""
    import cv2

    mask = (cv2.absdiff(a, b) > 40).view(np.uint8)
    ys, xs = np.nonzero(mask)
    return (int(xs.min()), int(ys.min()), int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1), mask


def test_a_label_drawn_again_reads_alike_and_a_changed_number_or_a_bar_does_not() -> None:
    """The text look (:mod:`zuhyo.construct.filter.text_reading`): a line of text drawn at three times the size and
    shrunk differs from the same line drawn at its size in hundreds of pixels, yet reads the same; one digit
    changed, one digit added, or a bar drawn beside the text does not."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    from zuhyo.construct.filter.text_reading import reads_alike

    font = font_manager.findfont("DejaVu Sans")

    def line(text: str, scale: int = 1) -> np.ndarray:
        im = Image.new("L", (240 * scale, 40 * scale), 255)
        ImageDraw.Draw(im).text((20 * scale, 12 * scale), text, fill=0, font=ImageFont.truetype(font, 13 * scale))
        return np.asarray(im.resize((240, 40), Image.Resampling.LANCZOS) if scale > 1 else im)

    drawn_again = line("Sales 2,345", 3)
    results = {}
    for text in ("Sales 2,345", "Sales 2,845", "Sales 2,3456"):
        box, mask = _differs(drawn_again, line(text))
        assert int(mask.sum()) > 100  # far over the second look's limit, pixel by pixel
        results[text] = reads_alike(drawn_again, line(text), box, mask)
    assert results == {"Sales 2,345": True, "Sales 2,845": False, "Sales 2,3456": False}
    with_bar = line("Sales 2,345").copy()
    with_bar[5:35, 180:200] = 0
    box, mask = _differs(line("Sales 2,345"), with_bar)
    assert not reads_alike(line("Sales 2,345"), with_bar, box, mask)


def _labels(places: dict[float, str], width: int = 520, height: int = 60, column: bool = False) -> np.ndarray:
    """A luma with each text centred at its place (px across; down with ``column``), 13 px DejaVu Sans."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), 13)
    im = Image.new("L", (height, width) if column else (width, height), 255)
    draw = ImageDraw.Draw(im)
    for place, text in places.items():
        draw.text((30, place) if column else (place, 30), text, fill=0, font=font, anchor="mm")
    return np.asarray(im)


def _axis(values: list[float], per_unit: float, origin: float = 40.0, column: bool = False,
          texts: dict[float, str] | None = None) -> np.ndarray:
    """An axis's tick labels: each value at ``origin + per_unit * value`` (its text ``texts[value]`` when given)."""
    texts = texts or {}
    return _labels({origin + per_unit * v: texts.get(v, f"{v:g}" if float(v).is_integer() else f"{v:.1f}")
                    for v in values}, column=column)


def test_an_axis_labelled_anew_on_the_same_scale_is_one_axis_and_another_scale_or_a_changed_number_is_not() -> None:
    """:func:`same_scale`: ticks 0, 2, 4, 6 and 0.0, 2.5, 5.0, 7.5 at 50 px a unit are one axis, across or down,
    whichever of the two images' labels a region holds; the same labels at 40 px a unit are another scale; a
    label changed so that the steps are unequal, a table's row of numbers with one changed, and a bar drawn over
    the labels are not."""
    from zuhyo.construct.filter.text_reading import same_scale

    for column in (False, True):
        integers = _axis([0, 2, 4, 6], 50, column=column)
        halves = _axis([0, 2.5, 5, 7.5], 50, column=column)
        box, mask = _differs(integers, halves)
        assert same_scale(integers, halves, box, mask), column
        assert same_scale(halves, integers, box, mask), column
        other_scale = _axis([0, 2.5, 5, 7.5], 40, column=column)
        box, mask = _differs(integers, other_scale)
        assert not same_scale(integers, other_scale, box, mask), column
        changed = _axis([0, 2, 4, 6], 50, column=column, texts={4: "5"})  # 0, 2, 5, 6: unequal steps
        box, mask = _differs(integers, changed)
        assert not same_scale(integers, changed, box, mask), column
    # one region: the label one image has where the other has none (2.5 between 2 and 4)
    integers, halves = _axis([0, 2, 4, 6], 50), _axis([0, 2.5, 5, 7.5], 50)
    _, mask = _differs(integers, halves)
    one = np.zeros_like(mask)
    one[:, 150:185] = mask[:, 150:185]
    ys, xs = np.nonzero(one)
    assert same_scale(integers, halves, (int(xs.min()), int(ys.min()), int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1),
                      one)
    row = {60.0: "812", 200.0: "4531", 340.0: "2210", 480.0: "96"}
    table, changed_cell = _labels(row), _labels({**row, 200.0: "3120"})
    box, mask = _differs(table, changed_cell)
    assert not same_scale(table, changed_cell, box, mask)
    with_bar = halves.copy()
    with_bar[5:55, 180:200] = 0
    box, mask = _differs(integers, with_bar)
    assert not same_scale(integers, with_bar, box, mask)


def _small_multiple(size: tuple[float, float], bars: tuple[float, ...] = (56, 38, 67, 70, 77, 73, 31, 33)) -> bytes:
    """A 2x2 small multiple (bars and lines over eight points, the bmh style) at ``size`` inches, 100 dpi."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    line = (98, 24, 67, 48, 11, 78, 18, 75)
    with plt.style.context("bmh"), plt.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, axes = plt.subplots(2, 2, figsize=size, dpi=100)
        for k, ax in enumerate(axes.flat):
            shift = 7 * k
            if k % 2:
                ax.bar(range(8), [(v + shift) % 90 + 5 for v in bars])
            else:
                ax.plot(range(8), [(v + shift) % 95 + 3 for v in line], marker=".")
            ax.set_title(f"Panel {k + 1}", fontsize=9)
        fig.suptitle("Emissions (2002)")
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return buf.getvalue()


def test_a_small_multiple_drawn_again_at_another_size_with_its_axes_labelled_anew_is_merged() -> None:
    """A 2x2 small multiple drawn at 6 x 6 inches and again at 5.2 x 6.8: the narrower panels' x axes are labelled
    0.0, 2.5, 5.0, 7.5 where the original's are labelled 0, 2, 4, 6. The second look merges the pair only with
    :attr:`RegionCheck.tick_scale`; the copy's size with one bar 30 % lower is not merged either way."""
    from dataclasses import replace

    from zuhyo.construct.filter.alignment import directed_scores, directed_windows
    from zuhyo.construct.filter.feature_store import stack_features
    from zuhyo.construct.filter.near_duplicates import DEFAULT_MIN_SCORE, MAX_REGION, image_features
    from zuhyo.construct.filter.regions import RegionCheck, content, largest_region

    original = _small_multiple((6.0, 6.0))
    bars = (56, 38, 67, 70, 77, 73, 31, 33)
    copies = {"drawn again": _small_multiple((5.2, 6.8)),
              "one bar changed": _small_multiple((5.2, 6.8), bars[:4] + (0.7 * bars[4],) + bars[5:])}
    without = replace(RegionCheck(), tick_scale=False)
    found = {}
    for name, copy in copies.items():
        arrays = stack_features([image_features(original), image_features(copy)])
        ia, ib = np.array([0]), np.array([1])
        windows = directed_windows(arrays.prepared, ia, ib)
        scores, _, affine, _ = directed_scores(arrays.thumbs, arrays.prepared, ia, ib, windows=windows,
                                               refine_below=DEFAULT_MIN_SCORE)
        assert scores[0] >= DEFAULT_MIN_SCORE, name  # the thumbnails verify: the second look decides
        ca, cb = content(original), content(copy)
        native = (ca.native, cb.native)
        found[name] = [largest_region(ca.pixels, cb.pixels, affine[0], 128, check, limit=MAX_REGION, native=native)
                       for check in (RegionCheck(), without)]
    assert found["drawn again"][0] <= MAX_REGION < found["drawn again"][1], found
    assert min(found["one bar changed"]) > MAX_REGION, found
