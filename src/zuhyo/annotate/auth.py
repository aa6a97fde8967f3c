"""Web-session security for the annotation app: the workspace's secret key, signed session cookies, CSRF
tokens and login rate limiting. Passwords (argon2) are :mod:`zuhyo.annotate.users`' business.

- The secret key lives in the workspace (``WS/.serve-secret``, mode 0600), made on the first ``zuhyo serve``; it
  is never read from the environment, so every server of a team's workspace signs alike and a restart keeps people
  logged in.
- The session cookie is signed and timestamped (itsdangerous), ``HttpOnly`` and ``SameSite=Lax``; it carries the
  user id and a random session id. Logging in issues a new session id (no session fixation).
- The CSRF token is an HMAC of the session id: forms send it as ``csrf_token``, the JSON API as ``X-CSRF-Token``.
- Failed logins are counted per user name and per client address in a sliding window; past the limit, logins
  answer 429 until the window has passed (an address gets a few times a name's limit: people share addresses).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECRET_FILE = ".serve-secret"
COOKIE_NAME = "zuhyo_session"
SESSION_MAX_AGE_S = 12 * 3600


def load_or_create_secret(root: Path) -> str:
    """The workspace's session secret, created (0600, atomically, once) when missing."""
    path = root / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="ascii").strip()
        if len(key) < 32:
            raise ValueError(f"{path}: the session secret is too short; delete the file to make a new one") from None
        return key
    key = secrets.token_urlsafe(48)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key + "\n")
    return key


@dataclass
class Session:
    """What the session cookie carries."""

    sid: str
    user_id: int | None = None
    locale: str | None = None
    """The language picked before logging in (a logged-in user's is ``users.locale``)."""
    credential: str | None = None
    """A keyed digest of the user's password hash at login: a new password ends every older session."""

    def to_payload(self) -> dict[str, Any]:
        return {"sid": self.sid, "uid": self.user_id, "loc": self.locale, "cred": self.credential}


class SessionSigner:
    """Signs and reads session cookies and derives CSRF tokens, with the workspace's secret."""

    def __init__(self, secret: str, max_age_s: int = SESSION_MAX_AGE_S) -> None:
        from itsdangerous import URLSafeTimedSerializer

        self._serializer = URLSafeTimedSerializer(secret, salt="zuhyo-annotate-session")
        self._csrf_key = hashlib.sha256(("csrf:" + secret).encode()).digest()
        self.max_age_s = max_age_s

    def dumps(self, session: Session) -> str:
        return str(self._serializer.dumps(session.to_payload()))

    def loads(self, cookie: str | None) -> Session | None:
        """The session in a cookie; None when missing, forged, malformed or older than ``max_age_s``."""
        from itsdangerous import BadSignature

        if not cookie:
            return None
        try:
            data = self._serializer.loads(cookie, max_age=self.max_age_s)
        except BadSignature:  # SignatureExpired is a BadSignature
            return None
        if not isinstance(data, dict) or not isinstance(data.get("sid"), str):
            return None
        uid, loc, cred = data.get("uid"), data.get("loc"), data.get("cred")
        return Session(sid=data["sid"], user_id=uid if isinstance(uid, int) else None,
                       locale=loc if isinstance(loc, str) else None, credential=cred if isinstance(cred, str) else None)

    @staticmethod
    def new_session(user_id: int | None = None, locale: str | None = None, credential: str | None = None) -> Session:
        return Session(sid=secrets.token_urlsafe(24), user_id=user_id, locale=locale, credential=credential)

    def credential(self, password_hash: str) -> str:
        """What a session keeps of the user's password hash (keyed, so the cookie reveals nothing of it)."""
        return hmac.new(self._csrf_key, b"cred:" + password_hash.encode(), hashlib.sha256).hexdigest()[:32]

    def csrf_token(self, session: Session) -> str:
        return hmac.new(self._csrf_key, session.sid.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: Session | None, token: str | None) -> bool:
        if session is None or not token:
            return False
        return hmac.compare_digest(self.csrf_token(session), token)


@dataclass
class LoginLimiter:
    """Failed logins per user name and per client address in a sliding window; one per app, not global.

    A name is locked after ``max_failures``; an address after ``address_factor`` times as many (people behind
    one proxy or NAT share an address, and one of them mistyping must not lock out the others).
    """

    max_failures: int = 5
    window_s: float = 300.0
    address_factor: int = 4
    clock: Any = time.monotonic
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def _recent(self, key: str) -> deque[float]:
        q = self._failures.setdefault(key, deque())
        cutoff = self.clock() - self.window_s
        while q and q[0] < cutoff:
            q.popleft()
        return q

    def _keys(self, name: str, address: str) -> tuple[tuple[str, int], tuple[str, int]]:
        return ((f"name:{name.casefold()}", self.max_failures),
                (f"addr:{address}", self.max_failures * self.address_factor))

    def blocked(self, name: str, address: str) -> float:
        """Seconds until a login for ``name`` from ``address`` is allowed again (0 when it is allowed now)."""
        wait = 0.0
        for key, limit in self._keys(name, address):
            q = self._recent(key)
            if len(q) >= limit:
                wait = max(wait, q[-limit] + self.window_s - self.clock())
        return max(wait, 0.0)

    def failed(self, name: str, address: str) -> None:
        now = self.clock()
        for key, _ in self._keys(name, address):
            self._recent(key).append(now)
        if len(self._failures) > 10_000:  # forget idle keys so a scan of names cannot grow memory without end
            for key in [k for k in self._failures if not self._recent(k)]:
                del self._failures[key]

    def succeeded(self, name: str) -> None:
        self._failures.pop(self._keys(name, "")[0][0], None)
