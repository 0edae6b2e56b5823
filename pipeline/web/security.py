"""The web page's safety: sessions, the CSRF check, the sign-in throttle, account stamps, the
headers every answer carries, and the key that signs sessions.

Safety, because every page shows text from crawled pages: Jinja2 escapes everything (no template
marks anything safe), the archived copy is shown only in a sandboxed frame, and a
Content-Security-Policy allows no inline script or style. Sessions are a signed cookie (HttpOnly,
SameSite=Lax, Secure over HTTPS), each with an id that signing out revokes on the server; every form
carries the session's CSRF token, and every POST without it is refused; failed sign-ins are slowed down
per address and per name at that address. A body is read at most BODY_MAX bytes, chunked or not.

    BodyLimit    the outermost middleware: a body over BODY_MAX answered 413 while it is read
    Guard        the middleware: a signed-in person for every page, a CSRF token for every POST
    Sessions     the middleware under it: the signed cookie, read and written back
    Revoked      the sessions signed out before their time, kept in the state folder until they expire
    Throttle     failed sign-ins, per address and per name at that address
    Stamps       the reviewers' account stamps, to end the sessions of a removed or changed account
    signing_secret(settings, store)   the key (the `web_secret` setting, else a file in the state folder)

See docs/review.md for the page and its reviewers.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.exceptions import HTTPException
from starlette.middleware.base import BaseHTTPMiddleware

from pipeline.errors import SettingsError
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = [
    "BODY_MAX",
    "FIELDS_MAX",
    "SECRET_MIN",
    "SESSION_COOKIE",
    "SESSION_MAX_AGE_S",
    "BodyLimit",
    "Guard",
    "Revoked",
    "Session",
    "Sessions",
    "Stamps",
    "Throttle",
    "csrf_ok",
    "forwarded_from",
    "local",
    "secured",
    "signing_secret",
]

SESSION_COOKIE = "incidentlib_session"
SESSION_MAX_AGE_S = 12 * 3600
SECRET_MIN = 32
BODY_MAX = 1 << 20  # a form of a draft is a few KiB; anything near a MiB is not one
FIELDS_MAX = 1000  # a draft's form has about a hundred fields; more is not a form of this page
_REVOKED = "web-sessions-revoked.json"
_SECRET_ENV = "INCIDENTLIB_WEB_SECRET"
_PUBLIC = ("/login", "/healthz")


def signing_secret(settings: Settings, store: Store) -> str:
    """The key that signs sessions: the `web_secret` setting (INCIDENTLIB_WEB_SECRET, or the same
    line in incidentlib.env), else one made once and kept in the data root's state folder (mode
    0600, ignored by git), so a restart keeps people signed in."""
    path = store.state.path("web-secret")
    if settings.web_secret is not None:
        given = settings.web_secret.get_secret_value()
    else:
        try:
            given = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            given = secrets.token_urlsafe(32)
            store.state.write("web-secret", given.encode(), mode=0o600)
    if len(given) < SECRET_MIN:
        # Anyone who guesses a short key signs a cookie in any name.
        where = _SECRET_ENV if settings.web_secret is not None else str(path)
        raise SettingsError(
            f"the web page's signing key ({where}) is shorter than {SECRET_MIN} characters; "
            "delete the file to have one made, or set a longer one",
            name=_SECRET_ENV,
        )
    return given


# ---------------------------------------------------------------- bodies


class BodyLimit:
    """Pure ASGI, the outermost layer: a request's body is read here, at most `limit` bytes, before the app
    sees it. A Content-Length over it, or a body (chunked or not) that grows past it while read, is
    answered 413 at once and the rest is not read; the app is handed the body as read. Starlette's own
    limits apply to a form's fields and parts; this one to every body, so that no client's mistake
    reaches a handler half read or ends in a server error."""

    def __init__(self, app: Any, limit: int = BODY_MAX) -> None:
        self.app = app
        self.limit = limit

    async def __call__(
        self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], send: Any
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await _refuse(send, 413 if declared.isdigit() else 400)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if size > self.limit:
                await _refuse(send, 413)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        given = False

        async def replay() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only a disconnect is left to hear

        await self.app(scope, replay, send)


async def _refuse(send: Any, status: int) -> None:
    said = {413: f"too large: a request's body is at most {BODY_MAX} bytes", 400: "a Content-Length that is no number"}
    body = said[status].encode() + b"\n"
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        # What `secured` gives every other answer, for this one comes before the layers that add it.
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------- sessions


def _token() -> str:
    return secrets.token_urlsafe(24)


@dataclass
class Session:
    name: str | None = None
    csrf: str = field(default_factory=_token)
    stamp: str | None = None  # the account's stamp at sign-in (pipeline.reviewers.account_stamps)
    sid: str = field(default_factory=_token)  # what signing out revokes on the server (Revoked)

    def sign_in(self, name: str, stamp: str | None) -> None:
        self.name, self.stamp = name, stamp
        self.csrf, self.sid = _token(), _token()  # a new token and a new id with each sign-in

    def sign_out(self) -> None:
        self.name = self.stamp = None
        self.csrf, self.sid = _token(), _token()

    def as_cookie(self) -> dict[str, str | None]:
        return {"name": self.name, "csrf": self.csrf, "stamp": self.stamp, "sid": self.sid}


class Revoked:
    """The ids of sessions signed out before they expired, each kept until it would have (SESSION_MAX_AGE_S),
    in the data root's state folder (mode 0600): a cookie copied before its owner signed out opens nothing,
    in this process or another serving the same data root. Read again when the file changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.path = store.state.path(_REVOKED)
        self.seen: tuple[int, int] | None = None
        self.ids: dict[str, float] = {}

    def __contains__(self, sid: object) -> bool:
        try:
            stat = self.path.stat()
            key: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            key = None
        if key != self.seen:
            self.ids, self.seen = self._read(), key
        return isinstance(sid, str) and sid in self.ids

    def _read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            # A damaged list must not open sessions it revoked: every session is refused until it is mended.
            return {"*": float("inf")}
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {"*": float("inf")}

    def revoke(self, sid: str) -> None:
        """Revoke `sid` (a session signed out), forgetting the ids that have expired meanwhile."""
        now = time.time()
        with self.store.state.lock("web-sessions"):
            self.seen = None
            kept = {k: v for k, v in self._read().items() if v > now and k != "*"}
            kept[sid] = now + SESSION_MAX_AGE_S
            self.store.state.write(_REVOKED, json.dumps(kept, sort_keys=True).encode(), mode=0o600)


class Sessions(BaseHTTPMiddleware):
    """A signed cookie holding who is signed in and the CSRF token; written back when it changed."""

    def __init__(self, app: Any, signer: URLSafeTimedSerializer, revoked: Revoked, secure: bool = False) -> None:
        super().__init__(app)
        self.signer = signer
        self.revoked = revoked
        self.secure = secure

    async def dispatch(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        session = Session()
        raw = request.cookies.get(SESSION_COOKIE)
        if raw:
            try:
                data = self.signer.loads(raw, max_age=SESSION_MAX_AGE_S)
                # A cookie of before session ids, or of a session signed out, is nobody's: a new session.
                if isinstance(data.get("sid"), str) and data["sid"] not in self.revoked and "*" not in self.revoked:
                    session = Session(
                        name=data.get("name"), csrf=data["csrf"], stamp=data.get("stamp"), sid=data["sid"]
                    )
            except (BadSignature, KeyError, TypeError, AttributeError):
                pass
        before = session.as_cookie()
        request.state.session = session
        response = await call_next(request)
        if session.as_cookie() != before or not raw:
            if before["name"] and session.name != before["name"] and before["sid"] != session.sid:
                await asyncio.to_thread(self.revoked.revoke, str(before["sid"]))  # signed out: for good
            response.set_cookie(
                SESSION_COOKIE,
                self.signer.dumps(session.as_cookie()),
                max_age=SESSION_MAX_AGE_S,
                httponly=True,
                samesite="lax",
                secure=request.url.scheme == "https" or self.secure,
                path="/",
            )
        return response


class Guard(BaseHTTPMiddleware):
    """Headers every answer carries; a signed-in person for every page; a CSRF token for every POST.

    Runs inside Sessions (added before it), so the session is read before the guard looks at it.
    With `trusted_header`, the person is the one a proxy of ours names (single sign-on), else the
    one signed in here, for as long as their account's stamp is unchanged."""

    def __init__(
        self, app: Any, *, stamps: Stamps, archive_origin: str, trusted_header: str | None, trusted_proxies: set[str]
    ) -> None:
        super().__init__(app)
        self.stamps = stamps
        self.archive_origin = archive_origin
        self.trusted_header = trusted_header
        self.trusted_proxies = trusted_proxies

    async def dispatch(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        return secured(await self._answer(request, call_next), self.archive_origin)

    async def _answer(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        session: Session = request.state.session
        self._who(request, session)
        path = request.url.path
        public = path in _PUBLIC or path.startswith("/static/")
        if not public and not session.name:
            if request.method == "GET":
                target = path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/login?{urlencode({'next': target})}", status_code=303)
            return Response("sign in first", status_code=401)
        if request.method == "POST":
            try:
                if not await csrf_ok(request, session):
                    return Response("the form's CSRF token is missing or wrong; reload the page", 403)
            except HTTPException as exc:  # a form that cannot be read (too many fields, a part too large)
                return Response(f"not a form of this page: {exc.detail}", status_code=exc.status_code)
        return await call_next(request)

    def _who(self, request: Request, session: Session) -> None:
        """Who the request is of: the trusted header's one name, or the session's while its stamp holds."""
        if self.trusted_header:
            # Only a proxy of ours may say who is signed in, and only once.
            named = request.headers.getlist(self.trusted_header)
            proxy = request.client.host if request.client else ""
            session.name = named[0] if len(named) == 1 and proxy in self.trusted_proxies and named[0] else None
        elif session.name and self.stamps.get().get(session.name) != session.stamp:
            session.name = session.stamp = None  # the account was removed or its password changed


async def csrf_ok(request: Request, session: Session) -> bool:
    """Whether the request carries the session's CSRF token (an X-CSRF-Token header, or the form's field)."""
    token = request.headers.get("x-csrf-token")
    if token is None:
        await request.body()  # read whole first: Starlette hands a body read so on to the endpoint
        form = await request.form(max_fields=FIELDS_MAX, max_files=FIELDS_MAX, max_part_size=BODY_MAX)
        value = form.get("csrf_token")
        token = value if isinstance(value, str) else None
    return token is not None and hmac.compare_digest(token.encode(), session.csrf.encode())


def secured(response: Response, archive_origin: str) -> Response:
    """`response` with the headers every answer carries: the Content-Security-Policy (frames of the
    archive alone), no sniffing, no framing of this site, no shared caching."""
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"frame-src {archive_origin}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers.setdefault("Cache-Control", "no-store")  # pages of drafts are not for shared caches
    return response


def forwarded_from(settings: Settings) -> tuple[bool, str | None]:
    """uvicorn's `proxy_headers` and `forwarded_allow_ips`: forwarded headers believed only from the proxies
    the operator lists (`web_forwarded_from`). uvicorn's own default believes any loopback peer, so that a
    client on the machine could name any address to the sign-in throttle. Never when a proxy names the
    person (`web_user_header`): then the page checks the proxy's own address."""
    proxies = [] if settings.web_user_header else settings.web_forwarded_from
    return bool(proxies), ",".join(proxies) or None


def local(target: str) -> str:
    """A redirect target inside this site only: a path, never another host."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


# ---------------------------------------------------------------- sign-ins and accounts


class Throttle:
    """Failed sign-ins hold off the next ones, per address and per name at that address: after three
    failures, none is tried for 1 s, doubling up to 30 s; an attempt before then is answered 429 at once,
    so a guesser waits and nobody's request is kept open. Entries go after ten quiet minutes.

    Keyed so that it throttles the guessing, not the owner: a guesser spraying names from one address is
    held by the address's key, and one guessing a name from their address is held by that pair, while the
    name's owner signing in from elsewhere is never kept out by them (`keys`). The address is the peer's,
    or the forwarded one only from a proxy the operator lists (`web_forwarded_from`)."""

    @staticmethod
    def keys(name: str, address: str) -> tuple[str, str]:
        return f"addr:{address}", f"name:{name.casefold()}@{address}"

    FORGET_S = 600.0

    def __init__(self) -> None:
        self.failures: dict[str, tuple[int, float]] = {}

    def wait_s(self, *keys: str) -> float:
        """How long until `keys` may try again (0: now)."""
        now = time.monotonic()
        self.failures = {k: v for k, v in self.failures.items() if now - v[1] <= self.FORGET_S}
        left = 0.0
        for key in keys:
            count, last = self.failures.get(key, (0, 0.0))
            if count >= 3:
                left = max(left, last + min(30.0, 2.0 ** (count - 3)) - now)
        return max(0.0, left)

    def failed(self, *keys: str) -> None:
        for key in keys:
            count, _ = self.failures.get(key, (0, 0.0))
            self.failures[key] = (count + 1, time.monotonic())

    def passed(self, *keys: str) -> None:
        for key in keys:
            self.failures.pop(key, None)


class Stamps:
    """The reviewers' account stamps, read again when their file changes: a session whose account
    was removed or whose password changed ends at its next request."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: tuple[int, int] | None = None
        self.stamps: dict[str, str] = {}

    def get(self) -> dict[str, str]:
        from pipeline.reviewers import account_stamps, reviewers_path

        try:
            stat = reviewers_path(self.store).stat()
            key: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            key = None
        if key != self.seen or key is None:
            self.stamps = account_stamps(self.store) if key else {}
            self.seen = key
        return self.stamps
