"""The Wayback Machine client. With pipeline.fetch, the only code that touches the network.

How the service behaves today is in ../shared/reference/wayback-api.md. In short:
- Capturing needs authenticated Save Page Now 2 (`POST /save` with `Authorization: LOW
  access:secret`, then `GET /save/status/<job_id>`); waybackpy's save uses the old
  anonymous GET, which is dead, so SPN2 is done here with httpx.
- Reading captures goes through waybackpy's CDX reader, which still works; it sets no
  timeout and retries on its own, so its one network call is replaced (in a subclass)
  by ours: bounded, rate-limited and behind the breaker like every other call.
- Many failures arrive inside HTTP 200; they come back as `SpnAnswer.error`.

One rate limiter per kind of call (captures, CDX reads) and one circuit breaker are
shared by every task of the process (per base URL): after a 429, with or without
Retry-After, every caller waits. The keys are sent in one header and nowhere else:
never logged, never in an exception, never in a record.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from waybackpy import WaybackMachineCDXServerAPI
from waybackpy.cdx_utils import full_url
from waybackpy.exceptions import WaybackError as WaybackpyError

from pipeline.errors import CaptureLimitError, WaybackAuthError, WaybackError, WaybackThrottled, WaybackUnavailable
from pipeline.reasons import Reason
from pipeline.retry_after import retry_after_seconds
from pipeline.settings import Settings

__all__ = [
    "PERMANENT_ERRORS",
    "RETRY_ERRORS",
    "Breaker",
    "CdxRow",
    "JobState",
    "RateLimiter",
    "SpnAnswer",
    "UserStatus",
    "WaybackClient",
    "snapshot_timestamp",
    "snapshot_url",
    "spn_reason",
]

# The reference's lists: errors worth retrying; anything else is permanent.
RETRY_ERRORS = frozenset(
    {
        Reason.BAD_GATEWAY,
        Reason.BROWSING_TIMEOUT,
        Reason.CANNOT_FETCH,
        Reason.CAPTURE_LOCATION_ERROR,
        Reason.CELERY,
        Reason.GATEWAY_TIMEOUT,
        Reason.INTERNAL_SERVER_ERROR,
        Reason.INVALID_SERVER_RESPONSE,
        Reason.JOB_FAILED,
        Reason.NO_BROWSERS_AVAILABLE,
        Reason.PROTOCOL_ERROR,
        Reason.PROXY_ERROR,
        Reason.READ_TIMEOUT,
        Reason.SERVICE_UNAVAILABLE,
        Reason.SOFT_TIME_LIMIT_EXCEEDED,
        Reason.TOO_MANY_REQUESTS,
        Reason.USER_SESSION_LIMIT,
    }
)
PERMANENT_ERRORS = frozenset(
    {Reason.NOT_FOUND, Reason.NO_ACCESS, Reason.BLOCKED_URL, Reason.INVALID_URL_SYNTAX, Reason.INVALID_HOST_RESOLUTION}
)


def spn_reason(code: str | None) -> tuple[Reason, str | None]:
    """The reason an SPN `status_ext` code (without "error:") stands for, and the code itself when
    it is one incidentlib does not know (kept as the detail)."""
    try:
        return Reason(code or ""), None
    except ValueError:
        return Reason.SPN_UNKNOWN, code or "unknown"


def snapshot_url(timestamp: str, url: str) -> str:
    """The link a reader follows: https://web.archive.org/web/<timestamp>/<url>."""
    return f"https://web.archive.org/web/{timestamp}/{url}"


def snapshot_timestamp(link: str | None) -> str | None:
    """The timestamp of a link `snapshot_url` made; None for anything else."""
    if not link or "/web/" not in link:
        return None
    stamp = link.split("/web/", 1)[1].split("/", 1)[0]
    return stamp if stamp.isdigit() else None


class RateLimiter:
    """At most `per_minute` calls a minute, evenly spaced (no bursts, so no window of the
    service's ever sees more than its limit). Thread-safe: tasks run in threads, each with
    its own event loop."""

    def __init__(self, per_minute: float) -> None:
        self.interval = 60.0 / per_minute
        self._next = 0.0
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next slot; the seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            return start - now


class Breaker:
    """After a 429 every caller pauses; the pause doubles while 429s go on, and resets on success."""

    def __init__(self, backoff_s: float, max_backoff_s: float = 900.0) -> None:
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.trips = 0
        self._open_until = 0.0
        self._lock = threading.Lock()

    def trip(self, retry_after: float | None = None) -> float:
        with self._lock:
            pause = retry_after if retry_after is not None else min(self.backoff_s * 2**self.trips, self.max_backoff_s)
            self.trips += 1
            self._open_until = max(self._open_until, time.monotonic() + pause)
            return pause

    def close(self) -> None:
        with self._lock:
            self.trips = 0

    def wait(self) -> float:
        with self._lock:
            return max(0.0, self._open_until - time.monotonic())


_shared_lock = threading.Lock()
_shared: dict[tuple[str, float, float, float], tuple[RateLimiter, RateLimiter, Breaker]] = {}


def _limits(settings: Settings) -> tuple[RateLimiter, RateLimiter, Breaker]:
    """The process's limiters and breaker for one archive service."""
    key = (settings.wayback_url, settings.captures_per_minute, settings.cdx_per_minute, settings.breaker_backoff_s)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = (
                RateLimiter(settings.captures_per_minute),
                RateLimiter(settings.cdx_per_minute),
                Breaker(settings.breaker_backoff_s),
            )
        return _shared[key]


@dataclass(frozen=True)
class UserStatus:
    available: int
    processing: int
    daily_captures: int
    daily_captures_limit: int


@dataclass(frozen=True)
class SpnAnswer:
    """What `POST /save` said: a job, no job (a recent capture exists), or an error inside 200."""

    job_id: str | None
    error: str | None = None  # the status_ext without "error:", e.g. "too-many-daily-captures"
    message: str | None = None


@dataclass(frozen=True)
class JobState:
    status: str  # "pending", "success" or "error"
    error: str | None = None
    timestamp: str | None = None
    original_url: str | None = None
    http_status: int | None = None


@dataclass(frozen=True)
class CdxRow:
    timestamp: str
    original: str
    statuscode: str

    @property
    def link(self) -> str:
        return snapshot_url(self.timestamp, self.original)


def _json(response: httpx.Response, what: str) -> dict:
    try:
        data = response.json()
    except ValueError:
        raise WaybackError(f"{what}: an answer that is not JSON (HTTP {response.status_code})") from None
    if not isinstance(data, dict):
        raise WaybackError(f"{what}: an answer that is not a JSON object")
    return data


def _checked(response: httpx.Response, where: str, breaker: Breaker) -> httpx.Response:
    """An archive answer sorted out: 429 trips the breaker, 401 is the keys, 5xx the service."""
    if response.status_code == 429:
        pause = breaker.trip(retry_after_seconds(response.headers.get("Retry-After")))
        raise WaybackThrottled(f"{where}: 429 Too Many Requests; every archive call pauses {pause:g} s", pause=pause)
    if response.status_code == 401:
        raise WaybackAuthError(f"{where}: 401: the archive refused the keys")
    if response.status_code >= 500:
        raise WaybackUnavailable(f"{where}: answered HTTP {response.status_code}")
    breaker.close()
    return response


def _unreachable(exc: httpx.TransportError, where: str, timeout: float) -> WaybackUnavailable:
    if isinstance(exc, httpx.TimeoutException):
        return WaybackUnavailable(f"{where}: no answer within {timeout:g} s")
    return WaybackUnavailable(f"{where}: the connection failed ({exc.__class__.__name__})")


async def _global_capture_slot(name: str) -> None:
    """A slot of the Prefect global concurrency limit `name`, shared by every process that captures.

    The local limiter paces one process exactly; when several processes or machines
    capture with the same account, the server's limit (a slot decay of the capture rate)
    paces them together. Strict: a limit that does not exist is an error, not a no-op.
    """
    from prefect.concurrency.asyncio import rate_limit  # only where such a limit is configured

    try:
        await rate_limit(name, strict=True)
    except Exception as exc:  # Prefect's errors here have no common base
        raise CaptureLimitError(f"capture limit {name!r} (INCIDENTLIB_CAPTURE_LIMIT): {exc}", limit=name) from exc


async def capture_limit_problem(name: str) -> str | None:
    """Why the global capture limit `name` cannot be used (missing, no server), or None when it can."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    try:
        async with get_client() as client:
            await client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        return f"capture limit {name!r} (INCIDENTLIB_CAPTURE_LIMIT) does not exist; incidentlib deploy creates it"
    except Exception as exc:  # no server, or one that fails: said, not raised
        return f"capture limit {name!r} (INCIDENTLIB_CAPTURE_LIMIT): {type(exc).__name__}: {exc}"
    return None


class WaybackClient:
    """Calls to one Wayback-compatible service; one per event loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.capture_limiter, self.cdx_limiter, self.breaker = _limits(settings)
        self.has_keys = bool(settings.wayback_access_key and settings.wayback_secret_key)
        self._client = httpx.AsyncClient(
            base_url=settings.wayback_url.rstrip("/"),
            timeout=settings.wayback_timeout_s,
            headers={"User-Agent": settings.user_agent},
            trust_env=False,
        )
        self.requests = {"save": 0, "status": 0, "cdx": 0, "user": 0, "web": 0}

    async def __aenter__(self) -> WaybackClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._client.aclose()

    def _auth(self) -> dict[str, str]:
        s = self.settings
        if not (s.wayback_access_key and s.wayback_secret_key):
            raise WaybackAuthError(
                "no archive keys: set INCIDENTLIB_WAYBACK_ACCESS_KEY and INCIDENTLIB_WAYBACK_SECRET_KEY"
            )
        return {
            "Authorization": f"LOW {s.wayback_access_key.get_secret_value()}:{s.wayback_secret_key.get_secret_value()}"
        }

    async def _pace(self, limiter: RateLimiter | None) -> None:
        """Wait out the breaker, then for a slot of the rate; a slot that fell inside a pause is
        given up and taken again after it, so callers resume spaced, not all at once."""
        while True:
            await asyncio.sleep(self.breaker.wait())
            if limiter is None:
                return
            await asyncio.sleep(limiter.reserve())
            if self.breaker.wait() == 0:
                return

    async def _call(
        self,
        kind: str,
        method: str,
        path: str,
        limiter: RateLimiter | None,
        *,
        headers: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
    ) -> httpx.Response:
        """One request: the breaker and the rate limit first, then 429, 401 and 5xx sorted out."""
        await self._pace(limiter)
        self.requests[kind] += 1
        try:
            response = await self._client.request(method, path, headers=headers, data=data)
        except httpx.TransportError as exc:
            raise _unreachable(exc, path, self.settings.wayback_timeout_s) from None
        return _checked(response, path, self.breaker)

    # ------------------------------------------------------------ Save Page Now 2

    async def user_status(self) -> UserStatus:
        """The account's free capture sessions and quota; raises WaybackAuthError for bad keys."""
        response = await self._call("user", "GET", "/save/status/user", None, headers=self._auth())
        data = _json(response, "/save/status/user")
        return UserStatus(
            int(data.get("available", 0)),
            int(data.get("processing", 0)),
            int(data.get("daily_captures", 0)),
            int(data.get("daily_captures_limit", 0)),
        )

    async def submit(self, url: str, *, not_within_s: float | None = None) -> SpnAnswer:
        """Ask for a capture; none is made if one exists younger than `not_within_s` (default: the reuse setting)."""
        form = {"url": url, "skip_first_archive": "1"}
        window = max(self.settings.reuse_capture_within_s, not_within_s or 0)
        if window:
            form["if_not_archived_within"] = str(int(window))
        if self.settings.capture_limit:
            await _global_capture_slot(self.settings.capture_limit)
        response = await self._call(
            "save",
            "POST",
            "/save",
            self.capture_limiter,
            data=form,
            headers={**self._auth(), "Accept": "application/json"},
        )
        data = _json(response, "/save")
        status_ext = str(data.get("status_ext") or "")
        if data.get("status") == "error" or status_ext:
            error = status_ext.removeprefix("error:") or "unknown"
            message = str(data.get("message") or "")
            if "already reached the limit of active" in message:
                error = "user-session-limit"
            return SpnAnswer(None, error, message)
        return SpnAnswer(data.get("job_id") or None, None, data.get("message"))

    async def job(self, job_id: str) -> JobState:
        response = await self._call("status", "GET", f"/save/status/{job_id}", None, headers=self._auth())
        data = _json(response, "/save/status/<job>")
        status = data.get("status", "error")
        if status == "error":
            return JobState("error", error=str(data.get("status_ext") or "error:unknown").removeprefix("error:"))
        if status == "success":
            return JobState(
                "success",
                timestamp=str(data["timestamp"]),
                original_url=str(data.get("original_url") or ""),
                http_status=int(data["http_status"]) if data.get("http_status") is not None else None,
            )
        return JobState("pending")

    # ------------------------------------------------------------ reading captures (CDX)

    async def captures(self, url: str, *, since: datetime | None = None, timestamp: str | None = None) -> list[CdxRow]:
        """Successful captures of `url` (newest last), since a moment or at one timestamp."""
        start = timestamp or (since.strftime("%Y%m%d%H%M%S") if since else None)
        return await self._read_index(url, start_timestamp=start, end_timestamp=timestamp, limit="-5")

    async def captures_under(self, prefix: str, *, since: str | None = None) -> list[CdxRow]:
        """Every successful capture of every URL under `prefix`, in one CDX request."""
        # A negative limit keeps the last rows: the index sorts oldest first, and the newest matter.
        return await self._read_index(prefix, start_timestamp=since, match_type="prefix", limit="-10000")

    async def _read_index(self, url: str, **query: str | None) -> list[CdxRow]:
        """One CDX request through waybackpy's reader, behind the breaker and the CDX rate."""
        reader = _BoundedCdx(
            self,
            url,
            user_agent=self.settings.user_agent,
            filters=["statuscode:[23]..", "!mimetype:warc/revisit"],
            **query,
        )
        reader.endpoint = f"{self.settings.wayback_url.rstrip('/')}/cdx/search/cdx"
        self.requests["cdx"] += 1
        await self._pace(self.cdx_limiter)
        try:
            snapshots = await asyncio.to_thread(lambda: list(reader.snapshots()))
        except WaybackpyError as exc:  # an answer waybackpy cannot parse
            raise WaybackError(f"CDX: an answer that could not be read: {exc}") from None
        rows = [CdxRow(timestamp=s.timestamp, original=s.original, statuscode=s.statuscode) for s in snapshots]
        return sorted(rows, key=lambda r: r.timestamp)

    async def resolves(self, link: str) -> bool:
        """Whether a recorded https://web.archive.org/web/<ts>/<url> link leads to a capture here."""
        path = "/web/" + link.split("/web/", 1)[-1]
        try:
            response = await self._call("web", "GET", path, None)
        except (WaybackThrottled, WaybackUnavailable):
            return True  # cannot tell now: keep the link
        return response.status_code in (200, 301, 302)

    async def capture_bytes(self, row: CdxRow) -> bytes:
        """The original bytes of one capture (`/web/<timestamp>id_/<url>`)."""
        response = await self._call("web", "GET", f"/web/{row.timestamp}id_/{row.original}", None)
        if response.status_code != 200:
            raise WaybackError(f"/web/{row.timestamp}id_/{row.original}: answered HTTP {response.status_code}")
        return response.content


class _BoundedCdx(WaybackMachineCDXServerAPI):
    """waybackpy's CDX reader with its one network call made ours: a timeout, the breaker,
    no hidden retries (its own retry five times on 5xx, which would spend the CDX rate)."""

    def __init__(self, client: WaybackClient, url: str, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self._owner = client

    def cdx_api_manager(self, payload: dict[str, str], headers: dict[str, str]) -> Generator[str, None, None]:
        payload["limit"] = str(self.limit)
        url = full_url(self.endpoint, params=payload)
        self.last_api_request_url = url
        yield self._get(url, headers)

    def _get(self, url: str, headers: dict[str, str]) -> str:
        settings = self._owner.settings
        try:
            response = httpx.get(url, headers=headers, timeout=settings.wayback_timeout_s, trust_env=False)
        except httpx.TransportError as exc:
            raise _unreachable(exc, "CDX", settings.wayback_timeout_s) from None
        if _checked(response, "CDX", self._owner.breaker).status_code != 200:
            raise WaybackError(f"CDX: answered HTTP {response.status_code}")
        return response.text
