"""Fetching: politeness, conditional requests, retries, and every way a site can misbehave.

Real HTTP servers on 127.0.0.1 (pipeline.standins.sitefarm); the fetcher is allowed
loopback explicitly, except in the tests of the address guard.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import tracemalloc
import zlib
from ipaddress import ip_network
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.fetch import Fetcher, FetchResult, fetch_url_for, is_allowed_address, is_public_address
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, Site, SiteFarm

HTML = "<html><body><h1>Outage</h1><p>The API was down for an hour.</p></body></html>"


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    return farm.add_site("site")


def settings(**changes: Any) -> Settings:
    base: dict[str, Any] = {
        "allow_private_hosts": True,
        "per_host_delay_s": 0.0,
        "retry_backoff_s": 0.01,
        "max_retries": 2,
        "read_timeout_s": 0.5,
        "total_timeout_s": 5.0,
        "max_body_bytes": 1_000_000,
    }
    return Settings(**{**base, **changes})


def fetch(url: str, config: Settings | None = None, **kwargs: Any) -> FetchResult:
    async def run() -> FetchResult:
        async with Fetcher(config or settings()) as fetcher:
            return await fetcher.fetch(url, **kwargs)

    return asyncio.run(run())


def fetch_all(urls: list[str], config: Settings) -> list[FetchResult]:
    async def run() -> list[FetchResult]:
        async with Fetcher(config) as fetcher:
            return await asyncio.gather(*(fetcher.fetch(u) for u in urls))

    return asyncio.run(run())


def fetch_at_peak(url: str, config: Settings) -> tuple[FetchResult, int]:
    """The fetch's result and the most memory it held at once (tracemalloc, in bytes)."""
    tracemalloc.start()
    try:
        return fetch(url, config), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_page_is_fetched_with_an_honest_user_agent(site: Site) -> None:
    site.pages["/a"] = Page.html(HTML)
    result = fetch(site.url("/a"))
    assert (result.outcome, result.status, result.body) == ("fetched", 200, HTML.encode())
    assert result.etag == site.pages["/a"].etag and result.last_modified
    assert site.user_agents == {Settings().user_agent}
    assert Settings().user_agent.startswith("incidentlib/")


def test_an_unchanged_page_is_not_downloaded_again(site: Site) -> None:
    site.pages["/a"] = Page.html(HTML)
    first = fetch(site.url("/a"))
    again = fetch(site.url("/a"), etag=first.etag or "", last_modified=first.last_modified or "")
    assert again.outcome == "not_modified" and again.body is None
    assert site.bodies["/a"] == 1 and site.requests["/a"] == 2


@pytest.mark.parametrize(
    ("status", "reason", "words"),
    [(404, "http-404", "not found"), (410, "http-410", "gone for good"), (403, "http-403", "often a bot block")],
)
def test_client_errors_fail_at_once_with_the_reason(site: Site, status: int, reason: str, words: str) -> None:
    site.pages["/x"] = Page(b"no", status=status)
    result = fetch(site.url("/x"))
    assert (result.outcome, result.reason, result.attempts) == ("failed", reason, 1)
    assert words in (result.message or "") and site.url("/x") in (result.message or "")


def test_429_is_retried_after_the_time_it_asks_for_not_the_backoff(site: Site) -> None:
    site.pages["/busy"] = Page(status=429, headers={"Retry-After": "1"}, then=[Page.html(HTML)])
    site.pages["/other"] = Page.html(HTML)
    # The backoff alone would wait 30 s; Retry-After says 1 s, for the whole host.
    results = fetch_all([site.url("/busy"), site.url("/other")], settings(retry_backoff_s=30))
    assert [(r.outcome, r.attempts) for r in results] == [("fetched", 2), ("fetched", 1)]
    busy_first, *later = sorted(site.started[1:])  # after robots.txt
    assert all(t - busy_first >= 0.95 for t in later), "the other page waited out the Retry-After too"
    assert max(later) - busy_first < 5


@pytest.mark.parametrize("status", [429, 503])
def test_a_retry_after_beyond_the_limit_defers_the_whole_host(farm: SiteFarm, status: int) -> None:
    site, other = farm.add_site("busy"), farm.add_site("other")
    site.pages["/busy"] = Page(status=status, headers={"Retry-After": "3600"})
    site.pages["/a"] = Page.html(HTML)
    site.pages["/b"] = Page.html(HTML)
    other.pages["/a"] = Page.html(HTML)
    started = time.monotonic()
    busy, a, b, elsewhere = fetch_all(
        [site.url("/busy"), site.url("/a"), site.url("/b"), other.url("/a")], settings(max_retry_wait_s=60)
    )
    assert time.monotonic() - started < 5, "nothing waited for the hour asked"
    assert [(r.outcome, r.reason) for r in (busy, a, b)] == [("failed", "deferred")] * 3
    assert "asked to wait 3600 s (Retry-After), more than max_retry_wait_s (60 s)" in (a.message or "")
    assert (site.requests["/busy"], site.requests["/a"], site.requests["/b"]) == (1, 0, 0), "nothing more asked"
    assert elsewhere.outcome == "fetched", "other hosts go on"


def test_a_retry_after_beyond_the_deadline_defers_the_whole_host_unasked(farm: SiteFarm) -> None:
    site, other = farm.add_site("busy"), farm.add_site("other")
    for n in range(4):
        site.pages[f"/p{n}"] = Page(status=429, headers={"Retry-After": "4"}, then=[Page.html(HTML)])
    other.pages["/a"] = Page.html(HTML)
    started = time.monotonic()
    *busy, elsewhere = fetch_all(
        [*(site.url(f"/p{n}") for n in range(4)), other.url("/a")], settings(total_timeout_s=2, max_retry_wait_s=60)
    )
    # Before, each source of the host waited out the 4 s in turn and was asked once: 12.1 s.
    assert time.monotonic() - started < 2, "nothing waited for the 4 s asked"
    assert [(r.outcome, r.reason) for r in busy] == [("failed", "deferred")] * 4
    assert sum(site.requests[f"/p{n}"] for n in range(4)) == 1, "the host's other sources were not asked"
    assert "asked to wait 4 s (Retry-After), more than the " in (busy[1].message or "")
    assert "s left of the source's deadline (total_timeout_s 2 s); its sources wait" in (busy[1].message or "")
    assert elsewhere.outcome == "fetched", "other hosts go on"


def test_a_retry_after_within_the_deadline_holds_the_host_even_when_not_retried(site: Site) -> None:
    site.pages["/busy"] = Page(status=429, headers={"Retry-After": "1"})
    site.pages["/other"] = Page.html(HTML)
    busy, other = fetch_all([site.url("/busy"), site.url("/other")], settings(max_retries=0))
    assert (busy.reason, busy.attempts, other.outcome) == ("http-429", 1, "fetched")
    busy_start, other_start = sorted(site.started[1:])  # after robots.txt
    assert other_start - busy_start >= 0.95, "the host was held off as asked, though no retry followed"


def test_5xx_is_retried_then_reported(site: Site) -> None:
    site.pages["/flaky"] = Page(status=503, then=[Page(status=502), Page.html(HTML)])
    assert fetch(site.url("/flaky")).outcome == "fetched"
    site.pages["/down"] = Page(status=500)
    result = fetch(site.url("/down"))
    assert (result.outcome, result.reason, result.attempts) == ("failed", "http-500", 3)


def test_robots_txt_is_obeyed(site: Site) -> None:
    site.robots = "User-agent: *\nDisallow: /private/\n"
    site.pages["/private/pm"] = Page.html(HTML)
    site.pages["/public"] = Page.html(HTML)
    denied = fetch(site.url("/private/pm"))
    assert (denied.outcome, denied.reason) == ("failed", "robots")
    assert "robots.txt" in (denied.message or "") and site.requests["/private/pm"] == 0
    assert fetch(site.url("/public")).outcome == "fetched"


def test_robots_txt_is_read_once_per_host_even_with_parallel_requests(site: Site) -> None:
    site.robots = "User-agent: *\nDisallow: /private/\n"
    for n in range(4):
        site.pages[f"/private/{n}"] = Page.html(HTML)
        site.pages[f"/public/{n}"] = Page.html(HTML)
    urls = [site.url(f"/{kind}/{n}") for n in range(4) for kind in ("private", "public")]
    results = fetch_all(urls, settings(per_host_concurrency=2))
    assert site.requests["/robots.txt"] == 1
    assert [r.reason for r in results] == ["robots", None] * 4
    assert sum(site.requests[f"/private/{n}"] for n in range(4)) == 0


def test_robots_txt_redirects_are_followed(site: Site) -> None:
    site.pages["/robots.txt"] = Page.redirect("/meta/robots.txt")
    site.pages["/meta/robots.txt"] = Page(b"User-agent: *\nDisallow: /\n", content_type="text/plain")
    site.pages["/a"] = Page.html(HTML)
    assert fetch(site.url("/a")).reason == "robots"


def test_a_huge_robots_txt_is_read_only_as_far_as_the_limit(site: Site) -> None:
    site.pages["/robots.txt"] = Page.gzip_bomb(64 << 20)
    site.pages["/a"] = Page.html(HTML)
    assert fetch(site.url("/a")).outcome == "fetched"


def test_a_crawl_delay_beyond_the_limit_fails_the_host(site: Site) -> None:
    site.robots = "User-agent: *\nCrawl-delay: 3600\n"
    site.pages["/a"] = Page.html(HTML)
    result = fetch(site.url("/a"), settings(max_crawl_delay_s=60))
    assert (result.outcome, result.reason) == ("failed", "robots")
    assert "asks for 3600 s between requests" in (result.message or "") and site.requests["/a"] == 0


def test_a_broken_gzip_body_is_a_reason_not_a_crash(site: Site) -> None:
    site.pages["/bad"] = Page(b"not gzip at all", headers={"Content-Encoding": "gzip"})
    result = fetch(site.url("/bad"))
    assert (result.outcome, result.reason) == ("failed", "bad-response")


@pytest.mark.parametrize("url", ["http://a..b/x", "http://" + "x" * 64 + ".example/", "http://exa\u200bmple.com/"])
def test_a_url_that_cannot_be_fetched_is_a_reason_not_a_crash(url: str) -> None:
    result = fetch(url, settings(allow_private_hosts=False, max_retries=0))
    assert result.outcome == "failed" and result.reason in ("invalid-url", "connect-error")


def test_the_global_bound_holds_over_all_hosts(farm: SiteFarm) -> None:
    sites = [farm.add_site(f"h{n}", latency_s=0.05) for n in range(6)]
    for site in sites:
        site.pages["/a"] = Page.html(HTML)
    results = fetch_all([s.url("/a") for s in sites], settings(concurrency=2))
    assert all(r.outcome == "fetched" for r in results)
    assert farm.max_in_flight == 2


def test_a_failing_robots_txt_means_do_not_crawl(site: Site) -> None:
    site.pages["/robots.txt"] = Page(status=503)
    site.pages["/a"] = Page.html(HTML)
    result = fetch(site.url("/a"))
    assert (result.outcome, result.reason, site.requests["/a"]) == ("failed", "robots", 0)


def test_redirects_are_followed_and_loops_stopped(site: Site) -> None:
    site.pages["/old"] = Page.redirect("/new")
    site.pages["/new"] = Page.html(HTML)
    moved = fetch(site.url("/old"))
    assert (moved.outcome, moved.final_url) == ("fetched", site.url("/new"))
    site.pages["/a"] = Page.redirect("/b")
    site.pages["/b"] = Page.redirect("/a")
    assert fetch(site.url("/a")).reason == "redirect-loop"
    for n in range(10):
        site.pages[f"/hop{n}"] = Page.redirect(f"/hop{n + 1}")
    assert fetch(site.url("/hop0"), settings(max_redirects=3)).reason == "too-many-redirects"


def test_a_server_that_stalls_mid_body_times_out_once_not_once_per_try(site: Site) -> None:
    site.pages["/stall"] = Page.html("<p>" + "words " * 5000 + "</p>", behavior="stall")
    result = fetch(site.url("/stall"), settings(max_retries=3))
    assert (result.outcome, result.reason, result.attempts) == ("failed", "timeout", 1)
    assert "read timed out after 0.5 s" in (result.message or "")
    assert site.requests["/stall"] == 1, "a timeout is not retried"


def test_a_drip_fed_page_costs_one_deadline_in_all(site: Site) -> None:
    # A byte every 0.05 s: never a read timeout (0.5 s), never the end of the body.
    site.pages["/drip"] = Page.html("<p>" + "slow " * 2000 + "</p>", behavior="drip", drip_interval_s=0.05)
    started = time.monotonic()
    result = fetch(site.url("/drip"), settings(total_timeout_s=1.0, max_retries=3))
    elapsed = time.monotonic() - started
    assert (result.outcome, result.reason, site.requests["/drip"]) == ("failed", "timeout", 1)
    assert result.message == f"{site.url('/drip')}: took longer than 1 s in all (1 request)"
    assert 1.0 <= elapsed < 2.0, elapsed


def test_retries_and_their_waits_share_one_deadline(site: Site) -> None:
    site.pages["/down"] = Page(status=503)
    started = time.monotonic()
    result = fetch(site.url("/down"), settings(total_timeout_s=1.0, retry_backoff_s=0.4, max_retries=5))
    # Tries at 0 and 0.4 s; the next would wait 0.8 s more, past the deadline: it fails now instead.
    assert (result.reason, site.requests["/down"]) == ("http-503", 2)
    assert "a retry in 0.8 s would pass the deadline (1 s)" in (result.message or "")
    assert time.monotonic() - started < 1.0


def test_redirects_share_one_deadline(farm: SiteFarm) -> None:
    site = farm.add_site("slow", latency_s=0.3)
    for n in range(8):
        site.pages[f"/hop{n}"] = Page.redirect(f"/hop{n + 1}")
    result = fetch(site.url("/hop0"), settings(total_timeout_s=1.0, max_redirects=10))
    assert result.reason == "timeout"
    assert sum(site.requests[f"/hop{n}"] for n in range(8)) <= 4


def test_a_slow_page_holds_its_host_for_one_deadline_and_the_next_page_gets_its_own(site: Site) -> None:
    site.pages["/drip"] = Page.html("<p>" + "slow " * 2000 + "</p>", behavior="drip", drip_interval_s=0.05)
    site.pages["/next"] = Page.html(HTML)
    drip, after = fetch_all([site.url("/drip"), site.url("/next")], settings(total_timeout_s=1.0))
    assert (drip.reason, after.outcome) == ("timeout", "fetched"), "waiting for the host is not the page's time"
    drip_start, next_start = sorted(site.started[1:])  # after robots.txt
    assert 0.9 <= next_start - drip_start < 2.0


def test_a_page_that_never_ends_is_cut_off(site: Site) -> None:
    site.pages["/endless"] = Page(behavior="endless")
    result = fetch(site.url("/endless"))
    assert (result.outcome, result.reason) == ("failed", "too-large")
    assert "larger than 1000000 bytes" in (result.message or "")


def test_a_gzip_bomb_costs_no_more_than_the_limit_and_a_piece(site: Site) -> None:
    site.pages["/bomb"] = Page.gzip_bomb(256 << 20)
    assert len(site.pages["/bomb"].body) < 400_000
    site.pages["/small"] = Page.gzip_bomb(1 << 20)
    limit = 2_000_000
    fetch(site.url("/small"), settings(max_body_bytes=limit))  # what is imported on first use is not the bomb's
    result, peak = fetch_at_peak(site.url("/bomb"), settings(max_body_bytes=limit))
    assert (result.outcome, result.reason) == ("failed", "too-large")
    # httpx's own decoder inflates each 64 KiB read whole: 64 MB of zeros at once.
    assert peak < limit + (1 << 20), f"peak {peak / 2**20:.1f} MiB for a limit of {limit / 2**20:.1f} MiB"


def test_a_body_just_under_the_limit_costs_it_about_once(site: Site) -> None:
    limit = 4_000_000
    site.pages["/big"] = Page(b"x" * (limit - 1000), headers={"Content-Type": "text/plain"})
    site.pages["/small"] = Page.html(HTML)
    fetch(site.url("/small"), settings(max_body_bytes=limit))  # what is imported on first use is not the page's
    result, peak = fetch_at_peak(site.url("/big"), settings(max_body_bytes=limit))
    assert (result.outcome, result.bytes_read) == ("fetched", limit - 1000)
    # Pieces joined at the end held the body twice at once.
    assert peak < 1.5 * limit, f"peak {peak / 2**20:.1f} MiB for a body of {limit / 2**20:.1f} MiB"


@pytest.mark.parametrize(
    ("coding", "wbits"), [("gzip", 31), ("x-gzip", 31), ("deflate", zlib.MAX_WBITS), ("deflate", -zlib.MAX_WBITS)]
)
def test_compressed_bodies_are_decoded(site: Site, coding: str, wbits: int) -> None:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    body = HTML.encode() * 2000
    site.pages["/z"] = Page(compressor.compress(body) + compressor.flush(), headers={"Content-Encoding": coding})
    result = fetch(site.url("/z"))
    assert (result.outcome, result.body) == ("fetched", body)
    assert site.accept_encodings == {"gzip, deflate"}, "no br or zstd offered: only bounded decoders are used"


def test_a_coding_not_asked_for_is_a_reason(site: Site) -> None:
    site.pages["/br"] = Page(b"\x1b\x03\x00", headers={"Content-Encoding": "br"})
    result = fetch(site.url("/br"))
    assert (result.reason, result.message) == (
        "bad-response",
        f"{site.url('/br')}: served with Content-Encoding br, which was not asked for",
    )


def test_a_huge_page_is_cut_off(site: Site) -> None:
    site.pages["/huge"] = Page.html("<p>" + "x" * 3_000_000 + "</p>")
    result = fetch(site.url("/huge"))
    assert result.reason == "too-large"
    assert "declares 3000007 bytes, more than 1000000; not downloaded" in (result.message or "")


def test_a_type_it_cannot_read_is_refused_before_the_body(site: Site) -> None:
    site.pages["/logo.png"] = Page(b"\x89PNG" * 1000, content_type="image/png")
    result = fetch(site.url("/logo.png"))
    assert (result.outcome, result.reason) == ("failed", "unsupported-type")
    assert (result.body, result.bytes_read) == (None, 0), "no byte of the body was read"


FEED_TYPES = ("application/atom+xml", "application/rss+xml")


def test_a_feed_is_fetched_only_as_the_types_the_caller_reads(site: Site) -> None:
    site.pages["/feed.xml"] = Page(b"<feed xmlns='http://www.w3.org/2005/Atom'/>", content_type="application/atom+xml")
    site.pages["/index.html"] = Page.html(HTML)

    feed = fetch(site.url("/feed.xml"), accept=FEED_TYPES)
    page = fetch(site.url("/index.html"), accept=FEED_TYPES)
    as_a_page = fetch(site.url("/feed.xml"))

    assert (feed.outcome, feed.content_type) == ("fetched", "application/atom+xml")
    assert (page.outcome, page.reason, page.body, page.bytes_read) == ("failed", "unsupported-type", None, 0)
    assert page.message == (
        f"{site.url('/index.html')}: served text/html, which is not one of application/atom+xml, application/rss+xml"
    )
    assert (as_a_page.reason, as_a_page.message) == (
        "unsupported-type",
        f"{site.url('/feed.xml')}: served application/atom+xml, which is not a document incidentlib reads",
    )


def test_a_304_gives_back_the_validators_that_were_sent(site: Site) -> None:
    site.pages["/feed.xml"] = page = Page(b"<rss version='2.0'/>", content_type="application/rss+xml")
    site.pages["/bare"] = Page(status=304, content_type=None, conditional=False)  # a 304 repeating nothing
    date = "Mon, 01 Jan 2024 00:00:00 GMT"

    by_date = fetch(site.url("/feed.xml"), last_modified=page.last_modified, accept=FEED_TYPES)
    by_tag = fetch(site.url("/feed.xml"), etag=page.etag, last_modified=date, accept=FEED_TYPES)
    bare = fetch(site.url("/bare"), etag='"v1"', last_modified=date, accept=FEED_TYPES)

    assert (by_date.outcome, by_date.etag, by_date.last_modified) == ("not_modified", page.etag, page.last_modified)
    assert (by_tag.outcome, by_tag.etag, by_tag.last_modified) == ("not_modified", page.etag, date)
    assert (bare.outcome, bare.etag, bare.last_modified, bare.bytes_read) == ("not_modified", '"v1"', date, 0)
    assert site.bodies["/feed.xml"] == 0


def test_a_connection_refused_is_reported(farm: SiteFarm) -> None:
    site = farm.add_site("gone")
    url = site.url("/a")
    site.server.shutdown()
    site.server.server_close()
    result = fetch(url, settings(max_retries=1))
    assert (result.outcome, result.reason) == ("failed", "connect-error")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_private_addresses_are_refused_unless_allowed(site: Site, host: str) -> None:
    site.pages["/a"] = Page.html(HTML)
    url = f"http://{host}:{site.port}/a"
    refused = fetch(url, settings(allow_private_hosts=False))
    assert (refused.outcome, refused.reason) == ("failed", "private-address")
    assert (refused.message or "").startswith(f"{url}: {host} resolves to 127.0.0.1, a non-public address; refused")
    assert sum(site.requests.values()) == 0, "nothing reached the server, robots.txt included"
    assert fetch(url, settings(allow_private_hosts=True)).outcome == "fetched"


@pytest.mark.parametrize(
    "host",
    [
        "0177.0.0.1",
        "2130706433",
        "0x7f.0.0.1",
        "0x7F000001",
        "127.1",
        "127.0.1",
        "127.0.0.1.",
        "0",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::1]",
        "[::]",
        "localhost",
    ],
)
def test_every_spelling_of_a_private_address_is_refused_as_private(site: Site, host: str) -> None:
    site.pages["/a"] = Page.html(HTML)
    result = fetch(f"http://{host}:{site.port}/a", settings(allow_private_hosts=False))
    assert (result.outcome, result.reason) == ("failed", "private-address"), result.message
    assert sum(site.requests.values()) == 0


@pytest.mark.parametrize("host", ["0177.0.0.1", "2130706433", "0x7f.0.0.1", "127.1", "[::ffff:127.0.0.1]"])
def test_a_spelling_of_an_allowed_address_reaches_that_address(site: Site, host: str) -> None:
    site.pages["/a"] = Page.html(HTML)
    result = fetch(f"http://{host}:{site.port}/a", settings(allow_private_hosts=[ip_network("127.0.0.0/8")]))
    assert (result.outcome, result.final_url) == ("fetched", site.url("/a"))


@pytest.mark.parametrize("allow", [True, "127.0.0.0/8", "127.0.0.0/8,10.0.0.0/8,0.0.0.0/0"])
@pytest.mark.parametrize(
    "metadata",
    [
        "169.254.169.254",
        "0xa9fea9fe",
        "[::ffff:169.254.169.254]",
        "[fe80::1]",
        "100.100.100.200",
        "[fd00:ec2::254]",
        "[fd20:ce::254]",
        "[64:ff9b:1::a9fe:a9fe]",
    ],
)
def test_a_redirect_to_cloud_metadata_is_refused_with_loopback_allowed(site: Site, allow: str, metadata: str) -> None:
    config = settings(allow_private_hosts=allow)
    site.pages["/a"] = Page.html(HTML)
    site.pages["/meta"] = Page.redirect(f"http://{metadata}/latest/meta-data/iam/security-credentials/")
    assert fetch(site.url("/a"), config).outcome == "fetched", "loopback is allowed"
    result = fetch(site.url("/meta"), config)
    assert (result.outcome, result.reason) == ("failed", "private-address")
    assert "a non-public address; refused" in (result.message or "")


def test_only_the_networks_listed_are_allowed(site: Site) -> None:
    site.pages["/a"] = Page.html(HTML)
    assert fetch(site.url("/a"), settings(allow_private_hosts="127.0.0.1/32")).outcome == "fetched"
    asked = sum(site.requests.values())
    refused = fetch(site.url("/a"), settings(allow_private_hosts="10.1.0.0/16"))
    assert (refused.reason, sum(site.requests.values())) == ("private-address", asked)


@pytest.mark.parametrize(
    ("address", "allow", "allowed"),
    [
        ("8.8.8.8", False, True),
        ("10.1.2.3", False, False),
        ("10.1.2.3", True, True),
        ("169.254.169.254", True, False),
        ("fe80::1", True, False),
        ("::ffff:169.254.169.254", True, False),
        ("64:ff9b::a9fe:a9fe", True, False),  # NAT64 of the metadata address
        ("100.100.100.200", True, False),
        ("fd00:ec2::254", True, False),
        ("fd00:ec2::1", True, True),
        ("fd20:ce::254", True, False),  # Google Cloud's IPv6 metadata address
        ("fd20:ce::254", "fd00::/8", False),
        ("fd20:ce::254", "fd20:ce::254/128", True),
        ("64:ff9b:1::a9fe:a9fe", True, False),  # local-use NAT64 of the metadata address
        ("64:ff9b:1::a0a:a0a", True, True),  # local-use NAT64 of 10.10.10.10
        ("10.1.2.3", "10.1.0.0/16", True),
        ("10.2.0.1", "10.1.0.0/16", False),
        ("::ffff:10.1.2.3", "10.1.0.0/16", True),
        ("169.254.169.254", "0.0.0.0/0", False),  # a network around it does not name it
        ("169.254.169.254", "169.254.169.254/32", True),
        ("169.254.169.254", "169.254.0.0/16", True),
        ("fe80::1", "fe80::/10", True),
    ],
)
def test_what_allow_private_hosts_allows(address: str, allow: bool | str, allowed: bool) -> None:
    networks = allow if isinstance(allow, bool) else Settings(allow_private_hosts=allow).allow_private_hosts
    assert is_allowed_address(address, networks) is allowed


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("true", True),
        ("1", True),
        ("yes", True),
        ("false", False),
        ("0", False),
        ("", False),
        ("127.0.0.0/8,10.1.0.0/16", (ip_network("127.0.0.0/8"), ip_network("10.1.0.0/16"))),
        ("127.0.0.0/8, fe80::/10", (ip_network("127.0.0.0/8"), ip_network("fe80::/10"))),
        ('["127.0.0.0/8"]', (ip_network("127.0.0.0/8"),)),
        ("10.0.0.1", (ip_network("10.0.0.1/32"),)),
    ],
)
def test_allow_private_hosts_reads_a_switch_or_networks(monkeypatch: pytest.MonkeyPatch, value: str, read: Any) -> None:
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", value)
    assert Settings().allow_private_hosts == read


@pytest.mark.parametrize("value", ["sometimes", "10.1.2.3/16", "127.0.0.0/8,nowhere"])
def test_allow_private_hosts_refuses_what_it_cannot_read(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", value)
    with pytest.raises(
        ValidationError, match=r"expected true, false or networks such as 127\.0\.0\.0/8,10\.1\.0\.0/16"
    ):
        Settings()


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("100.100.100.200", False),  # shared address space, also used for metadata
        ("::1", False),
        ("fd00:ec2::254", False),
        ("::ffff:127.0.0.1", False),
        ("0.0.0.0", False),
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
        ("64:ff9b::808:808", True),  # NAT64 of 8.8.8.8
        ("64:ff9b:1::a9fe:a9fe", False),  # local-use NAT64 (RFC 8215) of 169.254.169.254
        ("64:ff9b:1:ab::a00:1", False),  # local-use NAT64 of 10.0.0.1
        ("64:ff9b:1::808:808", True),  # local-use NAT64 of 8.8.8.8
        ("64:ff9b:1:808:8:800::", False),  # 8.8.8.8 laid out for a /48 prefix: zeros where a /96 has it
        ("fd20:ce::254", False),  # Google Cloud's IPv6 metadata address
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("::127.0.0.1", False),  # IPv4-compatible
        ("fec0::1", False),  # site-local
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", False),  # Teredo whose client is 10.0.0.1
    ],
)
def test_what_counts_as_a_public_address(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_one_host_gets_one_request_at_a_time_spaced_by_the_delay(farm: SiteFarm) -> None:
    site = farm.add_site("polite", latency_s=0.02)
    for n in range(6):
        site.pages[f"/p{n}"] = Page.html(HTML)
    results = fetch_all([site.url(f"/p{n}") for n in range(6)], settings(per_host_delay_s=0.1, concurrency=8))
    assert all(r.outcome == "fetched" for r in results)
    assert site.max_in_flight == 1
    starts = sorted(site.started)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Turns are 0.1 s apart; a request reaches the server some ms after its turn (the first,
    # which makes the connection, later still; more under load), which shortens its gap and
    # lengthens the one before. The span of all the gaps is short by the first's lag alone.
    assert starts[-1] - starts[0] >= 0.1 * len(gaps) - 0.03, gaps
    assert min(gaps) >= 0.05, gaps


def test_hosts_are_fetched_in_parallel(farm: SiteFarm) -> None:
    sites = [farm.add_site(f"h{n}", latency_s=0.2) for n in range(4)]
    for site in sites:
        site.pages["/a"] = Page.html(HTML)
    results = fetch_all([s.url("/a") for s in sites], settings(concurrency=4))
    assert all(r.outcome == "fetched" for r in results)
    first_page_requests = [min(t for t in s.started) for s in sites]
    assert max(first_page_requests) - min(first_page_requests) < 0.2, "all four hosts started before one finished"


def test_crawl_delay_in_robots_txt_is_honoured(site: Site) -> None:
    site.robots = "User-agent: *\nCrawl-delay: 0.3\n"
    for n in range(3):
        site.pages[f"/p{n}"] = Page.html(HTML)
    fetch_all([site.url(f"/p{n}") for n in range(3)], settings(per_host_delay_s=0.0))
    starts = sorted(site.started)[1:]  # after robots.txt
    # The server notes each start a few ms after its turn, more under load: one gap can come out
    # short and the next long, so the span is what shows the delay (a fetcher with none: ~0 s).
    assert starts[-1] - starts[0] >= 0.58
    assert all(b - a >= 0.15 for a, b in itertools.pairwise(starts))


def test_github_blob_pages_are_fetched_as_their_raw_file() -> None:
    assert fetch_url_for("https://github.com/dfds/postmortems/blob/master/PM2020-007%20-%20Unhealthy%20nodes.md") == (
        "https://raw.githubusercontent.com/dfds/postmortems/master/PM2020-007%20-%20Unhealthy%20nodes.md"
    )
    assert fetch_url_for("https://github.com/org/repo/issues/12") == "https://github.com/org/repo/issues/12"
    assert fetch_url_for("https://blog.example.org/a") == "https://blog.example.org/a"


def test_a_stand_in_host_is_fetched_from_its_stand_in_and_reported_by_its_own_name(farm: SiteFarm) -> None:
    """The demo's public URLs (pipeline.fetch.standins): sent to a local site, named as they are,
    politeness, robots.txt and redirects as for the host itself; the address guard still decides."""
    github = farm.add_site("github")
    github.robots = "User-agent: *\nDisallow: /private/\n"
    github.pages["/acme/pm/raw/main/outage.md"] = Page.markdown("# Outage\n")
    github.pages["/acme/pm/moved.md"] = Page.redirect("/acme/pm/raw/main/outage.md")
    hosts = {"example.org": github.url("")}

    result = fetch("https://example.org/acme/pm/moved.md", settings(stand_in_hosts=hosts))
    assert (result.outcome, result.final_url, result.body) == (
        "fetched",
        "https://example.org/acme/pm/raw/main/outage.md",
        b"# Outage\n",
    )
    assert github.requests["/robots.txt"] == 1 and github.requests["/acme/pm/moved.md"] == 1
    refused = fetch("https://example.org/private/x", settings(stand_in_hosts=hosts))
    assert refused.reason == "robots"
    guarded = fetch("https://example.org/acme/pm/moved.md", settings(stand_in_hosts=hosts, allow_private_hosts=False))
    assert guarded.reason == "private-address"
    with pytest.raises(ValidationError, match="not a base URL"):
        settings(stand_in_hosts={"example.org": "127.0.0.1:8001/path"})
