"""The Fetcher: sources fetched politely and safely (httpx).

    async with Fetcher(settings) as fetcher:
        result = await fetcher.fetch(url, etag=..., last_modified=...)

`fetch` never raises for what a crawler expects (404, robots, timeouts, a private
address, a page too large): it returns a FetchResult whose `outcome` is `failed` and
whose `reason` is a short code with a one-line `message`. Politeness:
- at most `concurrency` requests in flight, and `per_host_concurrency` to one host,
  whose starts are at least `per_host_delay_s` apart (robots.txt's Crawl-delay wins
  when longer);
- robots.txt obeyed (protego), an honest User-Agent, conditional requests;
- retries with doubling backoff after 429, 5xx and dropped connections, Retry-After
  honoured for the whole host up to `max_retry_wait_s` and short of the time left before
  the source's deadline; a longer one defers the whole host to the next run (reason
  `deferred`, nothing more asked of it).
Time: one deadline per source (`total_timeout_s`), redirects, retries and their waits
included, waits for the host's turn and robots.txt aside; a timeout is not retried.
Safety:
- every connection, redirects included, goes through an address guard that resolves
  the host, refuses non-public addresses unless `allow_private_hosts` names them, and
  connects to the address it checked (so a second DNS answer cannot differ);
- the body is decompressed here, a bounded piece at a time, and counted as it is, so
  a gzip bomb costs at most `max_body_bytes` and a piece.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin, urlsplit

import httpx
from protego import Protego

from pipeline.errors import FetchError, PrivateAddressRefused
from pipeline.fetch.body import ACCEPT_ENCODING, content_codings, decoded
from pipeline.fetch.deadline import Deadline
from pipeline.fetch.guard import guarded_transport, with_written_address
from pipeline.ids import GITHUB_HOSTS
from pipeline.reasons import Reason
from pipeline.retry_after import retry_after_seconds
from pipeline.settings import Settings

__all__ = ["ACCEPTED_TYPES", "FetchResult", "Fetcher", "fetch_url_for", "host_key"]

# What extraction reads; anything else is refused before its body is downloaded.
ACCEPTED_TYPES = (
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "text/x-markdown",
    "application/pdf",
)
_RETRY_STATUSES = {429, 500, 502, 503, 504}
_REDIRECTS = {301, 302, 303, 307, 308}


@dataclass
class FetchResult:
    """What became of one source. When a host asks, by a Retry-After longer than the fetch may
    wait, to come back later, the source it answered so and the host's other sources, not asked
    this run, have `outcome="failed"` and `reason="deferred"`: nothing about the page is known."""

    url: str
    outcome: Literal["fetched", "not_modified", "failed"]
    final_url: str | None = None
    status: int | None = None
    reason: Reason | None = None
    message: str | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    body: bytes | None = field(default=None, repr=False)
    attempts: int = 0
    bytes_read: int = 0


def fetch_url_for(url: str) -> str:
    """The URL to download for a source: a GitHub `blob/` page is fetched as its raw file."""
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if (parts.hostname or "").lower() in GITHUB_HOSTS[:1] and len(segments) > 4 and segments[3] == "blob":
        owner, repo, ref, rest = segments[1], segments[2], segments[4], segments[5:]
        return f"https://raw.githubusercontent.com/{owner}/{repo}/{ref}/{'/'.join(rest)}"
    return url


def host_key(url: str) -> str:
    """The server `url` is fetched from, as politeness counts it: host and port, whatever the
    scheme, the case or the spelling of an address (`https://A.example/` and
    `https://a.example:443/` are `a.example:443`). The Fetcher keeps each host's turns by it,
    and `crawl.host_groups` each host's sources in one share, so two Fetchers never share a host.
    """
    parts = urlsplit(with_written_address(url))
    try:
        port = parts.port
    except ValueError:  # a bad port, which the fetch reports
        return parts.netloc.lower()
    return f"{(parts.hostname or '').lower()}:{port or {'http': 80, 'https': 443}.get(parts.scheme, 0)}"


@dataclass
class _Host:
    """Politeness state of one server (host and port, whatever the scheme)."""

    slots: asyncio.Semaphore
    delay: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    next_start: float = 0.0
    # Why nothing more is asked of the host this run (a Retry-After beyond the allowed wait).
    deferred: str | None = None


@dataclass
class _Robots:
    """robots.txt of one origin, read once: `rules`, or the reason not to crawl at all."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    checked: bool = False
    rules: Protego | None = None
    refusal: FetchError | None = None


@dataclass(frozen=True)
class _BodyRules:
    """How a response's body is read: at most `limit` bytes, what fits kept (`truncate`, robots.txt)
    or a larger body refused; and only if its media type is one `accept`ed (None: any)."""

    limit: int
    truncate: bool = False
    accept: tuple[str, ...] | None = None


@dataclass(frozen=True)
class _Validators:
    """What a conditional request sends: the ETag and the Last-Modified of the copy held."""

    etag: str | None = None
    last_modified: str | None = None


@dataclass
class _Response:
    status: int
    headers: httpx.Headers
    body: bytes | None = None
    location: str | None = None


# RFC 9309, 2.3.1.2 and 2.5: follow five redirects, parse at least 500 KiB.
_ROBOTS_REDIRECTS = 5
_ROBOTS_MAX_BYTES = 500 * 1024


class Fetcher:
    """An HTTP client for crawling; one per event loop (create it inside the task that uses it).

    Order of waiting for a request: the host's slot, then the host's turn (its delay),
    and only then a global slot, held for the request alone, so a request waiting on a
    slow or rate-limited host never keeps another host waiting.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._global = asyncio.Semaphore(settings.concurrency)
        self._hosts: dict[str, _Host] = {}
        self._robots: dict[str, _Robots] = {}
        self._client: httpx.AsyncClient | None = None
        self.requests = 0  # every HTTP request sent, robots.txt included (for benchmarks)

    async def __aenter__(self) -> Fetcher:
        s = self.settings
        limits = httpx.Limits(max_connections=s.concurrency * 2, max_keepalive_connections=s.concurrency)
        self._client = httpx.AsyncClient(
            transport=guarded_transport(s, limits),
            headers={
                "User-Agent": s.user_agent,
                "Accept": _accept_header(ACCEPTED_TYPES),
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            timeout=httpx.Timeout(s.read_timeout_s, connect=s.connect_timeout_s),
            follow_redirects=False,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    # ------------------------------------------------------------ politeness

    def _host(self, url: str) -> _Host:
        key = host_key(url)
        if key not in self._hosts:
            self._hosts[key] = _Host(
                slots=asyncio.Semaphore(self.settings.per_host_concurrency), delay=self.settings.per_host_delay_s
            )
        return self._hosts[key]

    async def _wait_turn(self, host: _Host) -> None:
        async with host.lock:
            now = time.monotonic()
            if host.next_start > now:
                await asyncio.sleep(host.next_start - now)
            host.next_start = max(time.monotonic(), host.next_start) + host.delay

    def _hold_off(self, url: str, seconds: float) -> None:
        """A 429's Retry-After holds back every request to the host, not only the one retried."""
        host = self._host(url)
        host.next_start = max(host.next_start, time.monotonic() + seconds)

    def _defer_host(self, url: str, wait: float, allowed: str) -> FetchError:
        """A Retry-After beyond the allowed wait: nothing more is asked of the host in this run."""
        host = self._host(url)
        if host.deferred is None:
            host.deferred = (
                f"{host_key(url)} asked to wait {wait:.0f} s (Retry-After), more than {allowed}; "
                "its sources wait for the next run"
            )
        return FetchError(url, Reason.DEFERRED, host.deferred)

    def _refuse_if_deferred(self, url: str, host: _Host) -> None:
        if host.deferred is not None:
            raise FetchError(url, Reason.DEFERRED, host.deferred)

    async def _robots_refusal(self, url: str) -> FetchError | None:
        """None when robots.txt allows `url`; else the failure to report."""
        if not self.settings.obey_robots:
            return None
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc.lower()}"
        robots = self._robots.setdefault(origin, _Robots())
        async with robots.lock:  # one read per origin, however many requests wait for it
            if not robots.checked:
                await self._read_robots(origin, robots)
                robots.checked = True
        if robots.refusal is not None:
            return FetchError(url, robots.refusal.reason, str(robots.refusal).removeprefix(f"{origin}/robots.txt: "))
        if robots.rules is not None and not robots.rules.can_fetch(url, self.settings.user_agent):
            agent = self.settings.user_agent.split("/")[0]
            return FetchError(url, Reason.ROBOTS, f"robots.txt at {origin}/robots.txt disallows this URL for {agent}")
        return None

    async def _read_robots(self, origin: str, robots: _Robots) -> None:
        url = f"{origin}/robots.txt"
        try:
            async with Deadline(self.settings.total_timeout_s) as deadline:
                for _ in range(_ROBOTS_REDIRECTS + 1):
                    robots_body = _BodyRules(_ROBOTS_MAX_BYTES, truncate=True)
                    response = await self._exchange_with_retries(url, {}, robots_body, deadline)
                    if response.location is None:
                        break
                    url = response.location
                else:
                    return  # RFC 9309: too many redirects counts as "unavailable", which allows all
        except PrivateAddressRefused:
            raise
        except FetchError as exc:
            if exc.reason == Reason.DEFERRED:
                raise  # not read: the host's sources are deferred, robots.txt is read next run
            if exc.status is not None and exc.status >= 500:
                # RFC 9309, 2.3.1.4: an unreachable robots.txt means "disallow everything" for now.
                robots.refusal = FetchError(
                    origin, Reason.ROBOTS, f"robots.txt answered {exc.status}; not crawling the host"
                )
            elif exc.status is None or exc.status < 400:  # 4xx: "unavailable", which allows all
                robots.refusal = FetchError(origin, exc.reason, f"robots.txt could not be read: {exc}")
            return
        except TimeoutError:
            robots.refusal = FetchError(
                origin,
                Reason.TIMEOUT,
                f"robots.txt could not be read in {self.settings.total_timeout_s:g} s; not crawling the host",
            )
            return
        robots.rules = Protego.parse((response.body or b"").decode("utf-8", "replace"))
        delay = robots.rules.crawl_delay(self.settings.user_agent)
        if delay:
            if float(delay) > self.settings.max_crawl_delay_s:
                robots.refusal = FetchError(
                    origin,
                    Reason.ROBOTS,
                    f"robots.txt asks for {float(delay):g} s between requests, more than "
                    f"max_crawl_delay_s ({self.settings.max_crawl_delay_s:g} s)",
                )
            host = self._host(url)
            host.delay = max(host.delay, min(float(delay), self.settings.max_crawl_delay_s))

    # ------------------------------------------------------------ fetching

    async def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        accept: tuple[str, ...] = ACCEPTED_TYPES,
    ) -> FetchResult:
        """Fetch one source; expected failures come back as `outcome="failed"`, never as exceptions.

        `accept` is the media types the caller reads (a page's by default; a feed's for discovery):
        anything else is refused before its body is downloaded. A 304 gives back the validators
        sent, the server having no need to repeat them, so that a caller keeps them whatever comes.
        """
        result = FetchResult(url=url, outcome="failed")
        deadline = Deadline(self.settings.total_timeout_s)
        try:
            async with deadline:
                validators = _Validators(etag, last_modified)
                await self._fetch_following_redirects(fetch_url_for(url), result, validators, deadline, accept)
        except FetchError as exc:
            result.outcome, result.reason, result.status, result.body = "failed", exc.reason, exc.status, None
            # The guard names the connection it refused (host:port); the message names the source.
            result.message = f"{url}: {exc.detail}" if isinstance(exc, PrivateAddressRefused) else str(exc)
        except TimeoutError:
            if not deadline.expired:
                raise
            result.outcome, result.reason, result.body = "failed", Reason.TIMEOUT, None
            tries = f"{result.attempts} request{'s' if result.attempts != 1 else ''}"
            result.message = f"{url}: took longer than {self.settings.total_timeout_s:g} s in all ({tries})"
        return result

    async def _fetch_following_redirects(
        self,
        url: str,
        result: FetchResult,
        validators: _Validators,
        deadline: Deadline,
        accept: tuple[str, ...],
    ) -> None:
        seen: list[str] = []
        headers = {} if accept == ACCEPTED_TYPES else {"Accept": _accept_header(accept)}
        if validators.etag:
            headers["If-None-Match"] = validators.etag
        if validators.last_modified:
            headers["If-Modified-Since"] = validators.last_modified
        while True:
            url = with_written_address(url)
            if urlsplit(url).scheme not in ("http", "https"):
                raise FetchError(url, Reason.UNSUPPORTED_SCHEME, "only http and https URLs are fetched")
            if url in seen:
                raise FetchError(result.url, Reason.REDIRECT_LOOP, f"redirect loop through {seen[-1]} back to {url}")
            if len(seen) > self.settings.max_redirects:
                raise FetchError(
                    result.url, Reason.TOO_MANY_REDIRECTS, f"more than {self.settings.max_redirects} redirects"
                )
            seen.append(url)
            with deadline.paused():
                refusal = await self._robots_refusal(url)
            if refusal:
                raise refusal
            body = _BodyRules(self.settings.max_body_bytes, accept=accept)
            response = await self._exchange_with_retries(url, headers, body, deadline, result=result)
            result.status, result.final_url = response.status, url
            if response.location is None:
                break
            url = response.location
        if response.status == 304:
            result.outcome = "not_modified"
            result.etag = response.headers.get("etag") or validators.etag
            result.last_modified = response.headers.get("last-modified") or validators.last_modified
            return
        result.outcome = "fetched"
        result.body = response.body
        result.bytes_read = len(response.body or b"")
        result.content_type = response.headers.get("content-type")
        result.etag = response.headers.get("etag")
        result.last_modified = response.headers.get("last-modified")

    async def _exchange_with_retries(
        self,
        url: str,
        headers: dict[str, str],
        body: _BodyRules,
        deadline: Deadline,
        *,
        result: FetchResult | None = None,
    ) -> _Response:
        """One URL, retried after 429, 5xx and dropped connections as the settings say, within `deadline`.

        A timeout is not retried: the deadline is shared, and a server that did not answer in
        time once seldom does the next moment.
        """
        settings = self.settings
        for attempt in range(settings.max_retries + 1):
            if result is not None:
                result.attempts += 1
            retry_after: float | None = None
            try:
                response = await self._exchange(url, headers, body, deadline)
                if response.status not in _RETRY_STATUSES:
                    return response
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
                failure = FetchError(
                    url, Reason.for_status(response.status), f"answered HTTP {response.status}", status=response.status
                )
            except httpx.TimeoutException as exc:
                raise _transport_failure(url, exc, settings) from None
            except httpx.TransportError as exc:
                failure = _transport_failure(url, exc, settings)
            if retry_after is not None:
                # The server asked for the wait: the page is not at fault, and the host's other
                # sources would meet the same wait, so a wait this fetch cannot make defers them all.
                if retry_after > settings.max_retry_wait_s:
                    raise self._defer_host(url, retry_after, f"max_retry_wait_s ({settings.max_retry_wait_s:g} s)")
                if retry_after >= (left := deadline.left()):
                    allowed = f"the {left:.1f} s left of the source's deadline (total_timeout_s {deadline.seconds:g} s)"
                    raise self._defer_host(url, retry_after, allowed)
                self._hold_off(url, retry_after)
            if attempt == settings.max_retries:
                raise failure
            wait = settings.retry_backoff_s * 2**attempt if retry_after is None else retry_after
            if wait > settings.max_retry_wait_s:
                raise FetchError(
                    url,
                    failure.reason,
                    f"{failure.detail}; a retry would wait {wait:.0f} s, more than allowed",
                    status=failure.status,
                )
            if wait >= deadline.left():
                raise FetchError(
                    url,
                    failure.reason,
                    f"{failure.detail}; a retry in {wait:g} s would pass the deadline ({deadline.seconds:g} s)",
                    status=failure.status,
                )
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _exchange(self, url: str, headers: dict[str, str], body: _BodyRules, deadline: Deadline) -> _Response:
        """One request and its response, within the host's politeness and the global bound."""
        assert self._client is not None
        host = self._host(url)
        self._refuse_if_deferred(url, host)
        async with contextlib.AsyncExitStack() as held:
            with deadline.paused():  # waiting for the host's turn is politeness, not this page's time
                await held.enter_async_context(host.slots)
                await self._wait_turn(host)
                self._refuse_if_deferred(url, host)
                await held.enter_async_context(self._global)
            deadline.run()
            self.requests += 1
            try:
                request = self._client.build_request("GET", url, headers=headers)
                response = await self._client.send(request, stream=True)
                try:
                    return await self._read(url, response, body)
                finally:
                    await response.aclose()
            except (httpx.TooManyRedirects, httpx.UnsupportedProtocol) as exc:
                raise FetchError(url, Reason.BAD_RESPONSE, f"the response could not be read: {exc}") from None
            except (httpx.InvalidURL, UnicodeError) as exc:
                raise FetchError(url, Reason.INVALID_URL, f"not a URL that can be fetched: {exc}") from None
        raise AssertionError("unreachable")  # mypy: the exit stack could swallow an exception

    async def _read(self, url: str, response: httpx.Response, rules: _BodyRules) -> _Response:
        limit, truncate, accept = rules.limit, rules.truncate, rules.accept
        status = response.status_code
        if status in _REDIRECTS and "location" in response.headers:
            return _Response(status, response.headers, location=urljoin(url, response.headers["location"]))
        if status == 304 or status in _RETRY_STATUSES:
            return _Response(status, response.headers)
        if status != 200:
            raise FetchError(url, Reason.for_status(status), _status_message(status), status=status)
        mime = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        if accept is not None and mime and mime not in accept:
            what = "a document incidentlib reads" if accept == ACCEPTED_TYPES else f"one of {', '.join(accept)}"
            raise FetchError(url, Reason.UNSUPPORTED_TYPE, f"served {mime}, which is not {what}")
        codings = content_codings(url, response.headers.get("content-encoding"))
        declared = response.headers.get("content-length", "")
        if not truncate and not codings and declared.isdigit() and int(declared) > limit:
            raise FetchError(url, Reason.TOO_LARGE, f"declares {declared} bytes, more than {limit}; not downloaded")
        # A BytesIO hands over its buffer as the bytes, where pieces joined (or a bytearray
        # copied) at the end hold the body twice at once.
        body = io.BytesIO()
        async for piece in decoded(url, response.aiter_raw(), codings):
            if body.tell() + len(piece) > limit:
                if truncate:  # robots.txt: what fits is what counts
                    body.write(piece[: limit - body.tell()])
                    break
                raise FetchError(url, Reason.TOO_LARGE, f"body larger than {limit} bytes; cut off")
            body.write(piece)
        return _Response(status, response.headers, body=body.getvalue())


def _accept_header(types: tuple[str, ...]) -> str:
    return ", ".join(types) + ";q=0.9, */*;q=0.1"


def _status_message(status: int) -> str:
    meaning = {
        401: "asks for credentials",
        403: "refused access (often a bot block, not a dead page)",
        404: "not found",
        410: "gone for good",
    }.get(status, "an error")
    return f"answered HTTP {status}: {meaning}"


def _transport_failure(url: str, exc: BaseException, settings: Settings) -> FetchError:
    if isinstance(exc, httpx.TimeoutException):
        what = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
        limit = settings.connect_timeout_s if what == "connect" else settings.read_timeout_s
        return FetchError(url, Reason.TIMEOUT, f"{what} timed out after {limit:g} s")
    if isinstance(exc, httpx.ConnectError):
        return FetchError(url, Reason.CONNECT_ERROR, f"could not connect: {exc}")
    return FetchError(url, Reason.TRANSPORT_ERROR, f"the connection failed: {exc.__class__.__name__}: {exc}")
