"""A local stand-in for the Wayback Machine, as strict as the real service (failures included).

It serves, on 127.0.0.1, the endpoints the archive client calls, with the answer shapes the
service documents or its users recorded, so that a client cannot be tuned to a service that
does not exist. The source of each answer is listed in the manual (docs/archive.md, "Where
the stand-in's answers come from"); how the pipeline meets each answer is there too ("The
local stand-in", "How playback answers", "How the index answers").

    POST /save                       Save Page Now 2 (SPN2): authenticated capture jobs
    GET  /save/status/<job_id>       a job's state: pending, success or error (inside HTTP 200)
    GET  /save/status/user           the account's sessions and daily captures
    GET  /wayback/available          the availability API
    GET  /cdx/search/cdx             the CDX server (pipeline/standins/cdx.py answers)
    GET  /web/<timestamp>[id_]/<url> a capture replayed with its archived status, or a redirect to
                                     the nearest one

Save Page Now, as the service does it:

- A capture is real: the stand-in fetches the page (from the local site farm, say), follows at
  most three redirects (a fourth ends the job `error:too-many-redirects`), and records the final
  URL (`original_url`), the status and the SHA-1 digest of the body. Only a 200 page is captured
  unless the form says `capture_all=1` (or `on`): otherwise the job ends `error:not-found`
  (404, 410), `error:no-access` (403), `error:unauthorized` (401), `error:bad-gateway`,
  `service-unavailable`, `gateway-timeout` (5xx), … with a message ending ` (HTTP status=NNN).`;
  with it (or with the switch `capture_errors`) the job succeeds with `"http_status": NNN`.
- A job takes `job_seconds` (a number, or a range `(low, high)` drawn per job) and holds one
  of the account's `sessions` from its submit until it ends, success or error. A submit over
  the sessions answers `error:user-session-limit`; `/save/status/user` counts `processing`,
  `available`, `daily_captures` (accepted submits today, failed jobs too) and
  `daily_captures_limit` from that state.
- The same URL (by SURT key) again while its last capture, or a job for it still running, is
  younger than `dedupe_s`: 200 with the earlier job's id and "The same snapshot had been made
  N minutes ago. You can make new capture of this URL after 1 hour."; polling that id answers
  the earlier success, with its older timestamp. No session or quota is used.
- `if_not_archived_within` (seconds, or `3d`, `15h`, `30m`, `45s`; `a,b` gives the page `a`)
  with a capture younger than that: 200 `{"url", "job_id": null, "message": "The same snapshot
  had been made … ago. …"}`, no timestamp.
- `per_url_daily` captures of one URL a day: `error:too-many-daily-captures`, no job id; the
  account's `daily_quota`: "You cannot make more than N captures per day." (status "error").
- Job status is kept `job_memory_s` after the job ends; then, as for an id never issued, the
  default pending body `{"job_id": J, "resources": [], "status": "pending"}`.
- `delay_wb_availability=1`: the capture reaches the index ~12 hours later (the document: "All
  API responses remain exactly the same").

Limits (a `WaybackRules`, the constructor's first argument; the defaults are the service's today):
`captures_per_minute` 7 (POST /save, a sliding window of `rate_window_s`, 60 s), `cdx_per_minute` 30,
`sessions` 3, `per_url_daily` 5, `daily_quota` 30,000, `dedupe_s` 3600, `job_memory_s` 3600,
`job_seconds` 0 (fast for tests; the real service takes seconds to two minutes), `cdx_max_rows`
150,000. Over a rate: 429 as an HTML page without Retry-After; a client that keeps going into 429s
for more than `ban_after_s` (60) finds its connections refused for `ban_s` (3600), doubling at each
later ban, on every endpoint (the service blocks per IP; on loopback there is one client). Status
polls and `/web/` have no limit here: the service documents none, and no recorded answer shows one.

Switches in `failures` turn on each failure mode the client must survive:

    storm_429            the next N requests of any kind answer 429
    html_5xx             the next N requests of any kind answer an HTML page with `html_5xx_status` (502)
    down_until           every connection refused until this time.monotonic() (`down_for(seconds)` sets it)
    error_after_capture  the next N submits capture, then answer 502 anyway
    error_in_200         the next N submits answer HTTP 200 with status "error" (error:internal-server-error)
    session_limit        the next N submits answer the session-limit error whatever the sessions
    delayed_start        the next N submits are accepted with "The capture will start in ~1 hour, 0 minutes …"
                         and their jobs stay pending `delay_s` (3600) before they run
    host_quota           hosts (`example.com`, `127.0.0.1:8000`) whose submits answer "Crawling this host
                         is paused because they notified us that they are overloaded right now."
    stuck_pending        jobs never leave "pending"
    expire_jobs          job status is forgotten at once: the default pending body
    job_errors           {url: "error:<code>"}: jobs for that URL end in that documented error
    cdx_lag_s            a capture shows in CDX, availability and /web/ only this many seconds after it was made
    index_lag_s          a capture shows in CDX and availability only this many seconds after it was made,
                         while playback (/web/) serves it at once: the service's own lag (about 20 s); set
                         it to an hour and back to 0 to hold a capture out of the index, no sleep needed
    blocked_hosts        hosts whose CDX lookups answer 403 "Blocked Site Error"
    bad_rows             {url: "kind[,kind]"}: CDX answers for that URL hold malformed rows: `timestamp`
                         (20000012170449, a month of 00), `fields` (six fields), `newer-timestamp` (a day
                         of 00, a year after its newest capture), `mailto` and `relative` (a row whose
                         `original` is an e-mail address or a bare path: pipeline/standins/cdx.py)
    excluded_urls        URLs (by SURT key) whose playback answers the archive's exclusion page: 200,
                         "This URL has been excluded from the Wayback Machine.", no Memento-Datetime
    drop_answers         the next N answers, of any kind, are cut off mid-way: the status line, the
                         headers (the whole body's Content-Length) and half the body sent, then the
                         connection closed (an HTTP client raises RemoteProtocolError), as the service's
                         front does under load; the request itself was served (a submit started its job)
    drop_share           that share (0 to 1) of the other answers cut off the same way, drawn at random
                         from a generator seeded with `drop_seed` (0), so that a run can be repeated
    stall_answers        the next N answers are held `stall_s` (2) seconds before they are sent: a client
                         with a shorter timeout meets a read timeout (the request was served all the same)

Bad keys need no switch: any keys but the configured ones answer 401.

From Python: `url`; `failures`; `captures` (every capture, in the order made) and
`captures_of(url)` (by SURT key, or the URL submitted; oldest first); `add_capture(url,
timestamp, body, statuscode=200, location=None)` (a capture held already, with a finished job,
for older histories; `statuscode=301, location=target` holds an archived redirect, listed in CDX
with its 3xx and replayed as one); `jobs`;
`counts` (requests by kind: save, status, user, cdx, available, web, other; then 429, refused and
dropped: answers cut off mid-way);
`firewall.bans` (the length of each ban so far); `set_limits(...)`; `down_for(seconds)`;
`start`/`stop`/`serve_forever`, or `with WaybackStandIn(WaybackRules(...)) as wayback`.
"""

from __future__ import annotations

import random
import secrets
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from pipeline.fetch.standins import SyncStandInTransport
from pipeline.standins import cdx, spn
from pipeline.standins.cdx import Capture, Reply, digest_of
from pipeline.standins.server import QuietServer
from pipeline.surt import surt_key

__all__ = [
    "EXCLUDED_PAGE",
    "HOST_PAUSED_END",
    "NO_STATUS_EXT",
    "Capture",
    "Failures",
    "Job",
    "WaybackRules",
    "WaybackStandIn",
]

# `failures.job_errors` values for job ends that are no documented code (docs/archive.md, "Where the
# stand-in's words come from").
HOST_PAUSED_END = "host-paused"
NO_STATUS_EXT = "no-status-ext"

# The archive's own page for a URL excluded from playback (200, no Memento-Datetime), to the
# wording the manual quotes (docs/archive.md, "How playback answers"): no recorded copy of it
# was at hand, so only its sentence is the service's.
EXCLUDED_PAGE = (
    b"<!DOCTYPE html><html><head><title>Wayback Machine</title></head><body>"
    b'<div id="error"><h2>Sorry.</h2><p>This URL has been excluded from the Wayback Machine.</p></div>'
    b"</body></html>\n"
)


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S")


def _flag(form: dict[str, str], name: str) -> bool:
    return form.get(name, "") in ("1", "on")  # options count only when 1 or on (the manual's sources)


@dataclass
class Job:
    job_id: str
    url: str
    created: float  # time.monotonic() of the submit
    status: str = "pending"
    capture: Capture | None = None
    error: str | None = None  # "error:<code>"
    urlkey: str = ""
    ends_at: float = 0.0  # time.monotonic() at which it ends (its session is free again)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))  # wall clock of the submit
    duration: float = 0.0
    capture_all: bool = False
    delay_wb: bool = False
    message: str | None = None
    exception: str | None = None
    first_archive: bool = False

    def __post_init__(self) -> None:
        if not self.urlkey:
            self.urlkey = surt_key(self.url)
        self.ends_at = max(self.ends_at, self.created)


@dataclass
class Failures:
    storm_429: int = 0
    error_after_capture: int = 0
    stuck_pending: bool = False
    expire_jobs: bool = False
    cdx_lag_s: float = 0.0
    index_lag_s: float = 0.0
    error_in_200: int = 0
    # {url: "error:<code>"}, or one of the job ends without a code of their own: HOST_PAUSED_END
    # (the host paused, under too-many-requests) and NO_STATUS_EXT (an error with no status_ext).
    job_errors: dict[str, str] = field(default_factory=dict)
    session_limit: int = 0
    delayed_start: int = 0
    delay_s: float = 3600.0
    down_until: float = 0.0
    html_5xx: int = 0
    html_5xx_status: int = 502
    host_quota: set[str] = field(default_factory=set)
    blocked_hosts: set[str] = field(default_factory=set)
    bad_rows: dict[str, str] = field(default_factory=dict)
    excluded_urls: set[str] = field(default_factory=set)
    # Jobs succeed with the page's error status as with capture_all (real job ends carry an
    # `http_status` of 4xx or 5xx without the client asking for it).
    capture_errors: bool = False
    drop_answers: int = 0
    drop_share: float = 0.0
    drop_seed: int = 0
    stall_answers: int = 0
    stall_s: float = 2.0


class _Window:
    """Requests in the last `span` seconds, for a sliding per-minute limit."""

    def __init__(self, span: float = 60.0) -> None:
        self.span = span
        self.times: deque[float] = deque()

    def admit(self, limit: float, now: float) -> bool:
        while self.times and now - self.times[0] >= self.span:
            self.times.popleft()
        if len(self.times) >= limit:
            return False
        self.times.append(now)
        return True


class _Firewall:
    """429s ignored for over `after_s` block the client (refused connections) for `ban_s`, doubled at
    each later ban, as the service's staff describe it (docs/archive.md, "Where the stand-in's
    answers come from"). The period after which the doubling resets is not said; here it never does."""

    def __init__(self, after_s: float, ban_s: float) -> None:
        self.after_s, self.ban_s = after_s, ban_s
        self.throttled_since: float | None = None
        self.banned_until = 0.0
        self.bans: list[float] = []  # the length of each ban so far

    def admitted(self) -> None:
        # A request let through ends the streak: the client waited for the window (the rule's
        # "ignored" read as "kept sending into 429s"; polls, which have no limit, neither end nor extend it).
        self.throttled_since = None

    def refused(self, now: float) -> None:
        """A 429 answered: a streak of them longer than `after_s` bans the client."""
        if self.throttled_since is None:
            self.throttled_since = now
        elif now - self.throttled_since > self.after_s:
            length = self.ban_s * 2 ** len(self.bans)
            self.bans.append(length)
            self.banned_until = now + length
            self.throttled_since = None  # after the ban, a new streak


class _Server(QuietServer):
    standin: WaybackStandIn

    def verify_request(self, request: Any, client_address: Any) -> bool:  # socketserver's signature
        # Refused before a byte is read: socketserver closes the socket unanswered.
        return not self.standin._refusing(time.monotonic(), count=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # http.server's name
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        standin = self.server.standin
        if standin._refusing(time.monotonic(), count=True):  # a kept-alive connection: closed unanswered
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body = b""
        if method == "POST":
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        reply = standin.handle(method, self.path, self.headers.get("Authorization"), body)
        if reply is None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        stall = standin._stall()
        if stall:
            time.sleep(stall)  # the service slow to answer, as a client meets it: no answer in time
        if standin._cut_off():
            # Served, then dropped mid-answer: the headers promise the whole body, half of it comes.
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(max(len(reply.body), 2)))
            self.end_headers()
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)


@dataclass(frozen=True)
class _Fetched:
    """What a capture fetched: the final URL (after redirects), its status, its bytes and their type."""

    url: str
    status: int
    body: bytes
    mimetype: str


@dataclass(frozen=True)
class WaybackRules:
    """The service's rules as the stand-in enforces them (see "Limits" above; the defaults are the
    service's today, but `job_seconds`): the keys it accepts, its rates and quotas, how long a job
    takes and its status is kept, the firewall's bans, the CDX server's row limit. A running
    stand-in's attributes of the same names may be changed (`set_limits`, `ban_s`, ...)."""

    access_key: str = "test-access"
    secret_key: str = "test-secret"
    captures_per_minute: float = 7
    cdx_per_minute: float = 30
    sessions: int = 3
    per_url_daily: int = 5
    daily_quota: int = 30_000
    job_seconds: float | tuple[float, float] = 0.0
    ban_after_s: float = 60.0
    ban_s: float = 3600.0
    dedupe_s: float = 3600.0
    job_memory_s: float = 3600.0
    rate_window_s: float = 60.0
    cdx_max_rows: int = 150_000


class WaybackStandIn:
    """Start with `with WaybackStandIn(WaybackRules(...)) as wayback:`; `wayback.url` is its base URL."""

    def __init__(
        self, rules: WaybackRules = WaybackRules(), *, port: int = 0, stand_in_hosts: dict[str, str] | None = None
    ) -> None:
        self.access_key, self.secret_key = rules.access_key, rules.secret_key
        self.captures_per_minute, self.cdx_per_minute = rules.captures_per_minute, rules.cdx_per_minute
        self.sessions, self.per_url_daily, self.daily_quota = rules.sessions, rules.per_url_daily, rules.daily_quota
        self.job_seconds = rules.job_seconds
        self.dedupe_s, self.job_memory_s = rules.dedupe_s, rules.job_memory_s
        self.rate_window_s, self.cdx_max_rows = rules.rate_window_s, rules.cdx_max_rows
        self.failures = Failures()
        self.jobs: dict[str, Job] = {}
        self.counts: dict[str, int] = {
            "save": 0,
            "status": 0,
            "user": 0,
            "cdx": 0,
            "available": 0,
            "web": 0,
            "other": 0,
            "429": 0,
            "refused": 0,
            "dropped": 0,
        }
        self._drops: random.Random | None = None  # drawn from for `drop_share`, seeded at the first draw
        self.firewall = _Firewall(rules.ban_after_s, rules.ban_s)
        self._captures: list[Capture] = []
        self._running: set[str] = set()  # ids of jobs not yet ended
        self._daily: dict[str, int] = {}  # accepted submits by UTC day
        self._capture_window, self._cdx_window = _Window(rules.rate_window_s), _Window(rules.rate_window_s)
        self._lock = threading.RLock()
        # SPN's connect timeout is 10 s. `stand_in_hosts`: pages it captures from local stand-ins of
        # their hosts, as the crawler fetched them (pipeline.fetch.standins; the demo's).
        transport = SyncStandInTransport(httpx.HTTPTransport(), stand_in_hosts) if stand_in_hosts else None
        self._http = httpx.Client(timeout=10.0, follow_redirects=False, transport=transport)
        self.server = _Server(("127.0.0.1", port), _Handler)
        self.server.standin = self
        self.port = self.server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ban_after_s(self) -> float:
        return self.firewall.after_s

    @ban_after_s.setter
    def ban_after_s(self, seconds: float) -> None:
        self.firewall.after_s = seconds

    @property
    def ban_s(self) -> float:
        return self.firewall.ban_s

    @ban_s.setter
    def ban_s(self, seconds: float) -> None:
        self.firewall.ban_s = seconds

    def __enter__(self) -> WaybackStandIn:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name="wayback", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self.server.serve_forever(0.2)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._http.close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    # ------------------------------------------------------------ the service's state

    def set_limits(self, captures_per_minute: float, cdx_per_minute: float) -> None:
        """New limits, counted from now (the last minute's requests are forgotten)."""
        with self._lock:
            self.captures_per_minute, self.cdx_per_minute = captures_per_minute, cdx_per_minute
            self._capture_window, self._cdx_window = _Window(self.rate_window_s), _Window(self.rate_window_s)

    def down_for(self, seconds: float) -> None:
        """An outage: every connection refused for `seconds` from now."""
        self.failures.down_until = time.monotonic() + seconds

    @property
    def captures(self) -> list[Capture]:
        """Every capture held, in the order made (jobs due by now included)."""
        with self._lock:
            self._tick(time.monotonic())
            return list(self._captures)

    def captures_of(self, url: str) -> list[Capture]:
        """The captures of `url` (by SURT key, or submitted as `url`), oldest first."""
        key = surt_key(url)
        return sorted(
            (c for c in self.captures if c.urlkey == key or surt_key(c.requested) == key), key=lambda c: c.timestamp
        )

    def add_capture(
        self,
        url: str,
        timestamp: str,
        body: bytes = b"<html><body>archived</body></html>",
        *,
        statuscode: int = 200,
        location: str | None = None,
    ) -> Capture:
        """A capture the archive holds already, made at `timestamp` (YYYYMMDDhhmmss, UTC), with a
        finished job of its own: for tests that need older captures or several URLs' histories.

        `statuscode` is the page's archived status, which `/web/` replays and the index lists; a
        redirect (3xx) is held with its `location` (absolute, or relative to `url`), which playback
        rewrites into the archive as the service does. The body is held as text/html."""
        if location is not None:
            location = urljoin(url, location)
        made = datetime.strptime(timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        with self._lock:
            now = time.monotonic()
            made_at = now - (datetime.now(UTC) - made).total_seconds()
            job = Job(job_id=_job_id(), url=url, created=made_at, status="success", started=made)
            capture = self._record(job, _Fetched(url, statuscode, body, "text/html"), made_at, timestamp)
            capture.location = location
            job.capture = capture
            self.jobs[job.job_id] = job
            return capture

    def _refusing(self, now: float, *, count: bool = False) -> bool:
        """An outage or a ban: connections are refused."""
        refusing = now < self.failures.down_until or now < self.firewall.banned_until
        if refusing and count:
            with self._lock:
                self.counts["refused"] += 1
        return refusing

    def _stall(self) -> float:
        """How long the answer about to be sent is held (`stall_answers`): 0 for most."""
        with self._lock:
            if self.failures.stall_answers <= 0:
                return 0.0
            self.failures.stall_answers -= 1
            return self.failures.stall_s

    def _cut_off(self) -> bool:
        """Whether the answer about to be sent is cut off mid-way (`drop_answers`, `drop_share`)."""
        with self._lock:
            f = self.failures
            if f.drop_answers > 0:
                f.drop_answers -= 1
            elif f.drop_share > 0:
                if self._drops is None:
                    self._drops = random.Random(f.drop_seed)
                if self._drops.random() >= f.drop_share:
                    return False
            else:
                return False
            self.counts["dropped"] += 1
            return True

    def _job_seconds(self) -> float:
        if isinstance(self.job_seconds, tuple | list):
            low, high = self.job_seconds
            return random.uniform(low, high)
        return float(self.job_seconds)

    def _tick(self, now: float) -> None:
        """Jobs run by themselves on the service, watched or not: end those whose time has come."""
        if self.failures.stuck_pending:
            return
        for job_id in sorted(self._running, key=lambda j: self.jobs[j].ends_at):
            job = self.jobs[job_id]
            if now >= job.ends_at:
                self._running.discard(job_id)
                self._run(job)

    def _visible(self, now: float, *, playback: bool = False) -> list[Capture]:
        """The captures the index (or, with `playback`, playback) shows by now (the lag of new
        captures; delay_wb_availability)."""
        lag = self.failures.cdx_lag_s if playback else max(self.failures.cdx_lag_s, self.failures.index_lag_s)
        return [c for c in self._captures if now - c.made_at >= max(lag, spn.DELAY_WB_S if c.delayed else 0.0)]

    def _today(self) -> str:
        return _timestamp(datetime.now(UTC))[:8]

    # ------------------------------------------------------------ a capture job

    def _fail(self, job: Job, code: str, url: str, status: int | None = None, exception: str | None = None) -> None:
        job.status, job.error, job.exception = "error", f"error:{code}", exception
        status = status or spn.CODE_STATUS.get(code, 0)
        job.message = spn.JOB_MESSAGES.get(code, "Capture failed: {url}.").format(url=url, status=status)

    def _run(self, job: Job) -> None:
        """The job's end: the page fetched, and captured or the job failed as SPN2 would."""
        forced = next((code for u, code in self.failures.job_errors.items() if surt_key(u) == job.urlkey), None)
        if forced == HOST_PAUSED_END:
            job.status, job.error, job.message = "error", "error:too-many-requests", spn.HOST_PAUSED_JOB
            return
        if forced == NO_STATUS_EXT:
            job.status, job.error, job.message = "error", None, spn.BROWSER_CRASHED.format(url=job.url)
            return
        if forced:
            self._fail(job, forced.removeprefix("error:"), job.url)
            return
        url = job.url
        for hop in range(spn.MAX_REDIRECTS + 1):
            try:
                response = self._http.get(url)
            except httpx.HTTPError as exc:
                code, text = _transport_error(exc)
                self._fail(job, code, url, exception=text)
                return
            if not response.has_redirect_location:
                break
            if hop == spn.MAX_REDIRECTS:  # a fourth redirect
                self._fail(job, "too-many-redirects", url)
                return
            url = str(response.url.join(response.headers["Location"]))
        status = response.status_code
        if status != 200 and not (job.capture_all or self.failures.capture_errors):
            self._fail(job, spn.code_for_status(status), url, status)
            return
        mimetype = response.headers.get("content-type", "text/html").split(";")[0].strip()
        stamp_at = job.started + timedelta(seconds=job.ends_at - job.created)
        fetched = _Fetched(url, status, response.content, mimetype)
        job.capture = self._record(job, fetched, job.ends_at, _timestamp(stamp_at))
        job.status = "success"

    def _record(self, job: Job, fetched: _Fetched, made_at: float, stamp: str) -> Capture:
        """A capture of what `job` fetched into the index, made at `made_at` (time.monotonic()) and
        stamped `stamp` or the next free second; a re-capture of unchanged bytes is a revisit."""
        urlkey = surt_key(fetched.url)
        same_key = [c for c in self._captures if c.urlkey == urlkey]
        taken = {c.timestamp for c in same_key}
        moment = datetime.strptime(stamp, "%Y%m%d%H%M%S")
        while _timestamp(moment) in taken:  # one capture a second per urlkey, as the timestamp's precision allows
            moment += timedelta(seconds=1)
        stamp = _timestamp(moment)
        earlier = [c for c in same_key if c.timestamp < stamp]
        previous = max(earlier, key=lambda c: c.timestamp) if earlier else None
        digest = digest_of(fetched.body)
        capture = Capture(
            timestamp=stamp,
            original=fetched.url,
            requested=job.url,
            statuscode=fetched.status,
            digest=digest,
            mimetype=fetched.mimetype,
            body=fetched.body,
            made_at=made_at,
            urlkey=urlkey,
            revisit=previous is not None and previous.digest == digest,
            job_id=job.job_id,
            delayed=job.delay_wb,
        )
        job.first_archive = not same_key
        self._captures.append(capture)
        return capture

    # ------------------------------------------------------------ HTTP

    def handle(self, method: str, target: str, authorization: str | None, body: bytes) -> Reply | None:
        """The answer to one request; None refuses it (the connection is closed unanswered)."""
        now = time.monotonic()
        parts = urlsplit(target)
        path = parts.path
        kind = _kind(method, path)
        with self._lock:
            self.counts[kind] += 1
            self._tick(now)
            if self.failures.html_5xx > 0:
                self.failures.html_5xx -= 1
                return Reply(self.failures.html_5xx_status, spn.html_error(self.failures.html_5xx_status), "text/html")
            if self.failures.storm_429 > 0:
                self.failures.storm_429 -= 1
                return self._too_many(now)
            authorised = authorization == f"LOW {self.access_key}:{self.secret_key}"
            query = parse_qs(parts.query, keep_blank_values=True)
            if kind == "save":
                if not authorised:
                    return Reply.json(
                        {"status": "error", "message": "You need to be logged in to use Save Page Now."}, 401
                    )
                if not self._capture_window.admit(self.captures_per_minute, now):
                    return self._too_many(now)
                self.firewall.admitted()
                form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
                return self._save(form, now)
            if kind == "user":
                if not authorised:
                    return Reply.json(
                        {"status": "error", "message": "You need to be logged in to use Save Page Now."}, 401
                    )
                return self._user()
            if kind == "status":
                return self._status(path.rsplit("/", 1)[1], now)
            if kind == "cdx":
                if not self._cdx_window.admit(self.cdx_per_minute, now):
                    return self._too_many(now)
                self.firewall.admitted()
                f = self.failures
                return cdx.answer(
                    self._visible(now),
                    query,
                    blocked_hosts=f.blocked_hosts,
                    bad_rows=f.bad_rows,
                    max_rows=self.cdx_max_rows,
                )
            if kind == "available":
                return self._available(query, now)
            if kind == "web":
                return self._web(target[len("/web/") :], now)
            return Reply.text("not found\n", 404)

    def _too_many(self, now: float) -> Reply:
        self.counts["429"] += 1
        self.firewall.refused(now)
        return Reply(429, spn.TOO_MANY_BODY, "text/html")

    def _user(self) -> Reply:
        processing = len(self._running)
        return Reply.json(
            {
                "processing": processing,
                "available": max(0, self.sessions - processing),
                "daily_captures": self._daily.get(self._today(), 0),
                "daily_captures_limit": self.daily_quota,
            }
        )

    def _save(self, form: dict[str, str], now: float) -> Reply:
        failures = self.failures
        url = form.get("url", "").strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return _error("invalid-url-syntax", spn.JOB_MESSAGES["invalid-url-syntax"])
        key = surt_key(url)
        if failures.session_limit > 0:
            failures.session_limit -= 1
            return _error("user-session-limit", spn.SESSION_LIMIT)
        if failures.error_in_200 > 0:
            failures.error_in_200 -= 1
            # One of the retry-later messages clients know.
            message = "The server encountered an internal error and was unable to complete your request."
            return _error("internal-server-error", message)
        if _host_matches(parts, failures.host_quota):
            # Only the message is attested, in no recorded answer: it comes in the account
            # quota's wrapper, a status "error" without status_ext.
            return Reply.json({"status": "error", "message": spn.HOST_PAUSED})
        ours = [c for c in self._captures if c.urlkey == key]
        newest = max(ours, key=lambda c: c.made_at, default=None)
        within = spn.seconds(form.get("if_not_archived_within", ""))
        if within and newest is not None and now - newest.made_at < within:
            # No job id and no timestamp: the client must look the capture up.
            message = (
                f"The same snapshot had been made {spn.span(now - newest.made_at)} ago. "
                f"You can make new capture of this URL after {spn.span(within)}."
            )
            return Reply.json({"url": url, "job_id": None, "message": message})
        earlier = self._earlier_job(key, now)
        if earlier is not None:
            job, age = earlier
            message = (
                f"The same snapshot had been made {spn.span(age)} ago. "
                f"You can make new capture of this URL after {spn.span(self.dedupe_s)}."
            )
            return Reply.json({"url": url, "job_id": job.job_id, "message": message})
        today = self._today()
        if sum(1 for c in ours if c.timestamp[:8] == today) >= self.per_url_daily:
            # The variant recorded with a limit of 5 and of 7.
            message = (
                f"This URL has been already captured {self.per_url_daily} times today, which is a daily limit we "
                "have set for that Resource type. Please try again tomorrow. Please email us at "
                '"info@archive.org" if you would like to discuss this more.'
            )
            return _error("too-many-daily-captures", message)
        if self._daily.get(today, 0) >= self.daily_quota:
            # Clients match "You cannot make more than [1-9][0-9,]* captures per day"; no recorded
            # answer carries a status_ext with it, so none is sent.
            return Reply.json(
                {"status": "error", "message": f"You cannot make more than {self.daily_quota:,} captures per day."}
            )
        if len(self._running) >= self.sessions:
            return _error("user-session-limit", spn.SESSION_LIMIT)
        return self._accept(url, form, now)

    def _earlier_job(self, key: str, now: float) -> tuple[Job, float] | None:
        """The job whose capture of `key` (or whose run for it) is younger than the dedupe window.

        A job still running is answered the same way (the service says "The same URL is in the
        queue" in no recorded answer; the same job id with the dedupe message is the closest
        attested shape). A job that failed made no snapshot and does not count."""
        best: tuple[Job, float] | None = None
        for job in self.jobs.values():
            if job.urlkey != key or job.status == "error":
                continue
            if job.status == "success" and job.capture is not None:
                age = now - job.capture.made_at
            elif job.job_id in self._running:
                age = now - job.created
            else:
                continue
            if age < self.dedupe_s and (best is None or age < best[1]):
                best = (job, age)
        return best

    def _accept(self, url: str, form: dict[str, str], now: float) -> Reply:
        failures = self.failures
        delay, message = 0.0, None
        if failures.delayed_start > 0:
            # Recorded; the job holds its session while it waits (unattested: it is one
            # of the account's active captures, and `processing` counts it).
            failures.delayed_start -= 1
            delay = failures.delay_s
            message = (
                f"The capture will start in {spn.delay_text(delay)} because our service is currently overloaded. "
                "You may close your browser window and the page will still be saved."
            )
        duration = self._job_seconds()
        job = Job(
            job_id=_job_id(),
            url=url,
            created=now,
            ends_at=now + delay + duration,
            duration=duration,
            capture_all=_flag(form, "capture_all"),
            delay_wb=_flag(form, "delay_wb_availability"),
        )
        self.jobs[job.job_id] = job
        self._running.add(job.job_id)
        today = self._today()
        self._daily[today] = self._daily.get(today, 0) + 1  # failed jobs count too
        self._tick(now)
        if failures.error_after_capture > 0:
            # The job runs; the gateway answers 502 anyway (recorded).
            failures.error_after_capture -= 1
            return Reply(502, spn.html_error(502), "text/html")
        return Reply.json({"url": url, "job_id": job.job_id, **({"message": message} if message else {})})

    def _status(self, job_id: str, now: float) -> Reply:
        job = self.jobs.get(job_id)
        forgotten = job is None or (job.status != "pending" and now - job.ends_at > self.job_memory_s)
        if forgotten or self.failures.expire_jobs or job is None:
            # What the service answers for an id it no longer (or never) knew: the default pending
            # body (recorded).
            return Reply.json({"job_id": job_id, "resources": [], "status": "pending"})
        if job.status == "pending":
            return Reply.json({"status": "pending", "job_id": job.job_id, "resources": []})
        if job.status == "error":
            body: dict[str, object] = {"status": "error"}
            if job.exception:
                body["exception"] = job.exception
            body.update({"status_ext": job.error} if job.error else {})
            body.update({"job_id": job.job_id, "message": job.message, "resources": []})
            return Reply.json(body)
        capture = job.capture
        assert capture is not None
        # The shape of a recorded success, `original_url` the URL after redirects.
        return Reply.json(
            {
                "counters": {"embeds": 0, "outlinks": 0},
                "delay_wb_availability": job.delay_wb,
                "duration_sec": round(job.duration, 3),
                "first_archive": job.first_archive,
                "http_status": capture.statuscode,
                "job_id": job.job_id,
                "original_url": capture.original,
                "outlinks": [],
                "resources": [capture.original],
                "status": "success",
                "timestamp": capture.timestamp,
            }
        )

    def _available(self, query: dict[str, list[str]], now: float) -> Reply:
        url = query.get("url", [""])[0]
        key = surt_key(url) if url else ""
        rows = [c for c in self._visible(now) if c.urlkey == key]
        snapshots: dict[str, object] = {}
        if rows:
            wanted = query.get("timestamp", [""])[0]
            target = int(wanted.ljust(14, "0")[:14]) if wanted.isdigit() else None
            closest = (
                min(rows, key=lambda c: abs(int(c.timestamp) - target))
                if target is not None
                else max(rows, key=lambda c: c.timestamp)
            )
            snapshots = {
                "closest": {
                    "status": str(closest.statuscode),
                    "available": True,
                    "url": f"http://web.archive.org/web/{closest.timestamp}/{closest.original}",
                    "timestamp": closest.timestamp,
                }
            }
        return Reply.json({"url": url, "archived_snapshots": snapshots})

    def _web(self, rest: str, now: float) -> Reply:
        """Playback, as docs/archive.md ("How playback answers") says the service gives it:

        - an excluded URL (`excluded_urls`): the archive's exclusion page, 200, no Memento-Datetime;
        - no capture the index shows: 404, a page of the archive's own;
        - another timestamp: a 302 to the nearest capture the index shows (a fresh one is not
          served until the index shows it), no Memento-Datetime;
        - the capture itself: its archived status and bytes with `Memento-Datetime`, a 3xx with
          its Location rewritten into the archive at the capture's timestamp and mode.
        """
        stamp, _, url = rest.partition("/")
        modifier = stamp.lstrip("0123456789")
        stamp = stamp[: len(stamp) - len(modifier)]
        key = surt_key(url) if url else ""
        if key and any(surt_key(excluded) == key for excluded in self.failures.excluded_urls):
            return Reply(200, EXCLUDED_PAGE, "text/html; charset=utf-8")
        rows = [c for c in self._visible(now, playback=True) if c.urlkey == key]
        if not rows:
            return Reply(404, b"<html><body>Wayback Machine has not archived that URL.</body></html>", "text/html")
        exact = next((c for c in rows if c.timestamp == stamp), None)
        if exact is None:
            wanted = int(stamp.ljust(14, "0")[:14] or 0)
            nearest = min(rows, key=lambda c: abs(int(c.timestamp) - wanted))
            location = f"/web/{nearest.timestamp}{modifier}/{nearest.original}"
            reason = f"found capture at {nearest.timestamp}"
            return Reply(302, b"", "text/html", {"Location": location, "X-Archive-Redirect-Reason": reason})
        body = (
            exact.body
            if modifier == "id_" or exact.statuscode != 200
            else b"<!-- archived by the stand-in -->" + exact.body
        )
        memento = datetime.strptime(exact.timestamp, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
        headers = {"Memento-Datetime": memento}
        if 300 <= exact.statuscode < 400 and exact.location:
            headers["Location"] = f"{self.url}/web/{exact.timestamp}{modifier}/{exact.location}"
        return Reply(exact.statuscode, body, exact.mimetype, headers)


def _job_id() -> str:
    return "spn2-" + secrets.token_hex(20)  # the recorded format


def _error(code: str, message: str) -> Reply:
    return Reply.json({"status": "error", "status_ext": f"error:{code}", "message": message})


def _kind(method: str, path: str) -> str:
    if method == "POST":
        return "save" if path.rstrip("/") == "/save" else "other"
    if path == "/save/status/user":
        return "user"
    if path.startswith("/save/status/"):
        return "status"
    if path == "/cdx/search/cdx":
        return "cdx"
    if path == "/wayback/available":
        return "available"
    return "web" if path.startswith("/web/") else "other"


def _host_matches(parts: Any, hosts: set[str]) -> bool:
    """Whether the URL's host (or host:port) is one of `hosts`, `www.` aside."""
    names = {(parts.hostname or "").lower(), parts.netloc.lower().rsplit("@", 1)[-1]}
    names |= {n.removeprefix("www.") for n in names}
    return any(h.lower().removeprefix("www.") in names for h in hosts)


def _transport_error(exc: httpx.HTTPError) -> tuple[str, str]:
    """The code and exception text a page that could not be fetched ends its job with. Only the
    resolution error is attested (the service's document); a refused connection is
    invalid-server-response here ("Live page is not available" has no recorded status_ext)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return "invalid-host-resolution", "[Errno -2] Name or service not known"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpx.TimeoutException):
        return "read-timeout", "ReadTimeout"
    if isinstance(exc, httpx.ConnectError):
        return "invalid-server-response", "ConnectionRefusedError"
    return "protocol-error", type(exc).__name__
