"""Review: append-only per-figure decisions and per-item errors.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("figure_id", sa.Integer, sa.ForeignKey("figures.id", name="fk_decisions_figure_id_figures"),
                  nullable=False),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("decision", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=False),
        sa.Column("evidence", JSON, nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("stage_runs.id", name="fk_decisions_run_id_stage_runs"),
                  nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_decisions_figure_stage", "decisions", ["figure_id", "stage", "id"])
    op.create_index("ix_decisions_stage", "decisions", ["stage"])
    op.create_table(
        "item_errors",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("item_key", sa.Text, nullable=False),
        sa.Column("source_id", sa.Integer, sa.ForeignKey("sources.id", name="fk_item_errors_source_id_sources"),
                  nullable=True),
        sa.Column("figure_id", sa.Integer, sa.ForeignKey("figures.id", name="fk_item_errors_figure_id_figures"),
                  nullable=True),
        sa.Column("locator", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("stage_runs.id", name="fk_item_errors_run_id_stage_runs"),
                  nullable=True),
        sa.Column("first_at", TS, nullable=False),
        sa.Column("last_at", TS, nullable=False),
        sa.Column("resolved_at", TS, nullable=True),
        sa.UniqueConstraint("stage", "item_key", name="uq_item_errors_stage_item"),
    )
    op.create_index("ix_item_errors_stage", "item_errors", ["stage"])


def downgrade() -> None:
    op.drop_table("item_errors")
    op.drop_table("decisions")
