"""Where the filter keeps the near-duplicate features of many images while it inspects them, in bounded memory
(issue 22: 100,000 images under 2 GB in the driver; before, ~55 KB per image).

The workers return each image's :class:`~zuhyo.construct.filter.near_duplicates.ImageFeatures` (a 48 KB thumbnail
and ~8.5 KB of descriptors and profiles); :class:`FeatureCollector` takes them batch by batch as they come back:
the thumbnail goes to a file (:class:`ThumbnailFile`, mapped read-only afterwards), the descriptors and profiles
into arrays allocated once for all images, and the caller keeps a copy of the features without them (size,
format, pHash). What the driver holds per image is then the stacked arrays alone: 7.5 KB of descriptors (the
finer edges' 1.1 KB of them in float16), 1 KB of profiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from zuhyo.construct.filter.near_duplicates import (
    CROP_WINDOWS,
    DESC,
    FINE_EDGE,
    THUMB,
    FeatureArrays,
    ImageFeatures,
    image_sizes,
)

if TYPE_CHECKING:
    import numpy as np


def stack_features(features: Sequence[ImageFeatures], tmp_dir: Path | None = None) -> FeatureArrays:
    """The features' arrays, computed by the workers that decoded the images, stacked in the driver (the
    thumbnails' file in ``tmp_dir``: :func:`thumbs_array`). The filter stage
    collects them batch by batch instead (:class:`FeatureCollector`)."""
    import numpy as np

    from zuhyo.construct.filter.alignment import Prepared

    windows = 1 + len(CROP_WINDOWS) ** 2

    def stacked(field: str, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
        out: np.ndarray = np.empty((len(features), *shape), dtype=dtype)
        for k, f in enumerate(features):
            out[k] = np.frombuffer(getattr(f, field), dtype=dtype).reshape(shape)
        return out

    prepared = Prepared(stacked("col_profile", (THUMB,)), stacked("row_profile", (THUMB,)),
                        np.array([f.ink for f in features], dtype=np.int64),
                        np.array([f.grey for f in features], dtype=bool))
    return FeatureArrays(thumbs_array(features, tmp_dir), stacked("descriptors", (windows, DESC * DESC)), prepared,
                         stacked("edges", (DESC * DESC,)), stacked("fine_edges", (FINE_EDGE ** 2,), np.float16),
                         image_sizes(features))


def thumbs_array(features: Sequence[ImageFeatures], tmp_dir: Path | None = None) -> np.ndarray:
    """(n, THUMB, THUMB, 3) uint8: the features' thumbnails, in a read-only memory map of a temporary ``.npy``
    file (:class:`ThumbnailFile`)."""
    import numpy as np

    if not features:
        return np.empty((0, THUMB, THUMB, 3), dtype=np.uint8)
    out = ThumbnailFile(tmp_dir)
    try:
        for feature in features:
            out.append(feature.thumb)
    except BaseException:
        out.discard()
        raise
    return out.finish()


_HEADER = 128
"""Bytes of the ``.npy`` header a :class:`ThumbnailFile` reserves (a multiple of 64, as the format aligns)."""


class ThumbnailFile:
    """Thumbnails appended one at a time to a temporary ``.npy`` file, then mapped read-only (:meth:`finish`;
    the file is removed when the array is collected): the driver holds no copy of them in memory, and local
    workers read the thumbnails of their pairs from the file (:func:`verified_pairs`). The filter stage appends
    each image's thumbnail as its batch comes back from the workers and keeps only the small features (issue 22:
    100,000 images in bounded memory). Written sequentially, then mapped: filling a writable map page by page took
    ~6x longer (2.1 s against 0.35 s for 20,000 thumbnails). The file lies in ``tmp_dir`` (the filter stage
    passes the workspace's scratch folder, swept after a kill)."""

    def __init__(self, tmp_dir: Path | None = None) -> None:
        import os
        import tempfile

        fd, self.path = tempfile.mkstemp(prefix="zuhyo-thumbs-", suffix=".npy", dir=tmp_dir)
        self._file = os.fdopen(fd, "wb")
        self._file.write(b"\0" * _HEADER)  # the header, written when the count is known
        self.count = 0
        """Thumbnails appended so far."""

    def append(self, thumb: bytes) -> int:
        """Append one THUMB x THUMB x 3 thumbnail; returns its row."""
        if len(thumb) != THUMB * THUMB * 3:
            raise ValueError(f"a thumbnail of {len(thumb)} bytes, not {THUMB}x{THUMB}x3")
        self._file.write(thumb)
        self.count += 1
        return self.count - 1

    def finish(self) -> np.ndarray:
        """(count, THUMB, THUMB, 3) uint8, the file mapped read-only."""
        import os
        import struct
        import weakref

        import numpy as np

        if self.count == 0:  # nothing to map
            self.discard()
            return np.empty((0, THUMB, THUMB, 3), dtype=np.uint8)
        try:
            text = f"{{'descr': '|u1', 'fortran_order': False, 'shape': ({self.count}, {THUMB}, {THUMB}, 3), }}"
            header = text.ljust(_HEADER - 11) + "\n"
            self._file.seek(0)
            self._file.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
            self._file.close()
            out = np.load(self.path, mmap_mode="r")
        except BaseException:
            self.discard()
            raise
        weakref.finalize(out, os.unlink, self.path)
        return out

    def discard(self) -> None:
        """Close and remove the file (nothing was finished)."""
        import contextlib
        import os

        self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


class FeatureCollector:
    """Collects up to ``capacity`` images' features (:meth:`add`, in the order they will be indexed), then gives
    them as :class:`~zuhyo.construct.filter.near_duplicates.FeatureArrays` (:meth:`finish`); see the module doc."""

    def __init__(self, capacity: int, tmp_dir: Path | None = None) -> None:
        import numpy as np

        self._thumbs = ThumbnailFile(tmp_dir)
        self._desc = np.empty((capacity, 1 + len(CROP_WINDOWS) ** 2, DESC * DESC), dtype=np.float32)
        self._edges = np.empty((capacity, DESC * DESC), dtype=np.float32)
        self._fine_edges = np.empty((capacity, FINE_EDGE ** 2), dtype=np.float16)
        self._cols = np.empty((capacity, THUMB), dtype=np.float32)
        self._rows = np.empty((capacity, THUMB), dtype=np.float32)
        self._ink = np.empty(capacity, dtype=np.int64)
        self._grey = np.empty(capacity, dtype=bool)
        self._sizes = np.empty((capacity, 3), dtype=np.int32)

    @property
    def count(self) -> int:
        """Images added so far."""
        return self._thumbs.count

    def add(self, f: ImageFeatures) -> ImageFeatures:
        """Keep ``f``'s arrays as the next row; returns ``f`` without them."""
        import numpy as np

        k = self.count
        if k == len(self._ink):
            raise ValueError(f"more than the {k} images this collector was made for")
        self._desc[k] = np.frombuffer(f.descriptors, dtype=np.float32).reshape(self._desc.shape[1:])
        self._edges[k] = np.frombuffer(f.edges, dtype=np.float32)
        self._fine_edges[k] = np.frombuffer(f.fine_edges, dtype=np.float16)
        self._cols[k] = np.frombuffer(f.col_profile, dtype=np.float32)
        self._rows[k] = np.frombuffer(f.row_profile, dtype=np.float32)
        self._ink[k], self._grey[k] = f.ink, f.grey
        self._sizes[k] = image_sizes([f])[0]
        self._thumbs.append(f.thumb)
        return f.without_arrays()

    def finish(self) -> FeatureArrays:
        """The arrays of the images added, in order (the thumbnails mapped from their file)."""
        from zuhyo.construct.filter.alignment import Prepared

        k = self.count
        prepared = Prepared(self._cols[:k], self._rows[:k], self._ink[:k], self._grey[:k])
        return FeatureArrays(self._thumbs.finish(), self._desc[:k], prepared, self._edges[:k], self._fine_edges[:k],
                             self._sizes[:k])

    def discard(self) -> None:
        """Remove the thumbnails' file (nothing was finished)."""
        self._thumbs.discard()
