"""Alembic environment of the workspace database; run by :func:`zuhyo.construct.workspace.db.upgrade`, not by an
ini file.

The caller passes an open connection (inside its own transaction) as ``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

from zuhyo.construct.workspace.tables import Base  # the module that registers every table

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("zuhyo's migrations run through zuhyo.construct.workspace.db.upgrade (no connection was given)")
# render_as_batch: SQLite cannot ALTER most things in place; batch mode copies the table instead.
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  compare_type=True)
with context.begin_transaction():
    context.run_migrations()
