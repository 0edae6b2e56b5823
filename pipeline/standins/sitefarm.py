"""A farm of small websites on 127.0.0.1, for tests, benchmarks and the offline demo.

Each site is a real HTTP/1.1 server on its own loopback port (so each is its own
"host" to the crawler's politeness), serving pages from a dict. A page can misbehave
the ways real sites do: a status, a latency, a stall mid-body, a body fed a byte at a
time, a body that never ends, a gzip bomb, a sequence of answers (429 then 200),
conditional requests (ETag and Last-Modified answered with 304). Every request is
counted, so a test can assert what the crawler really did. `add_hostile_sites` builds
a site with one page of each hostile kind, and says what a crawl should make of each.

    with SiteFarm() as farm:
        site = farm.add_site("blog", latency_s=0.01)
        site.pages["/post"] = Page.html("<h1>Outage</h1><p>...</p>")
        url = site.url("/post")
"""

from __future__ import annotations

import hashlib
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from pipeline.standins.server import QuietServer

__all__ = ["Hostile", "Page", "Site", "SiteFarm", "add_hostile_sites"]


@dataclass
class Page:
    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    conditional: bool = True  # send an ETag and Last-Modified, answer 304 when they match
    # "stall" (half the body, then silence), "drip" (one byte every `drip_interval_s`) or "endless"
    behavior: str | None = None
    drip_interval_s: float = 1.0
    then: list[Page] = field(default_factory=list)  # answers for the following requests, in order

    @classmethod
    def html(cls, markup: str, **kwargs: Any) -> Page:
        return cls(markup.encode("utf-8"), **kwargs)

    @classmethod
    def markdown(cls, text: str, **kwargs: Any) -> Page:
        return cls(text.encode("utf-8"), content_type="text/plain; charset=utf-8", **kwargs)

    @classmethod
    def redirect(cls, location: str, status: int = 301) -> Page:
        return cls(status=status, headers={"Location": location}, content_type=None, conditional=False)

    @classmethod
    def gzip_bomb(cls, decoded_size: int = 64 << 20) -> Page:
        """A small gzip body that inflates to `decoded_size` bytes of zeros."""
        return cls(_gzip_bomb(decoded_size), headers={"Content-Encoding": "gzip"}, conditional=False)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'

    @property
    def last_modified(self) -> str:
        # Reproducible, and different for different content.
        offset = int(hashlib.sha256(self.body).hexdigest()[:6], 16)
        return formatdate(1_700_000_000 + offset, usegmt=True)

    def not_modified_for(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        # RFC 9110, 13.2.2: If-None-Match, when sent, decides alone.
        if if_none_match is not None:
            return if_none_match == self.etag
        return if_modified_since == self.last_modified


def _gzip_bomb(decoded_size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    zeros = bytes(1 << 20)
    parts = [compressor.compress(zeros) for _ in range(decoded_size >> 20)]
    return b"".join(parts) + compressor.flush()


class Site:
    """One host of the farm."""

    def __init__(self, name: str, latency_s: float, stop: threading.Event, farm: SiteFarm | None = None) -> None:
        self.farm = farm
        self.name = name
        self.latency_s = latency_s
        self.pages: dict[str, Page] = {}
        self.robots: str | None = None  # robots.txt text; None answers 404
        self.requests: Counter[str] = Counter()  # path -> requests
        self.bodies: Counter[str] = Counter()  # path -> full bodies sent
        self.user_agents: set[str] = set()
        self.accept_encodings: set[str] = set()  # the Accept-Encoding headers requests came with
        self.started: list[float] = []  # time.monotonic() of each request's arrival
        self.in_flight = 0
        self.max_in_flight = 0
        self._served: Counter[str] = Counter()
        self._stop = stop
        self._lock = threading.Lock()
        self.server = QuietServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _next_page(self, path: str) -> Page | None:
        with self._lock:
            page = self.pages.get(path)
            if page is None or not page.then:
                return page
            answers = [page, *page.then]
            index = min(self._served[path], len(answers) - 1)
            self._served[path] += 1
            return answers[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(_Handler):
            site = self

        return Handler


class _Handler(BaseHTTPRequestHandler):
    """A site's requests: `site` is set by a subclass of each site's own (`Site._handler`)."""

    protocol_version = "HTTP/1.1"
    site: Site

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # http.server's name
        site = self.site
        path = self.path.split("?")[0]
        with site._lock:
            site.requests[path] += 1
            site.user_agents.add(self.headers.get("User-Agent", ""))
            site.accept_encodings.add(self.headers.get("Accept-Encoding", ""))
            site.started.append(time.monotonic())
            site.in_flight += 1
            site.max_in_flight = max(site.max_in_flight, site.in_flight)
        if site.farm is not None:
            site.farm._arrive()
        try:
            self._serve(path)
        finally:
            with site._lock:
                site.in_flight -= 1
            if site.farm is not None:
                site.farm._leave()

    def _serve(self, path: str) -> None:
        site = self.site
        if site.latency_s:
            site._stop.wait(site.latency_s)  # network latency stand-in
        if path == "/robots.txt" and "/robots.txt" not in site.pages:
            text = site.robots
            page = Page(text.encode(), content_type="text/plain") if text is not None else None
        else:
            page = site._next_page(path)
        if page is None:
            page = Page(b"<h1>Not found</h1>", status=404)
        self._answer(path, page)

    def _answer(self, path: str, page: Page) -> None:
        if (
            page.conditional
            and page.status == 200
            and page.not_modified_for(self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since"))
        ):
            self.send_response(304)
            self.send_header("ETag", page.etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(page.status)
        if page.content_type:
            self.send_header("Content-Type", page.content_type)
        if page.conditional and page.status == 200:
            self.send_header("ETag", page.etag)
            self.send_header("Last-Modified", page.last_modified)
        for name, value in page.headers.items():
            self.send_header(name, value)
        if page.behavior == "endless":
            self._send_endless()
            return
        self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        if self._send_body(page) and page.status == 200:
            with self.site._lock:
                self.site.bodies[path] += 1

    def _send_endless(self) -> None:
        """A chunked body that never ends, until the client hangs up or the farm stops."""
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"<p>" + b"more " * 200 + b"</p>\n"
        try:
            while not self.site._stop.is_set():
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the client hung up, as it should
        self.close_connection = True

    def _send_body(self, page: Page) -> bool:
        """The page's body as its behaviour says; whether all of it was sent."""
        body = page.body
        try:
            if page.behavior == "stall":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.site._stop.wait()  # never sends the rest
                self.close_connection = True
                return False
            if page.behavior == "drip":  # always something new before a read timeout, never the end
                for index in range(len(body)):
                    self.wfile.write(body[index : index + 1])
                    self.wfile.flush()
                    if self.site._stop.wait(page.drip_interval_s):
                        break
                self.close_connection = True
                return False
            self.wfile.write(body)
        except OSError:
            return False
        return True


class SiteFarm:
    """Start sites with `add_site`; everything stops when the `with` block ends."""

    def __init__(self) -> None:
        self.sites: dict[str, Site] = {}
        self.in_flight = 0
        self.max_in_flight = 0  # most requests in flight at once over all sites
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _arrive(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def add_site(self, name: str, *, latency_s: float = 0.0) -> Site:
        site = Site(name, latency_s, self._stop, self)
        self.sites[name] = site
        thread = threading.Thread(target=site.server.serve_forever, args=(0.05,), name=f"site-{name}", daemon=True)
        thread.start()
        self._threads.append(thread)
        return site

    def __enter__(self) -> SiteFarm:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        for site in self.sites.values():
            site.server.shutdown()
            site.server.server_close()
        for thread in self._threads:
            thread.join(timeout=10)


# ------------------------------------------------------------ a hostile site

_GOOD_HTML = """<html><head><title>Queue backlog | Example engineering</title></head><body>
<article><h1>Queue backlog took the checkout down</h1>
<p>On 12 May 2024 the job queue stopped draining for 40 minutes after a deploy set the worker pool
of one node class to zero. Requests piled up and the checkout answered 503 for a share of calls.</p>
<h2>Root cause</h2><p>The new configuration set the worker pool size to zero on one node class.</p>
<h2>Action items</h2><ul><li>Validate pool sizes in CI.</li><li>Alert on queue age.</li></ul>
</article></body></html>
"""
_GOOD_MARKDOWN = """# Certificate rotation dropped connections

## Summary

On 3 June 2024 the load balancers dropped connections for 25 minutes while a certificate rotation
ran. Clients saw TLS handshake failures and retried, which doubled the load.

## Resolution

The previous certificate bundle was restored and the rotation job paused.
"""
# What the two mislabelled pages say: their drafts must hold these words, decoded right.
CAFE = "Café outage – naïve retry: the cache’s “warm-up” failed for 20 minutes after a deploy."
TOKYO = "東京リージョンで 40 分間の障害: キャッシュの設定誤りにより API が停止しました。"


@dataclass(frozen=True)
class Hostile:
    """One page of the hostile sites, and what a crawl (with default timeouts) should make of it."""

    url: str
    kind: str  # what the page does
    outcome: str  # the crawl's outcome for it: new, failed or deferred
    reason: str | None = None
    words: str | None = None  # text its draft must hold


def add_hostile_sites(
    farm: SiteFarm, *, drip_interval_s: float = 1.0, huge_bytes: int = 60 << 20, bomb_bytes: int = 1 << 30
) -> list[Hostile]:
    """A site with one page of each hostile kind and two good postmortems; and, on a host of its own
    (it defers its whole host), a page answering 429 for an hour and a good page registered after it
    (one request at a time to a host: the 429 is asked first, and the good page is never asked)."""
    hostile: list[Hostile] = []

    def at(site: Site, path: str, page: Page) -> str:
        site.pages[path] = page
        return site.url(path)

    # By the crawl's outcome for the page: a new draft holding `words`, a failure for `reason`, deferred.
    def drafted(site: Site, path: str, page: Page, kind: str, words: str) -> None:
        hostile.append(Hostile(at(site, path, page), kind, "new", words=words))

    def failed(site: Site, path: str, page: Page, kind: str, reason: str) -> None:
        hostile.append(Hostile(at(site, path, page), kind, "failed", reason))

    def deferred(site: Site, path: str, page: Page, kind: str) -> None:
        hostile.append(Hostile(at(site, path, page), kind, "deferred", "deferred"))

    site = farm.add_site("hostile")
    site.robots = "User-agent: *\nDisallow: /private/\n"
    drafted(site, "/good.html", Page.html(_GOOD_HTML), "a good postmortem (HTML)", "worker pool")
    drafted(site, "/good.md", Page.markdown(_GOOD_MARKDOWN), "a good postmortem (Markdown)", "certificate")
    cafe = f"<html><body><h1>Café</h1><p>{CAFE}</p></body></html>".encode("cp1252")
    drafted(site, "/cafe.html", Page(cafe), "windows-1252 declared as UTF-8", CAFE)
    tokyo = Page.html(f"<html><body><h1>東京</h1><p>{TOKYO}</p></body></html>")
    tokyo.content_type = "text/html; charset=iso-8859-1"
    drafted(site, "/tokyo.html", tokyo, "UTF-8 declared as ISO-8859-1", TOKYO)
    bomb = Page.gzip_bomb(bomb_bytes)
    failed(site, "/bomb", bomb, f"a gzip bomb ({bomb_bytes >> 20} MB decoded)", "too-large")
    stall = Page.html("<p>" + "words " * 5000 + "</p>", behavior="stall")
    failed(site, "/stall", stall, "a stalled body", "timeout")
    drip = Page.html("<p>" + "slow " * 20000 + "</p>", behavior="drip", drip_interval_s=drip_interval_s)
    failed(site, "/drip", drip, f"a body fed a byte every {drip_interval_s:g} s", "timeout")
    failed(site, "/endless", Page(behavior="endless"), "a body that never ends", "too-large")
    site.pages["/loop-b"] = Page.redirect("/loop-a")
    failed(site, "/loop-a", Page.redirect("/loop-b"), "a redirect loop", "redirect-loop")
    huge = Page(b"<p>" + b"x" * huge_bytes + b"</p>", conditional=False)
    failed(site, "/huge.html", huge, f"a {huge_bytes >> 20} MB page", "too-large")
    failed(site, "/unavailable", Page(status=503), "503 Service Unavailable", "http-503")
    failed(site, "/gone", Page(status=410), "410 Gone", "http-410")
    failed(site, "/forbidden", Page(status=403), "403 Forbidden", "http-403")
    failed(site, "/private/pm.html", Page.html(_GOOD_HTML), "banned by robots.txt", "robots")
    binary = Page(bytes(range(256)) * 64, content_type="text/html")
    failed(site, "/binary.html", binary, "binary served as HTML", "extract-unsupported")

    busy = farm.add_site("busy")
    wait = Page(status=429, headers={"Retry-After": "3600"}, conditional=False)
    deferred(busy, "/busy", wait, "429 asking to wait an hour")
    deferred(busy, "/after", Page.html(_GOOD_HTML), "a good page on the host that said 429")
    return hostile
