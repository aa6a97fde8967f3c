"""From verified pairs to decisions: which image of a near-duplicate cluster is kept, and which are dropped as its
duplicates - each dropped image verified against the kept one, never joined through another member.

Star clusters (:func:`zuhyo.construct.filter.near_duplicates.clusters`) join each member to the cluster's centre,
but the image kept is the *best* member (the largest, the latest edition...), which need not be the centre: a
member verified against the centre only can be a different chart from the kept one (issue 22: 45 false links
"through other members", scoring as low as 0.43 against the kept figure). So (:func:`resolve_groups`): in each
cluster, best first, the best image is kept and every member that verifies against it (a pair already verified,
or scored now) is dropped with that evidence; the members that do not form what is left of the cluster, whose
best is kept in turn, and so on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zuhyo.construct.filter.near_duplicates import PairEvidence, clusters

if TYPE_CHECKING:
    import numpy as np

ScorePairs = Callable[["np.ndarray"], tuple["np.ndarray", "np.ndarray", "np.ndarray"]]
"""Scores ``(m, 2)`` index pairs now: (scores, solid differences, difference regions), as
:func:`zuhyo.construct.filter.near_duplicates.verify_scores` gives them - a pair that fails a test the score does
not measure (a solid difference, a difference region) scores 0; a region of -1: the pair was not looked at again
at full resolution."""


@dataclass(frozen=True)
class DuplicateLink:
    """One dropped image and the kept image it was verified against."""

    dropped: int
    """Index of the dropped image."""
    kept: int
    """Index of the image kept in its place."""
    score: float
    """Verification score of the pair (at least the filter's ``min_score``)."""
    solid: int
    """Pixels of solid difference of the pair's thumbnails after alignment."""
    verified: str
    """``candidate`` (the pair was a candidate and verified as such) or ``against kept`` (scored when the cluster
    was resolved, because the pair that joined the image was with another member)."""
    region: int | None = None
    """Pixels of the pair's largest difference region at full resolution, when the pair was looked at again
    (:class:`zuhyo.construct.filter.near_duplicates.PairEvidence`; for ``against kept``, when it was scored)."""


def resolve_groups(n: int, pairs: Sequence[PairEvidence], rank: Sequence[int], score_now: ScorePairs,
                   min_score: float) -> list[list[DuplicateLink]]:
    """Per resolved cluster (two or more images), the links of its dropped images to the one kept, ordered by
    the kept image's index; ``rank[i]`` orders the images best first (lower is better), ``score_now`` scores the
    pairs of a member and a kept image that were not candidates."""
    import numpy as np

    by_pair = {(p.i, p.j): p for p in pairs}
    out: list[list[DuplicateLink]] = []
    for group in clusters(n, pairs):
        remaining = sorted(group, key=lambda i: (rank[i], i))
        while len(remaining) > 1:
            kept, others = remaining[0], remaining[1:]
            missing = [m for m in others if (min(kept, m), max(kept, m)) not in by_pair]
            fresh: dict[int, tuple[float, int, int]] = {}
            if missing:
                scores, solids, regions = score_now(np.array([[kept, m] for m in missing], dtype=np.int64))
                fresh = {m: (float(s), int(d), int(r))
                         for m, s, d, r in zip(missing, scores, solids, regions, strict=True)}
            links: list[DuplicateLink] = []
            left: list[int] = []
            for m in others:
                p = by_pair.get((min(kept, m), max(kept, m)))
                if p is not None:
                    links.append(DuplicateLink(m, kept, p.score, p.solid, "candidate", p.region))
                elif fresh[m][0] >= min_score:
                    score, solid, region = fresh[m]
                    links.append(DuplicateLink(m, kept, round(score, 4), solid, "against kept",
                                               region if region >= 0 else None))
                else:
                    left.append(m)
            if links:
                out.append(links)
            remaining = left
    return sorted(out, key=lambda links: links[0].kept)
