"""A synthetic pool of Chart Complexity Vectors for tests and benchmarks of the Gibbs sampler: correlated binary
attributes whose marginals are DomainCQA Appendix A.2 Table 4's proportions of complex charts in AstroChart."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

#: Share of complex (1) charts per CCV attribute in AstroChart, DomainCQA Table 4, in ``CCV_ATTRIBUTES`` order.
TABLE4_COMPLEX = (0.41, 0.78, 0.47, 0.51, 0.08, 0.35, 0.42, 0.37, 0.42, 0.68)


def synthetic_ccv_pool(n: int, seed: int, *, factor: float = 0.35, pair: float = 0.3) -> np.ndarray:
    """``n`` CCVs (shape (n, 10), uint8) from a Gaussian copula: each attribute is 1 when a latent normal exceeds
    the quantile that gives Table 4's proportion; the latents share one "overall complexity" factor (weight
    ``factor``) and pairwise links (weight ``pair``) Color–Legend, Pattern–Element and Subplot–Type, so the joint
    distribution is skewed and correlated like real charts rather than independent coin flips."""
    rng = np.random.default_rng(seed)
    common = rng.standard_normal((n, 1))
    links = rng.standard_normal((n, 3))
    own = rng.standard_normal((n, 10))
    latent = np.sqrt(factor) * common + np.sqrt(1 - factor - pair) * own
    for j, (a, b) in enumerate(((1, 2), (3, 5), (8, 9))):
        latent[:, a] += np.sqrt(pair) * links[:, j]
        latent[:, b] += np.sqrt(pair) * links[:, j]
    others = [i for i in range(10) if i not in (1, 2, 3, 5, 8, 9)]
    latent[:, others] += np.sqrt(pair) * rng.standard_normal((n, len(others)))  # unit variance for all
    cut = np.array([NormalDist().inv_cdf(1 - p) for p in TABLE4_COMPLEX])
    return (latent > cut).astype(np.uint8)
