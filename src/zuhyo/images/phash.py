"""Perceptual hashes of image bytes and near-duplicate clustering.

HakushoBench drops near-duplicate figures when filtering its 18,539 collected images; this module supplies the
two pieces that needs: a perceptual hash per image (``imagehash`` pHash or dHash) and clusters of images whose
hashes are within a Hamming distance of each other (union-find, so closeness is transitive: a~b and b~c put a,
b, c in one cluster).

Finding the close pairs uses a pigeonhole band index rather than comparing all pairs: split the hash bits into
``max_distance + 1`` disjoint bands; two hashes differing in at most ``max_distance`` bits must agree exactly on
at least one band, so only hashes sharing a band value are compared. The result is exact (the same as the
all-pairs comparison), and for the small distances used for near duplicates the number of comparisons grows
roughly linearly with the number of images.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, TypeVar

from zuhyo.images.verify import DEFAULT_MAX_PIXELS, decode_untrusted, on_white

if TYPE_CHECKING:
    import PIL.Image
    from imagehash import ImageHash

K = TypeVar("K", bound=Hashable)


def _decode(data: bytes, max_pixels: int) -> PIL.Image.Image:
    # Transparent chart backgrounds would turn black in a plain grey conversion; hash them as seen, on white.
    im, _ = decode_untrusted(data, max_pixels, context="cannot decode image for hashing")
    return on_white(im)


def image_phash(data: bytes, *, hash_size: int = 8, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageHash:
    """DCT perceptual hash (``imagehash.phash``) of encoded image bytes; ``hash_size**2`` bits."""
    import imagehash

    return imagehash.phash(_decode(data, max_pixels), hash_size=hash_size)


def image_dhash(data: bytes, *, hash_size: int = 8, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageHash:
    """Gradient (difference) hash (``imagehash.dhash``) of encoded image bytes; ``hash_size**2`` bits."""
    import imagehash

    return imagehash.dhash(_decode(data, max_pixels), hash_size=hash_size)


def hash_bits(h: ImageHash) -> tuple[int, int]:
    """(value, number of bits) of a hash, as a Python int for fast XOR / popcount."""
    import numpy as np

    flat = np.asarray(h.hash, dtype=bool).ravel()
    return int.from_bytes(np.packbits(flat).tobytes(), "big") >> ((-flat.size) % 8), int(flat.size)


def hamming(a: ImageHash, b: ImageHash) -> int:
    """Number of differing bits between two hashes of the same size."""
    (va, na), (vb, nb) = hash_bits(a), hash_bits(b)
    if na != nb:
        raise ValueError(f"cannot compare a {na}-bit hash with a {nb}-bit hash")
    return (va ^ vb).bit_count()


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:  # path compression
            self.parent[i], i = root, self.parent[i]
        return root

    def union(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri != rj:
            self.parent[max(ri, rj)] = min(ri, rj)


def _band_masks(nbits: int, bands: int) -> list[tuple[int, int]]:
    """(shift, mask) of ``bands`` contiguous, disjoint bit ranges covering all ``nbits`` bits."""
    out: list[tuple[int, int]] = []
    start = 0
    for b in range(bands):
        width = nbits // bands + (1 if b < nbits % bands else 0)
        out.append((start, (1 << width) - 1))
        start += width
    return out


def near_duplicate_clusters(hashes: Mapping[K, ImageHash], max_distance: int) -> list[list[K]]:
    """Groups of ids whose hashes are within ``max_distance`` bits, closed under transitivity.

    Only groups of two or more are returned (an image without a near duplicate is in no cluster). Ids within a
    group keep the mapping's order; groups are ordered by their first id. All hashes must have the same size.
    """
    if max_distance < 0:
        raise ValueError(f"max_distance must be >= 0, got {max_distance}")
    ids = list(hashes)
    if len(ids) < 2:
        return []
    values: list[int] = []
    nbits: int | None = None
    for key in ids:
        value, size = hash_bits(hashes[key])
        if nbits is None:
            nbits, first = size, key
        elif size != nbits:
            raise ValueError(f"hash of {key!r} has {size} bits but hash of {first!r} has {nbits}")
        values.append(value)
    assert nbits is not None  # noqa: S101 - len(ids) >= 2

    uf = _UnionFind(len(ids))
    # Identical hashes first (exact duplicates are the common case); then compare distinct values only.
    by_value: dict[int, list[int]] = defaultdict(list)
    for i, v in enumerate(values):
        by_value[v].append(i)
    reps = [members[0] for members in by_value.values()]
    for members in by_value.values():
        for other in members[1:]:
            uf.union(members[0], other)

    if max_distance >= nbits:
        for i in reps[1:]:  # every pair is within distance
            uf.union(reps[0], i)
    elif max_distance > 0:
        for shift, mask in _band_masks(nbits, max_distance + 1):
            buckets: dict[int, list[int]] = defaultdict(list)
            for i in reps:
                buckets[(values[i] >> shift) & mask].append(i)
            for bucket in buckets.values():
                for a_pos, i in enumerate(bucket):
                    for j in bucket[a_pos + 1:]:
                        if uf.find(i) != uf.find(j) and (values[i] ^ values[j]).bit_count() <= max_distance:
                            uf.union(i, j)

    groups: dict[int, list[K]] = defaultdict(list)
    for i, key in enumerate(ids):
        groups[uf.find(i)].append(key)
    return [g for g in groups.values() if len(g) > 1]
