"""Visual diversity: the mean pairwise cosine distance of image embeddings.

HakushoBench measures how visually varied a benchmark is as the mean cosine distance ``1 − cos(e_i, e_j)`` over
all pairs of distinct images, with SigLIP2 (so400m-patch16-512) image embeddings. This module computes that mean
from any embedding matrix (one row per image):

- **exact** for ``n ≤ exact_max_n`` (default 20,000): all ``n(n−1)/2`` pairs, by blockwise matrix products
  (``O(n²·d)`` time, ``O(block·n)`` memory), also giving the standard deviation, minimum and maximum of the pairwise
  distances;
- **sampled** above that: ``m`` pairs drawn independently and uniformly from the unordered pairs of distinct
  images (``i``, ``j`` uniform with ``i ≠ j``; each unordered pair is then equally likely). The sample mean is an
  unbiased estimate of the exact mean. Reported with it: its standard error ``s/√m`` and a 95 % confidence
  interval by the **central limit theorem** (``mean ± 1.96·s/√m``), and, as a distribution-free guarantee, the
  **Hoeffding** half-width for distances bounded in ``[0, 2]``: ``P(|mean − μ| ≥ t) ≤ 2·exp(−2mt²/4)``, so
  ``t₉₅ = sqrt(2·ln(2/0.05)/m)``. With the default ``m = 1,000,000`` the Hoeffding half-width is 0.0027 and the
  CLT half-width is typically far smaller.

Rows are L2-normalised here (again) so the result does not depend on the embedder having done it; a zero row is
an error naming its index.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from zuhyo.analysis.embedders import ImageEmbedder
    from zuhyo.benchmarks.base import LoadResult

DEFAULT_EXACT_MAX_N = 20_000
DEFAULT_SAMPLED_PAIRS = 1_000_000
DEFAULT_BLOCK = 512
Z_95 = 1.959963984540054
#: Cosine distance lies in [0, 2]: the range Hoeffding's inequality needs.
DISTANCE_RANGE = 2.0


@dataclass(frozen=True)
class DiversityResult:
    """Mean pairwise cosine distance of ``n`` embeddings, exact or estimated from sampled pairs."""

    n: int
    """Number of images (embedding rows)."""
    pairs: int
    """Number of unordered pairs of distinct images, n(n−1)/2."""
    method: Literal["exact", "sampled"]
    mean_distance: float
    """Mean of 1 − cos over pairs (exact), or its estimate (sampled)."""
    std_distance: float
    """Standard deviation of the pairwise distances (population over all pairs when exact; sample std when sampled)."""
    min_distance: float | None = None
    """Smallest pairwise distance (exact only)."""
    max_distance: float | None = None
    """Largest pairwise distance (exact only)."""
    sampled_pairs: int | None = None
    """Pairs drawn (sampled only)."""
    standard_error: float | None = None
    """Standard error of the estimate, s/√m (sampled only)."""
    ci95_low: float | None = None
    """Lower end of the 95 % CLT confidence interval (sampled only)."""
    ci95_high: float | None = None
    """Upper end of the 95 % CLT confidence interval (sampled only)."""
    hoeffding95_halfwidth: float | None = None
    """Distribution-free 95 % half-width from Hoeffding's inequality (sampled only)."""
    seed: int | None = None
    """Random seed of the pair sampler (sampled only)."""
    mean_distance_closed_form: float | None = None
    """zuhyo improvement beside the paper's procedure (sampled only): the *exact* mean for any n in O(n·d), from
    Σ_{i≠j} x_i·x_j = ‖Σ x_i‖² − n for unit vectors. Distances are not clipped here, so it can differ from the
    pairwise mean by float rounding only; std/min/max still need pairs."""

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 8) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def normalise_rows(embeddings: np.ndarray) -> np.ndarray:
    """Float64 copy with unit-length rows; raises ValueError naming the first zero or non-finite row."""
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D matrix (one row per image), got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if bad.size:
        raise ValueError(f"embedding row {int(bad[0])} has NaN or infinite values")
    norms = np.linalg.norm(x, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"embedding row {int(zero[0])} is all zeros (cosine distance undefined)")
    return x / norms[:, None]


def exact_pairwise_distance(embeddings: np.ndarray, *, block: int = DEFAULT_BLOCK) -> DiversityResult:
    """Mean, std, min and max of 1 − cos over all unordered pairs, blockwise (memory O(block·n))."""
    x = normalise_rows(embeddings)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"visual diversity needs at least 2 images, got {n}")
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    total = total_sq = 0.0
    lo, hi = math.inf, -math.inf
    for start in range(0, n, block):
        stop = min(start + block, n)
        # Rows start..stop against columns start..n: the upper triangle (j > i) of this row block.
        cos = x[start:stop] @ x[start:].T
        dist = np.clip(1.0 - cos, 0.0, DISTANCE_RANGE)
        mask = np.triu(np.ones((stop - start, n - start), dtype=bool), k=1)
        vals = dist[mask]
        if vals.size:
            total += float(vals.sum())
            total_sq += float(np.square(vals).sum())
            lo, hi = min(lo, float(vals.min())), max(hi, float(vals.max()))
    pairs = n * (n - 1) // 2
    mean = total / pairs
    var = max(total_sq / pairs - mean * mean, 0.0)
    return DiversityResult(n=n, pairs=pairs, method="exact", mean_distance=mean, std_distance=math.sqrt(var),
                           min_distance=lo, max_distance=hi)


def sampled_pairwise_distance(embeddings: np.ndarray, *, n_pairs: int = DEFAULT_SAMPLED_PAIRS, seed: int = 0,
                              chunk: int = 65_536) -> DiversityResult:
    """Estimate the mean pairwise cosine distance from ``n_pairs`` i.i.d. uniformly drawn pairs (see module doc)."""
    x = normalise_rows(embeddings)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"visual diversity needs at least 2 images, got {n}")
    if n_pairs < 2:
        raise ValueError(f"n_pairs must be >= 2, got {n_pairs}")
    rng = np.random.default_rng(seed)
    total = total_sq = 0.0
    drawn = 0
    while drawn < n_pairs:
        k = min(chunk, n_pairs - drawn)
        i = rng.integers(0, n, size=k)
        # j uniform over the n − 1 indices other than i: shift past i so no draw is wasted or biased.
        j = rng.integers(0, n - 1, size=k)
        j += j >= i
        d = np.clip(1.0 - np.einsum("ij,ij->i", x[i], x[j]), 0.0, DISTANCE_RANGE)
        total += float(d.sum())
        total_sq += float(np.square(d).sum())
        drawn += k
    mean = total / n_pairs
    var = max((total_sq - n_pairs * mean * mean) / (n_pairs - 1), 0.0)  # sample variance (ddof = 1)
    se = math.sqrt(var / n_pairs)
    hoeffding = DISTANCE_RANGE * math.sqrt(math.log(2 / 0.05) / (2 * n_pairs))
    return DiversityResult(n=n, pairs=n * (n - 1) // 2, method="sampled", mean_distance=mean,
                           std_distance=math.sqrt(var), sampled_pairs=n_pairs, standard_error=se,
                           ci95_low=mean - Z_95 * se, ci95_high=mean + Z_95 * se,
                           hoeffding95_halfwidth=hoeffding, seed=seed,
                           mean_distance_closed_form=closed_form_mean_distance(x))


def closed_form_mean_distance(unit_rows: np.ndarray) -> float:
    """Exact mean pairwise cosine distance of L2-normalised rows in O(n·d) (see DiversityResult)."""
    n = unit_rows.shape[0]
    total = unit_rows.astype(np.float64).sum(axis=0)
    mean_cos = (float(total @ total) - n) / (n * (n - 1))
    return 1.0 - mean_cos


def mean_pairwise_cosine_distance(embeddings: np.ndarray, *, exact_max_n: int = DEFAULT_EXACT_MAX_N,
                                  n_pairs: int = DEFAULT_SAMPLED_PAIRS, seed: int = 0,
                                  block: int = DEFAULT_BLOCK) -> DiversityResult:
    """HakushoBench visual diversity: exact for ``n ≤ exact_max_n``, else the sampled estimate with its error."""
    n = int(np.asarray(embeddings).shape[0])
    if n <= exact_max_n:
        return exact_pairwise_distance(embeddings, block=block)
    return sampled_pairwise_distance(embeddings, n_pairs=n_pairs, seed=seed)


@dataclass
class BenchmarkDiversity:
    """Visual diversity of one benchmark's distinct images, with the images that could not be used."""

    benchmark: str
    embedder: str
    images: int
    """Distinct images embedded (identical files counted once)."""
    questions: int
    result: DiversityResult | None
    """None when fewer than 2 images could be embedded."""
    skipped: list[str]
    """One message per image that could not be read or decoded, naming its sample."""
    questions_without_image: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "embedder": self.embedder, "images": self.images,
                "questions": self.questions, "questions_without_image": self.questions_without_image,
                "images_skipped": len(self.skipped), "skipped_examples": self.skipped[:20],
                "diversity": self.result.to_json() if self.result else None}


def collect_distinct_images(result: LoadResult, cache_dir: Path | None = None
                            ) -> tuple[list[tuple[str, bytes]], list[str]]:
    """``(label, bytes)`` per distinct image file of a benchmark (by content hash), and an error per unreadable one.

    The label is ``<benchmark>/<first sample id>`` so an error or an outlier names a sample to look at.
    """
    import hashlib

    from zuhyo.analysis.statistics import image_key
    from zuhyo.errors import ImageError
    from zuhyo.images.load import read_image_bytes

    seen_keys: set[str] = set()
    seen_content: set[str] = set()
    items: list[tuple[str, bytes]] = []
    errors: list[str] = []
    for s in result.samples:
        key = image_key(s, result.base_dir)
        if s.image is None or key is None or key in seen_keys:
            continue
        seen_keys.add(key)
        label = f"{result.benchmark}/{s.id}"
        try:
            data = read_image_bytes(s.image, result.base_dir, cache_dir)
        except ImageError as e:
            errors.append(f"{label}: {e}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest not in seen_content:
            seen_content.add(digest)
            items.append((label, data))
    return items, errors


def benchmark_diversity(result: LoadResult, embedder: ImageEmbedder, *, cache_dir: Path | None = None,
                        exact_max_n: int = DEFAULT_EXACT_MAX_N, n_pairs: int = DEFAULT_SAMPLED_PAIRS, seed: int = 0,
                        block: int = DEFAULT_BLOCK, progress: Callable[[int], None] | None = None,
                        on_total: Callable[[int], None] | None = None) -> BenchmarkDiversity:
    """Embed a benchmark's distinct images and compute their mean pairwise cosine distance."""
    from zuhyo.analysis.embedders import embed_images

    items, skipped = collect_distinct_images(result, cache_dir)
    if on_total is not None:
        on_total(len(items))
    embedded = embed_images(embedder, items, progress=progress)
    skipped += embedded.errors
    n = len(embedded.ids)
    value = None
    if n >= 2:
        value = mean_pairwise_cosine_distance(embedded.matrix, exact_max_n=exact_max_n, n_pairs=n_pairs, seed=seed,
                                              block=block)
    return BenchmarkDiversity(benchmark=result.benchmark, embedder=embedder.spec, images=n,
                              questions=len(result.samples), result=value, skipped=skipped,
                              questions_without_image=sum(1 for s in result.samples if s.image is None))
