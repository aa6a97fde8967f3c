"""Server-side sessions of the annotation app (issue 20).

The signed cookie names a session; the session itself is a row of ``web_sessions``, so a copied or saved cookie
stops working the moment the session ends: at logout, at its expiry (``AppSettings.session_max_age_s`` after the
login, whatever the cookie says), when the user's password changes (every session of theirs; the one that changed
it gets a new one), or when an admin deactivates the user. The table holds a SHA-256 of the session id, never the
id itself. Anonymous sessions (the language chosen before logging in, the login form's CSRF token) live in the
cookie alone: they carry no rights.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from sqlalchemy import delete, update
from sqlalchemy.orm import Session

from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import aware, utcnow
from zuhyo.construct.workspace.qa_tables import WebSessionRow

#: Ended and expired sessions are forgotten this long after they ended (the audit log keeps logins and logouts).
FORGET_AFTER = timedelta(days=30)


def session_key(sid: str) -> str:
    """The key under which session ``sid`` is stored."""
    return hashlib.sha256(sid.encode()).hexdigest()


def start_session(db: Database, sid: str, user_id: int, max_age_s: float, client: str | None) -> None:
    """Record a new session of ``user_id`` (at login), and forget sessions that ended long ago."""
    now = utcnow()
    with db.write() as s:
        s.add(WebSessionRow(id=session_key(sid), user_id=user_id, created_at=now,
                            expires_at=now + timedelta(seconds=max_age_s), client=(client or "")[:64] or None))
        s.execute(delete(WebSessionRow).where(WebSessionRow.expires_at < now - FORGET_AFTER))


def session_is_live(row: WebSessionRow | None, user_id: int) -> bool:
    """Whether ``row`` is a session of ``user_id`` that has not ended or expired."""
    if row is None or row.user_id != user_id or row.ended_at is not None:
        return False
    expires = aware(row.expires_at)
    return expires is not None and expires > utcnow()


def end_session(s: Session, sid: str, reason: str) -> bool:
    """End session ``sid`` (logout) in the caller's transaction; False when it was not live."""
    done = s.execute(update(WebSessionRow).where(WebSessionRow.id == session_key(sid),
                                                 WebSessionRow.ended_at.is_(None))
                     .values(ended_at=utcnow(), ended_reason=reason))
    return bool(getattr(done, "rowcount", 0))


def end_user_sessions(s: Session, user_id: int, reason: str) -> int:
    """End every live session of ``user_id``, in the caller's transaction (a password change, a deactivation:
    :mod:`zuhyo.annotate.users` does it with the change itself); how many were ended."""
    done = s.execute(update(WebSessionRow).where(WebSessionRow.user_id == user_id, WebSessionRow.ended_at.is_(None))
                     .values(ended_at=utcnow(), ended_reason=reason))
    return int(getattr(done, "rowcount", 0) or 0)
