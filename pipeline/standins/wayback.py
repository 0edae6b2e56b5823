"""A local stand-in for the Wayback Machine, faithful to how it behaves today (failures included).

It serves, on 127.0.0.1, the endpoints of ../shared/reference/wayback-api.md:

    POST /save                       Save Page Now 2: authenticated capture jobs
    GET  /save/status/<job_id>       a job's state: pending, success or error (inside HTTP 200)
    GET  /save/status/user           free capture sessions and the daily quota
    GET  /wayback/available          the availability API
    GET  /cdx/search/cdx             the CDX server (text or JSON output)
    GET  /web/<timestamp>[id_]/<url> a capture, or a redirect to the nearest one

A capture is real: the stand-in fetches the page (from the local site farm, say),
follows its redirects, records the status, the final URL and the SHA-1 digest of the
body, and serves it back. It enforces its configured limits (captures and CDX requests
a minute, active sessions, captures of one URL a day, the account's daily quota) the
way the service does: 429 as an HTML page without Retry-After, refused connections
for a client that keeps going. Switches in `failures` turn on each failure mode the
client must survive:

    storm_429            answer the next N requests of any kind with 429
    error_after_capture  the next N submits capture, then answer 502 anyway
    stuck_pending        jobs never leave "pending"
    expire_jobs          job status is forgotten at once ("job not found")
    cdx_lag_s            a capture shows in CDX only this many seconds after it was made
    error_in_200         the next N submits answer HTTP 200 with status "error" (error:internal-server-error)
    job_errors           {url: "error:<code>"}: jobs for that URL end in that error
    session_limit        the next N submits answer "You have already reached the limit of active sessions"

Bad keys need no switch: any keys but the configured ones answer 401.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from pipeline.standins.server import QuietServer

__all__ = ["Capture", "Failures", "WaybackStandIn"]

_STATUS_EXT_FOR_HTTP = {404: "error:not-found", 410: "error:not-found", 403: "error:no-access", 401: "error:no-access"}


@dataclass
class Capture:
    timestamp: str
    original: str  # the URL captured, after redirects
    requested: str  # the URL submitted
    statuscode: int
    digest: str
    mimetype: str
    body: bytes
    made_at: float  # time.monotonic(), for the CDX lag


@dataclass
class Job:
    job_id: str
    url: str
    created: float
    status: str = "pending"
    capture: Capture | None = None
    error: str | None = None


@dataclass
class Failures:
    storm_429: int = 0
    error_after_capture: int = 0
    stuck_pending: bool = False
    expire_jobs: bool = False
    cdx_lag_s: float = 0.0
    error_in_200: int = 0
    job_errors: dict[str, str] = field(default_factory=dict)
    session_limit: int = 0


class _Window:
    """Requests in the last minute, for a per-minute limit."""

    def __init__(self) -> None:
        self.times: deque[float] = deque()

    def admit(self, per_minute: float, now: float) -> bool:
        while self.times and now - self.times[0] >= 60.0:
            self.times.popleft()
        if len(self.times) >= per_minute:
            return False
        self.times.append(now)
        return True


def _digest(body: bytes) -> str:
    return base64.b32encode(hashlib.sha1(body).digest()).decode()  # the CDX digest is SHA-1


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S")


class WaybackStandIn:
    """Start with `with WaybackStandIn(...) as wayback:`; `wayback.url` is its base URL."""

    def __init__(
        self,
        *,
        access_key: str = "test-access",
        secret_key: str = "test-secret",
        captures_per_minute: float = 12,
        cdx_per_minute: float = 30,
        sessions: int = 3,
        per_url_daily: int = 5,
        daily_quota: int = 30_000,
        job_seconds: float = 0.0,
        ban_after_s: float = 60.0,
        ban_s: float = 3600.0,
        port: int = 0,
    ) -> None:
        self.access_key, self.secret_key = access_key, secret_key
        self.captures_per_minute, self.cdx_per_minute = captures_per_minute, cdx_per_minute
        self.sessions, self.per_url_daily, self.daily_quota = sessions, per_url_daily, daily_quota
        self.job_seconds = job_seconds
        self.ban_after_s, self.ban_s = ban_after_s, ban_s
        self.failures = Failures()
        self.captures: list[Capture] = []
        self.jobs: dict[str, Job] = {}
        self.counts: dict[str, int] = {"save": 0, "status": 0, "user": 0, "cdx": 0, "available": 0, "web": 0, "429": 0}
        self._capture_window, self._cdx_window = _Window(), _Window()
        self._throttled_since: float | None = None
        self._banned_until = 0.0
        self._lock = threading.Lock()
        self._http = httpx.Client(timeout=10.0, follow_redirects=True)
        self.server = QuietServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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
            self._capture_window, self._cdx_window = _Window(), _Window()

    def captures_of(self, url: str) -> list[Capture]:
        with self._lock:
            return [c for c in self.captures if url in (c.original, c.requested)]

    def _throttle(self, allowed: bool, now: float) -> bool:
        """Count a refusal; a client that keeps going for over `ban_after_s` is refused for `ban_s`."""
        if allowed:
            self._throttled_since = None
            return True
        self.counts["429"] += 1
        if self._throttled_since is None:
            self._throttled_since = now
        elif now - self._throttled_since > self.ban_after_s:
            self._banned_until = now + self.ban_s
        return False

    def _capture(self, job: Job) -> None:
        """Fetch the page now and record the capture (or the job's error)."""
        forced = self.failures.job_errors.get(job.url)
        if forced:
            job.status, job.error = "error", forced
            return
        try:
            response = self._http.get(job.url)
        except httpx.HTTPError:
            job.status, job.error = "error", "error:invalid-host-resolution"
            return
        now = datetime.now(UTC)
        taken = {c.timestamp for c in self.captures if c.original == str(response.url)}
        while _timestamp(now) in taken:  # one capture a second per URL, as the timestamp's precision allows
            now += timedelta(seconds=1)
        stamp = _timestamp(now)
        capture = Capture(
            timestamp=stamp,
            original=str(response.url),
            requested=job.url,
            statuscode=response.status_code,
            digest=_digest(response.content),
            mimetype=response.headers.get("content-type", "text/html").split(";")[0],
            body=response.content,
            made_at=time.monotonic(),
        )
        if response.status_code in _STATUS_EXT_FOR_HTTP and response.status_code != 404:
            job.status, job.error = "error", _STATUS_EXT_FOR_HTTP[response.status_code]
            return
        # A 404 page is still "archived" (the reference's failure 4): the status says so.
        self.captures.append(capture)
        job.status, job.capture = "success", capture

    def _advance(self, job: Job, now: float) -> None:
        if job.status == "pending" and not self.failures.stuck_pending and now - job.created >= self.job_seconds:
            self._capture(job)

    def _active_jobs(self) -> int:
        # Jobs run by themselves on the service, watched or not: bring them all up to date.
        now = time.monotonic()
        for job in self.jobs.values():
            self._advance(job, now)
        return sum(1 for j in self.jobs.values() if j.status == "pending")

    # ------------------------------------------------------------ HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        wayback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _send(
                self, status: int, body: bytes, content_type: str = "application/json", headers: dict | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def _json(self, data: object, status: int = 200) -> None:
                self._send(status, json.dumps(data).encode())

            def _too_many(self) -> None:
                self._send(429, b"<html><body><h1>Too Many Requests</h1></body></html>", "text/html")

            def _authorised(self) -> bool:
                expected = f"LOW {wayback.access_key}:{wayback.secret_key}"
                return self.headers.get("Authorization") == expected

            def _gate(self, now: float) -> bool:
                """False (and answered) when the client is banned or caught in a 429 storm."""
                if now < wayback._banned_until:
                    self.close_connection = True
                    self.connection.close()  # connections refused, as the service does for an hour
                    return False
                if wayback.failures.storm_429 > 0:
                    wayback.failures.storm_429 -= 1
                    wayback.counts["429"] += 1
                    self._too_many()
                    return False
                return True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlsplit(self.path).path.rstrip("/") != "/save":
                    self._send(404, b"not found", "text/plain")
                    return
                now = time.monotonic()
                with wayback._lock:
                    wayback.counts["save"] += 1
                    if not self._gate(now):
                        return
                    if not self._authorised():
                        self._json(
                            {"status": "error", "message": "You need to be logged in to use Save Page Now."}, 401
                        )
                        return
                    if not wayback._throttle(wayback._capture_window.admit(wayback.captures_per_minute, now), now):
                        self._too_many()
                        return
                    self._save(form, now)

            def _save(self, form: dict[str, str], now: float) -> None:
                failures = wayback.failures
                url = form.get("url", "")
                if not url.startswith(("http://", "https://")):
                    self._json(
                        {"status": "error", "status_ext": "error:invalid-url-syntax", "message": f"Invalid URL {url}"}
                    )
                    return
                if failures.session_limit > 0:
                    failures.session_limit -= 1
                    self._json(
                        {
                            "status": "error",
                            "status_ext": "error:user-session-limit",
                            "message": "You have already reached the limit of active Save Page Now sessions.",
                        }
                    )
                    return
                if wayback._active_jobs() >= wayback.sessions:
                    self._json(
                        {
                            "status": "error",
                            "status_ext": "error:user-session-limit",
                            "message": "You have already reached the limit of active Save Page Now sessions.",
                        }
                    )
                    return
                if failures.error_in_200 > 0:
                    failures.error_in_200 -= 1
                    self._json(
                        {"status": "error", "status_ext": "error:internal-server-error", "message": "Internal error."}
                    )
                    return
                today = [
                    c
                    for c in wayback.captures
                    if url in (c.requested, c.original) and c.timestamp[:8] == _timestamp(datetime.now(UTC))[:8]
                ]
                if len(today) >= wayback.per_url_daily:
                    self._json(
                        {
                            "status": "error",
                            "status_ext": "error:too-many-daily-captures",
                            "message": f"This URL has been already captured {len(today)} times today.",
                        }
                    )
                    return
                if len(wayback.captures) >= wayback.daily_quota:
                    self._json(
                        {
                            "status": "error",
                            "status_ext": "error:too-many-captures",
                            "message": "You have reached your daily quota.",
                        }
                    )
                    return
                within = form.get("if_not_archived_within")
                if within:
                    seconds = _seconds(within)
                    recent = [
                        c for c in wayback.captures if url in (c.requested, c.original) and now - c.made_at <= seconds
                    ]
                    if recent:
                        ago = int(now - recent[-1].made_at)
                        self._json(
                            {
                                "url": url,
                                "job_id": None,
                                "message": f"The same snapshot had been made {ago} seconds ago.",
                            }
                        )
                        return
                for job in wayback.jobs.values():  # the same URL again within the hour: the same job
                    if job.url == url and now - job.created < 3600 and job.status == "pending":
                        self._json({"url": url, "job_id": job.job_id, "message": "The same URL is in the queue."})
                        return
                job = Job(job_id="spn2-" + secrets.token_hex(20), url=url, created=now)
                wayback.jobs[job.job_id] = job
                wayback._advance(job, now)
                if failures.error_after_capture > 0:
                    failures.error_after_capture -= 1
                    self._send(502, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                    return
                self._json({"url": url, "job_id": job.job_id})

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                now = time.monotonic()
                path = parts.path
                with wayback._lock:
                    if not self._gate(now):
                        return
                    if path == "/save/status/user":
                        wayback.counts["user"] += 1
                        if not self._authorised():
                            self._json({"status": "error", "message": "You need to be logged in."}, 401)
                            return
                        self._json(
                            {
                                "processing": wayback._active_jobs(),
                                "available": max(0, wayback.sessions - wayback._active_jobs()),
                                "daily_captures": len(wayback.captures),
                                "daily_captures_limit": wayback.daily_quota,
                            }
                        )
                        return
                    if path.startswith("/save/status/"):
                        wayback.counts["status"] += 1
                        self._status(path.rsplit("/", 1)[1], now)
                        return
                    if path == "/cdx/search/cdx":
                        wayback.counts["cdx"] += 1
                        if not wayback._throttle(wayback._cdx_window.admit(wayback.cdx_per_minute, now), now):
                            self._too_many()
                            return
                        self._cdx(query, now)
                        return
                    if path == "/wayback/available":
                        wayback.counts["available"] += 1
                        self._available(query, now)
                        return
                    if path.startswith("/web/"):
                        wayback.counts["web"] += 1
                        self._web(self.path[len("/web/") :])
                        return
                self._send(404, b"not found", "text/plain")

            def _status(self, job_id: str, now: float) -> None:
                job = wayback.jobs.get(job_id)
                if job is None or wayback.failures.expire_jobs:
                    self._json({"status": "error", "status_ext": "error:job-not-found", "message": "Job not found."})
                    return
                wayback._advance(job, now)
                if job.status == "pending":
                    self._json({"status": "pending", "job_id": job.job_id, "resources": []})
                elif job.status == "error":
                    self._json(
                        {
                            "status": "error",
                            "status_ext": job.error,
                            "job_id": job.job_id,
                            "message": f"The capture failed: {job.error}",
                        }
                    )
                else:
                    capture = job.capture
                    assert capture is not None
                    self._json(
                        {
                            "status": "success",
                            "job_id": job.job_id,
                            "original_url": capture.original,
                            "timestamp": capture.timestamp,
                            "http_status": capture.statuscode,
                            "duration_sec": round(now - job.created, 3),
                        }
                    )

            def _visible(self, now: float) -> list[Capture]:
                return [c for c in wayback.captures if now - c.made_at >= wayback.failures.cdx_lag_s]

            def _cdx(self, query: dict[str, list[str]], now: float) -> None:
                url = unquote(query.get("url", [""])[0])
                if query.get("matchType", ["exact"])[0] == "prefix" or url.endswith("*"):
                    prefix = url.rstrip("*")
                    rows = [c for c in self._visible(now) if c.original.startswith(prefix)]
                else:
                    rows = [c for c in self._visible(now) if url in (c.original, c.requested)]
                for expression in query.get("filter", []):
                    negate = expression.startswith("!")
                    name, _, pattern = expression.lstrip("!").partition(":")
                    rows = [c for c in rows if bool(re.search(pattern, str(_field(c, name)))) != negate]
                if "from" in query:
                    rows = [c for c in rows if c.timestamp >= query["from"][0].ljust(14, "0")]
                if "to" in query:
                    rows = [c for c in rows if c.timestamp <= query["to"][0].ljust(14, "9")]
                rows.sort(key=lambda c: c.timestamp)
                limit = int(query.get("limit", ["0"])[0] or 0)
                if limit > 0:
                    rows = rows[:limit]
                elif limit < 0:
                    rows = rows[limit:]
                fields = (
                    query.get("fl", [""])[0] or "urlkey,timestamp,original,mimetype,statuscode,digest,length"
                ).split(",")
                table = [[str(_field(c, name)) for name in fields] for c in rows]
                if query.get("output", [""])[0] == "json":
                    self._json([fields, *table] if table else [])
                else:
                    text = "".join(" ".join(row) + "\n" for row in table)
                    self._send(200, text.encode(), "text/plain")

            def _available(self, query: dict[str, list[str]], now: float) -> None:
                url = query.get("url", [""])[0]
                rows = sorted(
                    (c for c in self._visible(now) if url in (c.original, c.requested)), key=lambda c: c.timestamp
                )
                snapshots = {}
                if rows:
                    closest = rows[-1]
                    snapshots = {
                        "closest": {
                            "status": str(closest.statuscode),
                            "available": True,
                            "url": f"http://web.archive.org/web/{closest.timestamp}/{closest.original}",
                            "timestamp": closest.timestamp,
                        }
                    }
                self._json({"url": url, "archived_snapshots": snapshots})

            def _web(self, rest: str) -> None:
                stamp, _, url = rest.partition("/")
                raw = stamp.endswith("id_")
                stamp = stamp.removesuffix("id_")
                rows = sorted(
                    (c for c in wayback.captures if url in (c.original, c.requested)), key=lambda c: c.timestamp
                )
                if not rows:
                    self._send(
                        404, b"<html><body>Wayback Machine has not archived that URL.</body></html>", "text/html"
                    )
                    return
                exact = next((c for c in rows if c.timestamp == stamp), None)
                if exact is None:
                    nearest = min(rows, key=lambda c: abs(int(c.timestamp) - int(stamp.ljust(14, "0")[:14] or 0)))
                    self._send(302, b"", "text/html", {"Location": f"/web/{nearest.timestamp}/{nearest.original}"})
                    return
                body = exact.body if raw else b"<!-- archived by the stand-in -->" + exact.body
                memento = datetime.strptime(exact.timestamp, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
                self._send(200, body, exact.mimetype, {"Memento-Datetime": memento})

        return Handler


def _field(capture: Capture, name: str) -> object:
    return {
        "urlkey": capture.original,
        "timestamp": capture.timestamp,
        "original": capture.original,
        "mimetype": capture.mimetype,
        "statuscode": capture.statuscode,
        "digest": capture.digest,
        "length": len(capture.body),
    }.get(name, "-")


def _seconds(value: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    value = value.strip()
    if value[-1:] in units:
        return float(value[:-1]) * units[value[-1]]
    return float(value)
