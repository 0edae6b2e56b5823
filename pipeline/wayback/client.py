"""The Wayback Machine client: Save Page Now 2, the index, playback. With pipeline.fetch, the only network code.

How the service behaves is in the manual (docs/archive.md). In short:
- Capturing needs authenticated Save Page Now 2 (`POST /save` with `Authorization: LOW
  access:secret`, then `GET /save/status/<job_id>`); waybackpy's save uses the old
  anonymous GET, which is dead, so SPN2 is done here with httpx.
- Many answers arrive inside HTTP 200, as messages: a session limit, a quota, a capture
  made within the hour (answered with the earlier job), a start put off by an hour. They
  are read here into reasons (`spn_reason`, `SpnAnswer`), so the archive run can tell the
  source's own trouble from the account's or the service's.
- Every call waits out the breaker and takes a slot of its kind's rate (pipeline.wayback.limits).
  A 429 or a refused connection trips the breaker: every call of the process pauses.
- Playback (`/web/`) replays a capture with its archived status and a `Memento-Datetime`
  header: an archived 429 or 5xx is the page's history, never the service's trouble, and
  trips nothing. The archive's own pages there (its exclusion page, a redirect to the
  nearest capture, a 404) carry no `Memento-Datetime`.
- A run has a deadline (`archive_run_s`): no call waits for the breaker or a slot past it. A
  connection that cannot be opened is tried three times within seconds; then this client takes
  the archive for out (`out`) and makes no more calls (each raises WaybackNotAsked at once).
- The service's passing trouble is not its absence: an answer cut off mid-way (the connection
  dropped: RemoteProtocolError), no answer in time (a read timeout) or a 5xx is asked again, for a
  request that asking twice cannot harm, after a doubling pause with jitter, within the deadline
  (`_PASSING_TRIES`); then WaybackUnavailable, and the source waits. Only connections refused or
  closed unanswered, every try, make the archive "cannot be reached" (`unreached`).
- At most `CONNECTIONS` requests are in flight; the others wait their turn before taking one of
  the pool's connections, so the pool never runs dry, and a PoolTimeout, should one come, is the
  client's own congestion (WaybackCongested): it trips no breaker.

The keys are sent in one header of each request that needs them, built in one place, and
never kept on the client: no log line, exception, artifact or record can carry them. Every
error of the HTTP library is replaced by one of ours with a fixed text (some of httpx's
quote the header whole).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from pipeline.errors import (
    ArchivedErrorPage,
    CaptureLimitError,
    WaybackAuthError,
    WaybackCongested,
    WaybackError,
    WaybackExcluded,
    WaybackNotAsked,
    WaybackThrottled,
    WaybackUnavailable,
)
from pipeline.reasons import Reason
from pipeline.retry_after import retry_after_seconds
from pipeline.settings import Settings
from pipeline.wayback.cdx import CdxQuery, CdxResult, read_index, snapshot_timestamp, snapshot_url
from pipeline.wayback.limits import RateLimiter, limits_for
from pipeline.wayback.request import ArchiveRequest
from pipeline.wayback.urls import ArchivedUrl

__all__ = [
    "CONNECTIONS",
    "JobState",
    "SpnAnswer",
    "UserStatus",
    "WaybackClient",
    "capture_limit_problem",
    "snapshot_timestamp",
    "snapshot_url",
    "spn_reason",
]


def spn_reason(code: str | None) -> tuple[Reason, str | None]:
    """The reason an SPN `status_ext` code (without "error:") stands for, and the code itself when
    it is one incidentlib does not know (kept as the detail)."""
    code = (code or "").removeprefix("error:")
    if code.startswith("max-daily-bandwidth"):  # -from-ip, -host: the account's or the host's quota
        return (Reason.HOST_QUOTA if code.endswith("host") else Reason.ACCOUNT_QUOTA), code
    try:
        return Reason(code), None
    except ValueError:
        return Reason.SPN_UNKNOWN, code or "unknown"


_HOST_PAUSED = re.compile(r"Crawling this host is paused", re.IGNORECASE)
# Messages the service answers with inside HTTP 200, and what they mean (spn.sh reads the same).
_MESSAGES: tuple[tuple[re.Pattern[str], Reason], ...] = (
    (re.compile(r"limit of active (Save Page Now )?sessions", re.IGNORECASE), Reason.USER_SESSION_LIMIT),
    (re.compile(r"cannot make more than [\d,]+ captures per day", re.IGNORECASE), Reason.ACCOUNT_QUOTA),
    (re.compile(r"daily not-logged-in captures limit", re.IGNORECASE), Reason.ACCOUNT_QUOTA),
    (_HOST_PAUSED, Reason.HOST_QUOTA),
    (re.compile(r"Cannot start capture|encountered an internal error", re.IGNORECASE), Reason.SERVICE_ERROR),
)
_SAME_SNAPSHOT = re.compile(r"The same snapshot had been made", re.IGNORECASE)
_DELAYED = re.compile(r"capture will start in ~?\s*(.*?) because", re.IGNORECASE)


@dataclass(frozen=True)
class UserStatus:
    available: int
    processing: int
    daily_captures: int
    daily_captures_limit: int


@dataclass(frozen=True)
class SpnAnswer:
    """What `POST /save` said.

    - a job: `job_id`; `earlier` when it is a job of the last hour the service answered with
      instead of capturing again (it says "The same snapshot had been made ..."): that job's
      capture is an older one; `delayed` when the capture will only start later;
    - no job, no error: a capture younger than `if_not_archived_within` exists (`recent`);
    - an error: `error` (a reason) and `detail` (the service's code or message).
    """

    job_id: str | None
    error: Reason | None = None
    detail: str | None = None
    message: str | None = None
    earlier: bool = False
    delayed: bool = False

    @property
    def recent(self) -> bool:
        return self.job_id is None and self.error is None


@dataclass(frozen=True)
class JobState:
    status: str  # "pending", "success" or "error"
    error: Reason | None = None
    detail: str | None = None
    timestamp: str | None = None
    original_url: str | None = None
    http_status: int | None = None


def read_answer(data: dict[str, Any]) -> SpnAnswer:
    """A `POST /save` answer, read: a job, a recent capture, or an error and whose it is."""
    message = str(data.get("message") or "")
    job_id = str(data.get("job_id") or "") or None
    for pattern, reason in _MESSAGES:
        if pattern.search(message):
            return SpnAnswer(None, reason, message[:300], message)
    if _HOST_PAUSED.search(str(data.get("status_ext") or "")):  # the pause as the code itself
        return SpnAnswer(None, Reason.HOST_QUOTA, str(data["status_ext"])[:300], message)
    if data.get("status") == "error" or data.get("status_ext"):
        reason, code = spn_reason(str(data.get("status_ext") or ""))
        if reason == Reason.SPN_UNKNOWN and not data.get("status_ext"):
            return SpnAnswer(None, Reason.SERVICE_ERROR, message[:300] or "an error without a code", message)
        return SpnAnswer(None, reason, _detail(code, message), message)
    if job_id is None:
        return SpnAnswer(None, None, None, message)
    return SpnAnswer(
        job_id,
        message=message or None,
        earlier=bool(_SAME_SNAPSHOT.search(message)),
        delayed=bool(_DELAYED.search(message)),
    )


def _detail(code: str | None, message: str) -> str | None:
    """An error's detail: the code when incidentlib does not know it, and the service's message."""
    return "; ".join(part for part in (code, message.strip()[:300]) if part) or None


def read_job(data: dict[str, Any]) -> JobState:
    """A `GET /save/status/<job>` answer. A job the service has forgotten (after about an hour)
    answers the same body as one still pending: the caller must cap how long it waits.

    An error is read by whose trouble it says it is (docs/archive.md, "Only a source's own answer
    can fail it"): a host the archive paused ("Crawling this host is paused …", under any code, or
    as the code itself) is the host's quota, not the source's answer; an error without a code says
    nothing of the source either, and is the service's."""
    status = str(data.get("status") or "pending")
    if status == "error":
        status_ext = str(data.get("status_ext") or "")
        # The service's message says what happened ("... (HTTP status=404)."): the reviewer's detail.
        message = str(data.get("message") or "")
        if _HOST_PAUSED.search(status_ext) or _HOST_PAUSED.search(message):
            return JobState("error", error=Reason.HOST_QUOTA, detail=_detail(None, message or status_ext))
        if not status_ext:
            return JobState(
                "error", error=Reason.SERVICE_ERROR, detail=message.strip()[:300] or "an error without a code"
            )
        reason, code = spn_reason(status_ext)
        return JobState("error", error=reason, detail=_detail(code, message))
    if status == "success" and data.get("timestamp"):
        http_status = data.get("http_status")
        return JobState(
            "success",
            timestamp=str(data["timestamp"]),
            original_url=str(data.get("original_url") or "") or None,
            http_status=int(http_status) if http_status is not None else None,
        )
    return JobState("pending")


def _json(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object an endpoint answered; an HTML page or anything else is the service's trouble."""
    try:
        data = response.json()
    except ValueError:
        raise WaybackUnavailable(f"{what}: answered a page, not the API's JSON (HTTP {response.status_code})") from None
    if not isinstance(data, dict):
        raise WaybackUnavailable(f"{what}: answered JSON that is not an object")
    return data


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


# Requests in flight at once, and the pool's connections: more would only queue inside the pool,
# where a wait longer than the timeout is a PoolTimeout (1,000 sources' lookups at once did that).
CONNECTIONS = 10
# Of them, what calls without a rate (playback) may hold at once: a call that waited for its slot of a
# rate must leave then, not queue behind a thousand playbacks and arrive on the next one's heels (a 429).
_UNPACED = 6
# Tries at opening a connection before the run takes the archive for out, and the first wait between.
_CONNECT_TRIES = 3
_CONNECT_RETRY_S = 1.0
# Tries of a request that met the service's passing trouble (an answer cut off, none in time, a 5xx),
# and the first wait between (doubling, drawn between half and one and a half times it: jitter, so
# that the calls one drop cut off do not all come back at once). Bounded by the run's deadline.
_PASSING_TRIES = 4
_PASSING_RETRY_S = 1.0


class _CutOff(Exception):
    """The connection was dropped, or went quiet, after the answer began: the service's passing trouble."""


def _unreached(method: str) -> tuple[type[httpx.HTTPError], ...]:
    """The failures that say nothing reached the service, tried again: a connection not opened, and
    for a GET (which asking twice cannot harm) one closed before any answer (a firewall's refusal)."""
    if method == "GET":
        return (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError)
    return (httpx.ConnectError, httpx.ConnectTimeout)


def _repeatable(method: str) -> bool:
    """Whether a request may be sent again after the service's passing trouble: a GET (a look
    changes nothing). A submit is not: it may have started a capture, which the run looks for first."""
    return method == "GET"


class WaybackClient:
    """Calls to one Wayback-compatible service, for one run (its deadline); one per event loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.limits = limits_for(
            settings.wayback_url,
            settings.captures_per_minute,
            settings.status_polls_per_minute,
            settings.cdx_per_minute,
            settings.breaker_backoff_s,
        )
        self.breaker = self.limits.breaker
        self.has_keys = bool(settings.wayback_access_key and settings.wayback_secret_key)
        timeout = settings.wayback_timeout_s
        self._client = httpx.AsyncClient(
            base_url=settings.wayback_url.rstrip("/"),
            timeout=httpx.Timeout(timeout, connect=min(settings.wayback_connect_timeout_s, timeout)),
            limits=httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS),
            headers={"User-Agent": settings.user_agent},
            trust_env=False,
        )
        self._in_flight = asyncio.Semaphore(CONNECTIONS)
        self._unpaced = asyncio.Semaphore(_UNPACED)
        self.requests = {"save": 0, "status": 0, "cdx": 0, "user": 0, "web": 0}
        # Where playback's own redirects lead (`_playback_target`): the service's host and its links'.
        self._archive_hosts = {
            urlsplit(base).netloc.lower() for base in (settings.wayback_url, settings.wayback_public_url) if base
        }
        self.started = time.monotonic()
        self.deadline = self.started + settings.archive_run_s  # time.monotonic() of the run's end
        self.out: str | None = None  # why this run asks the archive no more (it cannot be reached)
        self._out = asyncio.Event()

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
        # The settings checked both keys (printable ASCII, no space): the header is valid text.
        return {
            "Authorization": f"LOW {s.wayback_access_key.get_secret_value()}:{s.wayback_secret_key.get_secret_value()}"
        }

    def seconds_left(self) -> float:
        """Seconds left of the run's deadline."""
        return self.deadline - time.monotonic()

    def give_up(self, why: str) -> None:
        """This run asks the archive no more (said by the run, once): every call waiting ends now."""
        if self.out is None:
            self.out = why
            self._out.set()

    async def sleep(self, seconds: float) -> bool:
        """Wait `seconds`, or less when the archive is known out; whether it was not (go on)."""
        if self.out is None and seconds > 0:
            try:
                await asyncio.wait_for(self._out.wait(), timeout=seconds)
            except TimeoutError:
                pass
        return self.out is None

    def _not_asked(self, path: str, wait: float, what: str) -> WaybackNotAsked:
        left = max(0.0, self.seconds_left())
        return WaybackNotAsked(
            f"{path}: not asked: {what} of {wait:.0f} s passes the run's deadline ({left:.0f} s left)"
        )

    async def pace(self, limiter: RateLimiter | None, path: str = "") -> None:
        """Wait out the breaker, then for a slot of the rate; a slot that fell inside a pause is
        given up and taken again after it, so callers resume spaced, not all at once. No wait goes
        past the run's deadline, and none goes on once the archive is known out (WaybackNotAsked)."""
        while True:
            if self.out is not None:
                raise WaybackNotAsked(f"{path}: not asked: {self.out}")
            pause = self.breaker.wait()
            if pause >= self.seconds_left():
                raise self._not_asked(path, pause, "the breaker's pause")
            if not await self.sleep(pause):
                continue
            if limiter is None:
                return
            slot = limiter.reserve()
            if slot >= self.seconds_left():
                raise self._not_asked(path, slot, "the wait for a slot of the rate")
            if not await self.sleep(slot):
                continue
            if self.breaker.wait() == 0:
                return

    async def _send(self, method: str, path: str, *, paced: bool, **kwargs: Any) -> httpx.Response:
        """One request, once one of the client's `CONNECTIONS` is free (waited for until the deadline);
        calls without a rate (`paced` False) take one of `_UNPACED` of them first.

        A connection that cannot be opened (`_unreached`) is tried again after a short doubling wait;
        after `_CONNECT_TRIES`, the caller takes the archive for out. An answer begun and then cut
        off (the connection dropped, or quiet past the timeout) raises _CutOff: the service was there."""
        held: list[asyncio.Semaphore] = []
        try:
            for semaphore in (self._in_flight,) if paced else (self._unpaced, self._in_flight):
                await asyncio.wait_for(semaphore.acquire(), timeout=max(0.0, self.seconds_left()))
                held.append(semaphore)
        except TimeoutError:
            for semaphore in held:
                semaphore.release()
            raise WaybackCongested(f"{path}: every connection of the client stayed busy until the deadline") from None
        try:
            for attempt in range(_CONNECT_TRIES):
                try:
                    request = self._client.build_request(method, path, **kwargs)
                    response = await self._client.send(request, stream=True)
                except _unreached(method):
                    if attempt == _CONNECT_TRIES - 1 or self.out is not None:
                        raise
                    await self.sleep(min(self.settings.breaker_backoff_s, _CONNECT_RETRY_S) * 2**attempt)
                    continue
                try:
                    await response.aread()
                except httpx.HTTPError as exc:  # after the status line: the service answered, then dropped
                    raise _CutOff(type(exc).__name__) from None
                finally:
                    await response.aclose()
                return response
            raise AssertionError("unreachable")  # the loop returns or raises
        finally:
            for semaphore in held:
                semaphore.release()

    async def _again(self, method: str, attempt: int) -> bool:
        """After the service's passing trouble: wait before try `attempt + 2`, doubling, with jitter;
        False when the request is not to be repeated, the tries are used up, the wait would pass the
        run's deadline, or the archive went out meanwhile."""
        if not _repeatable(method) or attempt + 1 >= _PASSING_TRIES:
            return False
        base = min(self.settings.breaker_backoff_s, _PASSING_RETRY_S) * 2**attempt
        pause = base * random.uniform(0.5, 1.5)
        if pause >= self.seconds_left():
            return False
        return await self.sleep(pause)

    async def call(self, request: ArchiveRequest) -> httpx.Response:
        """One request: the breaker and the rate first, then 429, 401, 5xx and refusals sorted out.

        A playback answer with `Memento-Datetime` is returned as it is, whatever its status: it is
        the archived page's, and the caller reads it as the capture's.

        A refused connection (tried `_CONNECT_TRIES` times) trips the breaker like a 429 and takes the
        archive for out: the service blocks a client that kept going, at its firewall, for an hour.
        The service's passing trouble (an answer cut off mid-way, none in time, a 5xx) is asked
        again after a pause (`_again`), each try behind the breaker and the rate; what is still
        trouble after the last raises WaybackUnavailable, the archive not taken for out.
        """
        method, path = request.method, request.path
        attempt = 0
        while True:
            await self.pace(request.limiter, path)
            self.requests[request.kind] += 1
            headers = {"Accept": request.accept, **(self._auth() if request.auth else {})}
            try:
                query = httpx.QueryParams(tuple(request.params)) if request.params else None
                response = await self._send(
                    method, path, paced=request.limiter is not None, headers=headers, params=query, data=request.data
                )
            except httpx.PoolTimeout:
                # A wait for a connection of the client's own pool: its congestion, not the service's answer.
                raise WaybackCongested(
                    f"{path}: no connection of the client's own free in time (PoolTimeout)"
                ) from None
            except _CutOff as cut:
                trouble = f"{path}: the answer was cut off ({cut})"
            except httpx.HTTPError as exc:
                # httpx's own text may quote a request header whole: said here without it.
                if isinstance(exc, _unreached(method)):  # tried and tried again: no service there now
                    pause = self.breaker.trip()
                    message = (
                        f"{path}: the connection failed ({type(exc).__name__}); every archive call pauses {pause:g} s"
                    )
                    self.give_up(f"the archive cannot be reached ({message})")
                    raise WaybackUnavailable(message, unreached=True) from None
                what = "no answer in time" if isinstance(exc, httpx.TimeoutException) else "the connection dropped"
                trouble = f"{path}: {what} ({type(exc).__name__})"
            else:
                if path.startswith("/web/") and "Memento-Datetime" in response.headers:
                    # A replayed capture: its status (a 3xx, 404, 429, 5xx) is the archived page's, as it
                    # answered when captured, not the service's (docs/archive.md, "How playback answers").
                    self.breaker.close()
                    return response
                if response.status_code == 429:
                    pause = self.breaker.trip(retry_after_seconds(response.headers.get("Retry-After")))
                    raise WaybackThrottled(
                        f"{path}: 429 Too Many Requests; every archive call pauses {pause:g} s", pause=pause
                    )
                if response.status_code == 401:
                    raise WaybackAuthError(f"{path}: 401: the archive refused the keys")
                if response.status_code < 500:
                    self.breaker.close()
                    return response
                trouble = f"{path}: answered HTTP {response.status_code}"
            # The service's passing trouble: asked again after a pause, within the deadline.
            if not await self._again(method, attempt):
                tries = f" ({attempt + 1} tries)" if attempt else ""
                raise WaybackUnavailable(trouble + tries)
            attempt += 1

    # ------------------------------------------------------------ Save Page Now 2

    async def user_status(self) -> UserStatus:
        """The account's free capture sessions and quota; raises WaybackAuthError for bad keys."""
        # `_t`: "To avoid getting a stale cache response" (the SPN2 document, "User status"): a
        # cached count of free sessions would start jobs the account has no session for.
        params = [("_t", str(time.time_ns() // 1_000_000))]
        response = await self.call(
            ArchiveRequest("user", "GET", "/save/status/user", self.limits.polls, auth=True, params=params)
        )
        data = _json(response, "/save/status/user")
        try:
            return UserStatus(
                int(data.get("available", 0)),
                int(data.get("processing", 0)),
                int(data.get("daily_captures", 0)),
                int(data.get("daily_captures_limit", 0)),
            )
        except (TypeError, ValueError):
            raise WaybackUnavailable("/save/status/user: an answer without its counts") from None

    async def submit(self, url: str, *, not_within_s: float | None) -> SpnAnswer:
        """Ask for a capture of `url`. With `not_within_s`, none is made when one younger exists
        (the service answers with none); without, the service captures, or answers with a job of
        the last hour if it already captured the URL then (it does not capture a URL twice an hour)."""
        form = {"url": url, "skip_first_archive": "1"}
        if not_within_s:
            form["if_not_archived_within"] = str(int(not_within_s))
        if self.settings.capture_limit:
            await _global_capture_slot(self.settings.capture_limit)
        response = await self.call(ArchiveRequest("save", "POST", "/save", self.limits.captures, auth=True, data=form))
        return read_answer(_json(response, "/save"))

    async def job(self, job_id: str) -> JobState:
        response = await self.call(
            ArchiveRequest("status", "GET", f"/save/status/{job_id}", self.limits.polls, auth=True)
        )
        return read_job(_json(response, "/save/status/<job>"))

    # ------------------------------------------------------------ the index (CDX)

    async def index(
        self,
        url: str,
        *,
        prefix: bool = False,
        since: str | None = None,
        until: str | None = None,
        digests: Collection[str] = (),
    ) -> CdxResult:
        """Every capture of `url` (or of every URL under it, with `prefix`; of those payloads only,
        with `digests`) the index holds, revisits included, in as many pages as it takes, each
        behind the breaker and the index's rate."""
        query = CdxQuery(url, prefix=prefix, since=since, until=until, digests=frozenset(digests))
        return await read_index(self, query, base=self.settings.wayback_public_url)

    # ------------------------------------------------------------ playback

    async def resolves(self, link: str) -> bool:
        """Whether a recorded <base>/web/<ts>/<url> link leads to a capture here.

        A memento (an answer with `Memento-Datetime`) is a capture whatever its archived status;
        the archive's redirect to the nearest capture leads to one; its exclusion page, a 404 or
        another page of its own does not. When the archive cannot say now, the link is kept."""
        archived = ArchivedUrl.parse(link)
        # A link of another shape is asked for as it always was: what follows its `/web/`, or it whole.
        path = archived.path if archived is not None else "/web/" + link.split("/web/", 1)[-1]
        try:
            response = await self.call(ArchiveRequest("web", "GET", path, accept="*/*"))
        except WaybackError:
            return True  # cannot tell now: keep the link
        if "Memento-Datetime" in response.headers:
            return True
        return response.status_code in (301, 302) and not _excluded(response)

    async def capture_bytes(self, timestamp: str, original: str, *, exact: bool = False) -> bytes:
        """The original bytes of one capture (`/web/<timestamp>id_/<url>`).

        Redirects are followed, at most `_PLAYBACK_HOPS`: the archive's own to the nearest capture
        (no `Memento-Datetime`), and an archived redirect to its target's capture. What is
        returned is always a replayed 2xx (a page, as `CdxResult.is_page` counts one); an archived
        error page raises ArchivedErrorPage, the exclusion page WaybackExcluded, any other page of
        the archive's own WaybackError. With `exact`, the capture at `timestamp` or nothing: the
        archive's own redirect to another capture (it does not serve that one, or not yet) raises
        WaybackError."""
        asked = ArchivedUrl("", timestamp, "id_", original).path
        path = asked
        seen = {path}
        for hop in range(_PLAYBACK_HOPS):
            response = await self.call(ArchiveRequest("web", "GET", path, accept="*/*"))
            memento = "Memento-Datetime" in response.headers
            if 200 <= response.status_code < 300 and memento:  # a 203 or 206 is the page too
                return response.content
            if _excluded(response):
                raise WaybackExcluded(f"{path}: the archive excludes this URL from playback", url=original)
            location = response.headers.get("Location")
            target = _playback_target(path, location, self._archive_hosts) if response.is_redirect else None
            if target is None:
                if memento:
                    raise ArchivedErrorPage(
                        f"{path}: the capture is of an HTTP {response.status_code} answer",
                        status=response.status_code,
                        url=original,
                    )
                what = "a page of its own, not a capture" if response.status_code == 200 else "no capture"
                raise WaybackError(f"{path}: answered HTTP {response.status_code}: {what}", url=original)
            if exact and hop == 0 and not memento and not target.startswith(f"/web/{timestamp}"):
                raise WaybackError(f"{path}: the archive does not serve this capture (yet)", url=original)
            if target in seen:
                raise WaybackError(f"{path}: the archived redirects lead in a loop", url=original)
            seen.add(target)
            path = target
        raise WaybackError(f"{asked}: more than {_PLAYBACK_HOPS} redirects", url=original)


# Redirects `capture_bytes` follows at most: the archive's own to the nearest capture, then the
# archived ones (edgi's recorded epa.gov answer takes four requests to its page).
_PLAYBACK_HOPS = 6
# The wording of the archive's exclusion page, which answers 200 without Memento-Datetime.
_EXCLUDED = re.compile(r"URL has been excluded from the Wayback Machine", re.IGNORECASE)


def _excluded(response: httpx.Response) -> bool:
    """Whether a playback answer is the archive's own exclusion page (no memento, its wording)."""
    if "Memento-Datetime" in response.headers:
        return False  # an archived page that happens to quote the wording is still the page's
    return "text" in response.headers.get("Content-Type", "text/html") and bool(_EXCLUDED.search(response.text))


def _playback_target(path: str, location: str | None, archive_hosts: Collection[str]) -> str | None:
    """The `/web/...` path a playback redirect leads to. The archive's own Location (on one of
    `archive_hosts`, or a bare path) is kept from its `/web/<timestamp><mode>/`; any other (an
    archived Location not rewritten: a URL of the original site, even one whose path holds `/web/`,
    or a relative path) is put in the archive at the redirect's own timestamp and mode."""
    if not location:
        return None
    parts = urlsplit(location)
    if parts.netloc.lower() in archive_hosts or not (parts.scheme or parts.netloc):
        rest = location.split(parts.netloc, 1)[1] if parts.netloc else location
        into_archive = ArchivedUrl.parse(rest)
        if into_archive is not None and not into_archive.base:  # `/web/`, a stamp, a mode, `/`: a path of its own
            return rest
    redirected = ArchivedUrl.parse(path)
    if redirected is None:  # not a path into the archive (`capture_bytes` asks for none other)
        return None
    target = urljoin(redirected.original, location)
    if urlsplit(target).scheme not in ("http", "https"):
        return None
    return ArchivedUrl("", redirected.stamp, redirected.flags, target).path
