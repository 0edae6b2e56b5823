"""The archive client against answers the real service gives (tests/fixtures/wayback/), replayed on loopback.

Each test runs the library's own call (the client's index, jobs, playback, the archive run's
lookup) against a fixture's answers, in order, and checks what the client made of them and
that it asked exactly what the fixture expects: nothing else, nothing left unasked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, urlsplit

import pytest
from wayback_replay import Fixture, Replay, fixtures, load

from pipeline.capture import Archiver, Step, judgement
from pipeline.errors import ArchivedErrorPage, WaybackError, WaybackExcluded, WaybackThrottled
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.surt import surt_key
from pipeline.wayback import ArchiveRequest, CdxResult, CdxRow, JobState, UserStatus, WaybackClient

T = TypeVar("T")


def replay_settings(root: Path, replay: Replay) -> Settings:
    return Settings(
        root=root,
        wayback_url=replay.url,
        wayback_public_url="https://web.archive.org",
        wayback_access_key="replay-access",
        wayback_secret_key="replay-secret",
        cdx_per_minute=60_000,
        captures_per_minute=60_000,
        status_polls_per_minute=60_000,
        breaker_backoff_s=0.05,
    )


def index(root: Path, fixture: Fixture) -> tuple[CdxResult, Replay]:
    async def run(replay: Replay) -> CdxResult:
        async with WaybackClient(replay_settings(root, replay)) as client:
            return await client.index(fixture.expect["url"])

    with Replay(fixture) as replay:
        result = asyncio.run(run(replay))
    assert replay.unexpected == [] and replay.left == 0, (replay.unexpected, replay.left)
    return result, replay


@pytest.mark.parametrize("name", fixtures())
def test_every_fixture_says_where_its_answer_comes_from(name: str) -> None:
    provenance = load(name).provenance
    assert {"repository", "commit", "path", "licence", "written"} <= set(provenance), name
    assert all(provenance[key].strip() for key in ("repository", "commit", "path", "licence", "written"))


def test_the_replay_answers_only_the_request_expected_next(root: Path) -> None:
    fixture = load("cdx-resume-pages")

    async def ask_twice_for_the_first_page(replay: Replay) -> list[int]:
        async with WaybackClient(replay_settings(root, replay)) as client:
            params = [("url", "https://status.example/"), ("showResumeKey", "true")]
            first = await client.call(ArchiveRequest("cdx", "GET", "/cdx/search/cdx", params=params))
            again = await client.call(ArchiveRequest("cdx", "GET", "/cdx/search/cdx", params=params))
            return [first.status_code, again.status_code]

    with Replay(fixture) as replay:
        assert asyncio.run(ask_twice_for_the_first_page(replay)) == [200, 418]
    assert len(replay.unexpected) == 1 and replay.left == 2


def test_a_blocked_site_is_said_blocked_not_an_error(root: Path) -> None:
    result, _ = index(root, load("cdx-blocked-site"))
    assert result.blocked and result.rows == []


def test_every_page_is_read_and_each_resume_key_goes_back_as_the_service_gave_it(root: Path) -> None:
    fixture = load("cdx-resume-pages")
    result, replay = index(root, fixture)
    url = fixture.expect["url"]
    assert len(result.rows_for(url)) == fixture.expect["rows"]
    assert sum(row.revisit for row in result.rows_for(url)) == fixture.expect["revisits"]
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"]
    # The key travels percent-encoded once more, as edgi's client sends it: %2C goes as %252C.
    assert "resumeKey=example%252Cstatus%2529%252F%2B2024010200000%253A" in replay.requests[1][1]


def played(root: Path, fixture: Fixture, calls: Callable[[WaybackClient], Awaitable[T]]) -> tuple[T, Replay, float]:
    """`calls` run against the fixture's answers: what they gave, the replay, and the breaker's wait after."""

    async def run(replay: Replay) -> tuple[T, float]:
        async with WaybackClient(replay_settings(root, replay)) as client:
            return await calls(client), client.breaker.wait()

    with Replay(fixture) as replay:
        got, wait = asyncio.run(run(replay))
    assert replay.unexpected == [] and replay.left == 0, (replay.unexpected, replay.left)
    return got, replay, wait


async def _bytes_then_resolves(client: WaybackClient, stamp: str, url: str) -> tuple[BaseException | bytes, bool]:
    try:
        got: BaseException | bytes = await client.capture_bytes(stamp, url)
    except WaybackError as exc:
        got = exc
    return got, await client.resolves(f"https://web.archive.org/web/{stamp}/{url}")


def test_an_archived_429_is_the_pages_history_not_the_services_trouble(root: Path) -> None:
    fixture = load("web-archived-429")
    stamp, url = fixture.expect["timestamp"], fixture.expect["url"]
    (got, leads), _, wait = played(root, fixture, lambda c: _bytes_then_resolves(c, stamp, url))
    assert isinstance(got, ArchivedErrorPage) and got.status == fixture.expect["status"]
    assert not isinstance(got, WaybackThrottled)
    assert leads, "a memento is a capture, whatever its archived status"
    assert wait == 0, "the breaker stays closed"


@pytest.mark.parametrize("name", ["web-archived-redirect", "web-archived-redirect-not-rewritten"])
def test_an_archived_redirect_is_followed_to_its_targets_capture(root: Path, name: str) -> None:
    """Whether its Location is rewritten into the archive or the page's own (even with `/web/` in
    its path: only the archive's host, or a bare path, names an archive path)."""
    fixture = load(name)
    stamp, url = fixture.expect["timestamp"], fixture.expect["url"]
    body, replay, wait = played(root, fixture, lambda c: c.capture_bytes(stamp, url))
    assert body.decode() == fixture.expect["body"]
    assert len(replay.requests) == fixture.expect["requests"] and wait == 0


def test_the_exclusion_page_is_never_a_captures_bytes(root: Path) -> None:
    fixture = load("web-excluded")
    stamp, url = fixture.expect["timestamp"], fixture.expect["url"]
    (got, leads), _, _ = played(root, fixture, lambda c: _bytes_then_resolves(c, stamp, url))
    assert isinstance(got, WaybackExcluded) and url in str(got)
    assert not leads


def test_the_newest_capture_is_the_newest_page_not_a_redirect(root: Path) -> None:
    fixture = load("cdx-newest-redirect")
    result, _ = index(root, fixture)
    url = fixture.expect["url"]
    assert len(result.rows_for(url)) == fixture.expect["rows"]
    assert [result.status_of(row) for row in result.rows_for(url)] == ["200", "200", "301", "301"]
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"]


def test_the_archive_run_reuses_the_newest_page_not_a_redirect(root: Path) -> None:
    fixture = load("cdx-newest-redirect")

    async def newest(client: WaybackClient) -> CdxRow | None:
        # As every caller of the run asks: a capture since a moment (here, before every row).
        since = datetime(2024, 1, 1, tzinfo=UTC)
        return await Archiver(client.settings, client, _save_nothing).newest(fixture.expect["url"], since)

    row, replay, _ = played(root, fixture, newest)
    assert row is not None and row.timestamp == fixture.expect["newest"]
    assert "from=20240101000000" in replay.requests[0][1]


def test_a_revisit_whose_repeated_capture_is_older_than_the_lookup_is_resolved(root: Path) -> None:
    """The lookup since a moment holds a revisit, not the 301 it repeats: one lookup more, up to the
    revisit with its digest, says it is a redirect's re-capture, and no page."""
    fixture = load("cdx-revisit-of-old-redirect")

    async def newest(client: WaybackClient) -> CdxRow | None:
        since = datetime.strptime(fixture.expect["since"], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        return await Archiver(client.settings, client, _save_nothing).newest(fixture.expect["url"], since)

    row, replay, _ = played(root, fixture, newest)
    assert row is None and len(replay.requests) == 2
    assert "from=" not in replay.requests[1][1], "what it repeats may be of any time before it"


async def _save_nothing(draft_id: str | None, url: str, step: Step) -> None:
    """The archive run's save, for a lookup that saves nothing."""


def test_rows_whose_original_is_no_url_are_dropped(root: Path) -> None:
    fixture = load("cdx-not-urls")
    result, _ = index(root, fixture)
    url = fixture.expect["url"]
    assert len(result.rows_for(url)) == fixture.expect["rows"] and result.dropped == fixture.expect["dropped"]
    assert all(row.original.startswith("https://www.agency.example/") for row in result.rows_for(url))
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"] and "mailto" not in newest.link


def test_newer_unreadable_rows_keep_an_older_one_from_being_called_the_newest(root: Path) -> None:
    fixture = load("cdx-bad-timestamps")

    async def folder(client: WaybackClient) -> CdxResult:
        return await client.index(fixture.expect["url"], prefix=True)

    result, _, _ = played(root, fixture, folder)
    unsure, sure = fixture.expect["unsure"], fixture.expect["sure"]
    assert not result.readable(unsure) and result.newest(unsure) is None
    assert len(result.rows_for(unsure)) == 2, "its readable rows stand"
    assert sorted(row.stamp for row in result.unreadable_rows[surt_key(unsure)]) == fixture.expect["legible"]
    # An unreadable row older than every readable one changes nothing.
    newest = result.newest(sure)
    assert result.readable(sure) and newest is not None and newest.timestamp == fixture.expect["sure_newest"]


# ---- Save Page Now


def spn(root: Path, fixture: Fixture, call: Callable[[WaybackClient], Awaitable[T]]) -> tuple[T, Replay]:
    """`call` run with a client against the fixture's answers; every answer asked for, nothing else."""
    got, replay, _ = played(root, fixture, call)
    return got, replay


def test_a_submit_answered_with_a_job_is_that_job(root: Path) -> None:
    fixture = load("spn-submit-job")
    answer, _ = spn(root, fixture, lambda client: client.submit(fixture.expect["url"], not_within_s=None))
    assert (answer.job_id, answer.error, answer.earlier, answer.delayed) == (
        fixture.expect["job_id"],
        None,
        False,
        False,
    )


def test_a_pending_job_is_pending(root: Path) -> None:
    fixture = load("spn-job-pending")
    job, _ = spn(root, fixture, lambda client: client.job(fixture.expect["job_id"]))
    assert (job.status, job.error, job.timestamp) == ("pending", None, None)


def test_a_job_success_gives_its_capture_and_the_url_after_redirects(root: Path) -> None:
    fixture = load("spn-job-success")
    job, _ = spn(root, fixture, lambda client: client.job(fixture.expect["job_id"]))
    expect = fixture.expect
    assert (job.status, job.timestamp, job.original_url, job.http_status) == (
        "success",
        expect["timestamp"],
        expect["original_url"],
        expect["http_status"],
    )


def test_a_job_error_keeps_its_code_as_the_reason_and_the_message_as_the_detail(root: Path) -> None:
    fixture = load("spn-job-error")
    job, _ = spn(root, fixture, lambda client: client.job(fixture.expect["job_id"]))
    assert (job.status, job.error) == ("error", Reason(fixture.expect["reason"]))
    assert judgement(Reason(fixture.expect["reason"])) == "waits", "no-captures is no answer of the source"
    assert fixture.expect["detail_has"] in (job.detail or "")


def test_a_job_that_ends_with_its_host_paused_is_the_hosts_pause_whichever_field_says_it(root: Path) -> None:
    fixture = load("spn-job-host-paused")

    async def both(client: WaybackClient) -> list[JobState]:
        return [await client.job(job_id) for job_id in fixture.expect["jobs"]]

    jobs, _ = spn(root, fixture, both)
    assert [(j.status, j.error) for j in jobs] == [("error", Reason.HOST_QUOTA)] * 2
    assert judgement(Reason.HOST_QUOTA) == "pauses the host"
    assert all("(http status=429)" in (j.detail or "") for j in jobs)


def test_a_session_limit_refusal_is_the_accounts(root: Path) -> None:
    fixture = load("spn-session-limit")
    answer, _ = spn(root, fixture, lambda client: client.submit(fixture.expect["url"], not_within_s=None))
    assert (answer.job_id, answer.error) == (None, Reason(fixture.expect["reason"]))


def test_the_accounts_status_is_asked_with_the_cache_busting_query(root: Path) -> None:
    fixture = load("spn-status-user")
    before = time.time()
    status, replay = spn(root, fixture, lambda client: client.user_status())
    assert status == UserStatus(**fixture.expect)
    sent = dict(parse_qsl(urlsplit(replay.requests[0][1]).query))
    assert before * 1000 - 1000 <= int(sent["_t"]) <= time.time() * 1000 + 1000, "_t is now, in milliseconds"


def test_an_error_inside_a_200_submit_is_the_services(root: Path) -> None:
    fixture = load("spn-submit-error-in-200")
    answer, _ = spn(root, fixture, lambda client: client.submit(fixture.expect["url"], not_within_s=None))
    assert (answer.job_id, answer.error) == (None, Reason(fixture.expect["reason"]))
    assert judgement(Reason.SERVICE_ERROR) == "waits"
