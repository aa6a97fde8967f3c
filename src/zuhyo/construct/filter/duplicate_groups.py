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
    pairs of a member and a kept image that were not candidates.

    Then what is left over: an image that does not verify against the figure kept in its star cluster is not
    dropped there, but it may have verified with a figure kept elsewhere (the star clustering put it with another
    centre). Each such image is dropped for the best kept figure it verified with; one that verified with a dropped
    image is scored against the figure kept in that one's place and dropped for it where that pair verifies; and
    the left-over images that verified with one another are resolved as clusters of their own, until no two
    images left verify (issue 22: six copies of the hard corpus's studied seeds were left undropped so,
    bench/README.md "sixteenth session")."""
    import numpy as np

    by_pair = {(p.i, p.j): p for p in pairs}
    fresh: dict[tuple[int, int], tuple[float, int, int]] = {}  # pairs scored now
    groups: dict[int, list[DuplicateLink]] = {}  # by the image kept

    def link(m: int, kept: int) -> DuplicateLink | None:
        """``m`` dropped for ``kept``, where their pair (a candidate, or scored now) verifies."""
        key = (min(kept, m), max(kept, m))
        if (p := by_pair.get(key)) is not None:
            return DuplicateLink(m, kept, p.score, p.solid, "candidate", p.region)
        score, solid, region = fresh[key]
        if score < min_score:
            return None
        return DuplicateLink(m, kept, round(score, 4), solid, "against kept", region if region >= 0 else None)

    def resolve(evidence: Sequence[PairEvidence]) -> None:
        for group in clusters(n, evidence):
            remaining = sorted(group, key=lambda i: (rank[i], i))
            while len(remaining) > 1:
                kept, others = remaining[0], remaining[1:]
                missing = [(min(kept, m), max(kept, m)) for m in others]
                missing = [key for key in missing if key not in by_pair and key not in fresh]
                if missing:
                    scores, solids, regions = score_now(np.array(missing, dtype=np.int64))
                    fresh.update({key: (float(s), int(d), int(r))
                                  for key, s, d, r in zip(missing, scores, solids, regions, strict=True)})
                links = [found for m in others if (found := link(m, kept)) is not None]
                if links:
                    groups.setdefault(kept, []).extend(links)
                dropped = {found.dropped for found in links}
                remaining = [m for m in others if m not in dropped]

    def through_dropped(verified: Sequence[PairEvidence], dropped_for: dict[int, int]) -> bool:
        """Whether a left-over image that verified with a dropped one was dropped for the figure kept in that one's
        place: their pair scored now (never joined through the dropped image). Several copies of one figure crowd
        its neighbours: a copy whose only candidates were the other copies was left over (issue 22, bench/README.md
        "twenty-fifth session")."""
        via: dict[int, set[int]] = {}
        for p in verified:
            for m, d in ((p.i, p.j), (p.j, p.i)):
                if d in dropped_for and m not in dropped_for and m not in groups:
                    kept = dropped_for[d]
                    key = (min(kept, m), max(kept, m))
                    if key not in by_pair and key not in fresh:
                        via.setdefault(m, set()).add(kept)
        if not via:
            return False
        todo = sorted({(min(kept, m), max(kept, m)) for m, kept_ones in via.items() for kept in kept_ones})
        scores, solids, regions = score_now(np.array(todo, dtype=np.int64))
        fresh.update({key: (float(s), int(d), int(r)) for key, s, d, r in zip(todo, scores, solids, regions,
                                                                               strict=True)})
        for m in sorted(via):
            found = [link_ for kept in sorted(via[m], key=lambda k: (rank[k], k)) if (link_ := link(m, kept))]
            if found:
                groups[found[0].kept].append(found[0])
        return True

    resolve(pairs)
    while True:
        dropped_for = {found.dropped: kept for kept, links in groups.items() for found in links}
        dropped = dropped_for.keys()
        verified = [*pairs, *(PairEvidence(i, j, 0.0, score) for (i, j), (score, _, _) in fresh.items()
                              if score >= min_score)]
        if through_dropped(verified, dropped_for):
            continue
        left = [p for p in verified if p.i not in dropped and p.j not in dropped
                and not (p.i in groups and p.j in groups)]
        if not left:
            break
        # a left-over image that verified with a kept figure: dropped for the best of them
        to_kept: dict[int, list[int]] = {}
        for p in left:
            for m, kept in ((p.i, p.j), (p.j, p.i)):
                if kept in groups and m not in groups:
                    to_kept.setdefault(m, []).append(kept)
        for m, kept_ones in to_kept.items():
            kept = min(kept_ones, key=lambda k: (rank[k], k))
            if (found := link(m, kept)) is not None:  # it is: the pair verified
                groups[kept].append(found)
        # the rest, among themselves
        taken = to_kept.keys() | groups.keys()
        rest = [p for p in left if p.i not in taken and p.j not in taken]
        before = len(groups)
        resolve(rest)
        if not to_kept and len(groups) == before:
            break
    return [groups[kept] for kept in sorted(groups)]
