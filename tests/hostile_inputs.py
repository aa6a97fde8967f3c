"""Hostile and broken inputs for the collectors, written by the tests themselves (no downloaded samples).

Raw PDFs are written object by object with a correct cross-reference table, so that mupdf reads them as they are
(no repair) and meets exactly the trap each one sets: an image that declares 12,000 × 12,000 pixels in a few bytes,
a page tree whose ``/Count`` lies, a page larger than mupdf's limits. ``broken_variants`` derives many damaged
copies of a file (truncated, bytes flipped, cut in the middle) for the fuzz test.
"""

from __future__ import annotations

import gzip
import io
import random
import tarfile
import zlib
from collections.abc import Iterator


def raw_pdf(objects: list[bytes], *, root: int = 1) -> bytes:
    """A PDF of ``objects`` (object 1 … n, their bodies without ``N 0 obj``) with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def image_pages_pdf(images: list[tuple[int, int, tuple[float, float, float, float]]], *,
                    page: tuple[float, float] = (595, 842), count: int | None = None,
                    data: bytes | None = None) -> bytes:
    """One page placing RGB image XObjects ``(width px, height px, (x, y, w, h) in points)``; each image's stream
    is ``data`` (default: a few flate-compressed zero bytes: mupdf pads the rest, so a tiny file declares a huge
    image). ``count`` overrides the page tree's ``/Count`` (a lie when it is not 1)."""
    payload = data if data is not None else zlib.compress(b"\0" * 64)
    names = b" ".join(b"/Im%d %d 0 R" % (k, 5 + k) for k in range(len(images)))
    content = b"".join(b"q %g 0 0 %g %g %g cm /Im%d Do Q\n" % (w, h, x, page[1] - y - h, k)
                       for k, (_, _, (x, y, w, h)) in enumerate(images))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % (1 if count is None else count),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << /XObject << %s >> >> /Contents 4 0 R >>"
        % (page[0], page[1], names),
        _stream(b"", content),
    ]
    for w, h, _ in images:
        objects.append(_stream(b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                               b"/BitsPerComponent 8 /Filter /FlateDecode" % (w, h), payload))
    return raw_pdf(objects)


def huge_image_pdf(side: int = 12_000) -> bytes:
    """~1.3 KB that declares one ``side`` × ``side`` RGB image placed as a figure."""
    return image_pages_pdf([(side, side, (50, 50, 400, 400))])


def striped_image_pdf(side: int = 18_000, stripes: int = 18) -> bytes:
    """A ``side`` × ``side`` picture made of touching stripes (each under the pixel limit, together far over)."""
    h = side // stripes
    pt = 400 / stripes
    return image_pages_pdf([(side, h, (50, 50 + k * pt, 400, pt)) for k in range(stripes)])


def bomb_image_pdf(side: int = 14_000) -> bytes:
    """An image over twice Pillow's own limit: Pillow raises ``DecompressionBombError`` on it."""
    return image_pages_pdf([(side, side, (50, 50, 400, 400))])


def wrong_count_pdf() -> bytes:
    """A one-page PDF whose page tree claims 5 pages."""
    return image_pages_pdf([(100, 80, (50, 50, 200, 160))], count=5, data=zlib.compress(b"\x80" * 100 * 80 * 3))


def oversized_page_pdf() -> bytes:
    """A page of 200,000 × 200,000 points with a captioned vector box on it (rendering it whole is refused)."""
    content = (b"0 0 0 RG 10 w 1000 1000 180000 180000 re S\n"
               b"BT /F1 20 Tf 1000 181030 Td (Figure 1: huge) Tj ET\n")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200000 200000] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return raw_pdf(objects)


def png_bytes(size: tuple[int, int] = (120, 80)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, (200, 40, 40)).save(buf, "PNG")
    return buf.getvalue()


def png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR declaring ``width`` × ``height`` (valid CRC), then a few bytes of nothing."""
    import struct

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    idat = zlib.compress(b"\0" * 1024)
    return (b"\x89PNG\r\n\x1a\n" + chunk + struct.pack(">I", len(idat)) + b"IDAT" + idat
            + struct.pack(">I", zlib.crc32(b"IDAT" + idat)))


def tarball(members: dict[str, bytes], *, gz: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unclosed_figures_tex(n: int) -> bytes:
    return (b"\\documentclass{article}\n\\begin{document}\n" + b"\\begin{figure}\n" * n
            + b"\\end{document}\n")


def broken_variants(data: bytes, n: int, seed: int = 0) -> Iterator[bytes]:
    """``n`` damaged copies of ``data``: truncated, bytes overwritten, a slice cut out, a slice repeated."""
    rng = random.Random(seed)
    for k in range(n):
        b = bytearray(data)
        how = k % 4
        if how == 0:
            b = b[: rng.randrange(1, max(2, len(b)))]
        elif how == 1:
            for _ in range(rng.randrange(1, 20)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif how == 2:
            i = rng.randrange(len(b))
            del b[i: i + rng.randrange(1, 400)]
        else:
            i = rng.randrange(len(b))
            b[i:i] = b[i: i + rng.randrange(1, 400)] * rng.randrange(2, 50)
        yield bytes(b)


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data)


def run_limited(args: list[str], *, memory_bytes: int, timeout_s: float, cwd: str | None = None):  # noqa: ANN201
    """``python -m zuhyo ARGS`` in a subprocess whose address space is capped at ``memory_bytes`` (``RLIMIT_AS``)
    and whose run is capped at ``timeout_s``; returns the CompletedProcess (``subprocess.TimeoutExpired`` past it)."""
    import os
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}
    return subprocess.run([sys.executable, "-m", "zuhyo", *args], capture_output=True, text=True,
                          timeout=timeout_s, preexec_fn=limit, env=env, cwd=cwd, check=False)
