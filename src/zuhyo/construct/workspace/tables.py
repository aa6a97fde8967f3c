"""The workspace database tables (SQLAlchemy 2 ORM); Alembic migrations in ``migrations/`` create them.

Design, meant to hold the whole construction pipeline and the annotation app (issues 10-12):

- integer surrogate keys everywhere; natural identities are unique constraints, which is what makes every
  stage idempotent (a re-run finds the row instead of adding a second one);
- ``sources`` → ``documents`` → ``figures``: what was collected, from where (HakushoBench §3.1: white-paper
  series → HTML pages → figures; DomainCQA §4.1: arXiv papers → figures);
- ``decisions``: append-only per-figure decisions of stages and people; a figure's status in a stage is its
  latest decision there, so nothing is overwritten and every drop can be reviewed and overturned;
- ``item_errors``: items a stage could not process (a corrupt image, a broken page), one row per
  (stage, item), with the reason, retried and resolved on a re-run;
- ``stage_runs``: one row per stage invocation (parameters, counts, who ran it): the audit trail of the
  pipeline.
- ``figure_labels`` (migration 0003): append-only labels per figure and stage (image type, CCV), from models
  (with model and prompt version) and people; :mod:`zuhyo.construct.workspace.labels` reads the current one.

Later migrations add tables next to these, never reshape them: samples, chart abstracts, QA items and their
audit flags (issue 11), users, roles, assignments, verifications, reviews and an action audit log (issue 12),
all pointing at ``figures.id``.
JSON columns are JSONB on PostgreSQL and JSON text on SQLite.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from zuhyo.construct.workspace.orm import Base, JsonType, utcnow


class StageRun(Base):
    """One invocation of a stage: what ran, with which parameters, by whom, and what it did."""

    __tablename__ = "stage_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stage: Mapped[str] = mapped_column(String(64), index=True)
    params: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="running")
    """running, done or failed (a run killed outright stays ``running``)."""
    counts: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    started_by: Mapped[str] = mapped_column(String(200))
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    zuhyo_version: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Source(Base):
    """Where documents come from: a folder, a white paper's HTML edition, an arXiv source, a PDF."""

    __tablename__ = "sources"
    __table_args__ = (UniqueConstraint("kind", "locator", name="uq_sources_kind_locator"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    """folder, html, latex, pdf."""
    locator: Mapped[str] = mapped_column(Text)
    """Absolute folder path, table-of-contents URL, arXiv id or file path."""
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Document(Base):
    """One document of a source: a sub-folder, an HTML page, a paper, a PDF."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("source_id", "locator", name="uq_documents_source_locator"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id"), index=True)
    locator: Mapped[str] = mapped_column(Text)
    """Relative folder, page URL, paper id or file path, unique within the source."""
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    page_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    paper_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    edition: Mapped[str | None] = mapped_column(String(200), nullable=True)
    year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class FigureRow(Base):
    """One figure of a document; the columns mirror :class:`zuhyo.schema.Figure`."""

    __tablename__ = "figures"
    __table_args__ = (UniqueConstraint("document_id", "locator", name="uq_figures_document_locator"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    locator: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    caption: Mapped[str | None] = mapped_column(Text, nullable=True)
    figure_number: Mapped[str | None] = mapped_column(String(200), nullable=True)
    context: Mapped[list[str]] = mapped_column(JsonType, default=list)
    page: Mapped[str | None] = mapped_column(String(200), nullable=True)
    section: Mapped[str | None] = mapped_column(Text, nullable=True)
    page_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    paper_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    back_data_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    edition: Mapped[str | None] = mapped_column(String(200), nullable=True)
    year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    width: Mapped[int | None] = mapped_column(Integer, nullable=True)
    height: Mapped[int | None] = mapped_column(Integer, nullable=True)
    mime: Mapped[str | None] = mapped_column(String(64), nullable=True)
    provenance: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DecisionRow(Base):
    """An append-only decision about a figure; the latest one per (figure, stage) is the current status."""

    __tablename__ = "decisions"
    __table_args__ = (Index("ix_decisions_figure_stage", "figure_id", "stage", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    figure_id: Mapped[int] = mapped_column(ForeignKey("figures.id"))
    stage: Mapped[str] = mapped_column(String(64), index=True)
    decision: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    decided_by: Mapped[str] = mapped_column(String(200))
    evidence: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ItemError(Base):
    """An item a stage could not process, with the reason; one row per (stage, item), resolved when it works."""

    __tablename__ = "item_errors"
    __table_args__ = (UniqueConstraint("stage", "item_key", name="uq_item_errors_stage_item"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stage: Mapped[str] = mapped_column(String(64), index=True)
    item_key: Mapped[str] = mapped_column(Text)
    """``source/<id>/<locator>`` for collectors, ``figure/<id>`` for stages over figures."""
    source_id: Mapped[int | None] = mapped_column(ForeignKey("sources.id"), nullable=True)
    figure_id: Mapped[int | None] = mapped_column(ForeignKey("figures.id"), nullable=True)
    locator: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    first_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class FigureLabelRow(Base):
    """An append-only label of a figure in a stage (``image_type``, ``ccv``): a model's answer or a person's.

    One row per (figure, stage, source, model, prompt version): re-running a stage with the same model and prompt
    adds nothing, and running it with another model keeps the earlier answers beside the new ones. For people's
    labels ``model`` names who or what gave them (``user:<name>``, ``import:<file hash>``). The current label of a
    figure is its latest human or imported label, else its latest model label (:mod:`zuhyo.construct.workspace.labels`).
    """

    __tablename__ = "figure_labels"
    __table_args__ = (UniqueConstraint("figure_id", "stage", "source", "model", "prompt_version",
                                       name="uq_figure_labels_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    figure_id: Mapped[int] = mapped_column(ForeignKey("figures.id"))
    stage: Mapped[str] = mapped_column(String(64), index=True)
    value: Mapped[Any] = mapped_column(JsonType)
    """The validated label: an image type's name, or ``{attribute: 0|1}`` for a CCV."""
    source: Mapped[str] = mapped_column(String(16))
    """model, human or import."""
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(64), default="")
    raw: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The model's reply as it came (or the CSV row), for audit."""
    run_id: Mapped[int | None] = mapped_column(ForeignKey("stage_runs.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# The QA and annotation tables live in their own module; importing it registers them on Base.metadata.
from zuhyo.construct.workspace import qa_tables as _qa_tables  # noqa: E402,F401
