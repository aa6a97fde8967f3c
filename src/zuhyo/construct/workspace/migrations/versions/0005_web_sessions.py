"""Server-side sessions of the annotation app (issue 20): logging out or expiry ends a session on the server.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", name="fk_web_sessions_user_id_users"),
                  nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=True),
        sa.Column("ended_reason", sa.String(32), nullable=True),
        sa.Column("client", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_web_sessions"),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])


def downgrade() -> None:
    op.drop_table("web_sessions")
