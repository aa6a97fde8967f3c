"""Checking that downloaded bytes are a usable image: decodes, is not truncated, is not a decompression bomb."""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from zuhyo.errors import ImageError
from zuhyo.images.store import sniff_image_type

if TYPE_CHECKING:
    import numpy as np
    from PIL.Image import Image
    from PIL.ImageFile import ImageFile

#: Pillow's own default ``Image.MAX_IMAGE_PIXELS`` (1024 * 1024 * 1024 // 4 // 3), as an explicit constant so the
#: limit does not change when some other code changes Pillow's global.
DEFAULT_MAX_PIXELS = 89_478_485
#: 50 MiB: far above any chart or table figure, small enough to hold in memory at fetch concurrency.
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
#: Raster formats figures are published in. Restricting Pillow to these keeps exotic decoders (EPS needs
#: Ghostscript; ICNS/ICO pick sub-images) out of the path of untrusted downloads.
#: (Multi-picture JPEGs open as JPEG and report format MPO.)
ALLOWED_FORMATS: tuple[str, ...] = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")

_FORMAT_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "MPO": "image/jpeg", "GIF": "image/gif",
                "WEBP": "image/webp", "BMP": "image/bmp", "TIFF": "image/tiff"}
_FORMAT_SUFFIX = {"PNG": ".png", "JPEG": ".jpg", "MPO": ".jpg", "GIF": ".gif", "WEBP": ".webp", "BMP": ".bmp",
                  "TIFF": ".tif"}


class ImageInfo(BaseModel):
    """What verification learnt about an image."""

    model_config = ConfigDict(frozen=True)

    width: int
    height: int
    format: str
    """Pillow format name: PNG, JPEG, GIF, WEBP, BMP, TIFF, MPO."""
    mime: str
    """MIME type, e.g. image/png."""

    @property
    def suffix(self) -> str:
        """File suffix for the store, e.g. ``.png``."""
        return _FORMAT_SUFFIX.get(self.format, ".bin")


def describe_non_image(data: bytes) -> str:
    """A short hint at what non-image bytes are (for error messages): HTML, XML, JSON, PDF, text or binary data.

    Never the bytes themselves: a file read by mistake (a link to ``/etc/passwd``) must not leak into error
    messages, item errors and logs."""
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head[:200]:
        return "looks like an HTML page"
    if head.startswith(b"<?xml") or head.startswith(b"<svg"):
        return "looks like XML/SVG (vector images are not supported)"
    if head.startswith((b"{", b"[")):
        return "looks like JSON"
    if head.startswith(b"%pdf"):
        return "looks like a PDF"
    sample = data[:512]
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as e:  # a cut multi-byte character at the end is still text
        text = sample[:e.start].decode("utf-8") if e.start >= len(sample) - 3 else ""
    if text and all(c.isprintable() or c in "\t\r\n" for c in text):
        return "looks like text"
    return f"binary data of no known format ({len(data):,} bytes)"


def check_dimensions(width: int, height: int, max_pixels: int) -> None:
    """Reject zero-size images and images over ``max_pixels`` (decompression bombs), from header sizes."""
    if width <= 0 or height <= 0:
        raise ImageError(f"image header declares a zero size ({width}x{height})")
    if width * height > max_pixels:
        raise ImageError(f"image is {width}x{height} = {width * height:,} pixels, over the {max_pixels:,}-pixel "
                         "limit (possible decompression bomb); not decoded")


def verify_image(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES,
                 formats: tuple[str, ...] = ALLOWED_FORMATS) -> ImageInfo:
    """Check that ``data`` is a complete, decodable raster image of sane size; raise :class:`ImageError` if not.

    Order matters for safety: the size from the header is checked against ``max_pixels`` *before* any pixel is
    decoded, with our own limit rather than Pillow's global ``Image.MAX_IMAGE_PIXELS`` (which other code may
    raise or set to None). Pillow's own guard still applies on top and is reported the same way. Then
    ``verify()`` checks the file structure (for PNG: every chunk CRC and the IEND end marker, so truncated files
    fail), and finally the first frame's pixels are actually decoded.
    """
    if not data:
        raise ImageError("empty file (0 bytes)")
    if len(data) > max_bytes:
        raise ImageError(f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit")
    from PIL import Image

    try:
        im = open_image_header(data, formats)
    except Exception as e:  # any parser failure on untrusted bytes means "corrupt"
        raise ImageError(f"corrupt image header: {type(e).__name__}: {e}") from None
    if im is None:
        sniffed = sniff_image_type(data)
        if sniffed is not None:
            raise ImageError(f"corrupt or truncated {sniffed[1]} header ({len(data):,} bytes)")
        raise ImageError(f"not an image in a supported format ({', '.join(formats)}); "
                         f"{describe_non_image(data)}")
    with im:
        width, height = im.size
        fmt = im.format or "unknown"
        check_dimensions(width, height, max_pixels)
        try:
            im.verify()
        except Exception as e:
            raise ImageError(f"corrupt or truncated {fmt} file ({width}x{height}): {type(e).__name__}: {e}") from None
    try:
        # verify() leaves the image object unusable, so decode from a fresh parse.
        with Image.open(BytesIO(data), formats=list(formats)) as im:
            im.load()
    except Image.DecompressionBombError as e:
        raise ImageError(f"decompression bomb rejected by Pillow: {e}") from None
    except Exception as e:
        raise ImageError(f"cannot decode {fmt} pixels ({width}x{height}; file truncated or corrupt): "
                         f"{type(e).__name__}: {e}") from None
    return ImageInfo(width=width, height=height, format=fmt, mime=_FORMAT_MIME.get(fmt, f"image/{fmt.lower()}"))


def open_image_header(data: bytes, formats: tuple[str, ...]) -> ImageFile | None:
    """Parse only the header with the first format plugin that accepts ``data``; None when none does.

    This is what ``Image.open`` does minus its call to Pillow's global decompression-bomb check, so that our own
    ``max_pixels`` limit is applied first, whatever ``Image.MAX_IMAGE_PIXELS`` is set to.
    """
    import struct

    from PIL import Image

    Image.preinit()
    prefix = data[:16]
    for fmt in formats:
        if fmt not in Image.OPEN:
            Image.init()
        if fmt not in Image.OPEN:
            raise ValueError(f"Pillow has no decoder for format {fmt}")
        factory, accept = Image.OPEN[fmt]
        accepted = True if accept is None else accept(prefix)
        if isinstance(accepted, str) or not accepted:  # a str is Pillow's "missing codec" notice
            continue
        try:
            return factory(BytesIO(data), "")
        except (SyntaxError, IndexError, TypeError, struct.error):
            continue  # the same "not this format" signals Image.open itself skips on
    return None


def decode_untrusted(data: bytes, max_pixels: int, *, context: str = "cannot decode image",
                     not_image: str | None = None, draft_side: int | None = None) -> tuple[Image, tuple[int, int]]:
    """Decode untrusted bytes of an allowed format, checking the size before any pixel is decoded.

    Returns the loaded image and its true size (a JPEG decoded in draft mode, when ``draft_side`` asks for a reduced
    scale of at least that side, is smaller than the file). Raises :class:`ImageError` as
    ``"{not_image or context}: <what the bytes are>"`` when no allowed format accepts them and
    ``"{context}: <decoder error>"`` when decoding fails.
    """
    image, size = decode_untrusted_fast(data, max_pixels, context=context, not_image=not_image,
                                        draft_side=draft_side, fast_png=False)
    assert not isinstance(image, PngPixels)
    return image, size


@dataclass(frozen=True)
class PngPixels:
    """An 8-bit RGB or RGBA PNG decoded by libspng (:func:`decode_untrusted_fast`)."""

    rgba: np.ndarray
    """(height, width, 4) uint8."""
    opaque: bool
    """Every pixel's alpha is 255 (always so for an RGB PNG)."""


def decode_untrusted_fast(data: bytes, max_pixels: int, *, context: str = "cannot decode image",
                          not_image: str | None = None, draft_side: int | None = None,
                          fast_png: bool = True) -> tuple[Image | PngPixels, tuple[int, int]]:
    """:func:`decode_untrusted`, except that with ``fast_png`` an 8-bit RGB or RGBA PNG without a colour key is
    decoded by libspng when ``pyspng`` is installed and comes back as :class:`PngPixels`: the same pixels as
    Pillow's, about twice as fast, and already an array (a Pillow image gives numpy its pixels through an encoder
    pass that costs about as much again). Its format is PNG."""
    try:
        im = open_image_header(data, ALLOWED_FORMATS)
        if im is None:
            raise ImageError(f"{not_image or context}: {describe_non_image(data)}")
        size = im.size
        check_dimensions(*size, max_pixels)  # before decoding any pixel
        if fast_png:
            fast = _spng_decode(data, im)
            if fast is not None:
                return fast, size
        if draft_side is not None and im.format == "JPEG":
            im.draft("RGB", (draft_side, draft_side))
        im.load()
    except ImageError:
        raise
    except Exception as e:  # any decoder failure on untrusted bytes means "corrupt"
        raise ImageError(f"{context}: {type(e).__name__}: {e}") from None
    return im, size


def _png_checksums_match(data: bytes) -> bool:
    """Whether every complete chunk of a PNG carries the CRC of its type and data (tens of microseconds for a
    chart: zlib's crc32)."""
    import struct
    import zlib

    pos = 8
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        end = pos + 8 + length
        if end + 4 > len(data):
            return True  # truncated: the decoder reports it
        (crc,) = struct.unpack_from(">I", data, end)
        if zlib.crc32(memoryview(data)[pos + 4:end]) != crc:
            return False
        pos = end + 4
    return True


def _spng_decode(data: bytes, header: ImageFile) -> PngPixels | None:
    """The pixels of an 8-bit RGB / RGBA PNG without a colour key through libspng, or None (not such a PNG, no
    ``pyspng``, or libspng refused it: Pillow then decodes it, or says why it cannot)."""
    if header.format != "PNG" or header.mode not in ("RGB", "RGBA") or "transparency" in header.info:
        return None
    if len(data) < 26 or data[24] != 8:  # IHDR bit depth: 16-bit PNGs go through Pillow
        return None
    if not _png_checksums_match(data):  # libspng decodes damaged chunks Pillow rejects: let Pillow say why
        return None
    try:
        import pyspng
    except ImportError:
        return None
    import numpy as np

    try:
        pixels = pyspng.load(data, "RGBA")
    except Exception:
        return None
    if pixels.ndim != 3 or pixels.shape[2] != 4 or (pixels.shape[1], pixels.shape[0]) != header.size:
        return None
    opaque = header.mode == "RGB" or int(np.frombuffer(pixels, dtype="<u4").min()) >= 0xFF000000  # alpha: high byte
    return PngPixels(pixels, opaque)


def on_white(im: Image) -> Image:
    """A transparent image composited on white (how a chart is seen on a page); others unchanged."""
    from PIL import Image as PILImage

    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        return PILImage.alpha_composite(PILImage.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    return im
