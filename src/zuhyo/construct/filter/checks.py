"""The filter's file checks: an image must be in the store, decode as an allowed format, and be large enough.

HakushoBench §3.1 removes "low-resolution images whose contents are difficult to read" from the images it
collected from white papers; DomainCQA §4.1 excludes arXiv visual assets "that were unclear or too small". Neither
paper gives a number, so the defaults here are zuhyo's: a chart whose shorter side is under 150 px or that has
under 60,000 pixels (e.g. 300x200) cannot show readable tick labels; ``--min-side`` / ``--min-pixels`` change them.
"""

from __future__ import annotations

from dataclasses import dataclass

from zuhyo.construct.filter.near_duplicates import ImageFeatures, image_features
from zuhyo.errors import ImageError

DEFAULT_MIN_SIDE = 150
DEFAULT_MIN_PIXELS = 60_000

UNREADABLE = "unreadable"
LOW_RESOLUTION = "low_resolution"


@dataclass(frozen=True)
class Unreadable:
    """An image that failed the file checks, with why."""

    reason: str


def inspect_image(data: bytes | None) -> ImageFeatures | Unreadable:
    """Features of an image's bytes, or why it is unreadable (missing from the store, not an image, corrupt,
    a format zuhyo does not accept, too many pixels). Runs in executor workers."""
    if data is None:
        return Unreadable("image missing from the image store")
    try:
        return image_features(data)
    except ImageError as e:
        return Unreadable(str(e))


def resolution_problem(width: int, height: int, min_side: int, min_pixels: int) -> str | None:
    """Why a ``width`` x ``height`` image is too small to read, or None."""
    if min(width, height) < min_side:
        return f"low resolution: {width}x{height}, shorter side under {min_side} px"
    if width * height < min_pixels:
        return f"low resolution: {width}x{height} = {width * height:,} pixels, under {min_pixels:,}"
    return None
