"""Collection: stage runs, sources, documents, figures.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "stage_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("params", JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("counts", JSON, nullable=False),
        sa.Column("started_by", sa.String(200), nullable=False),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("zuhyo_version", sa.String(32), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_index("ix_stage_runs_stage", "stage_runs", ["stage"])
    op.create_table(
        "sources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("locator", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("meta", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("kind", "locator", name="uq_sources_kind_locator"),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("source_id", sa.Integer, sa.ForeignKey("sources.id", name="fk_documents_source_id_sources"),
                  nullable=False),
        sa.Column("locator", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("page_url", sa.Text, nullable=True),
        sa.Column("paper_id", sa.String(200), nullable=True),
        sa.Column("edition", sa.String(200), nullable=True),
        sa.Column("year", sa.Integer, nullable=True),
        sa.Column("meta", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("source_id", "locator", name="uq_documents_source_locator"),
    )
    op.create_index("ix_documents_source_id", "documents", ["source_id"])
    op.create_table(
        "figures",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("document_id", sa.Integer,
                  sa.ForeignKey("documents.id", name="fk_figures_document_id_documents"), nullable=False),
        sa.Column("locator", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("caption", sa.Text, nullable=True),
        sa.Column("figure_number", sa.String(200), nullable=True),
        sa.Column("context", JSON, nullable=False),
        sa.Column("page", sa.String(200), nullable=True),
        sa.Column("section", sa.Text, nullable=True),
        sa.Column("page_url", sa.Text, nullable=True),
        sa.Column("paper_id", sa.String(200), nullable=True),
        sa.Column("back_data_url", sa.Text, nullable=True),
        sa.Column("edition", sa.String(200), nullable=True),
        sa.Column("year", sa.Integer, nullable=True),
        sa.Column("width", sa.Integer, nullable=True),
        sa.Column("height", sa.Integer, nullable=True),
        sa.Column("mime", sa.String(64), nullable=True),
        sa.Column("provenance", JSON, nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("stage_runs.id", name="fk_figures_run_id_stage_runs"),
                  nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("document_id", "locator", name="uq_figures_document_locator"),
    )
    op.create_index("ix_figures_document_id", "figures", ["document_id"])
    op.create_index("ix_figures_sha256", "figures", ["sha256"])


def downgrade() -> None:
    op.drop_table("figures")
    op.drop_table("documents")
    op.drop_table("sources")
    op.drop_table("stage_runs")
