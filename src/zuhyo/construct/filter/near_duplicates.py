"""Near-duplicate figures: a cheap perceptual descriptor for candidates, then a verification that tells two charts
of the same kind apart.

A plain perceptual hash cannot do this alone: charts of one kind and style hash alike (imagehash pHash over all
pairs at Hamming 10 finds the planted duplicates of a 20k chart corpus with precision 0.0006, issue 10
"Performance"). So, per image (one decode, :func:`image_features`, in the executor's workers):

* a 128x128 colour thumbnail of the image without its uniform borders and a screenshot's chrome
  (:func:`zuhyo.construct.filter.alignment.figure_box`: a padded, framed or screenshotted copy shows its
  original's content) - the verification input; colour matters (two pies of one palette differ in hue where their
  grey levels agree), except that a pair with a grey image is compared on luma (a greyscale copy) - the 64-bit
  DCT perceptual hash of it (the algorithm of ``imagehash.phash``, as :mod:`zuhyo.images.phash` uses),
* descriptors: the thumbnail's body (the title band at the top left out, so a retitled copy still matches)
  averaged to 12x12 and normalised to zero mean and unit length - of the whole image and of nine crop windows
  (:data:`CROP_WINDOWS`), and
* what every comparison of the image reuses (:class:`zuhyo.construct.filter.alignment.Prepared`: profiles, ink).

Candidates (:func:`candidate_pairs`): a copy cropped by a few per cent shows about one window of its original, so
each image's whole-image descriptor is looked up among all the images' crop-window descriptors (a k-d tree over a
PCA projection, ``scipy.spatial.cKDTree``: n log n, never all pairs), and each image keeps the
:data:`DEFAULT_NEIGHBOURS` images whose windows lie nearest. Each candidate pair is verified (:func:`score_pairs`,
vectorised over pairs in :mod:`zuhyo.construct.filter.alignment`) by aligning one thumbnail to the other for a crop
of up to 10 % per axis and comparing colours: the score is 1 minus the share of the chart's ink that differs beyond
what a pixel of misalignment explains, and a pair whose aligned difference contains a solid patch (more than
:data:`MAX_SOLID` pixels whose 3x3 neighbourhood all differ) fails - a copy that was resized, recompressed, cropped
or retitled scores near 1 with no solid difference; a chart of the same kind with other data does not. When the
images' bytes are at hand (the filter stage; :func:`verify_scores` with ``images``) the solid test is left to a
**second look** (:mod:`zuhyo.construct.filter.regions`): the pairs whose thumbnails score at least ``min_score`` are
read again, aligned at (up to) their own resolution and fail when their difference holds a compact region of more
than :data:`MAX_REGION` pixels - one changed table cell or bar, a pixel or two in the thumbnail (issue 22); a pair
of lossless images of one size each of whose thumbnails has ink the other lacks (:func:`ink_apart`: a template
drawn with other data) fails before that look. Pairs that pass join star clusters (:func:`clusters`), whose
members are then verified against the member kept (:mod:`zuhyo.construct.filter.duplicate_groups`).

The driver stacks the features (``feature_store.stack_features``); the thumbnails go to a memory map that local workers
read by path.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from zuhyo.construct.filter.alignment import THUMB, TITLE_BAND, figure_box, luma
from zuhyo.images.verify import DEFAULT_MAX_PIXELS, PngPixels, decode_untrusted_fast

if TYPE_CHECKING:
    import numpy as np
    from PIL.Image import Image

    from zuhyo.construct.filter.alignment import Prepared
    from zuhyo.construct.filter.regions import RegionCheck

T = TypeVar("T")
PairProgress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: pairs done of a phase of the verification (:data:`THUMBNAIL_PHASE`,
:data:`SECOND_LOOK_PHASE`), called as chunks finish."""
THUMBNAIL_PHASE = "comparing thumbnails"
SECOND_LOOK_PHASE = "second looks"
ImageSource = Callable[[int], bytes]
"""The bytes of image ``i`` (indexed like the features), read again for the second look at a pair
(:func:`region_scores`): nothing at full resolution is kept per image."""

DESC = 12
"""Side of the blurred descriptor grid."""
CROP_WINDOWS = ((0.025, 0.975), (0.0, 0.95), (0.05, 1.0))
"""Per axis, the windows (fractions of the side) whose descriptors stand for the crops a copy may show: a
centred 5 % crop and 5 % off either end (issue 10 crops 2-8 % per axis at any offset; the 12x12 blur absorbs
the rest). Nine windows per image."""
MAX_SOLID = 3
"""Pixels of solid difference (see :mod:`zuhyo.construct.filter.alignment`) a copy may show after alignment, when
the pair is judged on thumbnails alone (no image bytes to look at again: :func:`verified_pairs` without
``images``)."""
MAX_SOLID_SHARE = 0.25
"""With the second look, the share of the thumbnail's body a solid difference may still cover: a copy whose palette
changed reaches ~15 % on the hard corpus's tuning split, two different images of one smooth tone everywhere 45 %
(tests/test_construct_chart_resnet.py's corpus)."""
SOLID_NO_LOOK = 20
"""With the second look, a pair whose thumbnails still differ in more solid pixels than this after alignment and
agree in less than :data:`SOLID_NO_LOOK_BELOW` of their ink shows other data without a look at its images: on
both tuning splits of the hard corpus 37-42 % of the pairs sent to the second look were such and none of them
passed it, while copies with a solid difference that far over (a colour-map change, a screenshot aligned wrongly
on thumbnails) agree in at least 0.969 of their ink (bench/README.md)."""
SOLID_NO_LOOK_BELOW = 0.95
"""See :data:`SOLID_NO_LOOK`."""
SOLID_SOME_SHARE = 0.04
"""With the second look, a pair whose solid difference (over :data:`SOLID_NO_LOOK`) covers at most this share of
the thumbnail's body is looked at when its ink agrees in :data:`SOLID_SOME_BELOW` or more (not only
:data:`SOLID_NO_LOOK_BELOW`): a crop of an infographic's flat tiles, their edges a pixel off on the thumbnail's
grid, and crops resized into JPEGs of bars showed 35-438 px with 0.917-0.946 of their ink, and their second looks
0-40 px (issue 22's hard corpus, 24 seeds: 186 pairs a seed in 0.90-0.95 fail the gate; those within this share,
76 a seed, held 7 such copies, one copy-negative pair at the limit and no other pair that passes; beyond it,
three pairs of an area chart against a bar chart pass, bench/README.md "twenty-fifth session")."""
SOLID_SOME_BELOW = 0.90
"""See :data:`SOLID_SOME_SHARE`."""


def ink_apart(thumbs: np.ndarray, pairs: np.ndarray, directions: Directions, where: np.ndarray) -> np.ndarray:
    """(m, 2) int64: for each pair at ``where`` (the others -1), the pixels of ink of each thumbnail (first the
    image shown into, then the one shown: :attr:`Directions.forward`), aligned as the verification found them
    (``directions``) and turned by each of :data:`INK_APART_TURNS` (the least kept), that the other leaves
    unexplained - no ink at half the level nor a colour edge (:data:`INK_APART_LEVEL`) within
    :data:`INK_APART_REACH` pixels (:func:`zuhyo.construct.filter.alignment.unexplained_ink`); the title band (a
    retitled copy) and the rim of what both show are left out. Where the pair matched with its colours mapped
    (:attr:`Directions.mapped`), the first is drawn in the second's colours first
    (:func:`zuhyo.construct.filter.alignment.recoloured_onto`): another colour map changes which shades are darker.
    A copy loses or fades ink (a pale palette, a crop) but adds none where its original has none, so one of its
    two counts is about 0; a chart of one template with its markers and lines elsewhere has ink of its own on
    both sides. The second look counts the largest region, each such marker a region under :data:`MAX_REGION`
    or just over: most of the scale corpus's second looks (bench/README.md, "twenty-ninth session"). Ours, not
    from the papers."""
    import numpy as np

    from zuhyo.construct.filter.alignment import recoloured_onto, unexplained_ink

    out = np.full((len(pairs), 2), -1, dtype=np.int64)
    with _opencv_one_thread():
        for q in np.flatnonzero(where):
            a, b = pairs[q]
            into, shown = (a, b) if directions.forward[q] else (b, a)  # into's thumbnail onto shown's, as looked at
            ta, tb = np.asarray(thumbs[into]), np.asarray(thumbs[shown])
            if directions.mapped[q]:
                ta = recoloured_onto(ta, tb, directions.affines[q])
            out[q] = unexplained_ink(ta, tb, directions.affines[q], INK_APART_LEVEL, INK_APART_REACH,
                                     INK_APART_TURNS, enough=MAX_INK_APART)
    return out


def tone_fails(scores: np.ndarray, solids: np.ndarray, side: int = THUMB) -> np.ndarray:
    """(m,) bool: the pairs whose thumbnails (``side`` px) differ in tone too much to show one image, whatever a
    second look would find: a solid difference over :data:`MAX_SOLID_SHARE` of the body, or over
    :data:`SOLID_NO_LOOK` with a score under :data:`SOLID_NO_LOOK_BELOW` (:data:`SOLID_SOME_BELOW` for one within
    :data:`SOLID_SOME_SHARE` of the body)."""
    import numpy as np

    body = side * (side - round(TITLE_BAND * side))
    below = np.where(solids <= SOLID_SOME_SHARE * body, SOLID_SOME_BELOW, SOLID_NO_LOOK_BELOW)
    return np.asarray((solids > MAX_SOLID_SHARE * body) | ((solids > SOLID_NO_LOOK) & (scores < below)))


INK_APART_LEVEL = 30
"""Luma levels under the brightest pixel of its 7x7 neighbourhood at which a thumbnail pixel is ink for
:func:`ink_apart`; ink at half of it, or a colour edge of this many levels, explains the other image's."""
INK_APART_REACH = 4
"""Thumbnail pixels (of :data:`THUMB`) from a pixel of ink within which the other image's ink explains it:
resampling spreads an edge by a pixel or two, a turn between :data:`INK_APART_TURNS` moves a corner by ~1."""
INK_APART_TURNS = (0.0, -0.75, 0.75, -1.5, 1.5)
"""Degrees by which :func:`ink_apart` also turns one thumbnail onto the other, the least count kept: the
thumbnails' alignment does not turn, and a copy rotated by 1.5 degrees moves its corners by ~2.4 pixels (a
rotated infographic's tiles left 13 pixels on its unturned side)."""
MAX_INK_APART = 10
"""Pixels of each thumbnail's ink that the other leaves unexplained (:func:`ink_apart`) above which, on both sides,
a pair of lossless images of one size fails without a second look: a template drawn with other data, its markers
and lines elsewhere. On the hard corpus's tuning seeds copies of one size (rotated, retitled, in another palette)
leave none on one side, where the larger side reaches hundreds (a pale palette drawn dark); look-alikes of one
template on the scale corpus more than 10 on both in six of seven (bench/README.md, "twenty-ninth session"). A
pair that matched with its colours mapped is counted with the first drawn in the second's colours: as they are, a
heatmap in another colour map leaves ink on both sides (its luma's order changes); so drawn, the 218 colour-map
copies of one size that pass a second look on 26 seeds of the hard corpus leave at most 2 on one side, and 883 of
the scale corpus's 1,055 second looks of such pairs (2,000 charts, none passing) are failed without one
(bench/README.md, "thirtieth session")."""

MAX_REGION = 40
"""Pixels of the largest difference region (:func:`zuhyo.construct.filter.regions.largest_region`, at the images'
own resolution) a copy may show. On the hard corpus's tuning split (bench/README.md) the changed number of a table
is 22-160 such pixels, a changed bar or panel hundreds; copies are at most 40 but for re-renders at another figure
size (400-900: text keeps its size in points while the axes scale) and colour-map changes. A region that is most of
what the pair differs in counts twice its pixels (:attr:`zuhyo.construct.filter.regions.RegionCheck.alone_share`):
one changed digit of 22-39 px is other data, a copy's residue of that size among many is not."""
DEFAULT_NEIGHBOURS = 8
"""Candidates per image: its nearest originals by crop window. Rank 2 held every planted copy of issue 10's
5,000 charts, but not of look-alike kinds (tables, pies; issue 22): on the hard corpus's tuning split the true
pair is outside the nearest 2 / 6 / 12 for 32 / 18 / 12 of 150 copies (bench/README.md)."""
DEFAULT_MAX_DESCRIPTOR_DISTANCE = 1.2
"""Bound on a candidate's descriptor distance (projected): a loose one - on 5,000 charts any bound from 0.8 up
leaves the candidates unchanged, and 0.6 still keeps every planted copy."""
DEFAULT_MIN_SCORE = 0.80
"""Thumbnail verification score two images need to be near duplicates. With the second look at the images
(:data:`MAX_REGION`) the thumbnail's solid-difference test is left to it, and this bound only sends pairs to it:
on the hard corpus's tuning split 0.80 rather than 0.86 lets 1 more copy in 95 through and no hard negative
(bench/README.md). Thumbnails alone (before issue 22's second look) used 0.86: on the 10,000-chart corpus's
candidates, scores from 0.85 to 0.86 held four look-alikes and no planted copy."""
EDGE_LEVEL = 40
"""Largest channel difference between neighbouring pixels of a thumbnail that makes an edge
(:func:`edge_descriptors`)."""
EDGE_NEIGHBOURS = 2
"""Candidates per image by the edges' descriptor too (:func:`near_duplicate_candidates`): on both tuning splits
of the hard corpus the original of every copy drawn with another colour map is its copy's nearest or second
nearest by edges, where by the luma descriptors it ranks up to 125th (bench/README.md). A third merged 2 more
copies on ten studied seeds, none on a fresh one, and cost 10 % more time on the scale corpus: not taken
(bench/README.md, "thirteenth session")."""
FINE_EDGE = 24
"""Side of the finer edges' grid (:func:`edge_descriptors`)."""
FINE_EDGE_LEVEL = 20
"""Channel difference between neighbouring pixels at which the finer edges' weight is full (a pale area's
border on the page, 25-35 levels: an edge only in part at :data:`EDGE_LEVEL`)."""
FINE_EDGE_NEIGHBOURS = 2
"""Candidates per image by the finer edges (:func:`near_duplicate_candidates`): an infographic drawn with another
colour map, among others of its layout, is its original's nearest or second nearest by them where by the coarser
edges it ranks up to 39th (a pale grey block on the page is no edge at :data:`EDGE_LEVEL`; bench/README.md,
"seventeenth session"). The second nearest merged 4 more copies on fourteen seeds, all such infographics (one
other of its layout 0.980 alike, the original 0.975), for 0.5 % more candidate pairs on the hard corpus and 1.7 %
on the scale corpus, where none of them verified ("eighteenth session")."""
FINE_EDGE_MIN_SIMILARITY = 0.85
"""Cosine similarity of the finer edges a candidate by them needs: the copies they found on the studied seeds
0.875-0.991, two thirds of the other charts they would add on the scale corpus (one template) under it, each pair
costing a comparison (bench/README.md, "seventeenth session")."""
FINE_EDGE_POOL = 30
"""Nearest images (in the PCA projection) among which the finer edges' :data:`FINE_EDGE_NEIGHBOURS` are chosen by
their similarity over all the grid's cells: 32 components blur the detail that tells one template's charts apart.
The coarser edges' two chosen so too found one copy more on the studied seeds (a map's 5 % crop) for 4 % more
candidate pairs on the scale corpus: not taken (bench/README.md, "seventeenth session")."""
_PCA_DIMS = 32


@dataclass(frozen=True)
class ImageFeatures:
    """What the filter needs of one image: its size and format, and the near-duplicate features."""

    width: int
    height: int
    format: str
    phash: int
    thumb: bytes
    """THUMB x THUMB x 3 uint8 RGB, row-major."""
    descriptors: bytes
    """(1 + len(CROP_WINDOWS)**2) x DESC*DESC float32: :func:`descriptors` of the thumbnail."""
    col_profile: bytes
    """THUMB float32: the thumbnail's :attr:`Prepared.col_profile <zuhyo.construct.filter.alignment.Prepared>`."""
    row_profile: bytes
    """THUMB float32: its row profile."""
    ink: int
    """Its body pixels off the background."""
    grey: bool = False
    """It has (almost) no colour (:attr:`Prepared.grey <zuhyo.construct.filter.alignment.Prepared>`)."""
    edges: bytes = b""
    """DESC*DESC float32: :func:`edge_descriptors` of the thumbnail."""
    fine_edges: bytes = b""
    """FINE_EDGE*FINE_EDGE float16: :func:`edge_descriptors` of the thumbnail."""
    content_area: float = 0.0
    """Pixels (in the image's own) of what the thumbnail shows (:func:`figure_box`: without uniform borders and a
    screenshot's chrome): of near duplicates the filter keeps the one showing the most (:func:`content_rank`)."""

    def without_arrays(self) -> ImageFeatures:
        """These features without the thumbnail, descriptors and profiles (what the filter keeps per image once
        they are stored in its arrays, or when the image is not compared)."""
        from dataclasses import replace

        return replace(self, thumb=b"", descriptors=b"", col_profile=b"", row_profile=b"", edges=b"",
                       fine_edges=b"")


def image_features(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageFeatures:
    """Decode once; size, format, the 64-bit pHash, the thumbnail, its descriptors and what comparisons reuse.
    Raises :class:`ImageError` when unreadable."""
    from zuhyo.construct.filter.alignment import prepare

    # A JPEG is decoded at a reduced scale (draft mode): 4-8x faster, plenty for a thumbnail; an 8-bit RGB(A) PNG
    # by libspng when installed (~2x faster than Pillow, the same pixels; bench/README.md).
    im, (width, height) = decode_untrusted_fast(data, max_pixels, not_image="not a readable image",
                                                draft_side=THUMB * 2)
    fmt = "PNG" if isinstance(im, PngPixels) else str(im.format)
    rgb, shown = _thumbnail_and_share(im)
    prep = prepare(rgb[None])
    edges, fine_edges = edge_descriptors(rgb[None])
    return ImageFeatures(width=width, height=height, format=fmt, phash=dct_hash(luma(rgb)), thumb=rgb.tobytes(),
                         descriptors=descriptors(rgb[None])[0].tobytes(),
                         col_profile=prep.col_profile[0].tobytes(), row_profile=prep.row_profile[0].tobytes(),
                         ink=int(prep.ink[0]), grey=bool(prep.grey[0]),
                         edges=edges[0].tobytes(), fine_edges=fine_edges[0].tobytes(),
                         content_area=width * height * shown)


CONTENT_STEPS = 8
"""Steps per doubling of :attr:`ImageFeatures.content_area` that :func:`content_rank` tells apart (~9 %)."""


LOSSY_STEPS = CONTENT_STEPS
"""What a lossy image (a JPEG: :data:`zuhyo.construct.filter.regions.LOSSY_FORMATS`) gives up in
:func:`best_first`'s ranking: one doubling of content, so a recompressed copy is kept over a lossless image only
when it shows more than twice the pixels (a copy enlarged and recompressed was kept over its PNG original, and
the original's other copies, verified against the JPEG, were left out: bench/README.md, "tenth session")."""


def best_first(width: int, height: int, content_area: float, lossy: bool = False) -> tuple[int, int]:
    """Sort key of near duplicates, the one to keep first: the most content (:func:`content_rank` of
    ``content_area``; the whole image when not known; :data:`LOSSY_STEPS` less for a ``lossy`` image), then the
    least around it (a padded copy or a screenshot shows its original's content with more pixels around it)."""
    area = width * height
    return -(content_rank(content_area or area) - (LOSSY_STEPS if lossy else 0)), area


def content_rank(area: float) -> int:
    """How much an image shows, in steps of 1/:data:`CONTENT_STEPS` of a doubling: a copy resized up or down is
    steps away from its original, a padded or screenshotted copy (the same content, more around it) within one
    (its content box is found on a 128 px grid: a pixel of it is ~1 % of a side)."""
    import math

    return round(CONTENT_STEPS * math.log2(max(area, 1.0)))


def thumbnail(im: Image | PngPixels) -> np.ndarray:
    """(THUMB, THUMB, 3) uint8: ``im`` composited on white (how a chart is seen on a page) and shrunk by area
    averaging. A transparent image is averaged premultiplied, then composited (the same as compositing first).

    Halving with exact 2x2 means (OpenCV's vectorised integer-factor path) while both sides stay at least twice
    the thumbnail's, then one area resize: ~0.5 ms for an 800x600 chart where one area resize of the whole image
    takes ~1.2 ms in Pillow (bench/README.md); within a level or two of it on average."""
    return _thumbnail_and_share(im)[0]


def _thumbnail_and_share(im: Image | PngPixels) -> tuple[np.ndarray, float]:
    """:func:`thumbnail` and the share of the image's area it shows (its :func:`figure_box`)."""
    import numpy as np

    if isinstance(im, PngPixels):
        if im.opaque:  # alpha dropped first: the same pixels and box (an opaque alpha is uniform), less to shrink
            import cv2

            return _shrink(cv2.cvtColor(im.rgba, cv2.COLOR_RGBA2RGB))
        rgba = im.rgba
    elif im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = np.asarray(im.convert("RGBA"))
    else:
        return _shrink(np.asarray(im if im.mode == "RGB" else im.convert("RGB")))
    alpha = rgba[:, :, 3:4].astype(np.uint16)
    premultiplied = (rgba[:, :, :3] * alpha + 127) // 255
    small, shown = _shrink(np.concatenate([premultiplied, alpha], axis=2).astype(np.uint8))
    small = small.astype(np.uint16)
    return np.minimum(small[:, :, :3] + (255 - small[:, :, 3:4]), 255).astype(np.uint8), shown


@contextlib.contextmanager
def _opencv_one_thread() -> Iterator[None]:
    """OpenCV on one thread inside the block (then as before): thumbnails are too small to split, and the
    executor's processes already use the cores. Nothing is set where it is one already (a local worker's
    setting: :func:`zuhyo.construct.executor._one_thread_per_worker`), so a worker's pool of OpenCV threads is not
    made and unmade at every image."""
    import cv2

    threads = cv2.getNumThreads()
    if threads == 1:
        yield
        return
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(threads)


def _shrink(pixels: np.ndarray) -> tuple[np.ndarray, float]:
    """(THUMB, THUMB, channels): ``pixels`` (h, w, 3 or 4 uint8) area-averaged (see :func:`thumbnail`), its
    uniform borders (:func:`content_box`) and a screenshot's chrome trimmed (:func:`figure_box`); and the share of
    the area it shows."""
    import cv2

    with _opencv_one_thread():
        h, w = pixels.shape[:2]
        while h // 2 >= 2 * THUMB and w // 2 >= 2 * THUMB:
            pixels = cv2.resize(pixels[:h - h % 2, :w - w % 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
            h, w = pixels.shape[:2]
        first = cv2.resize(pixels, (THUMB, THUMB), interpolation=cv2.INTER_AREA)
        top, bottom, left, right = figure_box(first)
        if (top, bottom, left, right) == (0, THUMB, 0, THUMB):
            return first, 1.0
        sy, sx = h / THUMB, w / THUMB
        box = pixels[round(top * sy):max(round(bottom * sy), round(top * sy) + 1),
                     round(left * sx):max(round(right * sx), round(left * sx) + 1)]
        shown = (bottom - top) * (right - left) / (THUMB * THUMB)
        return cv2.resize(box, (THUMB, THUMB), interpolation=cv2.INTER_AREA), shown


@dataclass(frozen=True)
class FeatureArrays:
    """Many images' features as arrays, indexed like the features they came from (``feature_store.stack_features``)."""

    thumbs: np.ndarray
    """(n, THUMB, THUMB, 3) uint8, a memory map (:func:`zuhyo.construct.filter.feature_store.thumbs_array`)."""
    descriptors: np.ndarray
    """(n, 1 + len(CROP_WINDOWS)**2, DESC*DESC) float32."""
    prepared: Prepared
    edges: np.ndarray
    """(n, DESC*DESC) float32: :func:`edge_descriptors`."""
    fine_edges: np.ndarray
    """(n, FINE_EDGE*FINE_EDGE) float16: :func:`edge_descriptors`."""
    sizes: np.ndarray | None = None
    """(n, 3) int32: each image's width, height and 1 for a lossless format (:func:`image_sizes`); ``None`` where
    not known (no pair is then failed by :func:`ink_apart`)."""


def image_sizes(features: Sequence[ImageFeatures]) -> np.ndarray:
    """(n, 3) int32 of :attr:`FeatureArrays.sizes`: width, height, 1 for a lossless format (not one of
    :data:`zuhyo.construct.filter.regions.LOSSY_FORMATS`)."""
    import numpy as np

    from zuhyo.construct.filter.regions import LOSSY_FORMATS

    return np.array([(f.width, f.height, f.format not in LOSSY_FORMATS) for f in features],
                    dtype=np.int32).reshape(-1, 3)


def dct_hash(thumb: np.ndarray) -> int:
    """imagehash's pHash on a thumbnail: DCT of a 32x32 image, the top-left 8x8 against their median, 64 bits."""
    import numpy as np
    from PIL import Image
    from scipy.fft import dct

    small = np.asarray(Image.fromarray(thumb).resize((32, 32), Image.Resampling.BOX), dtype=np.float64)
    coeffs = dct(dct(small, axis=0, norm="ortho"), axis=1, norm="ortho")[:8, :8]
    bits = (coeffs > np.median(coeffs)).ravel()
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


@functools.lru_cache(maxsize=64)
def _area_matrix(start: float, stop: float, cells: int, side: int) -> np.ndarray:
    """(cells, side) weights that average the pixels ``start..stop`` (continuous pixel edges) into ``cells``
    (memoised: the same few windows for every image)."""
    import numpy as np

    edges = start + (stop - start) * np.arange(cells + 1) / cells
    p = np.arange(side)
    w = np.clip(np.minimum(edges[1:, None], p + 1) - np.maximum(edges[:-1, None], p), 0, None)
    out = np.asarray(w / w.sum(axis=1, keepdims=True), dtype=np.float32)
    out.setflags(write=False)
    return out


def descriptors(thumbs: np.ndarray, batch: int = 500) -> np.ndarray:
    """(n, 1 + len(CROP_WINDOWS)**2, DESC*DESC) float32: per thumbnail, the descriptor of the whole image and of
    each crop window, each the window's body (its title band left out) averaged to DESC x DESC, zero mean, unit
    length. Computed in batches (``thumbs`` may be a memory map) on a 64x64 luma."""
    import numpy as np

    windows = [((0.0, 1.0), (0.0, 1.0))] + [(x, y) for x in CROP_WINDOWS for y in CROP_WINDOWS]
    half = THUMB // 2
    xs = sorted({w[0] for w in windows})
    ys = sorted({w[1] for w in windows})
    rx = np.concatenate([_area_matrix(a * half, b * half, DESC, half) for a, b in xs])
    ry = np.concatenate([_area_matrix((a + TITLE_BAND * (b - a)) * half, b * half, DESC, half) for a, b in ys])
    out = np.empty((len(thumbs), len(windows), DESC * DESC), dtype=np.float32)
    for s in range(0, len(thumbs), batch):
        t = np.asarray(thumbs[s:s + batch])
        quads = (t[:, 0::2, 0::2].astype(np.float32) + t[:, 1::2, 0::2] + t[:, 0::2, 1::2] + t[:, 1::2, 1::2])
        g = luma(quads) / 4  # 2x2 means (strided sums: a multi-axis numpy reduction is several times slower)
        grid = np.matmul(np.matmul(ry, g), rx.T)
        for k, (x, y) in enumerate(windows):
            yi, xi = ys.index(y) * DESC, xs.index(x) * DESC
            out[s:s + batch, k] = grid[:, yi:yi + DESC, xi:xi + DESC].reshape(len(g), -1)
    return _unit_rows(out)


def _unit_rows(out: np.ndarray) -> np.ndarray:
    """``out`` (float32) with each vector along its last axis made zero mean and unit length, in place."""
    import numpy as np

    out -= out.mean(axis=-1, keepdims=True)
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    out /= np.where(norms > 0, norms, 1.0)
    return out


def edge_descriptors(thumbs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two descriptors per thumbnail of where its colour changes over its body (the title band left out), each
    zero mean, unit length, from one pass over its colour gradient (:func:`_gradient`). Unlike the luma
    :func:`descriptors` they are the same for a chart drawn with another colour map or palette (its areas and
    their boundaries stay; their grey levels do not).

    - (n, DESC*DESC) float32, the edges: a pixel whose colour differs from its right or lower neighbour's by more
      than :data:`EDGE_LEVEL` in some channel is an edge, averaged to DESC x DESC;
    - (n, FINE_EDGE*FINE_EDGE) float16, the finer edges: each pixel weighed by that difference up to
      :data:`FINE_EDGE_LEVEL` (full weight from there), averaged to FINE_EDGE x FINE_EDGE - a pale area's border
      counts in part, not nothing, and the grid holds what tells charts of one layout apart (the bars' ends, the
      numbers' lengths)."""
    import numpy as np

    top = round(TITLE_BAND * THUMB)
    coarse_y = _area_matrix(0.0, float(THUMB - top), DESC, THUMB - top)
    coarse_x = _area_matrix(0.0, float(THUMB), DESC, THUMB)
    fine_y = _area_matrix(0.0, float(THUMB - top), FINE_EDGE, THUMB - top)
    fine_x = _area_matrix(0.0, float(THUMB), FINE_EDGE, THUMB)
    coarse = np.empty((len(thumbs), DESC * DESC), dtype=np.float32)
    fine = np.empty((len(thumbs), FINE_EDGE * FINE_EDGE), dtype=np.float32)
    weight = np.float32(1 / FINE_EDGE_LEVEL)
    for k in range(len(thumbs)):  # one thumbnail at a time with OpenCV: ~10x faster than numpy over a batch
        gradient = _gradient(np.ascontiguousarray(thumbs[k][top:]))
        coarse[k] = (coarse_y @ (gradient > EDGE_LEVEL).astype(np.float32) @ coarse_x.T).reshape(-1)
        fine[k] = (fine_y @ (np.minimum(gradient, FINE_EDGE_LEVEL) * weight) @ fine_x.T).reshape(-1)
    return _unit_rows(coarse), _unit_rows(fine).astype(np.float16)


def _gradient(t: np.ndarray) -> np.ndarray:
    """(h, w) float32: each pixel's largest channel difference from its right or lower neighbour's colour (0 in
    the last column and row) of ``t`` (h x w x 3 uint8)."""
    import cv2
    import numpy as np

    def largest(diff: np.ndarray) -> np.ndarray:  # over the channels (numpy's max over an axis of 3 is slow)
        r, g, b = cv2.split(diff)
        return np.asarray(cv2.max(cv2.max(r, g), b))

    out = np.zeros(t.shape[:2], dtype=np.float32)
    out[:, 1:] = largest(cv2.absdiff(t[:, 1:], t[:, :-1]))
    out[1:] = np.maximum(out[1:], largest(cv2.absdiff(t[1:], t[:-1])))
    return out


def near_duplicate_candidates(arrays: FeatureArrays, neighbours: int = DEFAULT_NEIGHBOURS,
                              edge_neighbours: int = EDGE_NEIGHBOURS,
                              fine_edge_neighbours: int = FINE_EDGE_NEIGHBOURS) -> np.ndarray:
    """(m, 2) index pairs i < j, each once: :func:`candidate_pairs` of the luma descriptors (``neighbours`` per
    image, crop windows and all), of the edges' descriptors (``edge_neighbours`` per image, whole images only: a
    copy drawn with another colour map) and of the finer edges' (``fine_edge_neighbours``, chosen among
    :data:`FINE_EDGE_POOL`, at least :data:`FINE_EDGE_MIN_SIMILARITY` alike: a copy in another colour map among
    charts of its layout)."""
    import numpy as np

    parts = [candidate_pairs(arrays.descriptors, neighbours)]
    if edge_neighbours > 0 and len(arrays.edges) > 1:
        parts.append(nearest_pairs(np.asarray(arrays.edges), edge_neighbours))
    if fine_edge_neighbours > 0 and len(arrays.fine_edges) > 1:
        parts.append(nearest_pairs(np.asarray(arrays.fine_edges), fine_edge_neighbours, pool=FINE_EDGE_POOL,
                                   min_similarity=FINE_EDGE_MIN_SIMILARITY))
    return np.unique(np.concatenate(parts), axis=0) if len(parts) > 1 else parts[0]


def nearest_pairs(vectors: np.ndarray, neighbours: int, pool: int = 0, min_similarity: float = -1.0,
                  batch: int = 256) -> np.ndarray:
    """(m, 2) index pairs i < j, each once: each vector (rows of ``vectors``, unit length) with its
    ``neighbours`` nearest others, searched exactly in a k-d tree over a PCA projection (``_PCA_DIMS``); with a
    larger ``pool``, the ``neighbours`` nearest over all the vectors' dimensions among the ``pool`` nearest in the
    projection, those of a cosine similarity under ``min_similarity`` left out (``batch`` vectors at a time: the
    pool's vectors of a batch are held at once)."""
    import numpy as np
    from scipy.spatial import cKDTree

    n = len(vectors)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    centre, basis = _pca_basis(vectors)
    projected = _projected(vectors, centre, basis)  # a float16 set is not copied whole to float32
    k = min(max(neighbours, pool) + 1, n)  # the nearest is the vector itself
    _, found = cKDTree(projected).query(projected, k=k, workers=-1)
    hit = np.asarray(found).reshape(n, k)
    if pool > neighbours:
        chosen = np.empty((n, min(neighbours + 1, k)), dtype=np.int64)
        for s in range(0, n, batch):  # cosine over all dimensions (unit vectors), the vector itself first
            rows = hit[s:s + batch]
            own = np.arange(s, s + len(rows))[:, None]
            near = np.einsum("nd,nkd->nk", np.asarray(vectors[s:s + batch], dtype=np.float32),
                             np.asarray(vectors[rows], dtype=np.float32))
            near[rows == own] = np.inf
            order = np.argsort(-near, axis=1, kind="stable")[:, :chosen.shape[1]]
            picked = np.take_along_axis(rows, order, axis=1)
            # one too far from its vector: the vector itself in its place (dropped below)
            chosen[s:s + batch] = np.where(np.take_along_axis(near, order, axis=1) >= min_similarity, picked, own)
        hit, k = chosen, chosen.shape[1]
    i = np.repeat(np.arange(n), k)
    j = hit.reshape(-1)
    keep = j != i
    pairs = np.stack([np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])], axis=1)
    return np.unique(pairs, axis=0)


def _pca_basis(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre, basis (dims x _PCA_DIMS)) of ``vectors``' principal components, fitted on up to 4,000 of them
    spread over the set: what the candidates' k-d trees search in."""
    import numpy as np

    centre = vectors.mean(axis=0, dtype=np.float32)
    sample = np.asarray(vectors[np.linspace(0, len(vectors) - 1, min(len(vectors), 4000)).astype(np.int64)],
                        dtype=np.float32) - centre
    _, _, vt = np.linalg.svd(sample, full_matrices=False)
    return centre, np.ascontiguousarray(vt[:_PCA_DIMS].T)


def candidate_pairs(desc: np.ndarray, neighbours: int = DEFAULT_NEIGHBOURS,
                    max_distance: float = DEFAULT_MAX_DESCRIPTOR_DISTANCE, batch: int = 5000,
                    chunk: int = 100000, windows_each: int = 3) -> np.ndarray:
    """(m, 2) index pairs i < j: for each image j, the ``neighbours`` images i one of whose crop windows lies
    nearest to j's whole-image descriptor (within ``max_distance``, Euclidean on unit descriptors) - a copy cropped
    2-8 % shows about one of the windows of its original. Searched in a PCA projection: the crop windows of
    ``chunk`` images at a time go into a k-d tree (``scipy.spatial.cKDTree``; n log n, never all pairs; the nine
    windows of 100,000 images make a tree of ~230 MB, 224 MiB over the input when built, and beyond that the tree
    is built chunk by chunk, each queried by every image), queried with ``batch`` whole-image descriptors
    at a time for their ``neighbours * windows_each`` nearest windows besides their own nine (approximate within a
    factor 2), whose images are ranked by their nearest window; each chunk's nearest windows are merged with the
    others'.

    Each image's own ranking, not its windows': until issue 22's twenty-third session each window was queried
    for its nearest whole images, and an image j kept its nearest among the windows that had found it. A pie's
    or donut's window among many alike found other pies first, so a copy whose original's window was its nearest
    of all could still be no candidate (bench/README.md, "twenty-third session")."""
    import numpy as np
    from scipy.spatial import cKDTree

    n = len(desc)
    if n < 2 or neighbours < 1:
        return np.empty((0, 2), dtype=np.int64)
    whole, crops = desc[:, 0], desc[:, 1:]
    windows = crops.shape[1]
    centre, basis = _pca_basis(whole)
    # the nearest windows of each image: its own (up to all of them) and ``windows_each`` of each of its
    # neighbours (of nine, a copy's original shows one to three nearby)
    k = min(neighbours * windows_each + windows, n * windows)
    best_d = np.full((n, k), np.inf)
    best_i = np.full((n, k), -1, dtype=np.int64)
    projected = _projected(whole, centre, basis)  # once: every chunk is queried by every image
    for c in range(0, n, chunk):
        part = crops[c:c + chunk]
        owner = np.repeat(np.arange(c, c + len(part)), windows)
        tree = cKDTree(_projected(part.reshape(-1, part.shape[2]), centre, basis))
        kc = min(k, len(owner))
        for s in range(0, n, batch):
            queries = projected[s:s + batch]
            dist, hit = tree.query(queries, k=kc, eps=1.0, distance_upper_bound=max_distance, workers=-1)
            dist, hit = dist.reshape(len(queries), kc), hit.reshape(len(queries), kc)
            found = np.where(hit < len(owner), owner[np.minimum(hit, len(owner) - 1)], -1)
            if c == 0:  # the first (up to 100,000 images: the only) chunk's nearest, as the tree sorted them
                best_d[s:s + batch, :kc], best_i[s:s + batch, :kc] = dist, found
                continue
            # the k nearest windows so far: this chunk's with the earlier chunks'
            d = np.concatenate([best_d[s:s + batch], dist], axis=1)
            i = np.concatenate([best_i[s:s + batch], found], axis=1)
            order = np.argsort(d, axis=1, kind="stable")[:, :k]
            best_d[s:s + batch] = np.take_along_axis(d, order, axis=1)
            best_i[s:s + batch] = np.take_along_axis(i, order, axis=1)
        del tree
    i, j, d = best_i.ravel(), np.repeat(np.arange(n), k), best_d.ravel()
    ok = (i >= 0) & (i != j)
    i, j = _nearest_per_image(i[ok], j[ok], d[ok], neighbours)
    pairs = np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1)
    return np.unique(pairs, axis=0) if len(pairs) else pairs.reshape(0, 2).astype(np.int64)


def _projected(vectors: np.ndarray, centre: np.ndarray, basis: np.ndarray, rows: int = 5000) -> np.ndarray:
    """(n, basis columns) float64: ``vectors`` less ``centre``, projected on ``basis``, ``rows`` at a time. Float64
    because the k-d tree keeps such an array as it is (it copies any other); projected whole, the nine windows of
    100,000 images less their centre were a 518 MB float32 array held beside the tree's copy (issue 22's
    twenty-fourth session: building the tree of 100,000 images' windows took 497 MiB over its input, now 224)."""
    import numpy as np

    out = np.empty((len(vectors), basis.shape[1]), dtype=np.float64)
    for s in range(0, len(vectors), rows):
        out[s:s + rows] = (np.asarray(vectors[s:s + rows]) - centre) @ basis
    return out


def _nearest_per_image(i: np.ndarray, j: np.ndarray, d: np.ndarray, neighbours: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Of the (i, j, distance) found, each (i, j) once at its nearest, and for each j its ``neighbours`` nearest i
    (ties by i)."""
    import numpy as np

    order = np.lexsort((d, i, j))  # by j, then i, nearest first: the nearest window of each (i, j)
    i, j, d = i[order], j[order], d[order]
    first = np.ones(len(i), dtype=bool)
    first[1:] = (i[1:] != i[:-1]) | (j[1:] != j[:-1])
    i, j, d = i[first], j[first], d[first]
    order = np.lexsort((i, d, j))  # by j, nearest first, then by i
    i, j, d = i[order], j[order], d[order]
    starts = np.r_[0, np.flatnonzero(j[1:] != j[:-1]) + 1] if len(j) else np.empty(0, dtype=np.int64)
    rank = np.arange(len(j)) - np.repeat(starts, np.diff(np.r_[starts, len(j)]))
    keep = rank < neighbours
    return i[keep], j[keep]


def descriptor_distance(desc: np.ndarray, i: int, j: int) -> float:
    """Distance of two images' descriptors (all windows together), as the evidence reports it."""
    import numpy as np

    return float(np.linalg.norm(desc[i] - desc[j]))


def score_pairs(thumbs: np.ndarray, prepared: Prepared, pairs: np.ndarray, batch: int = 256,
                max_solid: int | None = MAX_SOLID, refine_below: float | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(score, solid difference) of each pair (rows of indices into ``thumbs`` and ``prepared``): the better of
    aligning either thumbnail into the other (:mod:`zuhyo.construct.filter.alignment`), where a direction whose
    aligned images differ in more than ``max_solid`` solid pixels scores 0 - they show other data, however small
    the share of ink (``None``: no such test, the second look judges the pair). With ``refine_below`` (the
    verification bound) a direction scoring just under it is aligned again by ECC
    (:func:`zuhyo.construct.filter.alignment.directed_scores`). Windows are searched ``batch`` pairs at a
    time."""

    scores, solids, _ = scored_directions(thumbs, prepared, pairs, batch, max_solid, refine_below)
    return scores, solids


@dataclass(frozen=True)
class Directions:
    """Per pair, how its thumbnails verified best (:func:`score_pairs`): what the second look starts from."""

    forward: np.ndarray
    """(m,) bool: the second image shown in the first (else the first in the second)."""
    affines: np.ndarray
    """(m, 2, 3) float32: that direction's alignment of the thumbnails."""
    mapped: np.ndarray
    """(m,) bool: it matched only with its colours mapped (a palette or colour-map change)."""

    def take(self, index: np.ndarray) -> Directions:
        return Directions(self.forward[index], self.affines[index], self.mapped[index])

    @staticmethod
    def concatenate(parts: Sequence[Directions]) -> Directions:
        """The pairs of ``parts`` in order, as one."""
        import numpy as np

        return Directions(np.concatenate([p.forward for p in parts]), np.concatenate([p.affines for p in parts]),
                          np.concatenate([p.mapped for p in parts]))


def scored_directions(thumbs: np.ndarray, prepared: Prepared, pairs: np.ndarray, batch: int = 256,
                      max_solid: int | None = MAX_SOLID, refine_below: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, Directions]:
    """:func:`score_pairs` and the :class:`Directions` the scores came from: per pair whether the better
    direction shows the second image in the first or the first in the second, its alignment and whether its
    colours were mapped. Without ``max_solid`` (a second look judges the pair) a direction the tone test fails
    (:func:`tone_fails`) is the better one only where the other fails it too. With ``refine_below``, a pair that
    scores under it both ways is compared on the whole of each thumbnail too
    (:func:`zuhyo.construct.filter.alignment.whole_scores`), the better direction taken where that reaches it."""
    import numpy as np

    from zuhyo.construct.filter.alignment import directed_scores, palette_moves, whole_scores

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    scores, solids = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=np.int64)
    forward, affines = np.ones(len(pairs), dtype=bool), np.zeros((len(pairs), 2, 3), dtype=np.float32)
    mapped = np.zeros(len(pairs), dtype=bool)
    limit = np.iinfo(np.int64).max if max_solid is None else max_solid
    with _opencv_one_thread():
        for s in range(0, len(pairs), batch):
            a, b = pairs[s:s + batch, 0], pairs[s:s + batch, 1]
            # the palette hint (palette_moves) asked only of the direction kept, where it decides nothing else
            s1, d1, m1, c1 = directed_scores(thumbs, prepared, a, b, refine_below=refine_below, defer_hint=True)
            s2, d2, m2, c2 = directed_scores(thumbs, prepared, b, a, refine_below=refine_below, defer_hint=True)
            e1, e2 = np.where(d1 <= limit, s1, 0.0), np.where(d2 <= limit, s2, 0.0)
            if max_solid is None:
                # A direction the tone test fails (verify_scores) is kept only where the other fails it too: a copy
                # drawn with another colour map verifies as it is in one direction and recoloured in the other.
                f1, f2 = tone_fails(e1, d1, thumbs.shape[1]), tone_fails(e2, d2, thumbs.shape[1])
                first = np.where(f1 == f2, e1 >= e2, f2)
            else:
                first = e1 >= e2
            scores[s:s + batch] = np.where(first, e1, e2)
            solids[s:s + batch] = np.where(first, d1, d2)
            forward[s:s + batch] = first
            affines[s:s + batch] = np.where(first[:, None, None], m1, m2)
            hint = np.where(first, c1, c2)
            for k in np.flatnonzero(hint < 0):
                into, shown = (a[k], b[k]) if first[k] else (b[k], a[k])
                hint[k] = palette_moves(thumbs[into], thumbs[shown], affines[s + k])
            mapped[s:s + batch] = hint > 0
        if refine_below is not None:
            # The profiles can pick a wrong window where they say little (a few lines across the axes, half a
            # title cut off a crop), and a window far off is not refined: a pair that fails both ways is compared
            # on the whole of each content box too. Only such a pair: started from the whole image, a chart drawn
            # again at another size whose window refines well was left a pixel off at the second look.
            failed = np.flatnonzero(scores < refine_below)
            a, b = pairs[failed, 0], pairs[failed, 1]
            w1, v1, whole = whole_scores(thumbs, prepared, a, b)
            w2, v2, _ = whole_scores(thumbs, prepared, b, a)
            w1, w2 = np.where(v1 <= limit, w1, 0.0), np.where(v2 <= limit, w2, 0.0)
            first = w1 >= w2
            best = np.where(first, w1, w2)
            took = best >= refine_below
            now = failed[took]
            scores[now], solids[now] = best[took], np.where(first, v1, v2)[took]
            forward[now], affines[now], mapped[now] = first[took], whole[took], False
    return scores, solids, Directions(forward, affines, mapped)


def region_scores(thumbs: np.ndarray, prepared: Prepared, pairs: np.ndarray, images: Sequence[bytes] | ImageSource,
                  check: RegionCheck | None = None, cache: int = 16, limit: int | None = MAX_REGION,
                  refine_below: float | None = DEFAULT_MIN_SCORE) -> np.ndarray:
    """(m,) int64: the largest difference region of each pair
    (:func:`zuhyo.construct.filter.regions.largest_region`), the images' bytes from ``images`` (indexed like
    ``thumbs``), aligned in the direction whose thumbnails verify better (as :func:`score_pairs` with
    ``refine_below`` aligns them). The content of the ``cache`` images used last is kept (pairs come sorted by
    their first image)."""
    import numpy as np

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    # The windows of a whole batch at once: one product with the window grid's matrix for the batch, where a pair
    # at a time spent most of its time reading that matrix.
    _, _, directions = scored_directions(thumbs, prepared, pairs, batch=max(1, len(pairs)), max_solid=None,
                                         refine_below=refine_below)
    grey = prepared.grey[pairs[:, 0]] | prepared.grey[pairs[:, 1]] if len(pairs) else np.zeros(0, dtype=bool)
    return looked_regions(pairs, images, directions, grey, thumbs.shape[1], check, cache, limit)


def looked_regions(pairs: np.ndarray, images: Sequence[bytes] | ImageSource, directions: Directions,
                   grey: np.ndarray, thumb: int = THUMB, check: RegionCheck | None = None, cache: int = 16,
                   limit: int | None = MAX_REGION) -> np.ndarray:
    """:func:`region_scores` from the pairs' :class:`Directions` as the verification found them (not computed
    again) and whether each pair is compared on luma (``grey``: either image is grey)."""
    from collections import OrderedDict

    import numpy as np

    from zuhyo.construct.filter.regions import Content, RegionCheck, largest_region
    from zuhyo.construct.filter.regions import content as content_of

    check = RegionCheck() if check is None else check
    seen: OrderedDict[int, Content] = OrderedDict()

    def content(i: int) -> Content:
        if i in seen:
            seen.move_to_end(i)
            return seen[i]
        seen[i] = content_of(images[i] if isinstance(images, Sequence) else images(i), check)
        if len(seen) > cache:
            seen.popitem(last=False)
        return seen[i]

    out = np.zeros(len(pairs), dtype=np.int64)
    with _opencv_one_thread():
        for q, (a, b) in enumerate(np.asarray(pairs).tolist()):
            into, shown = (a, b) if directions.forward[q] else (b, a)  # b shown in a, or a in b
            ca, cb = content(into), content(shown)
            out[q] = largest_region(ca.pixels, cb.pixels, directions.affines[q], thumb, check, grey=bool(grey[q]),
                                    limit=limit, recolour=bool(directions.mapped[q]), native=(ca.native, cb.native),
                                    faint=not (ca.lossy or cb.lossy))
    return out


def verify_pair(a: np.ndarray, b: np.ndarray) -> float:
    """How surely ``a`` and ``b`` (THUMB x THUMB x 3 uint8) show one image (at most 1; see :func:`score_pairs`)."""
    import numpy as np

    from zuhyo.construct.filter.alignment import prepare

    both = np.stack([a, b])
    scores, _ = score_pairs(both, prepare(both), np.array([[0, 1]]))
    return float(scores[0])


@dataclass(frozen=True)
class PairEvidence:
    i: int
    j: int
    descriptor_distance: float
    score: float
    solid: int = 0
    """Pixels of solid difference of the thumbnails after alignment (at most MAX_SOLID for a pair that passed on
    thumbnails alone)."""
    region: int | None = None
    """Pixels of the largest difference region at the images' resolution, twice them for a region that is most of
    what differs (at most MAX_REGION for a pair that passed); ``None`` when the pair was judged on thumbnails
    alone."""


_VerifyChunk = tuple["np.ndarray", "np.ndarray | tuple[str, np.ndarray]", "Prepared", "int | None", float,
                     "np.ndarray | None"]


def _verify_chunk(item: _VerifyChunk) -> tuple[np.ndarray, np.ndarray, Directions, np.ndarray]:
    """Runs in executor workers: :func:`_thumbnail_phase` of one chunk of pairs (indices into the chunk's images),
    with the images' thumbnails sent along or read from the driver's memory map (its path and the rows), their
    :class:`Prepared` rows, the solid-difference bound (``None``: none), the verification bound and which pairs are
    lossless images of one size."""
    import numpy as np

    pairs, thumbs, prepared, max_solid, min_score, one_size = item
    if isinstance(thumbs, tuple):
        path, rows = thumbs
        thumbs = np.asarray(np.load(path, mmap_mode="r")[rows])
    return _thumbnail_phase(thumbs, prepared, pairs, max_solid, min_score, one_size)


def _thumbnail_phase(thumbs: np.ndarray, prepared: Prepared, pairs: np.ndarray, max_solid: int | None,
                     min_score: float, one_size: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray, Directions, np.ndarray]:
    """:func:`scored_directions`, and :func:`ink_apart` of the pairs among ``one_size`` (lossless images of one
    size) that reach ``min_score`` (-1 for the others; all -1 without ``one_size``)."""
    import numpy as np

    scores, solids, directions = scored_directions(thumbs, prepared, pairs, max_solid=max_solid,
                                                   refine_below=min_score)
    where = np.zeros(len(pairs), dtype=bool) if one_size is None else one_size & (scores >= min_score)
    return scores, solids, directions, ink_apart(thumbs, pairs, directions, where)


def _one_size(sizes: np.ndarray | None, pairs: np.ndarray) -> np.ndarray | None:
    """(m,) bool: the pairs of two lossless images of one width and height (:attr:`FeatureArrays.sizes`)."""
    if sizes is None:
        return None
    a, b = sizes[pairs[:, 0]], sizes[pairs[:, 1]]
    return (a[:, 0] == b[:, 0]) & (a[:, 1] == b[:, 1]) & (a[:, 2] == 1) & (b[:, 2] == 1)  # type: ignore[no-any-return]


_RegionChunk = tuple["np.ndarray", list[bytes], Directions, "np.ndarray"]


def _region_chunk(item: _RegionChunk) -> list[int]:
    """Runs in executor workers: :func:`looked_regions` of one chunk of pairs (indices into the chunk's images),
    with their images' bytes, the pairs' :class:`Directions` and grey flags."""
    pairs, images, directions, grey = item
    return looked_regions(pairs, images, directions, grey).tolist()


def verify_scores(arrays: FeatureArrays, pairs: np.ndarray, min_score: float = DEFAULT_MIN_SCORE,
                  images: ImageSource | None = None, executor: str | None = None, chunk: int = 1024,
                  region_chunk: int = 48, progress: PairProgress | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, solid, region) of each pair; a pair is a near duplicate when its score reaches ``min_score``.

    With ``images`` (the bytes of image ``i``), the thumbnail score is not gated by its solid difference; each
    pair reaching ``min_score`` gets the second look (:func:`region_scores`), and one whose largest region
    exceeds MAX_REGION scores 0 (region -1: not looked at; nor is a pair whose thumbnails' solid difference
    covers more than MAX_SOLID_SHARE of the body, or exceeds SOLID_NO_LOOK with a score under
    SOLID_NO_LOOK_BELOW - SOLID_SOME_BELOW within SOLID_SOME_SHARE, nor a pair of lossless images of one size
    (``arrays.sizes``) each of whose thumbnails has more than MAX_INK_APART pixels of ink the other leaves
    unexplained, :func:`ink_apart` - it scores 0). Without, as on thumbnails
    alone: a solid difference over MAX_SOLID scores 0. With ``executor`` the pairs are scored in chunks through
    :func:`zuhyo.construct.executor.map_items` (thumbnails: at most ``chunk`` pairs, at least 16 chunks when
    there are enough, sixteen in flight; second looks: ``region_chunk`` pairs with their images' bytes, eight
    chunks in flight, so the driver holds few images' bytes at once; one pool for each). Local workers read the
    thumbnails from ``arrays.thumbs``' file when it is a memory map
    (:class:`zuhyo.construct.filter.feature_store.ThumbnailFile`); otherwise each chunk carries the thumbnails it
    needs. ``progress`` follows the pairs of each phase as their chunks finish."""
    import numpy as np

    def follow(phase: str, parts: Sequence[np.ndarray]) -> Callable[[int, object], None] | None:
        """A map's ``progress`` callback reporting the pairs of the chunks done so far (and none yet)."""
        if progress is None:
            return None
        total, done = sum(len(part) for part in parts), 0
        progress(phase, 0, total)

        def advance(index: int, _result: object) -> None:
            nonlocal done
            done += len(parts[index])
            progress(phase, done, total)

        return advance

    def in_one(phase: str, part: np.ndarray, work: Callable[[], T]) -> T:
        """``work()`` on the pairs ``part`` in this process, reported as one chunk of ``phase``."""
        advance = follow(phase, [part])
        result = work()
        if advance is not None:
            advance(0, None)
        return result

    thumbs, prepared = arrays.thumbs, arrays.prepared
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    max_solid = None if images is not None else MAX_SOLID
    size = min(chunk, max(64, -(-len(pairs) // 16)))
    # With the images at hand, a pair of lossless images of one size whose thumbnails leave much ink unexplained
    # fails without a second look (ink_apart); without, nothing is looked at again
    one_size = _one_size(arrays.sizes, pairs) if images is not None else None
    if executor is None or len(pairs) <= size:
        scores, solids, directions, apart = in_one(THUMBNAIL_PHASE, pairs, lambda: _thumbnail_phase(
            thumbs, prepared, pairs, max_solid, min_score, one_size))
    else:
        from zuhyo.construct.executor import ItemError, map_items, parse_executor

        parts = [pairs[s:s + size] for s in range(0, len(pairs), size)]
        path = getattr(thumbs, "filename", None)
        shared = isinstance(thumbs, np.memmap) and path is not None and parse_executor(executor)[0] == "local"

        def verify_items() -> Iterator[_VerifyChunk]:
            for s, part in zip(range(0, len(pairs), size), parts, strict=True):
                used, local = np.unique(part, return_inverse=True)
                rows = (str(path), used) if shared else np.asarray(thumbs[used])
                yield (local.reshape(-1, 2), rows, prepared.take(used), max_solid, min_score,
                       None if one_size is None else one_size[s:s + size])

        found: list[tuple[np.ndarray, np.ndarray, Directions, np.ndarray]] = []
        for result in map_items(_verify_chunk, verify_items(), executor=executor, in_flight=16,
                                progress=follow(THUMBNAIL_PHASE, parts)):
            if isinstance(result, ItemError):
                raise RuntimeError(f"near-duplicate verification failed: {result.error}")
            found.append(result)
        scores = np.concatenate([r[0] for r in found])
        solids = np.concatenate([r[1] for r in found]).astype(np.int64)
        directions = Directions.concatenate([r[2] for r in found])
        apart = np.concatenate([r[3] for r in found])
    regions = np.full(len(pairs), -1, dtype=np.int64)
    if images is None:
        return scores, solids, regions
    # Thumbnails whose solid difference covers a large part of the body differ in tone everywhere (by less than
    # the second look's level, more than the solid test's): other images, whatever the second look finds.
    scores = np.where(tone_fails(scores, solids, thumbs.shape[1]), 0.0, scores)
    scores = np.where(apart.min(axis=1) > MAX_INK_APART, 0.0, scores)  # ink of its own on both: no second look
    todo = np.flatnonzero(scores >= min_score)
    grey = prepared.grey[pairs[:, 0]] | prepared.grey[pairs[:, 1]]
    if executor is None or len(todo) <= region_chunk:
        looked = in_one(SECOND_LOOK_PHASE, todo, lambda: looked_regions(
            pairs[todo], images, directions.take(todo), grey[todo], thumbs.shape[1]))
    else:
        from zuhyo.construct.executor import ItemError, map_items

        parts = [todo[s:s + region_chunk] for s in range(0, len(todo), region_chunk)]

        def region_items() -> Iterator[_RegionChunk]:
            for part in parts:  # each chunk's images' bytes read as it is sent: eight chunks' in flight at most
                used, local = np.unique(pairs[part], return_inverse=True)
                yield local.reshape(-1, 2), [images(int(i)) for i in used], directions.take(part), grey[part]

        out: list[int] = []
        for result in map_items(_region_chunk, region_items(), executor=executor, in_flight=8,
                                progress=follow(SECOND_LOOK_PHASE, parts)):
            if isinstance(result, ItemError):
                raise RuntimeError(f"near-duplicate verification failed: {result.error}")
            out.extend(result)
        looked = np.array(out, dtype=np.int64)
    regions[todo] = looked
    scores = np.where(regions > MAX_REGION, 0.0, scores)  # other data, however well the thumbnails agree
    return scores, solids, regions


def verified_pairs(arrays: FeatureArrays, pairs: np.ndarray, min_score: float = DEFAULT_MIN_SCORE,
                   executor: str | None = None, chunk: int = 1024,
                   images: ImageSource | None = None, progress: PairProgress | None = None) -> list[PairEvidence]:
    """The candidate pairs that verify (:func:`verify_scores`: with ``images``, the thumbnail score reaches
    ``min_score`` and the second look finds no region over MAX_REGION), with their evidence."""
    import numpy as np

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    scores, solids, regions = verify_scores(arrays, pairs, min_score, images, executor, chunk, progress=progress)
    keep = np.flatnonzero((scores >= min_score) & (regions <= MAX_REGION))
    desc = arrays.descriptors
    return [PairEvidence(int(pairs[k, 0]), int(pairs[k, 1]), round(descriptor_distance(desc, *pairs[k]), 4),
                         round(float(scores[k]), 4), int(solids[k]), int(regions[k]) if regions[k] >= 0 else None)
            for k in keep]


def clusters(n: int, pairs: Sequence[PairEvidence]) -> list[list[int]]:
    """Groups (two or more) of indices joined by verified ``pairs``, each sorted, ordered by first index.

    Groups are stars (the star clustering of Aslam, Pelekhov and Rus, J. Graph Algorithms Appl. 8(1), 2004, on the
    graph of verified pairs): images are taken by how many verified pairs they have (then by the sum of those
    scores, then by index); one not yet in a group becomes the centre of a group with each of its partners not yet
    in a group. An image joins through a pair with the centre, never through a chain of members - with charts that
    look alike, chains would join a whole kind (a~b, b~c, c~d, ...) where each link alone is plausible. The centre
    is the image most others were verified against: an original with two copies, not one of the copies, whose pair
    with the other copy (each cropped differently) may not verify.
    """
    partners: dict[int, list[tuple[int, float]]] = {}
    for p in pairs:
        partners.setdefault(p.i, []).append((p.j, p.score))
        partners.setdefault(p.j, []).append((p.i, p.score))
    order = sorted(partners, key=lambda v: (-len(partners[v]), -sum(s for _, s in partners[v]), v))
    grouped: set[int] = set()
    groups: list[list[int]] = []
    for centre in order:
        if centre in grouped:
            continue
        members = [u for u, _ in partners[centre] if u not in grouped]
        if members:
            group = sorted({centre, *members})
            grouped.update(group)
            groups.append(group)
    return sorted(groups, key=lambda g: g[0])
