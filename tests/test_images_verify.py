"""verify_image on rendered charts (real ChartQA charts too when ../shared/data is present), every supported format,
truncated/corrupt files, non-images and bombs."""

from __future__ import annotations

import io
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest
from conftest import FIXTURE_CHARTS
from PIL import Image

from zuhyo.errors import ImageError
from zuhyo.images.verify import verify_image

CHART = FIXTURE_CHARTS / "late_night_viewers.png"  # 312x366, rendered by tests/fixtures/chartqa/render.py


def chart_png() -> bytes:
    return CHART.read_bytes()


def encode(fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    im = Image.open(CHART)
    (im.convert("RGB") if fmt in ("JPEG", "BMP") else im).save(buf, fmt, **kw)
    return buf.getvalue()


def bomb(width: int, height: int) -> bytes:
    from test_images_fetch import bomb_png

    return bomb_png(width, height)


@pytest.mark.parametrize(("fmt", "mime", "suffix"), [
    ("PNG", "image/png", ".png"), ("JPEG", "image/jpeg", ".jpg"), ("GIF", "image/gif", ".gif"),
    ("WEBP", "image/webp", ".webp"), ("BMP", "image/bmp", ".bmp"), ("TIFF", "image/tiff", ".tif"),
])
def test_accepts_every_supported_format(fmt: str, mime: str, suffix: str) -> None:
    info = verify_image(chart_png() if fmt == "PNG" else encode(fmt))
    assert (info.width, info.height, info.format, info.mime, info.suffix) == (312, 366, fmt, mime, suffix)


def _accepts_every_chart_in(folder: Path) -> int:
    paths = sorted(folder.glob("*.png"))
    for path in paths:
        with Image.open(path) as im:
            expected = im.size
        info = verify_image(path.read_bytes())
        assert (info.width, info.height) == expected and info.format == "PNG", path.name
    return len(paths)


def test_accepts_all_fixture_charts() -> None:
    assert _accepts_every_chart_in(FIXTURE_CHARTS) == 14


def test_accepts_all_real_chartqa_charts(shared_data: Path) -> None:
    assert _accepts_every_chart_in(shared_data / "chartqa" / "test" / "png") == 30


@pytest.mark.parametrize(("cut", "needle"), [
    (0.5, "corrupt or truncated PNG file (312x366)"),
    (-12, "corrupt or truncated PNG file (312x366)"),  # IEND chunk missing
    (-6, "corrupt or truncated PNG file (312x366)"),  # IEND chunk cut
    (40, "corrupt or truncated image/png header (40 bytes)"),  # no complete chunk after IHDR
])
def test_rejects_truncated_png(cut: float, needle: str) -> None:
    data = chart_png()
    n = int(len(data) * cut) if isinstance(cut, float) else (cut if cut > 0 else len(data) + cut)
    with pytest.raises(ImageError) as e:
        verify_image(data[:n])
    assert needle in str(e.value)


def test_rejects_png_with_damaged_pixel_data() -> None:
    data = bytearray(chart_png())
    idat = data.index(b"IDAT")
    data[idat + 200] ^= 0xFF
    with pytest.raises(ImageError, match=r"corrupt or truncated PNG file \(312x366\).*checksum"):
        verify_image(bytes(data))


def test_rejects_truncated_jpeg_when_pixels_are_decoded() -> None:
    data = encode("JPEG")
    verify_image(data)
    with pytest.raises(ImageError, match=r"cannot decode JPEG pixels \(312x366; file truncated or corrupt\)"):
        verify_image(data[: len(data) // 2])


@pytest.mark.parametrize(("data", "needle"), [
    (b"<!DOCTYPE html><html><head><title>404</title></head></html>", "looks like an HTML page"),
    (b'{"error": "rate limited"}', "looks like JSON"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"></svg>', "looks like XML/SVG"),
    (b"%PDF-1.7\n...", "looks like a PDF"),
    (b"\x00\x01\x02garbage", "binary data of no known format (10 bytes)"),
    (b"root:x:0:0:root:/root:/bin/bash\n", "looks like text"),
])
def test_rejects_non_images_saying_what_they_look_like(data: bytes, needle: str) -> None:
    with pytest.raises(ImageError, match="not an image in a supported format") as e:
        verify_image(data)
    assert needle in str(e.value)
    assert b"garbage" not in data or "garbage" not in str(e.value)  # the bytes themselves are never quoted
    assert "root" not in str(e.value)


def test_rejects_empty_and_header_only_files() -> None:
    with pytest.raises(ImageError, match=r"empty file \(0 bytes\)"):
        verify_image(b"")
    with pytest.raises(ImageError, match="corrupt or truncated image/gif header"):
        verify_image(b"GIF89a\x00")


def test_rejects_oversize_files() -> None:
    data = chart_png()
    with pytest.raises(ImageError, match=f"file is {len(data):,} bytes, over the 1,000-byte limit"):
        verify_image(data, max_bytes=1000)


def test_bomb_rejected_from_header_without_decoding() -> None:
    data = bomb(40000, 40000)  # a genuine, valid PNG: decoding it would allocate 1.6 GB
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ImageError) as e:
        verify_image(data)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "image is 40000x40000 = 1,600,000,000 pixels, over the 89,478,485-pixel limit" in str(e.value)
    assert "decompression bomb" in str(e.value)
    assert elapsed < 1.0 and peak < 20 * 1024 * 1024


def test_bomb_limit_is_independent_of_pillows_global(monkeypatch: pytest.MonkeyPatch) -> None:
    # 100 M pixels: Pillow's default guard only warns below 2 x 89.5 M; ours rejects.
    with pytest.raises(ImageError, match="10000x10000 = 100,000,000 pixels"):
        verify_image(bomb(10000, 10000))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)  # someone switched Pillow's guard off
    with pytest.raises(ImageError, match="40000x40000"):
        verify_image(bomb(40000, 40000))
    with pytest.raises(ImageError, match="312x366 = 114,192 pixels, over the 100,000-pixel limit"):
        verify_image(chart_png(), max_pixels=100_000)
    assert verify_image(bomb(3000, 2000)).width == 3000  # a big but legitimate 1-bit image decodes


def test_rejects_zero_size_header() -> None:
    import struct

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 10, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))
    with pytest.raises(ImageError):
        verify_image(png)


def _png_variants() -> dict[str, bytes]:
    """PNGs of one chart in every colour type and depth the fast decoder sees or declines."""
    import numpy as np

    rgba = np.asarray(Image.open(CHART).convert("RGBA")).copy()
    half = rgba.copy()
    half[::3, ::2, 3] = 90  # real partial transparency
    variants: dict[str, Image.Image] = {
        "rgba_opaque": Image.fromarray(rgba, "RGBA"), "rgba_translucent": Image.fromarray(half, "RGBA"),
        "rgb": Image.fromarray(rgba[:, :, :3], "RGB"), "grey": Image.fromarray(rgba[:, :, 0], "L"),
        "palette": Image.fromarray(rgba[:, :, :3], "RGB").quantize(64),
        "grey_alpha": Image.fromarray(rgba[:, :, 0], "L").convert("LA"),
    }
    out = {}
    for name, im in variants.items():
        buf = io.BytesIO()
        im.save(buf, "PNG")
        out[name] = buf.getvalue()
    buf = io.BytesIO()
    variants["rgb"].save(buf, "PNG", transparency=(255, 255, 255))  # a colour key: Pillow's path
    out["rgb_colour_key"] = buf.getvalue()
    buf = io.BytesIO()
    variants["rgba_opaque"].save(buf, "PNG", optimize=True, compress_level=9)
    out["rgba_max_compression"] = buf.getvalue()
    return out


def test_the_fast_png_decoder_gives_pillows_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    """decode_untrusted_fast decodes 8-bit RGB(A) PNGs through libspng: the same pixels as Pillow, and the
    thumbnails the filter makes from them are byte for byte those made through Pillow, for every colour type (the
    others go through Pillow)."""
    import sys

    import numpy as np

    pytest.importorskip("pyspng", reason="the [build] extra installs pyspng")
    from zuhyo.construct.filter.near_duplicates import image_features
    from zuhyo.images.verify import DEFAULT_MAX_PIXELS, PngPixels, decode_untrusted, decode_untrusted_fast

    variants = _png_variants()
    fast = {name: image_features(data) for name, data in variants.items()}
    decoded = {name: decode_untrusted_fast(data, DEFAULT_MAX_PIXELS)[0] for name, data in variants.items()}
    kinds = {name: ("opaque" if d.opaque else "alpha") if isinstance(d, PngPixels) else d.mode
             for name, d in decoded.items()}
    assert kinds == {"rgba_opaque": "opaque", "rgb": "opaque", "rgba_max_compression": "opaque",
                     "rgba_translucent": "alpha", "grey": "L", "palette": "P", "grey_alpha": "LA",
                     "rgb_colour_key": "RGB"}
    for name, d in decoded.items():
        if isinstance(d, PngPixels):
            pillow = np.asarray(decode_untrusted(variants[name], DEFAULT_MAX_PIXELS)[0].convert("RGBA"))
            assert np.array_equal(d.rgba, pillow), name
    monkeypatch.setitem(sys.modules, "pyspng", None)  # import fails: Pillow decodes everything
    assert not isinstance(decode_untrusted_fast(variants["rgb"], DEFAULT_MAX_PIXELS)[0], PngPixels)
    for name, data in variants.items():
        slow = image_features(data)
        assert (slow.width, slow.height, slow.format) == (fast[name].width, fast[name].height, "PNG"), name
        assert slow.thumb == fast[name].thumb, name
        assert slow.phash == fast[name].phash, name


def test_the_fast_png_decoder_still_rejects_corrupt_and_huge_pngs() -> None:
    pytest.importorskip("pyspng", reason="the [build] extra installs pyspng")
    from zuhyo.construct.filter.near_duplicates import image_features

    data = _png_variants()["rgba_opaque"]
    with pytest.raises(ImageError, match="cannot decode"):
        image_features(data[: len(data) // 2])
    damaged = bytearray(data)  # libspng alone would decode this one; the CRC check sends it to Pillow
    damaged[damaged.index(b"IDAT") + 200] ^= 0xFF
    with pytest.raises(ImageError, match="cannot decode"):
        image_features(bytes(damaged))
    with pytest.raises(ImageError, match="pixels"):
        image_features(bomb(20_000, 20_000))
