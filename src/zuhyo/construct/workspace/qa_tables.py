"""Workspace tables for questions and the people who write, verify and review them (migration 0004).

Issue 11 (construction II) and issue 12 (the annotation app) share these, designed once:

- ``abstract_votes`` / ``abstract_outcomes``: DomainCQA Algorithm 2 (chart abstracts): one vote per (paper,
  model, prompt version), then an append-only outcome per paper (majority, tie, no majority), nothing guessed;
- ``qa_items``: every question-answer pair, whoever made it (a drafting model, an author, an import), with its
  status in the workflow; its natural identity is ``item_key``, which makes drafting idempotent and enforces
  HakushoBench's one QA per image per author;
- ``qa_model_answers`` / ``qa_flags``: the quality audit's answers (blind and with the image) and its flags
  with their evidence, for people to resolve;
- ``users``, ``assignments``, ``submissions``, ``verifications``, ``reviews``: the annotation workflow
  (HakushoBench §3.2–3.3 authoring and blind verification; DomainCQA §3.3 expert review rounds);
- ``error_samples`` / ``error_tags``: HakushoBench §6.3 error analysis of a run set's wrong answers;
- ``actions``: the audit log of every action (who, what, when, before and after); nothing is hard-deleted.

Every table has a ``meta`` JSON column for what a stage wants to keep beside the columns, so later work adds
detail without reshaping a table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from zuhyo.construct.workspace.orm import Base, JsonType, utcnow

#: Workflow states of a QA item (``qa_items.status``); the annotation app's state machine moves between them.
QA_STATUSES = ("draft", "rejected", "authored", "verifying", "adjudicating", "revise", "reviewing", "accepted",
               "discarded")


class AbstractVote(Base):
    """One model's choice of a paper's chart abstract (DomainCQA Algorithm 2, CoT step), with its reasoning."""

    __tablename__ = "abstract_votes"
    __table_args__ = (UniqueConstraint("document_id", "model", "prompt_version", name="uq_abstract_votes_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(64), default="")
    figure_id: Mapped[int | None] = mapped_column(ForeignKey("figures.id"), nullable=True)
    """The chosen figure; empty when the model's reply named none of the paper's figures (see ``error``)."""
    paper_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    reasoning: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    """The validated reply: per-figure summaries, relevance reasoning, the choice."""
    raw: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AbstractOutcome(Base):
    """The vote across models for one paper (Algorithm 2, VoT step); append-only, the latest per paper counts."""

    __tablename__ = "abstract_outcomes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    outcome: Mapped[str] = mapped_column(String(16))
    """majority, tie, no_majority or no_votes."""
    figure_id: Mapped[int | None] = mapped_column(ForeignKey("figures.id"), nullable=True)
    """The chart abstract when ``outcome`` is majority; never guessed otherwise."""
    votes: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    """``{model: figure id or null}``."""
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class UserRow(Base):
    """A person using the annotation app; ``roles`` holds any of admin, annotator, expert."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    display_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    password_hash: Mapped[str] = mapped_column(Text)
    """argon2 hash; never the password."""
    roles: Mapped[list[str]] = mapped_column(JsonType, default=list)
    locale: Mapped[str] = mapped_column(String(8), default="ja")
    """The language of the app's pages for this user (ja or en)."""
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class QAItemRow(Base):
    """A question-answer pair about one figure, from a drafting model, an author or an import."""

    __tablename__ = "qa_items"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_key: Mapped[str] = mapped_column(String(400), unique=True)
    """Natural identity: ``draft/<figure>/<style>/<category>/<model>/<prompt version>[/<n>]`` for drafts,
    ``author/<figure>/<user id>`` for people (one QA per image per author), ``import/<file hash>/<row>``."""
    figure_id: Mapped[int] = mapped_column(ForeignKey("figures.id"), index=True)
    origin: Mapped[str] = mapped_column(String(16))
    """draft, human or import."""
    style: Mapped[str | None] = mapped_column(String(16), nullable=True)
    """astro (DomainCQA Table 1) or hakusho (HakushoBench §3.2)."""
    category: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """FQA-Visual, FQA-Data, FQA-Inference, FQA-Summary, AQA-KB-Inference, AQA-KB-Summary, or None."""
    aspect: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """Color, Style, Text, Layout, Point, Interval, Calculation, or None."""
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    answer_kind: Mapped[str | None] = mapped_column(String(32), nullable=True)
    options: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    difficulty: Mapped[list[str]] = mapped_column(JsonType, default=list)
    """HakushoBench difficulty flags."""
    key_points: Mapped[list[str]] = mapped_column(JsonType, default=list)
    axis: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    """``{"min", "max", "scale"}`` of the axis a numeric answer is read on (DomainCQA Algorithm 3)."""
    status: Mapped[str] = mapped_column(String(32), index=True)
    """One of :data:`QA_STATUSES`."""
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    """Why a draft was rejected, an item skipped or discarded."""
    revision: Mapped[int] = mapped_column(Integer, default=1)
    """Bumped on every edit of question or answer; the previous text is in ``actions``."""
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    prompt_version: Mapped[str | None] = mapped_column(String(64), nullable=True)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True, index=True)
    raw: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QAModelAnswer(Base):
    """A model's answer to a QA item for a purpose (``audit_blind``: without the image; ``audit_image``)."""

    __tablename__ = "qa_model_answers"
    __table_args__ = (UniqueConstraint("qa_item_id", "purpose", "model", "prompt_version", "item_revision",
                                       name="uq_qa_model_answers_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    qa_item_id: Mapped[int] = mapped_column(ForeignKey("qa_items.id"), index=True)
    purpose: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(64), default="")
    item_revision: Mapped[int] = mapped_column(Integer, default=1)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    raw: Mapped[str | None] = mapped_column(Text, nullable=True)
    verdict: Mapped[str | None] = mapped_column(String(16), nullable=True)
    """correct, wrong or undecided against the reference, by ``judge``; empty when the call failed."""
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    judge: Mapped[str | None] = mapped_column(String(200), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QAFlag(Base):
    """An audit flag on a QA item (text_only, reference_doubt, ambiguity) with its evidence, for people to resolve."""

    __tablename__ = "qa_flags"
    __table_args__ = (UniqueConstraint("qa_item_id", "kind", "fingerprint", name="uq_qa_flags_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    qa_item_id: Mapped[int] = mapped_column(ForeignKey("qa_items.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    fingerprint: Mapped[str] = mapped_column(String(64))
    """Hash of the models, prompt versions and item revision that raised it: a re-run adds nothing twice."""
    detail: Mapped[str] = mapped_column(Text)
    evidence: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="open", index=True)
    """open, resolved or dismissed."""
    resolution: Mapped[str | None] = mapped_column(Text, nullable=True)
    resolved_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AssignmentRow(Base):
    """A unit of work handed to one person: author a figure, verify or review a QA item, tag an error.

    At most one live (open or submitted) assignment per (step, target, round, slot): a partial unique index, so
    two concurrent requests cannot hand the same work to two people, on SQLite and on PostgreSQL alike.
    """

    __tablename__ = "assignments"
    __table_args__ = (
        Index("uq_assignments_live", "step", "target_key", "round", "slot", unique=True,
              sqlite_where=text("status IN ('open', 'submitted')"),
              postgresql_where=text("status IN ('open', 'submitted')")),
        Index("ix_assignments_user_status", "user_id", "status"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    step: Mapped[str] = mapped_column(String(16))
    """author, verify, review or error."""
    target_key: Mapped[str] = mapped_column(String(400))
    """``figure/<id>``, ``qa/<id>`` or ``error/<id>``."""
    figure_id: Mapped[int | None] = mapped_column(ForeignKey("figures.id"), nullable=True)
    qa_item_id: Mapped[int | None] = mapped_column(ForeignKey("qa_items.id"), nullable=True)
    round: Mapped[int] = mapped_column(Integer, default=1)
    slot: Mapped[int] = mapped_column(Integer, default=0)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    status: Mapped[str] = mapped_column(String(16), default="open")
    """open, submitted, released (given back or expired) or skipped."""
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class SubmissionRow(Base):
    """An acknowledged submission keyed by the client's idempotency key: a retried submit is answered, not redone."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(100), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    step: Mapped[str] = mapped_column(String(16))
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"), nullable=True)
    result: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class VerificationRow(Base):
    """A blind answer to a QA item by someone other than its author, and the judge's match (HakushoBench §3.3)."""

    __tablename__ = "verifications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    qa_item_id: Mapped[int] = mapped_column(ForeignKey("qa_items.id"), index=True)
    round: Mapped[int] = mapped_column(Integer, default=1)
    item_revision: Mapped[int] = mapped_column(Integer, default=1)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    answer: Mapped[str] = mapped_column(Text)
    verdict: Mapped[str] = mapped_column(String(16))
    """match, mismatch or undecided."""
    judge: Mapped[str] = mapped_column(String(200))
    judgment: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewRow(Base):
    """An expert's Valid / Flawed judgement of a QA item in a review round (DomainCQA §3.3); every round is kept."""

    __tablename__ = "reviews"
    __table_args__ = (UniqueConstraint("qa_item_id", "round", "user_id", name="uq_reviews_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    qa_item_id: Mapped[int] = mapped_column(ForeignKey("qa_items.id"), index=True)
    round: Mapped[int] = mapped_column(Integer, default=1)
    item_revision: Mapped[int] = mapped_column(Integer, default=1)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    rating: Mapped[str] = mapped_column(String(16))
    """valid or flawed."""
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    correction: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    """An optional corrected ``{"question", "answer"}``."""
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ErrorSampleRow(Base):
    """One wrong answer of a model, loaded from a run set for error analysis (HakushoBench §6.3)."""

    __tablename__ = "error_samples"
    __table_args__ = (UniqueConstraint("run_set", "model", "sample_key", name="uq_error_samples_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_set: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    sample_key: Mapped[str] = mapped_column(String(400))
    """The sample's id within the run set (benchmark, item, prompt, run)."""
    payload: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    """Question, reference, prediction, image reference, judge verdict."""
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ErrorTagRow(Base):
    """A person's error type and note for one error sample."""

    __tablename__ = "error_tags"
    __table_args__ = (UniqueConstraint("error_sample_id", "user_id", name="uq_error_tags_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    error_sample_id: Mapped[int] = mapped_column(ForeignKey("error_samples.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    error_type: Mapped[str] = mapped_column(String(64))
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ActionRow(Base):
    """The audit log: one row per action, with the state before and after; rows are only ever added."""

    __tablename__ = "actions"
    __table_args__ = (Index("ix_actions_target", "target_type", "target_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    actor: Mapped[str] = mapped_column(String(200))
    """The user's name, or ``zuhyo <stage>`` for the pipeline."""
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    before: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    after: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class WebSessionRow(Base):
    """A signed-in session of the annotation app (migration 0005): the cookie only names it, so logging out,
    expiry, a password change or an admin ends it on the server, whatever copies of the cookie exist."""

    __tablename__ = "web_sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """SHA-256 of the session id the cookie carries (a copy of this table gives no one a working cookie)."""
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    """The session ends at this instant, whatever the cookie says (``AppSettings.session_max_age_s``)."""
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    ended_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """logout, password (the user's password changed) or another reason the app ended it."""
    client: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The client address at login (the socket's peer, or the proxy's forwarded address; see ``zuhyo serve``)."""
