"""The Wayback stand-in is as strict as the service: every behaviour it describes, over real HTTP.

The behaviours are those of pipeline/standins/wayback.py's docstring (and docs/archive.md, "The
local stand-in"), each from the service's documents or its users' recorded answers.

Each test talks to a stand-in on 127.0.0.1 with httpx, as a client would; pages come from the
site farm. Windows and jobs are made short through the constructor, and a job that takes time is
polled until it ends, under a deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote_plus

import httpx
import pytest
from helpers import ago

from pipeline.standins import spn
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.surt import surt_key

AUTH = {"Authorization": "LOW test-access:test-secret"}
PAGE = "<html><body><h1>Outage</h1><p>The gateway failed for an hour.</p></body></html>"
TOO_MANY = (
    b"<html><body><h1>429 Too Many Requests</h1>\n"
    b"You have sent too many requests in a given amount of time.\n</body></html>"
)
SESSION_LIMIT = {
    "status": "error",
    "status_ext": "error:user-session-limit",
    "message": "You have already reached the limit of active Save Page Now sessions. "
    "Please wait for a minute and then try again.",
}
BLOCKED = (
    "org.archive.util.io.RuntimeIOException: org.archive.wayback.exception.AdministrativeAccessControlException: "
    "Blocked Site Error"
)


# ------------------------------------------------------------ helpers


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("blog")
    for name in ("a", "b", "c", "d"):
        site.pages[f"/pm/{name}"] = Page.html(PAGE.replace("an hour", f"hour {name}"))
    return site


@pytest.fixture
def make() -> Iterator[Callable[..., WaybackStandIn]]:
    """Start a stand-in with the given settings (fast rates unless said); all are stopped after the test."""
    started: list[WaybackStandIn] = []

    def start(**settings: Any) -> WaybackStandIn:
        settings = {"captures_per_minute": 600, "cdx_per_minute": 600, **settings}
        standin = WaybackStandIn(WaybackRules(**settings))
        standin.start()
        started.append(standin)
        return standin

    yield start
    for standin in started:
        standin.stop()


@pytest.fixture
def client() -> Iterator[Callable[[WaybackStandIn], httpx.Client]]:
    opened: list[httpx.Client] = []

    def open_client(standin: WaybackStandIn) -> httpx.Client:
        opened.append(httpx.Client(base_url=standin.url, headers=AUTH, timeout=5.0, trust_env=False))
        return opened[-1]

    yield open_client
    for c in opened:
        c.close()


def submit(http: httpx.Client, url: str, **form: str) -> dict[str, Any]:
    response = http.post("/save", data={"url": url, **form}, headers={"Accept": "application/json"})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def status(http: httpx.Client, job_id: str) -> dict[str, Any]:
    response = http.get(f"/save/status/{job_id}")
    assert response.status_code == 200
    data: dict[str, Any] = response.json()
    return data


def finished(http: httpx.Client, job_id: str, deadline_s: float = 10.0) -> dict[str, Any]:
    """The job's status once it is no longer pending (polled, under a deadline)."""
    deadline = time.monotonic() + deadline_s
    while True:
        data = status(http, job_id)
        if data["status"] != "pending":
            return data
        assert time.monotonic() < deadline, f"job {job_id} still pending after {deadline_s} s"
        time.sleep(0.02)


def capture(http: httpx.Client, url: str, **form: str) -> dict[str, Any]:
    """Submit and wait for the job's end."""
    answer = submit(http, url, **form)
    assert answer.get("job_id"), answer
    return finished(http, answer["job_id"])


def user(http: httpx.Client) -> dict[str, Any]:
    data: dict[str, Any] = http.get("/save/status/user").json()
    return data


def cdx(http: httpx.Client, **params: str | int) -> httpx.Response:
    return http.get("/cdx/search/cdx", params=params)


def cdx_rows(http: httpx.Client, **params: str | int) -> list[list[str]]:
    response = cdx(http, **params, output="json")
    assert response.status_code == 200, response.text
    rows: list[list[str]] = response.json()
    return rows


def refused(http: httpx.Client, method: str, path: str) -> bool:
    try:
        http.request(method, path, data={"url": "http://example.com/"} if method == "POST" else None)
    except httpx.TransportError:
        return True
    return False


# ------------------------------------------------------------ 1. sessions and /save/status/user


def test_a_job_holds_its_session_from_submit_to_end_and_the_user_status_counts_it(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(sessions=2, job_seconds=(0.3, 0.5))
    http = client(wayback)
    first = submit(http, site.url("/pm/a"))
    missing = submit(http, site.url("/pm/missing"))  # a job that will fail holds its session as long
    assert set(first) == {"url", "job_id"} and first["job_id"].startswith("spn2-") and len(first["job_id"]) == 45
    assert user(http) == {"processing": 2, "available": 0, "daily_captures": 2, "daily_captures_limit": 30_000}
    assert submit(http, site.url("/pm/b")) == SESSION_LIMIT
    assert status(http, first["job_id"]) == {"status": "pending", "job_id": first["job_id"], "resources": []}

    done = finished(http, first["job_id"])
    assert done["status"] == "success" and 0.3 <= done["duration_sec"] <= 0.5
    assert finished(http, missing["job_id"])["status"] == "error"
    assert user(http) == {"processing": 0, "available": 2, "daily_captures": 2, "daily_captures_limit": 30_000}
    assert submit(http, site.url("/pm/b"))["job_id"], "a session freed by the job's end takes the next"


def test_a_refused_submit_uses_no_quota(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(sessions=1, job_seconds=5)
    http = client(wayback)
    submit(http, site.url("/pm/a"))
    assert submit(http, site.url("/pm/b")) == SESSION_LIMIT
    assert user(http)["daily_captures"] == 1


def test_bad_or_missing_keys_answer_401(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    wrong = {"Authorization": "LOW test-access:wrong"}
    assert http.post("/save", data={"url": site.url("/pm/a")}, headers=wrong).status_code == 401
    assert http.get("/save/status/user", headers=wrong).status_code == 401
    assert httpx.post(f"{wayback.url}/save", data={"url": site.url("/pm/a")}).status_code == 401
    assert wayback.captures == []


# ------------------------------------------------------------ 2. rates, 429 and the firewall


def test_over_the_capture_rate_a_429_page_without_retry_after(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(captures_per_minute=2, rate_window_s=0.5, dedupe_s=0)
    http = client(wayback)
    for name in ("a", "b"):
        assert submit(http, site.url(f"/pm/{name}"))["job_id"]
    throttled = http.post("/save", data={"url": site.url("/pm/c")})
    assert throttled.status_code == 429 and throttled.content == TOO_MANY
    assert throttled.headers["content-type"] == "text/html" and "retry-after" not in throttled.headers
    time.sleep(0.5)  # the window slides past the first two
    assert submit(http, site.url("/pm/c"))["job_id"]
    assert wayback.counts["429"] == 1


def test_429s_ignored_too_long_get_connections_refused_on_every_endpoint_for_a_doubling_time(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(captures_per_minute=1, ban_after_s=0.2, ban_s=0.4)
    http = client(wayback)
    assert submit(http, site.url("/pm/a"))["job_id"]

    def ignore_429s_until_refused() -> float:
        start = time.monotonic()
        while not refused(http, "POST", "/save"):
            assert time.monotonic() - start < 5, "never refused"
        return time.monotonic() - start

    assert ignore_429s_until_refused() > 0.2
    assert wayback.firewall.bans == [0.4]
    assert refused(http, "GET", "/cdx/search/cdx?url=example.com")
    assert refused(http, "GET", "/save/status/user")
    banned = time.monotonic()
    while refused(http, "GET", "/save/status/user"):  # the ban runs out by itself
        assert time.monotonic() - banned < 5
    assert 0.3 < time.monotonic() - banned <= 1.0

    assert http.post("/save", data={"url": site.url("/pm/b")}).status_code == 429  # the minute is still full
    ignore_429s_until_refused()
    assert wayback.firewall.bans == [0.4, 0.8], "each later ban doubles"
    assert wayback.counts["refused"] >= 4


def test_the_cdx_rate_answers_the_same_429_and_shares_the_firewall(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    wayback = make(cdx_per_minute=2, ban_after_s=0.1, ban_s=30)
    http = client(wayback)
    assert cdx(http, url="example.com").status_code == 200
    assert cdx(http, url="example.com").status_code == 200
    throttled = cdx(http, url="example.com")
    assert (throttled.status_code, throttled.content, throttled.headers.get("retry-after")) == (429, TOO_MANY, None)
    start = time.monotonic()
    while not refused(http, "GET", "/cdx/search/cdx?url=example.com"):
        assert time.monotonic() - start < 5
    assert refused(http, "POST", "/save"), "the block is the client's, not the endpoint's"


# ------------------------------------------------------------ 3, 4. dedupe and if_not_archived_within


def test_the_same_url_within_the_hour_answers_the_earlier_job_and_its_older_capture(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    url = site.url("/pm/a")
    first = capture(http, url)
    site.pages["/pm/a"] = Page.html("<p>Rewritten since.</p>")
    again = submit(http, url + "#timeline")  # another spelling of the same SURT key
    assert again == {
        "url": url + "#timeline",
        "job_id": first["job_id"],
        "message": "The same snapshot had been made 0 minutes ago. You can make new capture of this URL after 1 hour.",
    }
    assert finished(http, again["job_id"]) == first, "the earlier success, with its older timestamp"
    assert len(wayback.captures_of(url)) == 1
    assert user(http)["daily_captures"] == 1 and user(http)["processing"] == 0


def test_the_dedupe_says_how_long_ago_in_minutes_and_ends_with_its_window(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(dedupe_s=0.3)
    http = client(wayback)
    url = site.url("/pm/a")
    earlier = wayback.add_capture(url, ago(seconds=150))
    assert earlier.job_id
    answer = submit(http, url)
    assert answer["job_id"] != earlier.job_id, "older than the window: captured anew"
    later = submit(http, url)
    assert later["job_id"] == answer["job_id"] and later["message"].startswith("The same snapshot had been made 0 ")
    time.sleep(0.3)  # the window passes
    newest = capture(http, url)
    assert newest["job_id"] != answer["job_id"] and newest["timestamp"] > finished(http, answer["job_id"])["timestamp"]

    wayback.dedupe_s = 3600
    assert submit(http, site.url("/pm/b") + "?")["job_id"]  # nothing to dedupe against
    wayback.add_capture(site.url("/pm/c"), ago(seconds=150))
    message = submit(http, site.url("/pm/c"))["message"]
    assert (
        message == "The same snapshot had been made 2 minutes ago. You can make new capture of this URL after 1 hour."
    )


@pytest.mark.parametrize(
    ("within", "after"), [("3d", "72 hours"), ("15h", "15 hours"), ("86400", "24 hours"), ("30m", None), ("3600", None)]
)
def test_if_not_archived_within_answers_a_recent_capture_without_a_job_or_timestamp(
    make: Callable[..., WaybackStandIn],
    client: Callable[[WaybackStandIn], httpx.Client],
    site: Site,
    within: str,
    after: str | None,
) -> None:
    wayback = make()
    http = client(wayback)
    url = site.url("/pm/a")
    wayback.add_capture(url, ago(seconds=90 * 60))
    reply = submit(http, url, if_not_archived_within=within)
    if after is None:  # the capture is older than asked: a new one
        assert reply["job_id"] and finished(http, reply["job_id"])["status"] == "success"
    else:
        message = (
            "The same snapshot had been made 1 hour, 30 minutes ago. "
            f"You can make new capture of this URL after {after}."
        )
        assert reply == {"url": url, "job_id": None, "message": message}
        assert len(wayback.captures_of(url)) == 1 and user(http)["daily_captures"] == 0


# ------------------------------------------------------------ 5. daily caps and quotas


def test_five_captures_of_a_url_a_day_then_too_many_daily_captures(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(dedupe_s=0)
    http = client(wayback)
    url = site.url("/pm/a")
    for _ in range(5):
        assert capture(http, url)["status"] == "success"
    assert submit(http, url) == {
        "status": "error",
        "status_ext": "error:too-many-daily-captures",
        "message": "This URL has been already captured 5 times today, which is a daily limit we have set for that "
        'Resource type. Please try again tomorrow. Please email us at "info@archive.org" if you would like to '
        "discuss this more.",
    }
    assert capture(http, site.url("/pm/b"))["status"] == "success", "another URL is not held back"


def test_the_account_quota_counts_every_accepted_submit(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(daily_quota=2)
    http = client(wayback)
    assert capture(http, site.url("/pm/a"))["status"] == "success"
    assert capture(http, site.url("/pm/missing"))["status"] == "error"  # failed, yet counted
    assert submit(http, site.url("/pm/b")) == {
        "status": "error",
        "message": "You cannot make more than 2 captures per day.",
    }
    assert user(http) == {"processing": 0, "available": 3, "daily_captures": 2, "daily_captures_limit": 2}


def test_a_paused_host_is_refused_at_submit(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site, farm: SiteFarm
) -> None:
    wayback = make()
    http = client(wayback)
    wayback.failures.host_quota = {f"127.0.0.1:{site.port}"}
    assert submit(http, site.url("/pm/a")) == {
        "status": "error",
        "message": "Crawling this host is paused because they notified us that they are overloaded right now.",
    }
    other = farm.add_site("other")
    other.pages["/x"] = Page.html(PAGE)
    assert capture(http, other.url("/x"))["status"] == "success"


# ------------------------------------------------------------ 6. what a capture is


@pytest.mark.parametrize(
    ("code", "status_ext"),
    [
        (404, "error:not-found"),
        (410, "error:not-found"),
        (403, "error:no-access"),
        (401, "error:unauthorized"),
        (502, "error:bad-gateway"),
        (503, "error:service-unavailable"),
        (504, "error:gateway-timeout"),
    ],
)
def test_a_page_other_than_200_is_captured_only_with_capture_all(
    make: Callable[..., WaybackStandIn],
    client: Callable[[WaybackStandIn], httpx.Client],
    site: Site,
    code: int,
    status_ext: str,
) -> None:
    wayback = make(dedupe_s=0)
    http = client(wayback)
    site.pages["/err"] = Page(b"no", status=code)
    url = site.url("/err")
    failed = capture(http, url)
    assert {k: failed[k] for k in ("status", "status_ext", "resources")} == {
        "status": "error",
        "status_ext": status_ext,
        "resources": [],
    }
    assert failed["message"].endswith(f" (HTTP status={code}).") and set(failed) >= {"job_id", "message"}
    assert wayback.captures_of(url) == []
    for flag in ("1", "on"):
        kept = capture(http, url, capture_all=flag)
        assert (kept["status"], kept["http_status"]) == ("success", code)
    assert [c.statuscode for c in wayback.captures_of(url)] == [code, code]
    assert capture(http, url, capture_all="0")["status"] == "error", "only 1 or on count"


def test_three_redirects_are_followed_a_fourth_is_not(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    for n in range(1, 5):
        site.pages[f"/hop{n}"] = Page.redirect(f"/hop{n + 1}" if n < 4 else "/pm/a", status=301 if n % 2 else 302)
    done = capture(http, site.url("/hop2"))  # three redirects
    assert set(done) == {
        "counters",
        "delay_wb_availability",
        "duration_sec",
        "first_archive",
        "http_status",
        "job_id",
        "original_url",
        "outlinks",
        "resources",
        "status",
        "timestamp",
    }
    assert (done["status"], done["original_url"], done["http_status"]) == ("success", site.url("/pm/a"), 200)
    assert done["first_archive"] is True and len(done["timestamp"]) == 14 and done["timestamp"].isdigit()
    (held,) = wayback.captures_of(site.url("/hop2"))
    assert (held.original, held.requested) == (site.url("/pm/a"), site.url("/hop2"))
    too_many = capture(http, site.url("/hop1"))  # four
    assert (too_many["status_ext"], too_many["message"]) == (
        "error:too-many-redirects",
        "Too many redirects. SPN2 tries to follow 3 redirects automatically.",
    )


def test_an_unresolvable_host_ends_as_the_document_shows(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(make())
    answer = capture(http, "http://no-such-host.invalid/page")
    assert {k: answer[k] for k in ("status", "exception", "status_ext", "message", "resources")} == {
        "status": "error",
        "exception": "[Errno -2] Name or service not known",
        "status_ext": "error:invalid-host-resolution",
        "message": "Couldn't resolve host for http://no-such-host.invalid/page.",
        "resources": [],
    }


# ------------------------------------------------------------ 7. job memory


def test_a_forgotten_or_unknown_job_answers_the_default_pending_body(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(job_memory_s=0.3)
    http = client(wayback)
    job_id = capture(http, site.url("/pm/a"))["job_id"]
    time.sleep(0.3)  # the job's memory runs out
    assert status(http, job_id) == {"job_id": job_id, "resources": [], "status": "pending"}
    assert status(http, "spn2-" + "0" * 40) == {"job_id": "spn2-" + "0" * 40, "resources": [], "status": "pending"}
    assert len(wayback.captures_of(site.url("/pm/a"))) == 1, "the capture outlives the job's memory"


# ------------------------------------------------------------ 8. switches


@pytest.mark.parametrize("code", sorted(spn.JOB_MESSAGES))
def test_every_documented_status_ext_is_available_with_its_text(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site, code: str
) -> None:
    wayback = make()
    http = client(wayback)
    url = site.url("/pm/a")
    wayback.failures.job_errors[url] = f"error:{code}"
    answer = capture(http, url)
    status_code = spn.CODE_STATUS.get(code, 0)
    assert answer["status_ext"] == f"error:{code}"
    assert answer["message"] == spn.JOB_MESSAGES[code].format(url=url, status=status_code)
    if code in spn.CODE_STATUS:
        assert answer["message"].endswith(f" (HTTP status={status_code}).")
    assert wayback.captures_of(url) == []


def test_switches_of_the_submit(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(dedupe_s=0)
    http = client(wayback)
    f = wayback.failures
    f.storm_429 = 1
    storm = http.post("/save", data={"url": site.url("/pm/a")})
    assert (storm.status_code, storm.content) == (429, TOO_MANY)
    f.session_limit = 1
    assert submit(http, site.url("/pm/a")) == SESSION_LIMIT
    f.error_in_200 = 1
    assert submit(http, site.url("/pm/a")) == {
        "status": "error",
        "status_ext": "error:internal-server-error",
        "message": "The server encountered an internal error and was unable to complete your request.",
    }
    f.error_after_capture = 1
    gateway = http.post("/save", data={"url": site.url("/pm/a")})
    assert gateway.status_code == 502 and gateway.headers["content-type"] == "text/html"
    assert len(wayback.captures_of(site.url("/pm/a"))) == 1, "the capture went through all the same"
    f.stuck_pending = True
    stuck = submit(http, site.url("/pm/b"))["job_id"]
    assert status(http, stuck)["status"] == "pending" and user(http)["processing"] == 1
    f.stuck_pending = False
    assert finished(http, stuck)["status"] == "success"
    f.expire_jobs = True
    assert status(http, stuck) == {"job_id": stuck, "resources": [], "status": "pending"}


def test_a_delayed_start_is_accepted_and_stays_pending_holding_its_session(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(sessions=1)
    http = client(wayback)
    wayback.failures.delayed_start = 1
    answer = submit(http, site.url("/pm/a"))
    assert answer["message"] == (
        "The capture will start in ~1 hour, 0 minutes because our service is currently overloaded. "
        "You may close your browser window and the page will still be saved."
    )
    assert status(http, answer["job_id"])["status"] == "pending"
    assert submit(http, site.url("/pm/b")) == SESSION_LIMIT

    shorter = make()
    http = client(shorter)
    shorter.failures.delay_s, shorter.failures.delayed_start = 0.3, 1
    start = time.monotonic()
    short = submit(http, site.url("/pm/b"))
    assert short["message"].startswith("The capture will start in ~0 seconds because")
    assert finished(http, short["job_id"])["status"] == "success" and time.monotonic() - start >= 0.3


def test_an_outage_and_html_errors_reach_every_endpoint(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    wayback.failures.html_5xx, wayback.failures.html_5xx_status = 2, 503
    for path in ("/save/status/user", "/cdx/search/cdx?url=example.com"):
        answer = http.get(path)
        assert answer.status_code == 503 and answer.headers["content-type"] == "text/html"
        assert b"<h1>503 Service Temporarily Unavailable</h1>" in answer.content
    assert http.get("/save/status/user").status_code == 200
    wayback.down_for(0.3)
    assert refused(http, "GET", "/save/status/user") and refused(http, "POST", "/save")
    start = time.monotonic()
    while refused(http, "GET", "/wayback/available?url=example.com"):
        assert time.monotonic() - start < 5
    assert capture(http, site.url("/pm/a"))["status"] == "success"


# ------------------------------------------------------------ 9. the index (CDX)


@pytest.fixture
def indexed(make: Callable[..., WaybackStandIn]) -> WaybackStandIn:
    """Captures spelt many ways, with histories that make key order and time order differ."""
    wayback = make()
    wayback.add_capture("https://www.Example.com:443/Docs/A", "20200101000000", b"a1")
    wayback.add_capture("http://example.com/docs/a", "20240101000000", b"a2")
    wayback.add_capture("https://example.com/docs/b", "20210101000000", b"b1")
    wayback.add_capture("https://example.com/docs/c", "20190101000000", b"c1")
    wayback.add_capture("https://example.com/docs-old/z", "20250101000000", b"z1")
    return wayback


def test_rows_carry_urlkeys_in_key_then_time_order_and_exact_lookups_ignore_spelling(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    expected = [
        ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"],
        ["com,example)/docs/a", "20200101000000", "https://www.Example.com:443/Docs/A", "text/html", "200"],
        ["com,example)/docs/a", "20240101000000", "http://example.com/docs/a", "text/html", "200"],
    ]
    for spelling in ("example.com/docs/a", "HTTPS://WWW.EXAMPLE.COM/docs/a", "http://example.com:80/Docs/A#x"):
        rows = cdx_rows(http, url=spelling)
        assert [r[:5] for r in rows[1:]] == [e[:5] for e in expected[1:]] and rows[0] == expected[0]
    text = cdx(http, url="example.com/docs/a")
    assert text.headers["content-type"] == "text/plain;charset=UTF-8"
    assert [line.split(" ")[:2] for line in text.text.splitlines()] == [
        ["com,example)/docs/a", "20200101000000"],
        ["com,example)/docs/a", "20240101000000"],
    ]
    assert cdx_rows(http, url="example.com/nothing") == [] and cdx(http, url="example.com/nothing").text == ""


def test_prefix_lookups_use_the_surt_range_and_limits_count_in_key_order(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    keys = [r[0] for r in cdx_rows(http, url="https://example.com/docs/", matchType="prefix", fl="urlkey")[1:]]
    assert keys == ["com,example)/docs/a", "com,example)/docs/a", "com,example)/docs/b", "com,example)/docs/c"]
    assert cdx_rows(http, url="example.com/docs/*", fl="urlkey") == cdx_rows(
        http, url="example.com/docs/", matchType="prefix", fl="urlkey"
    )
    stamps = [r[1] for r in cdx_rows(http, url="example.com/docs", matchType="prefix", fl="urlkey,timestamp")[1:]]
    assert "20250101000000" in stamps, "without its slash a folder also covers /docs-old/"

    def limited(limit: int) -> list[list[str]]:
        return cdx_rows(http, url="example.com/docs/", matchType="prefix", fl="urlkey,timestamp", limit=limit)[1:]

    assert limited(2) == [["com,example)/docs/a", "20200101000000"], ["com,example)/docs/a", "20240101000000"]]
    # The last two in key order: not the newest two captures (2024 and 2021).
    assert limited(-2) == [["com,example)/docs/b", "20210101000000"], ["com,example)/docs/c", "20190101000000"]]
    assert limited(-1) == [["com,example)/docs/c", "20190101000000"]]
    assert cdx_rows(http, url="example.com/docs/a", fl="timestamp", limit=-1) == [["timestamp"], ["20240101000000"]]


def test_resume_keys_page_through_a_large_answer(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    query: dict[str, str | int] = {
        "url": "example.com/docs/",
        "matchType": "prefix",
        "limit": 2,
        "showResumeKey": "true",
    }
    first = cdx(http, **query, fl="urlkey,timestamp").text
    key = quote_plus("com,example)/docs/a 2024010100000" + chr(ord("0") + 1))
    assert first == f"com,example)/docs/a 20200101000000\ncom,example)/docs/a 20240101000000\n\n{key}\n"
    second = cdx_rows(http, **query, fl="urlkey,timestamp", resumeKey=key)
    key2 = quote_plus("com,example)/docs/c 20190101000001")
    assert second == [
        ["urlkey", "timestamp"],
        ["com,example)/docs/b", "20210101000000"],
        ["com,example)/docs/c", "20190101000000"],
        [],
        [key2],
    ]
    raw = cdx(http, **query, fl="urlkey,timestamp", resumeKey=key, output="json").text
    assert raw.endswith(f',\n[],\n["{key2}"]]\n')
    assert cdx(http, **query, resumeKey=key2).text == "", "the page after the last key may be empty"
    assert (
        cdx(http, url="example.com/docs/", matchType="prefix", limit=10, showResumeKey="true").text.count("\n\n") == 0
    )


def test_fields_filters_and_time_bounds(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    base: dict[str, str | int] = {"url": "example.com/docs/", "matchType": "prefix"}
    assert cdx_rows(http, **base, fl="timestamp,urlkey", limit=1) == [
        ["timestamp", "urlkey"],
        ["20200101000000", "com,example)/docs/a"],
    ]
    assert cdx_rows(http, **base, filter="statuscode:2") == [], "a filter matches the whole field"
    assert len(cdx_rows(http, **base, filter="statuscode:2..")) == 5
    assert len(cdx_rows(http, **base, filter="!original:.*/docs/a")) == 4, "negated; `original` as captured"
    assert [r[0] for r in cdx_rows(http, **base, fl="original", filter="~original:Docs")[1:]] == [
        "https://www.Example.com:443/Docs/A"
    ]
    bounded = cdx_rows(http, **base, fl="timestamp", **{"from": "2020", "to": "2021"})
    assert bounded == [["timestamp"], ["20200101000000"], ["20210101000000"]]
    collapsed = cdx_rows(http, **base, fl="urlkey", collapse="urlkey")
    assert collapsed == [["urlkey"], ["com,example)/docs/a"], ["com,example)/docs/b"], ["com,example)/docs/c"]]


def test_an_unchanged_recapture_is_a_revisit_row(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make(dedupe_s=0)
    http = client(wayback)
    url = site.url("/pm/a")
    for _ in range(2):
        capture(http, url)
    site.pages["/pm/a"] = Page.html("<p>Changed.</p>")
    capture(http, url)
    rows = cdx_rows(http, url=url, fl="mimetype,statuscode,digest")[1:]
    assert [r[:2] for r in rows] == [["text/html", "200"], ["warc/revisit", "-"], ["text/html", "200"]]
    assert rows[0][2] == rows[1][2] != rows[2][2]
    assert [r[:2] for r in cdx_rows(http, url=url, fl="mimetype,statuscode", resolveRevisits="true")[1:]] == [
        ["text/html", "200"]
    ] * 3
    assert [c.revisit for c in wayback.captures_of(url)] == [False, True, False]


def test_a_blocked_site_answers_403_blocked_site_error(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    indexed.failures.blocked_hosts = {"example.com"}
    for url in ("https://www.example.com/docs/a", "sub.example.com/x/*"):
        answer = cdx(http, url=url)
        assert (answer.status_code, answer.headers["content-type"], answer.text) == (
            403,
            "text/plain;charset=UTF-8",
            BLOCKED + "\n",
        )
        assert answer.headers["x-archive-wayback-runtime-error"] == BLOCKED
    assert cdx(http, url="example.org/").status_code == 200


def test_malformed_rows_can_be_injected(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    indexed.failures.bad_rows = {"https://example.com/docs/b": "timestamp", "https://example.com/docs/c": "fields"}
    lines = cdx(http, url="example.com/docs/", matchType="prefix").text.splitlines()
    assert [line.split(" ")[:2] for line in lines] == [
        ["com,example)/docs/a", "20200101000000"],
        ["com,example)/docs/a", "20240101000000"],
        ["com,example)/docs/b", "20000012170449"],
        ["com,example)/docs/b", "20210101000000"],
        ["com,example)/docs/c", "20000101000000"],
        ["com,example)/docs/c", "20190101000000"],
    ]
    assert [len(line.split(" ")) for line in lines] == [7, 7, 7, 7, 6, 7]
    assert cdx(http, url="example.com/docs/a").text.count("\n") == 2, "only the URL's own answers carry it"


def test_new_captures_reach_the_index_after_the_lag(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    url = site.url("/pm/a")
    wayback.add_capture(url, ago(seconds=7200))
    wayback.failures.cdx_lag_s = 3600
    fresh = capture(http, url)
    assert len(cdx_rows(http, url=url)) == 2, "only the old capture"
    nearest = http.get(f"/web/{fresh['timestamp']}/{url}")
    assert nearest.status_code == 302 and nearest.headers["location"] != f"/web/{fresh['timestamp']}/{url}"
    wayback.failures.cdx_lag_s = 0
    assert len(cdx_rows(http, url=url)) == 3
    delayed = capture(http, site.url("/pm/b"), delay_wb_availability="1")
    assert delayed["delay_wb_availability"] is True and cdx_rows(http, url=site.url("/pm/b")) == []


# ------------------------------------------------------------ 10. playback and availability


def test_playback_and_availability_find_captures_by_urlkey(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    exact = http.get("/web/20240101000000/https://www.example.com/Docs/a")
    assert exact.status_code == 200 and exact.headers["memento-datetime"] == "Mon, 01 Jan 2024 00:00:00 GMT"
    raw = http.get("/web/20200101000000id_/example.com/docs/a")
    assert raw.content == b"a1"
    elsewhere = http.get("/web/2023/http://example.com/docs/a")
    assert (elsewhere.status_code, elsewhere.headers["location"]) == (
        302,
        "/web/20240101000000/http://example.com/docs/a",
    )
    assert http.get("/web/20240101000000id_/example.com/docs/zzz").status_code == 404
    available = http.get("/wayback/available", params={"url": "WWW.example.com/docs/a", "timestamp": "2019"}).json()
    assert available["archived_snapshots"]["closest"]["timestamp"] == "20200101000000"
    assert http.get("/wayback/available", params={"url": "example.com/nope"}).json()["archived_snapshots"] == {}


def test_playback_replays_a_captures_archived_status_with_memento_datetime(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    wayback = make()
    http = client(wayback)
    for stamp, status in (("20230101000000", 404), ("20230102000000", 429), ("20230103000000", 503)):
        wayback.add_capture("https://forum.example/r/a", stamp, b"the forum said %d" % status, statuscode=status)
        answer = http.get(f"/web/{stamp}id_/https://forum.example/r/a")
        assert (answer.status_code, answer.content) == (status, b"the forum said %d" % status)
        assert answer.headers["memento-datetime"].startswith(
            datetime.strptime(stamp, "%Y%m%d%H%M%S").strftime("%a, %d")
        )
    rows = cdx_rows(http, url="forum.example/r/a")
    assert [row[4] for row in rows[1:]] == ["404", "429", "503"], "the index lists them with their status"


def test_redirect_captures_are_held_listed_and_replayed_as_archived_redirects(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    wayback = make()
    http = client(wayback)
    wayback.add_capture("https://www.energy.example/", "20240301000000", b"<p>home</p>")
    held = wayback.add_capture("http://energy.example/", "20240501000000", b"moved", statuscode=301, location="/home")
    assert held.location == "http://energy.example/home"
    assert [row[4] for row in cdx_rows(http, url="energy.example/")[1:]] == ["200", "301"]
    raw = http.get("/web/20240501000000id_/http://energy.example/")
    assert (raw.status_code, raw.headers["location"]) == (301, f"{wayback.url}/web/20240501000000id_/{held.location}")
    assert "memento-datetime" in raw.headers
    view = http.get("/web/20240501000000/http://energy.example/")
    assert view.headers["location"] == f"{wayback.url}/web/20240501000000/{held.location}"
    # The archive's own redirect to the nearest capture is no memento.
    nearest = http.get("/web/2024/http://energy.example/")
    assert nearest.status_code == 302 and "memento-datetime" not in nearest.headers
    assert nearest.headers["x-archive-redirect-reason"] == "found capture at 20240301000000"


def test_an_excluded_url_is_answered_with_the_exclusion_page(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    indexed.failures.excluded_urls = {"https://example.com/docs/a"}
    answer = http.get("/web/20240101000000id_/http://www.example.com/docs/a")
    assert answer.status_code == 200 and "memento-datetime" not in answer.headers
    assert "This URL has been excluded from the Wayback Machine." in answer.text
    assert len(cdx_rows(http, url="example.com/docs/a")) == 3, "the index still lists its captures"
    assert http.get("/web/20210101000000id_/https://example.com/docs/b").content == b"b1"


def test_rows_with_no_url_and_newer_unreadable_timestamps_can_be_injected(
    indexed: WaybackStandIn, client: Callable[[WaybackStandIn], httpx.Client]
) -> None:
    http = client(indexed)
    indexed.failures.bad_rows = {"https://example.com/docs/a": "newer-timestamp,mailto,relative"}
    rows = [line.split(" ") for line in cdx(http, url="example.com/docs/a").text.splitlines()]
    assert [(row[1], row[2]) for row in rows] == [
        ("20200101000000", "https://www.Example.com:443/Docs/A"),
        ("20240101000000", "http://example.com/docs/a"),
        ("20240101000000", "http://mailto:webmaster@example.com/"),
        ("20240101000000", "/docs/a"),
        ("20250800241623", "https://example.com/docs/a"),
    ]
    assert {row[0] for row in rows} == {"com,example)/docs/a"}


# ------------------------------------------------------------ 11. defaults and the Python interface


def test_the_defaults_are_the_services() -> None:
    wayback = WaybackStandIn()
    try:
        assert (wayback.captures_per_minute, wayback.cdx_per_minute, wayback.sessions) == (7, 30, 3)
        assert (wayback.per_url_daily, wayback.daily_quota, wayback.dedupe_s) == (5, 30_000, 3600)
        assert (wayback.job_seconds, wayback.job_memory_s, wayback.ban_after_s, wayback.ban_s) == (0, 3600, 60, 3600)
    finally:
        wayback.server.server_close()
        wayback._http.close()


def test_captures_of_matches_by_urlkey_and_by_the_url_submitted(
    make: Callable[..., WaybackStandIn], client: Callable[[WaybackStandIn], httpx.Client], site: Site
) -> None:
    wayback = make()
    http = client(wayback)
    site.pages["/old"] = Page.redirect("/pm/a")
    capture(http, site.url("/old"))
    assert len(wayback.captures_of(site.url("/old"))) == 1
    assert len(wayback.captures_of(site.url("/pm/a") + "#x")) == 1
    assert wayback.captures_of(site.url("/pm/a"))[0].urlkey == surt_key(site.url("/pm/a"))
    assert json.loads(json.dumps(wayback.counts))["save"] == 1
