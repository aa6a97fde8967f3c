"""Labels: append-only model and human outputs per figure and stage (image type, CCV, ...).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "figure_labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("figure_id", sa.Integer, sa.ForeignKey("figures.id", name="fk_figure_labels_figure_id_figures"),
                  nullable=False),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("value", JSON, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("raw", sa.Text, nullable=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("stage_runs.id", name="fk_figure_labels_run_id_stage_runs"),
                  nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("figure_id", "stage", "source", "model", "prompt_version", name="uq_figure_labels_key"),
    )
    op.create_index("ix_figure_labels_stage", "figure_labels", ["stage"])


def downgrade() -> None:
    op.drop_table("figure_labels")
