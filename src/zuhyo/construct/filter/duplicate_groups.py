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


COVER_TRIES = 3
"""Members of a cluster tried as the one kept (:func:`resolve_groups`): the best, then those verified with the
most of the others."""


def resolve_groups(n: int, pairs: Sequence[PairEvidence], rank: Sequence[int], score_now: ScorePairs,
                   min_score: float, tries: int = COVER_TRIES) -> list[list[DuplicateLink]]:
    """Per resolved cluster (two or more images), the links of its dropped images to the one kept, ordered by
    the kept image's index; ``rank[i]`` orders the images best first (lower is better), ``score_now`` scores the
    pairs of a member and a kept image that were not candidates.

    The best member is kept when every other member verifies against it. When some do not, up to ``tries``
    members are tried - the best, then those with the most verified pairs in the cluster - and the first that
    leaves none out is kept instead (else the one that leaves the fewest, the best of equals). A member whose
    pair with the best member was compared and found to differ (a difference region at full resolution, or a
    solid difference of the thumbnails) is never dropped in favour of another: it shows other data, and a
    smaller copy that does not show the change must not take it in. What fails only to align (a copy cropped
    from the original against an enlarged copy ranked best) is taken in by the original: kept as it was, the
    cropped copy stayed in the set beside a figure it duplicates (bench/README.md, "eighth session"). What is
    left is resolved the same way."""
    by_pair = {(p.i, p.j): p for p in pairs}
    out: list[list[DuplicateLink]] = []
    for group in clusters(n, pairs):
        remaining = sorted(group, key=lambda i: (rank[i], i))
        while len(remaining) > 1:
            links, left, differs = _links_to(remaining[0], remaining, by_pair, score_now, min_score)
            # (Only when some member is left out for failing to align: those found to differ stay out anyway.)
            for kept in _kept_to_try(remaining, by_pair, tries)[1:] if set(left) - differs else []:
                other_links, other_left, _ = _links_to(kept, remaining, by_pair, score_now, min_score)
                other_left += [link.dropped for link in other_links if link.dropped in differs]
                if len(other_left) < len(left):
                    links = [link for link in other_links if link.dropped not in differs]
                    left = sorted(other_left, key=remaining.index)
                if not left:
                    break
            if links:
                out.append(links)
            remaining = left
    return sorted(out, key=lambda links: links[0].kept)


def _kept_to_try(remaining: list[int], by_pair: dict[tuple[int, int], PairEvidence], tries: int) -> list[int]:
    """The members (``remaining``, best first) to try as the one kept: the best, then by how many verified pairs
    they have with the others (then best first)."""
    verified = {m: sum((min(m, o), max(m, o)) in by_pair for o in remaining if o != m) for m in remaining}
    others = sorted(remaining[1:], key=lambda m: -verified[m])  # stable: best first among equals
    return [remaining[0], *others][:max(1, tries)]


def _links_to(kept: int, remaining: list[int], by_pair: dict[tuple[int, int], PairEvidence],
              score_now: ScorePairs, min_score: float) -> tuple[list[DuplicateLink], list[int], set[int]]:
    """The links of the members of ``remaining`` that verify against ``kept`` (a verified candidate pair, or
    scored now), the members that do not (in ``remaining``'s order), and of those the ones found to differ from
    it (a difference region looked at, or a solid difference of the thumbnails)."""
    import numpy as np

    others = [m for m in remaining if m != kept]
    missing = [m for m in others if (min(kept, m), max(kept, m)) not in by_pair]
    fresh: dict[int, tuple[float, int, int]] = {}
    if missing:
        scores, solids, regions = score_now(np.array([[kept, m] for m in missing], dtype=np.int64))
        fresh = {m: (float(s), int(d), int(r)) for m, s, d, r in zip(missing, scores, solids, regions, strict=True)}
    links: list[DuplicateLink] = []
    left: list[int] = []
    differs: set[int] = set()
    for m in others:
        p = by_pair.get((min(kept, m), max(kept, m)))
        if p is not None:
            links.append(DuplicateLink(m, kept, p.score, p.solid, "candidate", p.region))
            continue
        score, solid, region = fresh[m]
        if score >= min_score:
            links.append(DuplicateLink(m, kept, round(score, 4), solid, "against kept",
                                       region if region >= 0 else None))
        else:
            left.append(m)
            if region >= 0 or solid > 0:
                differs.add(m)
    return links, left, differs
