"""Reading a sample's image bytes from wherever its reference points."""

from __future__ import annotations

from pathlib import Path

from zuhyo.benchmarks.base import LoadResult
from zuhyo.errors import ImageError
from zuhyo.images.localfile import read_regular_file
from zuhyo.schema import ImageRef, Sample


def read_image_bytes(ref: ImageRef, base_dir: Path | None, cache_dir: Path | None = None) -> bytes:
    """The encoded bytes of ``ref``: embedded data, a local file, or a cached download (by sha256 / URL).

    Local files are read with :func:`~zuhyo.images.localfile.read_regular_file` (regular files only, byte cap);
    whether the path may be read at all was decided when the benchmark was loaded (``load_benchmark``).
    """
    if ref.data is not None:
        return ref.data
    p = ref.resolve_path(base_dir)
    if p is not None:
        return read_regular_file(p)
    if ref.url is not None and cache_dir is not None:
        from zuhyo.images.fetch import cached_path_for_url

        cp = cached_path_for_url(cache_dir, ref.url)
        if cp is not None:
            return read_regular_file(cp)
        raise ImageError(f"image {ref.url} is not fetched yet; run `zuhyo images fetch` first")
    raise ImageError(f"image {ref.url} is URL-only; run `zuhyo images fetch` and pass --images DIR")


def embed_images(result: LoadResult) -> tuple[list[Sample], int]:
    """Samples with local images embedded as bytes; returns (samples, number of images that could not be read)."""
    out: list[Sample] = []
    missing = 0
    for s in result.samples:
        if s.image is not None and s.image.data is None and s.image.path is not None:
            try:
                data = read_image_bytes(s.image, result.base_dir)
            except ImageError:
                missing += 1
            else:
                s = s.model_copy(update={"image": s.image.model_copy(update={"data": data, "path": None})})
        out.append(s)
    return out, missing
