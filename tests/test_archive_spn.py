"""How an archive run judges each way Save Page Now ends a job, against the stand-in, and the manual's
table of every code (docs/archive.md) against the code: only a source's own answer can fail it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from helpers import ArchiveRoot, archive_settings, archive_states, drafts_for
from manual import section

from pipeline.archive import archive
from pipeline.capture import archived_status_reason, judgement
from pipeline.models import ArchiveStatus
from pipeline.reasons import Reason
from pipeline.standins import spn
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import HOST_PAUSED_END, NO_STATUS_EXT, WaybackStandIn
from pipeline.store import Store
from pipeline.wayback.client import read_job, spn_reason

HTML = "<html><body><h1>Outage</h1><p>The broker lost its quorum for {n} minutes.</p></body></html>"
# What the manual's last column says for each judgement.
DOES = {
    "fails": "fails the source",
    "attempt": "counts an attempt",
    "stops submitting": "stops submitting",
    "pauses the host": "pauses the host",
    "waits": "waits",
}


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("status")
    for n in range(4):
        site.pages[f"/pm/{n}"] = Page.html(HTML.format(n=n))
    return site


def table() -> list[tuple[str, str, str, str]]:
    """The rows of the manual's table of every Save Page Now code."""
    text = section("archive.md", "## Only a source's own answer can fail it")
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert rows and rows[0] == "| SPN code | reason | whose trouble | what the run does |"
    cells = [tuple(cell.strip() for cell in row.strip("|").split("|")) for row in rows[1:]]
    assert all(len(c) == 4 for c in cells)
    return [(c[0], c[1], c[2], c[3]) for c in cells]


def test_the_manuals_table_of_every_code_says_what_the_code_does() -> None:
    rows = table()
    coded = {code.strip("`").removeprefix("error:"): (reason.strip("`"), does) for code, reason, _, does in rows}
    # Every code the stand-in can end a job with (the SPN2 document's, and no-captures) has its row.
    assert set(spn.JOB_MESSAGES) <= set(coded)
    for code, (reason, does) in coded.items():
        if code.startswith(("a code", "an error", "a job's", '"')):
            continue
        assert spn_reason(code)[0] == reason, code
        assert does.startswith(DOES[judgement(Reason(reason))]), (code, does)
    others = {code: (reason.strip("`"), does) for code, reason, _, does in rows if not code.startswith("`")}
    unknown = read_job({"status": "error", "status_ext": "error:never-documented", "message": ""})
    without = read_job({"status": "error", "message": spn.BROWSER_CRASHED.format(url="https://a.example/")})
    paused = read_job({"status": "error", "status_ext": spn.HOST_PAUSED_JOB, "message": ""})
    for row, job in (
        ("a code incidentlib does not know", unknown),
        ("an error without a code", without),
        ('"Crawling this host is paused …"', paused),
    ):
        reason, does = others[row]
        assert job.error == reason and does.startswith(DOES[judgement(Reason(reason))]), row
    for status in (404, 503, 429):
        kind = "429" if status == 429 else f"{str(status)[0]}xx"
        reason, does = others[f"a job's success with the page's {kind}"]
        assert archived_status_reason(status) == reason and does.startswith(DOES[judgement(Reason(reason))])
    assert "bounded" in next(whose for code, _, whose, _ in rows if code.startswith("a code")), "why it counts"


@pytest.mark.parametrize(
    ("status", "reason", "attempts"),
    [(404, Reason.ARCHIVED_ERROR_PAGE, 0), (503, Reason.ARCHIVED_SERVER_ERROR, 1), (429, Reason.TOO_MANY_REQUESTS, 0)],
)
def test_a_job_that_captured_the_pages_error_is_judged_by_its_status(
    archive_root: ArchiveRoot, site: Site, status: int, reason: Reason, attempts: int
) -> None:
    """The service captures an error page (`http_status` 4xx or 5xx) unasked: the page's status is
    its server's answer, judged by the one rule (a 5xx is its trouble now, a 429 the host's throttle)."""
    store, root, wayback = archive_root.store, archive_root.root, archive_root.wayback
    url = site.url("/pm/0")
    site.pages["/pm/0"] = Page(b"busy", status=status)
    drafts_for(store, url)
    wayback.failures.capture_errors = True
    (source,) = archive(store, archive_settings(root, wayback, in_run_retries=0)).sources
    state = archive_states(store)[url]
    assert (state.reason, state.detail, state.attempts) == (reason, f"HTTP {status}", attempts)
    failed = judgement(reason) == "fails"
    assert state.status == (ArchiveStatus.FAILED if failed else ArchiveStatus.PENDING)
    assert source.outcome == ("failed" if failed else "waiting")


@pytest.mark.parametrize(
    "code",
    [
        "bad-request",
        "bandwidth-limit-exceeded",
        "blocked-client-ip",
        "ftp-access-denied",
        "http-version-not-supported",
        "method-not-allowed",
        "not-implemented",
        "network-authentication-required",
    ],
)
def test_each_documented_code_is_judged_by_whose_answer_it_is(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, code: str
) -> None:
    first, second = site.url("/pm/0"), site.url("/pm/1")
    drafts_for(store, first, second)
    wayback.failures.job_errors[first] = f"error:{code}"
    # One session: the first job ends before the second source is submitted.
    report = archive(store, archive_settings(root, wayback, capture_sessions=1, in_run_retries=0))
    state, reason = archive_states(store)[first], Reason(code)
    words = spn.JOB_MESSAGES[code].split("{", 1)[0][:40]
    assert state.reason == reason and words in (state.detail or ""), "the service's own words are kept"
    judged = judgement(reason)
    if judged == "fails":
        assert state.status == ArchiveStatus.FAILED
    else:
        assert state.status == ArchiveStatus.PENDING
        assert state.attempts == (1 if judged == "attempt" else 0), "only the source's own answer counts"
    if judged == "stops submitting":
        assert report.problem == reason and wayback.counts["save"] == 1
        assert archive_states(store)[second].status == ArchiveStatus.PENDING
    else:
        assert report.problem is None and archive_states(store)[second].status == ArchiveStatus.CAPTURED


def test_a_job_that_ends_with_its_host_paused_pauses_the_host_for_the_run(
    store: Store, root: Path, site: Site, farm: SiteFarm, wayback: WaybackStandIn
) -> None:
    other = farm.add_site("other")
    other.pages["/pm/x"] = Page.html(HTML.format(n=9))
    paused = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *paused, other.url("/pm/x"))
    wayback.failures.job_errors[paused[0]] = HOST_PAUSED_END
    settings = archive_settings(root, wayback, capture_sessions=1)
    report = archive(store, settings)
    outcome = {s.url: (s.outcome, s.reason) for s in report.sources}
    assert {outcome[url] for url in paused} == {("waiting", Reason.HOST_QUOTA)}
    assert outcome[other.url("/pm/x")] == ("captured", None)
    assert wayback.counts["save"] == 2, "the job's end paused the host's other sources unsubmitted"
    states = archive_states(store)
    assert all(states[url].attempts == 0 for url in paused), "the host's pause is no answer of the source"
    assert "crawling this host is paused" in (states[paused[0]].detail or "")
    # The next run, the host no longer paused, captures every source that waited.
    wayback.failures.job_errors.clear()
    assert archive(store, settings).counts()["captured"] == 3


def test_no_captures_and_a_job_error_without_a_code_wait_without_an_attempt(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    nothing, uncoded = site.url("/pm/0"), site.url("/pm/1")
    drafts_for(store, nothing, uncoded)
    wayback.failures.job_errors.update({nothing: "error:no-captures", uncoded: NO_STATUS_EXT})
    settings = archive_settings(root, wayback, max_capture_attempts=1)
    for _ in range(2):  # one attempt would fail them at once: none is counted
        report = archive(store, settings)
        assert {(s.url, s.outcome, s.reason) for s in report.sources} == {
            (nothing, "waiting", Reason.NO_CAPTURES),
            (uncoded, "waiting", Reason.SERVICE_ERROR),
        }
    states = archive_states(store)
    assert states[nothing].attempts == states[uncoded].attempts == 0
    assert "may be blocking access" in (states[nothing].detail or "")
    assert "browser crashed" in (states[uncoded].detail or "")
    wayback.failures.job_errors.clear()
    assert archive(store, settings).counts()["captured"] == 2


def test_the_stand_in_neither_requires_nor_refuses_the_cache_busting_query(wayback: WaybackStandIn) -> None:
    """The client sends `_t` (test_wayback_recorded.py checks it against the recorded answer); the
    stand-in must answer the same with it as without."""
    auth = {"Authorization": "LOW test-access:test-secret", "Accept": "application/json"}
    with httpx.Client(base_url=wayback.url, headers=auth, trust_env=False) as http:
        bare = http.get("/save/status/user")
        busted = http.get("/save/status/user", params={"_t": "1602606392499"})
    assert bare.status_code == busted.status_code == 200
    assert bare.json() == busted.json() and bare.json()["available"] == wayback.sessions
    assert wayback.counts["user"] == 2


def test_a_host_paused_in_the_code_itself_is_the_hosts_pause() -> None:
    """One real job end carries the pause as its status_ext, not as a code: read the same."""
    job = read_job({"status": "error", "status_ext": spn.HOST_PAUSED_JOB, "job_id": "spn2-" + "a" * 40})
    assert job.error == Reason.HOST_QUOTA and job.detail and re.search("http status=429", job.detail)
