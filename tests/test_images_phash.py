"""Perceptual hashing of charts and near-duplicate clustering (checked against an all-pairs reference).

Charts: the suite's rendered fixture charts always; real ChartQA charts from ../shared/data when present.
"""

from __future__ import annotations

import io
import itertools
import random
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURE_CHARTS
from imagehash import ImageHash
from PIL import Image

from zuhyo.errors import ImageError
from zuhyo.images.phash import hamming, hash_bits, image_dhash, image_phash, near_duplicate_clusters

# Distinct-looking rendered charts (bars, pie, stacked, grouped, scatter, lines), one of each template.
FIXTURE_DISTINCT = ["late_night_viewers.png", "monthly_rainfall.png", "energy_mix.png", "survey_by_age.png",
                    "quarterly_sales.png", "gdp_life_expectancy.png", "monthly_temperature.png",
                    "owid_life_expectancy.png"]
# Distinct-looking real ChartQA charts (Pew, Statista, OECD); no two share a template.
DISTINCT = ["10222.png", "10715.png", "1319.png", "3854.png", "9814.png", "multi_col_60236.png",
            "two_col_40229.png", "OECD_DEATHS_FROM_CANCER_COL_CRI_SVN_000015.png"]
# Three Our World in Data line charts with the same template (title, logo, axes, two/three series).
OWID_SAME_TEMPLATE = ["11495956000050.png", "73300861001565.png", "77342851005157.png"]


def resized_jpeg(data: bytes, scale: float = 0.5, quality: int = 70) -> bytes:
    im = Image.open(io.BytesIO(data)).convert("RGB")
    im = im.resize((int(im.width * scale), int(im.height * scale)))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def from_int(value: int, nbits: int = 64) -> ImageHash:
    side = int(nbits ** 0.5)
    bits = [(value >> (nbits - 1 - k)) & 1 for k in range(nbits)]
    return ImageHash(np.array(bits, dtype=bool).reshape(side, side))


def brute_force_clusters(hashes: dict, d: int) -> list[list]:
    ids = list(hashes)
    parent = {k: k for k in ids}

    def find(k):  # type: ignore[no-untyped-def]
        while parent[k] != k:
            k = parent[k]
        return k

    for a, b in itertools.combinations(ids, 2):
        if hamming(hashes[a], hashes[b]) <= d:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb, key=ids.index)] = min(ra, rb, key=ids.index)
    groups: dict = {}
    for k in ids:
        groups.setdefault(find(k), []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def test_hash_bits_roundtrip_and_hamming() -> None:
    h = from_int(0xF0F0_0000_0000_0001)
    assert hash_bits(h) == (0xF0F0_0000_0000_0001, 64)
    assert hamming(h, from_int(0xF0F0_0000_0000_0000)) == 1
    assert hamming(from_int(0), from_int(2**64 - 1)) == 64
    odd = ImageHash(np.ones((6, 6), dtype=bool))
    assert hash_bits(odd) == (2**36 - 1, 36)
    with pytest.raises(ValueError, match="36-bit hash"):
        hamming(h, odd)


def _charts_cluster_with_their_resized_jpeg_copies(folder: Path, names: list[str]) -> None:
    hashes = {}
    for name in names:
        data = (folder / name).read_bytes()
        hashes[name] = image_phash(data)
        hashes[name + ":copy"] = image_phash(resized_jpeg(data))
    clusters = near_duplicate_clusters(hashes, max_distance=4)
    assert clusters == [[name, name + ":copy"] for name in names]
    assert clusters == brute_force_clusters(hashes, 4)
    assert near_duplicate_clusters(hashes, max_distance=0) == brute_force_clusters(hashes, 0)


def test_fixture_charts_cluster_with_their_resized_jpeg_copies() -> None:
    _charts_cluster_with_their_resized_jpeg_copies(FIXTURE_CHARTS, FIXTURE_DISTINCT)


def test_real_charts_cluster_with_their_resized_jpeg_copies(shared_data: Path) -> None:
    _charts_cluster_with_their_resized_jpeg_copies(shared_data / "chartqa" / "test" / "png", DISTINCT)


def test_same_template_charts_are_close_in_phash(shared_data: Path) -> None:
    # A real limit of pHash on charts: same-template figures with different data sit within a few bits, so the
    # threshold must be tight (these three chain together at 6 bits but not at 3).
    real = shared_data / "chartqa" / "test" / "png"
    hashes = {n: image_phash((real / n).read_bytes()) for n in OWID_SAME_TEMPLATE}
    assert near_duplicate_clusters(hashes, 6) == [OWID_SAME_TEMPLATE]
    assert near_duplicate_clusters(hashes, 3) == []


def test_dhash_and_transparency_flattened_on_white() -> None:
    rgba = Image.new("RGBA", (64, 48), (0, 0, 0, 0))
    for x in range(10, 54):
        for y in range(30, 40):
            rgba.putpixel((x, y), (200, 30, 30, 255))
    buf = io.BytesIO()
    rgba.save(buf, "PNG")
    on_white = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("RGB")
    buf2 = io.BytesIO()
    on_white.save(buf2, "PNG")
    assert image_dhash(buf.getvalue()) == image_dhash(buf2.getvalue())
    assert image_phash(buf.getvalue()) == image_phash(buf2.getvalue())


def test_hashing_rejects_non_images_and_bombs() -> None:
    with pytest.raises(ImageError, match="cannot decode image"):
        image_phash(b"<html>not an image</html>")
    from test_images_fetch import bomb_png

    with pytest.raises(ImageError, match="40000x40000"):
        image_phash(bomb_png())


@pytest.mark.parametrize("d", [0, 1, 3, 6, 10])
def test_matches_all_pairs_reference_on_planted_near_duplicates(d: int) -> None:
    rng = random.Random(1000 + d)
    hashes: dict[str, ImageHash] = {}
    for k in range(150):
        base = rng.getrandbits(64)
        hashes[f"b{k}"] = from_int(base)
        if k % 3 == 0:  # a chain: each step flips up to d bits (transitive closure is needed to merge them)
            cur = base
            for step in range(2):
                for bit in rng.sample(range(64), rng.randint(0, d)):
                    cur ^= 1 << bit
                hashes[f"b{k}-{step}"] = from_int(cur)
    assert near_duplicate_clusters(hashes, d) == brute_force_clusters(hashes, d)


def test_edge_cases() -> None:
    assert near_duplicate_clusters({}, 3) == []
    assert near_duplicate_clusters({"a": from_int(1)}, 3) == []
    everything = {k: from_int(random.Random(k).getrandbits(64)) for k in range(5)}
    assert near_duplicate_clusters(everything, 64) == [list(range(5))]
    with pytest.raises(ValueError, match="max_distance"):
        near_duplicate_clusters(everything, -1)
    with pytest.raises(ValueError, match="has 36 bits"):
        near_duplicate_clusters({"a": from_int(1), "b": ImageHash(np.zeros((6, 6), dtype=bool))}, 2)


def test_scales_to_many_hashes() -> None:
    rng = random.Random(7)
    hashes = {i: from_int(rng.getrandbits(64)) for i in range(30000)}
    planted = {30000 + i: from_int(hash_bits(hashes[i])[0] ^ (1 << (i % 64)) ^ (1 << ((i * 7 + 3) % 64)))
               for i in range(0, 30000, 100)}
    hashes.update(planted)
    t0 = time.perf_counter()
    clusters = near_duplicate_clusters(hashes, 4)
    elapsed = time.perf_counter() - t0
    assert sorted(map(sorted, clusters)) == sorted([i, 30000 + i] for i in range(0, 30000, 100))
    assert elapsed < 10  # all-pairs would be 4.5e8 comparisons
