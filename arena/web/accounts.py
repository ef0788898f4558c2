"""Accounts, sign-in sessions, API tokens and rate limits of the web arena.

Passwords are hashed with argon2 (argon2-cffi's defaults, RFC 9106's second recommended
profile); sessions and API tokens are random strings of which only the SHA-256 is stored.
Every function takes the engine and opens its own short transaction, so a page never
holds the database while it renders.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from .models import ApiToken, User, WebSession, now

ROLES = ("organizer", "participant")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{1,31}")
"""An account name: 2–32 letters, digits, ``_ . -``, starting with a letter or digit (it is
shown on every page and in URLs, so nothing that needs escaping to be read)."""
MIN_PASSWORD, MAX_PASSWORD = 8, 200
SESSION_DAYS = 14

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash(secrets.token_hex(16))  # verified against when a name is unknown


class AccountError(ValueError):
    """A request about accounts that cannot be granted; the message is for the user."""


@dataclass(frozen=True)
class Account:
    """The signed-in user as pages see it (no database object escapes a request)."""

    id: int
    name: str
    role: str
    must_change_password: bool = False

    @property
    def is_organizer(self) -> bool:
        return self.role == "organizer"


def _account(user: User) -> Account:
    return Account(user.id, user.name, user.role, user.must_change_password)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise AccountError(
            "a name is 2-32 characters: letters, digits, '_', '.' or '-', starting with a "
            "letter or digit"
        )
    return name


def check_password(password: str) -> str:
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(f"a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return password


def create_user(
    engine: Engine, name: str, role: str, password: str | None = None, must_change: bool = False
) -> tuple[Account, str]:
    """A new account and its password (a random one when ``password`` is None: the
    organizer's one-time password, printed once and changed at first sign-in)."""
    check_name(name)
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    if password is None:
        password = secrets.token_urlsafe(12)
        must_change = True
    check_password(password)
    with Session(engine) as session, session.begin():
        taken = session.scalar(select(User.id).where(User.name.ilike(name)))
        if taken is not None:
            raise AccountError(f"the name {name!r} is taken")
        user = User(
            name=name,
            role=role,
            password_hash=_hasher.hash(password),
            must_change_password=must_change,
        )
        session.add(user)
        session.flush()
        return _account(user), password


def set_password(engine: Engine, user_id: int, password: str, keep_session: str | None) -> None:
    """A new password, chosen by the account's holder.  Everything the old password opened
    closes with it, in the same transaction: the account's API tokens are revoked and its
    sessions ended but ``keep_session`` (the browser that made the change) — whoever learned
    the old password, or stole a session or a token, keeps nothing."""
    check_password(password)
    with Session(engine) as session, session.begin():
        user = session.get(User, user_id)
        if user is None:
            raise AccountError("no such account")
        user.password_hash = _hasher.hash(password)
        user.must_change_password = False
        _close_everything(session, user_id, keep_session)


def reset_password(engine: Engine, name: str) -> tuple[Account, str]:
    """The organizer's reset of a participant's forgotten password: a new one-time password
    (shown once to the organizer; it opens nothing but choosing a new one), every API token
    revoked and every session ended."""
    password = secrets.token_urlsafe(12)
    with Session(engine) as session, session.begin():
        user = session.scalar(select(User).where(User.name == name))
        if user is None or user.role != "participant":
            raise AccountError(f"no participant named {name!r}")
        user.password_hash = _hasher.hash(password)
        user.must_change_password = True
        _close_everything(session, user.id, None)
        return _account(user), password


def _close_everything(session: Session, user_id: int, keep_session: str | None) -> None:
    keep_hash = digest(keep_session) if keep_session else None
    session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user_id, ApiToken.revoked.is_(False))
        .values(revoked=True)
    )
    session.execute(
        delete(WebSession).where(
            WebSession.user_id == user_id, WebSession.token_hash != (keep_hash or "")
        )
    )


def authenticate(engine: Engine, name: str, password: str) -> Account | None:
    """The account when ``password`` is its password, else None (the same work either way,
    so the answer's time does not tell which names exist)."""
    with Session(engine) as session, session.begin():
        user = session.scalar(select(User).where(User.name == name))
        stored = user.password_hash if user is not None else _DUMMY_HASH
        try:
            _hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return None
        if user is None or user.disabled:
            return None
        if _hasher.check_needs_rehash(stored):
            user.password_hash = _hasher.hash(password)
        return _account(user)


def account_by_name(engine: Engine, name: str) -> Account | None:
    with Session(engine) as session:
        user = session.scalar(select(User).where(User.name == name))
        return _account(user) if user is not None else None


def count_users(engine: Engine, role: str | None = None) -> int:
    with Session(engine) as session:
        query = select(User.id)
        if role is not None:
            query = query.where(User.role == role)
        return len(session.scalars(query).all())


# ----- sessions ---------------------------------------------------------------------------
def start_session(engine: Engine, user_id: int) -> tuple[str, str]:
    """A new sign-in: the cookie's token and the session's CSRF token."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    with Session(engine) as session, session.begin():
        session.add(
            WebSession(
                token_hash=digest(token),
                user_id=user_id,
                csrf=csrf,
                expires=now() + timedelta(days=SESSION_DAYS),
            )
        )
    return token, csrf


def session_account(engine: Engine, token: str) -> tuple[Account, str] | None:
    """The account signed in with cookie ``token`` and the session's CSRF token; None when
    the token is unknown, expired or its account disabled."""
    if not token or len(token) > 200:
        return None
    with Session(engine) as session:
        row = session.get(WebSession, digest(token))
        if row is None or _aware(row.expires) <= now():
            return None
        user = session.get(User, row.user_id)
        if user is None or user.disabled:
            return None
        return _account(user), row.csrf


def end_session(engine: Engine, token: str) -> None:
    with Session(engine) as session, session.begin():
        row = session.get(WebSession, digest(token))
        if row is not None:
            session.delete(row)


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored in UTC); PostgreSQL aware ones."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ----- API tokens ---------------------------------------------------------------------------
TOKEN_PREFIX = "b2a_"
MAX_TOKENS = 20


@dataclass(frozen=True)
class TokenInfo:
    id: int
    label: str
    prefix: str
    created: datetime
    last_used: datetime | None


def create_token(engine: Engine, user_id: int, label: str) -> str:
    """A new API token (shown once; only its hash is kept)."""
    label = (label or "").strip()[:60] or "token"
    if not label.isprintable():
        raise AccountError("a token's label is printable text")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with Session(engine) as session, session.begin():
        user = session.get(User, user_id)
        if user is None or user.disabled or user.must_change_password:
            # never a token that outlives a one-time password (see security.password_due)
            raise AccountError("set a new password first: a one-time password makes no tokens")
        live = session.scalars(
            select(ApiToken.id).where(ApiToken.user_id == user_id, ApiToken.revoked.is_(False))
        ).all()
        if len(live) >= MAX_TOKENS:
            raise AccountError(f"at most {MAX_TOKENS} tokens: revoke one first")
        session.add(
            ApiToken(user_id=user_id, label=label, token_hash=digest(token), prefix=token[:10])
        )
    return token


def list_tokens(engine: Engine, user_id: int) -> list[TokenInfo]:
    with Session(engine) as session:
        return [
            TokenInfo(t.id, t.label, t.prefix, t.created, t.last_used)
            for t in session.scalars(
                select(ApiToken)
                .where(ApiToken.user_id == user_id, ApiToken.revoked.is_(False))
                .order_by(ApiToken.id)
            )
        ]


def revoke_token(engine: Engine, user_id: int, token_id: int) -> None:
    with Session(engine) as session, session.begin():
        row = session.get(ApiToken, token_id)
        if row is None or row.user_id != user_id or row.revoked:
            raise AccountError("no such token")
        row.revoked = True


def token_account(engine: Engine, token: str) -> Account | None:
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    with Session(engine) as session, session.begin():
        row = session.scalar(select(ApiToken).where(ApiToken.token_hash == digest(token)))
        if row is None or row.revoked:
            return None
        user = session.get(User, row.user_id)
        if user is None or user.disabled:
            return None
        row.last_used = now()
        return _account(user)


# ----- rate limits ------------------------------------------------------------------------
class RateLimiter:
    """At most so many events per ``window`` seconds for each key (an account, an address):
    a sliding window kept in memory.  One server process serves the arena, so memory is
    where the counts belong; a restart forgets them, which only helps the honest.  Each key
    has its own limit: an address is shared by a whole classroom behind one router, an
    account by one person."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, *keys: tuple[str, int]) -> float:
        """Count one event under every ``(key, limit)``; 0 when allowed, else the seconds
        until the exhausted keys free a slot (nothing is counted then)."""
        moment = time.monotonic()
        with self._lock:
            if len(self._events) > 100_000:  # a flood of distinct keys: forget the idle
                self._events = {
                    k: q for k, q in self._events.items() if q and q[-1] > moment - self.window
                }
            wait = 0.0
            for key, limit in keys:
                q = self._events.setdefault(key, deque())
                while q and q[0] <= moment - self.window:
                    q.popleft()
                if len(q) >= limit:
                    wait = max(wait, q[0] + self.window - moment)
            if wait:
                return wait
            for key, _ in keys:
                self._events[key].append(moment)
            return 0.0

    def forget(self, key: str) -> None:
        """Clear one key's count (a right password clears its own name-and-address count,
        so an honest typo or two is not carried into the next sign-in)."""
        with self._lock:
            self._events.pop(key, None)


def attempt_keys(name: str, address: str, limits: tuple[int, int]) -> list[tuple[str, int]]:
    """The counts a password attempt (a sign-in, or the current password on a change) goes
    under: its name *at its address*, and its address across names.

    Not the name alone: then anyone anywhere locks an account's owner out by typing wrong
    passwords for it.  Per (name, address), a stranger's failures lock out only the
    stranger; the per-address count keeps one address from spraying many names (an IPv6
    visitor is counted by its /64, see ``security.address_key``).  A guesser with many
    addresses still pays an argon2 verification per guess, and gets ``limits[0]`` guesses
    per window per address."""
    per_name, per_address = limits
    return [(name_key(name, address), per_name), (f"addr:{address}", per_address)]


def name_key(name: str, address: str) -> str:
    return f"name:{name.lower()}@{address}"
