"""Content-addressed image store and format sniffing."""

from __future__ import annotations

_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", ".png", "image/png"),
    (b"\xff\xd8\xff", ".jpg", "image/jpeg"),
    (b"GIF87a", ".gif", "image/gif"),
    (b"GIF89a", ".gif", "image/gif"),
    (b"BM", ".bmp", "image/bmp"),
)


def sniff_image_type(data: bytes) -> tuple[str, str] | None:
    """(suffix, mime) from the file's magic bytes, or None when it is not a known image format."""
    for magic, suffix, mime in _MAGIC:
        if data.startswith(magic):
            return suffix, mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp", "image/webp"
    return None


def sniff_image_suffix(data: bytes) -> str:
    """File suffix for an encoded image (``.bin`` when unknown)."""
    found = sniff_image_type(data)
    return found[0] if found else ".bin"
