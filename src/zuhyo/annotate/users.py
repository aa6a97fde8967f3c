"""People in the annotation app: accounts with argon2 password hashes and roles (admin, annotator, expert).

Accounts are never deleted, only deactivated; every change is logged to ``actions`` without the hash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from zuhyo.annotate.workflow import ROLES, Conflict, NotAllowed, NotFound, WorkflowError
from zuhyo.construct.qa.items import log_action
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import UserRow

LOCALES = ("ja", "en")
MIN_PASSWORD_CHARS = 8


@dataclass(frozen=True)
class User:
    """A user as the app sees them (never the password hash)."""

    id: int
    name: str
    display_name: str | None
    roles: tuple[str, ...]
    locale: str
    active: bool
    created_at: datetime | None = None
    last_login_at: datetime | None = None

    def has(self, role: str) -> bool:
        return role in self.roles


def _hasher() -> Any:
    from argon2 import PasswordHasher

    return PasswordHasher()


def _roles(roles: Iterable[str]) -> list[str]:
    out: list[str] = []
    for role in roles:
        if role not in ROLES:
            raise WorkflowError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
        if role not in out:
            out.append(role)
    if not out:
        raise WorkflowError(f"a user needs at least one role (one of {', '.join(ROLES)})")
    return out


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise WorkflowError(f"password too short: at least {MIN_PASSWORD_CHARS} characters")


def to_user(row: UserRow) -> User:
    return User(id=row.id, name=row.name, display_name=row.display_name, roles=tuple(row.roles or ()),
                locale=row.locale, active=row.active, created_at=row.created_at, last_login_at=row.last_login_at)


def _public(row: UserRow) -> dict[str, Any]:
    return {"name": row.name, "display_name": row.display_name, "roles": list(row.roles or []),
            "locale": row.locale, "active": row.active}


def user_row(s: Session, user_id: int) -> UserRow:
    row = s.get(UserRow, user_id)
    if row is None:
        raise NotFound(f"user {user_id}: no such user")
    return row


def require(s: Session, user_id: int, role: str | None = None) -> UserRow:
    """The active user ``user_id`` (holding ``role`` when given), else :class:`NotAllowed`/:class:`NotFound`."""
    row = user_row(s, user_id)
    if not row.active:
        raise NotAllowed(f"user {row.name!r} is deactivated")
    if role is not None and role not in (row.roles or []):
        raise NotAllowed(f"user {row.name!r} does not have the {role} role")
    return row


#: The stored "hash" of an account without a password (a scripted reviewer): no password verifies against it.
NO_PASSWORD = "!"


def add_user(db: Database, name: str, password: str | None, roles: Iterable[str], locale: str = "ja",
             display_name: str | None = None, *, actor: str = "zuhyo users") -> User:
    """Create a user with an argon2 hash of ``password``; :class:`Conflict` when the name is taken. ``None``: an
    account that cannot log in (the scripted reviewers of a rehearsal), which needs no argon2."""
    name = name.strip()
    if not name:
        raise WorkflowError("a user name must not be empty")
    if locale not in LOCALES:
        raise WorkflowError(f"unknown locale {locale!r} (one of {', '.join(LOCALES)})")
    wanted = _roles(roles)
    digest = NO_PASSWORD
    if password is not None:
        _check_password(password)
        digest = _hasher().hash(password)
    try:
        with db.write() as s:
            if s.scalars(select(UserRow).where(UserRow.name == name)).one_or_none() is not None:
                raise Conflict(f"user {name!r} already exists")
            row = UserRow(name=name, display_name=display_name, password_hash=digest, roles=wanted, locale=locale,
                          active=True, meta={}, created_at=utcnow())
            s.add(row)
            s.flush()
            log_action(s, actor=actor, action="user_add", target_type="user", target_id=row.id, after=_public(row))
            return to_user(row)
    except IntegrityError:
        raise Conflict(f"user {name!r} already exists") from None


#: Changes that end every session of the user, with the reason recorded on the sessions.
_ENDS_SESSIONS = {"user_password": "password", "user_deactivate": "deactivated"}


def _change(db: Database, name_or_id: str | int, action: str, actor: str, **changes: Any) -> User:
    with db.write() as s:
        row = _find(s, name_or_id)
        before = _public(row)
        for key, value in changes.items():
            setattr(row, key, value)
        s.flush()
        after = _public(row)
        if action in _ENDS_SESSIONS:  # a saved cookie must not outlive the old password or the account
            from zuhyo.annotate.sessions import end_user_sessions

            end_user_sessions(s, row.id, _ENDS_SESSIONS[action])
        if action == "user_password":
            before, after = {"password": "(old)"}, {"password": "(changed)"}
        log_action(s, actor=actor, action=action, target_type="user", target_id=row.id, before=before, after=after)
        return to_user(row)


def _find(s: Session, name_or_id: str | int) -> UserRow:
    if isinstance(name_or_id, int):
        return user_row(s, name_or_id)
    row = s.scalars(select(UserRow).where(UserRow.name == name_or_id)).one_or_none()
    if row is None:
        raise NotFound(f"user {name_or_id!r}: no such user")
    return row


def set_password(db: Database, name_or_id: str | int, password: str, *, actor: str = "zuhyo users") -> User:
    """Replace a user's password (the log records that it changed, never the hash)."""
    _check_password(password)
    return _change(db, name_or_id, "user_password", actor, password_hash=_hasher().hash(password))


def change_own_password(db: Database, user_id: int, current: str, new: str) -> User | None:
    """A user's change of their own password: None when ``current`` is not their password; the new one must be
    long enough and differ from it. Every session of theirs ends (:data:`_ENDS_SESSIONS`)."""
    from argon2.exceptions import InvalidHashError, VerificationError

    _check_password(new)
    if new == current:
        raise WorkflowError("the new password is the same as the current one")
    with db.read() as s:
        row = user_row(s, user_id)
        digest, name, active = row.password_hash, row.name, row.active
    if not active:
        raise NotAllowed(f"user {name!r} is deactivated")
    try:
        _hasher().verify(digest, current)
    except (VerificationError, InvalidHashError):
        return None
    return set_password(db, user_id, new, actor=name)


def set_roles(db: Database, name_or_id: str | int, roles: Iterable[str], *, actor: str = "zuhyo users") -> User:
    """Replace a user's roles."""
    return _change(db, name_or_id, "user_roles", actor, roles=_roles(roles))


def set_locale(db: Database, name_or_id: str | int, locale: str, *, actor: str = "zuhyo users") -> User:
    """Set the language of the user's pages (ja or en)."""
    if locale not in LOCALES:
        raise WorkflowError(f"unknown locale {locale!r} (one of {', '.join(LOCALES)})")
    return _change(db, name_or_id, "user_locale", actor, locale=locale)


def deactivate(db: Database, name_or_id: str | int, *, actor: str = "zuhyo users") -> User:
    """Deactivate a user (they can no longer log in or get work; their work is kept)."""
    return _change(db, name_or_id, "user_deactivate", actor, active=False)


def activate(db: Database, name_or_id: str | int, *, actor: str = "zuhyo users") -> User:
    """Re-activate a deactivated user."""
    return _change(db, name_or_id, "user_activate", actor, active=True)


def authenticate(db: Database, name: str, password: str) -> User | None:
    """The active user ``name`` when ``password`` is theirs (their last login time is updated), else None.

    Unknown names cost a hash too, so timing does not tell which names exist.
    """
    from argon2.exceptions import InvalidHashError, VerificationError

    hasher = _hasher()
    with db.read() as s:
        row = s.scalars(select(UserRow).where(UserRow.name == name)).one_or_none()
        digest = row.password_hash if row is not None else None
    if row is None or digest is None or digest == NO_PASSWORD or not row.active:
        hasher.hash(password)
        return None
    try:
        hasher.verify(digest, password)
    except (VerificationError, InvalidHashError):
        return None
    with db.write() as s:
        fresh = user_row(s, row.id)
        fresh.last_login_at = utcnow()
        if hasher.check_needs_rehash(digest):
            fresh.password_hash = hasher.hash(password)
        log_action(s, actor=fresh.name, user_id=fresh.id, action="login", target_type="user", target_id=fresh.id)
        return to_user(fresh)


def get_user(db: Database, name_or_id: str | int) -> User:
    """The user by name or id; :class:`NotFound` when there is none."""
    with db.read() as s:
        return to_user(_find(s, name_or_id))


def list_users(db: Database, *, include_inactive: bool = True) -> list[User]:
    """All users by name."""
    with db.read() as s:
        query = select(UserRow).order_by(UserRow.name)
        if not include_inactive:
            query = query.where(UserRow.active.is_(True))
        return [to_user(r) for r in s.scalars(query)]
