"""The declarative base of the workspace tables and the column helpers every table module shares.

:mod:`tables` (collection, filter, labels) and :mod:`qa_tables` (QA items and the annotation workflow) both build
on it; :mod:`tables` imports :mod:`qa_tables` so that ``Base.metadata`` holds every table.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import JSON, MetaData
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase

JsonType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime | None) -> datetime | None:
    """Timestamps come back from SQLite without their zone; they were written in UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def iso_utc(value: datetime | None) -> str | None:
    """ISO 8601 in UTC; SQLite hands timestamps back without their zone, and they were written in UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="seconds")


#: Constraint names are fixed by convention so later migrations (batch mode on SQLite) can name what they alter.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every workspace table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
