"""The human quality gates a QA item must pass before it is published, one definition per protocol.

- ``hakusho`` (HakushoBench §3.2–3.3): a person writes the item; at least ``verifiers`` (default 1, the paper's
  "a second annotator") other annotators answer it blind, and their answers match the reference. A model draft
  is never a hakusho item by itself: it is a starting point an author writes from (the author is the person who
  submits it).
- ``domaincqa`` (DomainCQA §3.3, §4.3): a model (or a person) drafts the item; ``experts_per_round`` (default 2)
  experts rate it Valid or Flawed, with more rounds until two votes agree; only Valid consensus accepts it.

Which protocol an item follows is set per origin in ``zuhyo.toml`` (table ``[protocol]``, :class:`GateConfig`).
zuhyo's own additions, beside the papers' procedures: re-verification after a revision, adjudication of a
mismatch or an undecided match by an admin or a third annotator, and an admin's ruling after
``rounds_before_adjudication`` review rounds without consensus (or when no eligible expert is left).

Independence: a person never verifies or reviews an item they authored or revised, and never verifies one whose
reference they were shown (:func:`exposure`). The same rules decide what the workflow hands out and what
:func:`gate_failure` accepts at export, so an item that reached ``accepted`` any other way is refused there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace.db import WorkspaceError
from zuhyo.construct.workspace.orm import iso_utc
from zuhyo.construct.workspace.qa_tables import ActionRow, QAItemRow, ReviewRow, UserRow, VerificationRow

PROTOCOLS = ("hakusho", "domaincqa")
ADJUDICATE = ("undecided", "all", "none")
#: Actions of the audit log after which a person is no longer independent of an item.
REVISE_ACTIONS = ("revise",)
SHOWN_ACTION = "reference_shown"
"""Logged when a page showed a person an item's reference answer (revise, review, adjudication pages)."""


@dataclass(frozen=True)
class GateConfig:
    """The ``[protocol]`` table of ``zuhyo.toml``; the defaults are the papers' values."""

    human: str = "hakusho"
    """Protocol of items people author in the app (HakushoBench §3.2)."""
    draft: str = "auto"
    """Protocol of model drafts: ``auto`` follows the draft's style (``astro`` → domaincqa, ``hakusho`` →
    hakusho, where the draft is only a starting point for an author)."""
    imported: str = "domaincqa"
    """Protocol of imported items (``origin`` import)."""
    verifiers: int = 1
    """Matching blind answers by distinct independent annotators an item needs (HakushoBench §3.3: one)."""
    experts_per_round: int = 2
    """Experts in a review's first round (DomainCQA §4.3: two)."""
    consensus_margin: int = 1
    """A review is decided when one rating has at least two votes and leads the other by this many."""
    rounds_before_adjudication: int = 3
    """Review rounds of one revision without consensus after which an admin rules (zuhyo's; the paper adds
    rounds until consensus)."""
    adjudicate: str = "undecided"
    """Which blind matches go to an adjudicator before the author: ``undecided`` (the judge could not tell,
    e.g. "7" vs "seven"), ``all`` (mismatches too) or ``none`` (the paper's path: both back for revision). zuhyo's
    addition; a decided mismatch goes back to the author as in HakushoBench §3.3."""

    @classmethod
    def from_workspace(cls, config: dict[str, Any]) -> GateConfig:
        """Read ``[protocol]`` (missing keys keep their defaults); a wrong key or value is one clear error."""
        table = config.get("protocol", {})
        if not isinstance(table, dict):
            raise WorkspaceError("zuhyo.toml: [protocol] must be a table")
        known = {f.name: f for f in fields(cls)}
        alias = {"import": "imported"}
        values: dict[str, Any] = {}
        for key, value in table.items():
            name = alias.get(key, key)
            if name not in known:
                raise WorkspaceError(f"zuhyo.toml [protocol]: unknown key {key!r} (known: "
                                     f"{', '.join(sorted({*known} - {'imported'} | {'import'}))})")
            default = getattr(cls, name)
            if isinstance(default, bool) and not isinstance(value, bool):
                raise WorkspaceError(f"zuhyo.toml [protocol]: {key} must be true or false (got {value!r})")
            if isinstance(default, int) and not isinstance(default, bool) and (
                    not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise WorkspaceError(f"zuhyo.toml [protocol]: {key} must be a whole number ≥ 1 (got {value!r})")
            if isinstance(default, str):
                allowed = ADJUDICATE if name == "adjudicate" else PROTOCOLS + (("auto",) if name == "draft" else ())
                if value not in allowed:
                    raise WorkspaceError(f"zuhyo.toml [protocol]: {key} must be one of {', '.join(allowed)} "
                                         f"(got {value!r})")
            values[name] = value
        return cls(**values)

    def adjudicates(self, verdict: str) -> bool:
        """Whether a blind match with this verdict (mismatch, undecided) goes to an adjudicator."""
        return self.adjudicate == "all" or (self.adjudicate == "undecided" and verdict == "undecided")

    def protocol_of(self, origin: str, style: str | None) -> str:
        """The protocol an item of this origin (draft, human, import) and style follows."""
        if origin == "human":
            return self.human
        if origin == "import":
            return self.imported
        if self.draft != "auto":
            return self.draft
        return "hakusho" if style == "hakusho" else "domaincqa"


def consensus(valid: int, flawed: int, margin: int) -> str | None:
    """``valid`` / ``flawed`` once one rating has two votes and leads by ``margin`` (DomainCQA §3.3), else None."""
    if max(valid, flawed) >= 2 and abs(valid - flawed) >= margin:
        return "valid" if valid > flawed else "flawed"
    return None


def pseudonym(user_id: int, created_at: datetime | None) -> str:
    """A stable id for a person in exported provenance that does not name them (nor reveal the row id)."""
    stamp = iso_utc(created_at) or ""
    return "p-" + hashlib.sha256(f"zuhyo-person:{user_id}:{stamp}".encode()).hexdigest()[:12]


@dataclass
class Evidence:
    """What the workspace records of one item's human checks."""

    verifications: list[VerificationRow] = field(default_factory=list)
    reviews: list[ReviewRow] = field(default_factory=list)
    revisers: set[int] = field(default_factory=set)
    shown: dict[int, set[str]] = field(default_factory=dict)
    """People a page showed the reference to, and which pages (``revise``, ``review``, ``adjudicate``)."""


def gather_evidence(s: Session, item_ids: Iterable[int]) -> dict[int, Evidence]:
    """:class:`Evidence` for each item id (one query per table)."""
    ids = list(item_ids)
    out = {i: Evidence() for i in ids}
    if not ids:
        return out
    for v in s.scalars(select(VerificationRow).where(VerificationRow.qa_item_id.in_(ids)).order_by(VerificationRow.id)):
        out[v.qa_item_id].verifications.append(v)
    for r in s.scalars(select(ReviewRow).where(ReviewRow.qa_item_id.in_(ids)).order_by(ReviewRow.id)):
        out[r.qa_item_id].reviews.append(r)
    for target, user, action, after in s.execute(
            select(ActionRow.target_id, ActionRow.user_id, ActionRow.action, ActionRow.after).where(
                ActionRow.target_type == "qa_item", ActionRow.target_id.in_(ids), ActionRow.user_id.is_not(None),
                ActionRow.action.in_((*REVISE_ACTIONS, SHOWN_ACTION)))):
        if target not in out or user is None:
            continue
        if action in REVISE_ACTIONS:
            out[target].revisers.add(user)
        else:
            out[target].shown.setdefault(user, set()).add(str((after or {}).get("page", "")))
    return out


def exposure(item: QAItemRow, evidence: Evidence) -> dict[int, set[str]]:
    """Who is not independent of ``item``, and why: ``author``, ``reviser``, ``shown`` (saw the reference),
    ``verifier`` (answered it blind before), ``reviewer`` (rated it)."""
    out: dict[int, set[str]] = {}
    if item.author_id is not None:
        out.setdefault(item.author_id, set()).add("author")
    for user in evidence.revisers:
        out.setdefault(user, set()).add("reviser")
    for user in evidence.shown:
        out.setdefault(user, set()).add("shown")
    for v in evidence.verifications:
        out.setdefault(v.user_id, set()).add("verifier")
    for r in evidence.reviews:
        out.setdefault(r.user_id, set()).add("reviewer")
    return out


def may_verify(user_id: int, item: QAItemRow, evidence: Evidence) -> bool:
    """A blind answer must come from someone who never wrote, revised, saw the reference of, or answered it."""
    return user_id not in exposure(item, evidence)


def review_excluded(item: QAItemRow, evidence: Evidence) -> set[int]:
    """Who may not rate ``item`` now: its author and revisers, whoever saw its reference outside a review (the
    revise or adjudication pages), and whoever rated its current revision already."""
    out = {u for u, why in exposure(item, evidence).items() if why & {"author", "reviser"}}
    out |= {u for u, pages in evidence.shown.items() if pages - {"review"}}
    out |= {r.user_id for r in evidence.reviews if r.item_revision == item.revision}
    return out



def _independent(item: QAItemRow, evidence: Evidence, user_id: int) -> bool:
    return not (exposure(item, evidence).get(user_id, set()) & {"author", "reviser"})


def _adjudication(row: VerificationRow | ReviewRow) -> dict[str, Any] | None:
    adj = (row.meta or {}).get("adjudication")
    return adj if isinstance(adj, dict) else None


def passing_verifications(item: QAItemRow, evidence: Evidence) -> list[VerificationRow]:
    """Blind answers to the current revision that match (by the judge, or by an adjudicator ruling *same*), each
    from a distinct person independent of the item."""
    seen: set[int] = set()
    out = []
    for v in evidence.verifications:
        if v.item_revision != item.revision or v.user_id in seen or not _independent(item, evidence, v.user_id):
            continue
        adj = _adjudication(v)
        if (adj["ruling"] == "same") if adj else v.verdict == "match":
            seen.add(v.user_id)
            out.append(v)
    return out


def review_outcome(item: QAItemRow, evidence: Evidence, config: GateConfig) -> str | None:
    """``valid`` / ``flawed`` for the current revision: an admin's ruling, else the experts' consensus; None."""
    current = [r for r in evidence.reviews if r.item_revision == item.revision]
    rulings = [r for r in current if (r.meta or {}).get("adjudication")]
    if rulings:
        return rulings[-1].rating
    ratings = [r.rating for r in current if _independent(item, evidence, r.user_id)]
    return consensus(ratings.count("valid"), ratings.count("flawed"), config.consensus_margin)


def gate_failure(item: QAItemRow, evidence: Evidence, config: GateConfig) -> str | None:
    """Why ``item`` may not be published under its protocol, or None when it passed every gate."""
    protocol = config.protocol_of(item.origin, item.style)
    if item.status != "accepted":
        return f"status {item.status}, not accepted"
    stale = (item.meta or {}).get("grading_stale")
    if stale:
        return (f"grading data (answer kind, axis, key points) not checked since the answer changed in revision "
                f"{stale.get('since_revision')}: confirm or edit it at /grading/{item.id} in `zuhyo serve`")
    if protocol == "hakusho":
        if item.origin == "draft":
            return "a model draft under the hakusho protocol: an author must write the item (§3.2)"
        passed = len(passing_verifications(item, evidence))
        if passed < config.verifiers:
            return (f"{passed} of {config.verifiers} matching blind verification(s) of revision {item.revision} "
                    "by independent annotators (hakusho protocol, HakushoBench §3.3)")
        return None
    if review_outcome(item, evidence, config) != "valid":
        return (f"no Valid consensus of independent experts on revision {item.revision} "
                "(domaincqa protocol, DomainCQA §3.3)")
    return None


def provenance(item: QAItemRow, evidence: Evidence, config: GateConfig, users: dict[int, UserRow]) -> dict[str, Any]:
    """The item's chain of checks, for the export: origin, people (pseudonymous), verifications, review rounds,
    the decision and its time."""

    def who(user_id: int | None) -> str | None:
        if user_id is None:
            return None
        user = users.get(user_id)
        return pseudonym(user_id, user.created_at if user is not None else None)

    def method(v: VerificationRow) -> str:
        if _adjudication(v):
            return "adjudicated"
        return "rules" if v.judge == "rules" or v.judge.endswith("(rules)") else "llm"

    return {
        "protocol": config.protocol_of(item.origin, item.style),
        "origin": item.origin,
        "model": item.model if item.origin == "draft" else None,
        "from_draft": (item.meta or {}).get("from_draft"),
        "author": who(item.author_id),
        "revisers": sorted(filter(None, (who(u) for u in evidence.revisers))),
        "revision": item.revision,
        "verifications": [{
            "round": v.round, "revision": v.item_revision, "verifier": who(v.user_id), "answer": v.answer,
            "verdict": v.verdict, "judge": v.judge, "match": method(v),
            "ruling": (_adjudication(v) or {}).get("ruling"),
            "adjudicator": who((_adjudication(v) or {}).get("user_id")),
            "at": iso_utc(v.created_at)} for v in evidence.verifications],
        "reviews": [{
            "round": r.round, "revision": r.item_revision, "expert": who(r.user_id), "rating": r.rating,
            "adjudicated": bool((r.meta or {}).get("adjudication")), "at": iso_utc(r.created_at)}
            for r in evidence.reviews],
        "decision": item.status,
        "created_at": iso_utc(item.created_at),
        "decided_at": iso_utc(item.updated_at),
    }


def review_matrix(rows: Iterable[Any], value: Callable[[Any], float | None] | None = None
                  ) -> tuple[list[list[float | None]], int, int]:
    """The experts' ratings as a coders × units reliability matrix (a unit is one revision of an item; an
    admin's ruling is not a coder's rating): ``(matrix, coders, units)``. ``value`` reads a row's rating (default
    Valid 1 / Flawed 0; None leaves the row out). ``rows`` carry ``qa_item_id``, ``item_revision``, ``user_id``,
    ``rating`` and ``meta``."""
    read = value or (lambda r: 1.0 if r.rating == "valid" else 0.0)
    kept = [(r, v) for r in rows if not (r.meta or {}).get("adjudication") and (v := read(r)) is not None]
    units = sorted({(r.qa_item_id, r.item_revision) for r, _ in kept})
    coders = sorted({r.user_id for r, _ in kept})
    col = {u: i for i, u in enumerate(units)}
    line = {c: i for i, c in enumerate(coders)}
    matrix: list[list[float | None]] = [[None] * len(units) for _ in coders]
    for r, v in kept:
        matrix[line[r.user_id]][col[(r.qa_item_id, r.item_revision)]] = v
    return matrix, len(coders), len(units)


def funnel(items: Iterable[QAItemRow], evidence: dict[int, Evidence], config: GateConfig) -> dict[str, dict[str, int]]:
    """The counts the papers report per protocol: hakusho authored → verified → revised → accepted / discarded
    (HakushoBench §3.3: 5,903 → 2,053); domaincqa drafted → reviewed → accepted / discarded (DomainCQA §4.3)."""
    out = {"hakusho": dict.fromkeys(("authored", "verified", "revised", "accepted", "discarded"), 0),
           "domaincqa": dict.fromkeys(("drafted", "reviewed", "revised", "accepted", "discarded"), 0)}
    for item in items:
        if item.status == "rejected":
            continue  # a draft the form checks refused: never in front of a person
        protocol = config.protocol_of(item.origin, item.style)
        if protocol == "hakusho" and item.origin == "draft":
            continue  # a starting point for authors, not an item
        ev = evidence.get(item.id, Evidence())
        row = out[protocol]
        row["authored" if protocol == "hakusho" else "drafted"] += 1
        if (ev.verifications if protocol == "hakusho" else ev.reviews):
            row["verified" if protocol == "hakusho" else "reviewed"] += 1
        row["revised"] += item.revision > 1 or bool(ev.revisers)
        if item.status in ("accepted", "discarded"):
            row[item.status] += 1
    return out
