"""Image features that tell charts and tables from photographs, illustrations, logos and portraits.

A chart or a table is drawn: few distinct colours, large flat areas (background, bars), long straight horizontal
and vertical lines (axes, grid, rules) and text (tick labels, cells). A photograph has many colours, smooth
gradients and texture everywhere and no long straight lines. The features are computed on the image reduced to
at most 256 px on its longer side, in numpy, so one image costs a few milliseconds; the text density from
RapidOCR (optional) costs more. :func:`image_features` is a top-level function of plain bytes so
:func:`zuhyo.construct.executor.map_items` can run it on local processes or Ray workers.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

import numpy as np

#: Features from pixels alone, in the order the model stores them.
PIXEL_FEATURES = (
    "distinct_colours", "top8_colour_share", "mode_colour_share", "saturation_mean", "saturation_std",
    "luma_entropy", "saturation_entropy", "flat_block_share", "edge_density", "gradient_mean",
    "horizontal_line_share", "vertical_line_share", "aspect_log",
)
#: Features from RapidOCR's boxes (only when the model was trained with OCR).
OCR_FEATURES = ("text_boxes", "text_area_share")

_SIDE = 256
_EDGE = 24.0  # luminance step (0..255) that counts as an edge


def feature_names(ocr: bool) -> tuple[str, ...]:
    return PIXEL_FEATURES + (OCR_FEATURES if ocr else ())


def ocr_available() -> bool:
    """True when RapidOCR can be imported (the ``[ocr]`` extra)."""
    try:
        import rapidocr  # noqa: F401
    except ImportError:
        return False
    return True


def _entropy(values: np.ndarray, bins: int, top: float) -> float:
    hist, _ = np.histogram(values, bins=bins, range=(0.0, top))
    p = hist[hist > 0] / max(1, hist.sum())
    return float(-(p * np.log2(p)).sum() / np.log2(bins))


def _line_share(strong: np.ndarray) -> float:
    """Share of rows in which edge pixels run along at least 30 % of the width (long straight lines)."""
    if strong.size == 0:
        return 0.0
    return float((strong.mean(axis=1) >= 0.3).mean())


def pixel_features(rgb: np.ndarray) -> dict[str, float]:
    """The :data:`PIXEL_FEATURES` of an RGB uint8 array (already reduced)."""
    h, w, _ = rgb.shape
    px = rgb.reshape(-1, 3).astype(np.int32)
    q = (px >> 3)  # 5 bits per channel
    codes = (q[:, 0] << 10) | (q[:, 1] << 5) | q[:, 2]
    counts = np.bincount(codes, minlength=1 << 15)
    n = max(1, codes.size)
    nz = np.sort(counts[counts > 0])[::-1]
    f = rgb.astype(np.float32)
    mx, mn = f.max(axis=2), f.min(axis=2)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1.0), 0.0)
    luma = f @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    gy = np.abs(np.diff(luma, axis=0))  # (h-1, w): horizontal edges
    gx = np.abs(np.diff(luma, axis=1))  # (h, w-1): vertical edges
    bh, bw = h // 8, w // 8
    if bh and bw:
        blocks = luma[:bh * 8, :bw * 8].reshape(bh, 8, bw, 8).std(axis=(1, 3))
        flat = float((blocks < 2.0).mean())
    else:
        flat = 0.0
    edges = (gy[:, :-1] > _EDGE) | (gx[:-1, :] > _EDGE) if h > 1 and w > 1 else np.zeros((0, 0), bool)
    return {
        "distinct_colours": float(np.log1p(len(nz)) / np.log1p(1 << 15)),
        "top8_colour_share": float(nz[:8].sum() / n),
        "mode_colour_share": float(nz[0] / n) if len(nz) else 0.0,
        "saturation_mean": float(sat.mean()),
        "saturation_std": float(sat.std()),
        "luma_entropy": _entropy(luma, 32, 256.0),
        "saturation_entropy": _entropy(sat, 16, 1.0),
        "flat_block_share": flat,
        "edge_density": float(edges.mean()) if edges.size else 0.0,
        "gradient_mean": float((gy.mean() if gy.size else 0.0) + (gx.mean() if gx.size else 0.0)) / 255.0,
        "horizontal_line_share": _line_share(gy > _EDGE),
        "vertical_line_share": _line_share((gx > _EDGE).T),
        "aspect_log": float(np.log(w / h)),
    }


@lru_cache(maxsize=1)
def _ocr_engine() -> Any:
    """One RapidOCR engine per process (a worker builds its own on first use)."""
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "error"})


def ocr_features(rgb: np.ndarray) -> dict[str, float]:
    """Text density: number of text boxes (log-scaled) and the share of the area they cover."""
    result = _ocr_engine()(np.ascontiguousarray(rgb[:, :, ::-1]))
    h, w, _ = rgb.shape
    boxes = [] if result.boxes is None else list(result.boxes)
    area = 0.0
    for quad in boxes:
        xs, ys = [float(p[0]) for p in quad], [float(p[1]) for p in quad]
        area += (max(xs) - min(xs)) * (max(ys) - min(ys))
    return {"text_boxes": float(np.log1p(len(boxes))), "text_area_share": float(min(1.0, area / (h * w)))}


def decode_reduced(data: bytes, side: int = _SIDE) -> np.ndarray:
    """Decode ``data`` to RGB (transparency over white) with the longer side at most ``side`` px."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.draft("RGB", (side, side))
        if im.mode in ("RGBA", "LA", "P", "PA"):
            rgba = im.convert("RGBA")
            bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            im2 = Image.alpha_composite(bg, rgba).convert("RGB")
        else:
            im2 = im.convert("RGB")
        im2.thumbnail((side, side), Image.Resampling.BILINEAR)
        if min(im2.size) < 2:
            raise ValueError(f"image too small for features ({im2.size[0]}×{im2.size[1]} px)")
        return np.asarray(im2, dtype=np.uint8)


def image_features(item: tuple[bytes, bool]) -> list[float]:
    """Feature vector (in :func:`feature_names` order) of ``(image bytes, with_ocr)``; raises on a bad image."""
    data, with_ocr = item
    rgb = decode_reduced(data)
    feats = pixel_features(rgb)
    if with_ocr:
        feats.update(ocr_features(_for_ocr(data)))
    return [feats[k] for k in feature_names(with_ocr)]


def _for_ocr(data: bytes) -> np.ndarray:
    """OCR reads small text: a larger reduction (at most 1024 px) than the pixel features."""
    return decode_reduced(data, 1024)
