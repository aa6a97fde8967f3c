"""The annotation workflow's shared vocabulary: errors, the tasks handed to people, results, configuration.

The workflow is a pure state machine over the workspace database (no HTTP): :mod:`zuhyo.annotate.assign`
(authoring, blind verification, revision — HakushoBench §3.2–3.3), :mod:`zuhyo.annotate.review` (expert review
rounds — DomainCQA §3.3), :mod:`zuhyo.annotate.errors_analysis` (HakushoBench §6.3), :mod:`zuhyo.annotate.users`
and :mod:`zuhyo.annotate.dashboard`. Every public function takes a
:class:`zuhyo.construct.workspace.db.Database` and does its work in one write transaction; every change is logged
to ``actions``; nothing is hard-deleted.

QA item states (``qa_items.status``) and who moves them; which path an item takes is its protocol
(:mod:`zuhyo.construct.qa.gates`, ``[protocol]`` of ``zuhyo.toml``)::

    hakusho (HakushoBench §3.2-3.3; a model draft is only a starting point an author writes from)
    (figure) --author--> authored --verifier assigned--> verifying --match (x verifiers)--> accepted
                                                             |
                                                             +--mismatch--> revise
                                                             +--undecided--> adjudicating
                                                                   (admin or third annotator rules)
                                                                   +--same--> accepted
                                                                   +--different--> revise
                            revise --revision (changed)--> authored (re-verified by yet another annotator)
                                   +--discard--> discarded
    domaincqa (DomainCQA §3.3)
    draft --experts assigned--> reviewing --consensus valid--> accepted
                                    |   +--disagreement--> reviewing (next round, another expert)
                                    |   +--no consensus after N rounds, or no expert left--> admin rules
                                    +--consensus flawed--> revise --revision--> reviewing (new round) / discarded

Nobody verifies or reviews an item they authored or revised; nobody verifies one whose reference a page showed
them (:func:`zuhyo.construct.qa.gates.may_verify`, :func:`~zuhyo.construct.qa.gates.review_excluded`).

Submissions carry a client ``submit_key``: the first submission with a key is applied and its result stored
(``submissions``); a retry with the same key returns the stored result (``replayed=True``) and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from zuhyo.construct.qa.gates import GateConfig
from zuhyo.errors import ZuhyoError

#: Roles a user can hold (several at once).
ROLES = ("admin", "annotator", "expert")
#: Default error types of the error analysis (HakushoBench §6.3 names perception, knowledge and counting).
DEFAULT_ERROR_TYPES = ("perception", "knowledge", "counting", "reasoning", "other")
#: Workflow steps (``assignments.step``).
STEPS = ("author", "verify", "review", "error")

MatchVerdict = Literal["match", "mismatch", "undecided"]


class WorkflowError(ZuhyoError):
    """A workflow request that cannot be done; the message is one line naming the item."""


class NotAllowed(WorkflowError):
    """The user may not do this (missing role, own item, not their assignment, inactive)."""


class NotFound(WorkflowError):
    """No such user, assignment, QA item, flag or error sample."""


class Conflict(WorkflowError):
    """The request clashes with the current state (assignment no longer open, item moved on, key reused)."""


@dataclass(frozen=True)
class WorkflowConfig:
    """Knobs of the workflow; the defaults follow the papers."""

    @classmethod
    def from_workspace(cls, config: dict[str, Any]) -> WorkflowConfig:
        """The workflow of a workspace: its ``[protocol]`` table, the other knobs at their defaults."""
        return cls(gates=GateConfig.from_workspace(config))

    assignment_ttl: timedelta = timedelta(hours=2)
    """An open assignment not submitted within this time is released (expired) and handed out again."""
    authors_per_figure: int = 1
    """Human QA items wanted per figure (HakushoBench §3.2: one QA pair per image)."""
    gates: GateConfig = field(default_factory=GateConfig)
    """The protocols and their parameters (``[protocol]`` of ``zuhyo.toml``, :mod:`zuhyo.construct.qa.gates`):
    verifiers per item, experts per round, consensus margin, rounds before an admin adjudicates."""
    error_types: tuple[str, ...] = DEFAULT_ERROR_TYPES
    taggers_per_error: int = 1
    """People who tag each error sample."""


@dataclass(frozen=True)
class FigureView:
    """What a person sees of a figure: the image (by content hash in the workspace image store) and, except for
    blind verification, its caption and context."""

    figure_id: int
    sha256: str
    mime: str | None
    width: int | None
    height: int | None
    caption: str | None = None
    context: list[str] = field(default_factory=list)
    page_url: str | None = None
    source: str | None = None
    """The source's title (or locator): authoring is balanced across sources."""


@dataclass(frozen=True)
class DraftView:
    """A model-drafted QA item of the figure, shown to an author as a starting point (``zuhyo draft``)."""

    qa_item_id: int
    question: str
    answer: str
    category: str | None
    aspect: str | None
    status: str


@dataclass(frozen=True)
class FlagView:
    """An open audit flag (``zuhyo audit``) on a QA item, with its evidence."""

    flag_id: int
    qa_item_id: int
    kind: str
    detail: str
    evidence: dict[str, Any]


@dataclass(frozen=True)
class AuthorTask:
    """Write one question, one short answer and one or more difficulty flags about a figure, or skip it
    (HakushoBench §3.2)."""

    assignment_id: int
    figure: FigureView
    expires_at: datetime | None
    difficulty_choices: tuple[str, ...]
    """HakushoBench difficulty flags (:class:`zuhyo.schema.Flag`); at least one is required."""
    drafts: list[DraftView] = field(default_factory=list)
    flags: list[FlagView] = field(default_factory=list)
    """Open audit flags on the figure's other QA items."""


@dataclass(frozen=True)
class VerifyTask:
    """Answer a question blind (HakushoBench §3.3): the image and the question only.

    There is deliberately no answer, caption or author on this object: nothing that could leak the reference
    can reach a verifier's page.
    """

    assignment_id: int
    qa_item_id: int
    round: int
    figure: FigureView
    """Without caption or context (``caption`` None, ``context`` empty)."""
    question: str
    expires_at: datetime | None


@dataclass(frozen=True)
class VerificationView:
    """An earlier blind answer and its match, shown when revising."""

    round: int
    item_revision: int
    user_id: int
    answer: str
    verdict: str
    judge: str


@dataclass(frozen=True)
class ReviewView:
    """An earlier expert rating, shown when revising."""

    round: int
    item_revision: int
    user_id: int
    rating: str
    comment: str | None
    correction: dict[str, Any] | None


@dataclass(frozen=True)
class RevisionTask:
    """A QA item sent back (verification mismatch or flawed by experts): revise it or discard it."""

    qa_item_id: int
    figure: FigureView
    question: str
    answer: str
    difficulty: list[str]
    revision: int
    flow: str
    """``verify`` (HakushoBench) or ``review`` (DomainCQA)."""
    verifications: list[VerificationView] = field(default_factory=list)
    reviews: list[ReviewView] = field(default_factory=list)
    flags: list[FlagView] = field(default_factory=list)
    grading: dict[str, Any] | None = None
    """``{"answer_kind", "axis", "key_points"}`` when the item has grading data or is DomainCQA-style."""
    grading_stale: bool = False


@dataclass(frozen=True)
class ReviewTask:
    """Judge a QA item Valid or Flawed, with a comment and an optional correction (DomainCQA §3.3).

    Ratings of other experts are not shown (independent review)."""

    assignment_id: int
    qa_item_id: int
    round: int
    figure: FigureView
    question: str
    answer: str
    category: str | None
    aspect: str | None
    expires_at: datetime | None
    flags: list[FlagView] = field(default_factory=list)
    grading: dict[str, Any] | None = None
    """The data that grades answers (answer kind, axis range and scale, key points), shown for checking."""
    grading_stale: bool = False


@dataclass(frozen=True)
class ErrorTask:
    """Tag one wrong model answer with an error type and a note (HakushoBench §6.3)."""

    assignment_id: int
    error_sample_id: int
    run_set: str
    model: str
    payload: dict[str, Any]
    """question, reference, prediction, verdict, image (as loaded from the run set)."""
    error_types: tuple[str, ...]
    expires_at: datetime | None


@dataclass(frozen=True)
class SubmitResult:
    """What a submission did; the same object comes back for a retried ``submit_key`` (``replayed`` True)."""

    key: str
    step: str
    outcome: str
    """authored, skipped, released, accepted, revise, verifying, next_round, reviewing, revised, discarded,
    tagged."""
    assignment_id: int | None = None
    qa_item_id: int | None = None
    item_status: str | None = None
    verdict: str | None = None
    """The match verdict (verification) or the rating (review)."""
    replayed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "step": self.step, "outcome": self.outcome, "assignment_id": self.assignment_id,
                "qa_item_id": self.qa_item_id, "item_status": self.item_status, "verdict": self.verdict}

    @classmethod
    def from_json(cls, data: dict[str, Any], *, replayed: bool) -> SubmitResult:
        return cls(**data, replayed=replayed)


@dataclass(frozen=True)
class MatchOutcome:
    """The judge's comparison of a verifier's answer with the reference."""

    verdict: MatchVerdict
    judge: str
    reason: str = ""


Matcher = Callable[[str, str, str], MatchOutcome]
"""``matcher(question, reference, answer)``; see :func:`zuhyo.annotate.workflow_match.rules_matcher`."""
