"""The archive client against answers the real service gives (tests/fixtures/wayback/), replayed on loopback.

Each test runs the library's own call (the client's index, jobs, playback) against a fixture's
answers, in order, and checks what the client made of them and that it asked exactly what the
fixture expects: nothing else, nothing left unasked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, urlsplit

import pytest
from wayback_replay import Fixture, Replay, fixtures, load

from pipeline.capture import judgement
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.wayback import CdxResult, JobState, UserStatus, WaybackClient

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
            first = await client.call("cdx", "GET", "/cdx/search/cdx", None, params=params)
            again = await client.call("cdx", "GET", "/cdx/search/cdx", None, params=params)
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
    assert len(result.of(url)) == fixture.expect["rows"]
    assert sum(row.revisit for row in result.of(url)) == fixture.expect["revisits"]
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"]
    # The key travels percent-encoded once more, as edgi's client sends it: %2C goes as %252C.
    assert "resumeKey=example%252Cstatus%2529%252F%2B2024010200000%253A" in replay.requests[1][1]


# ---- Save Page Now


def spn(root: Path, fixture: Fixture, call: Callable[[WaybackClient], Awaitable[T]]) -> tuple[T, Replay]:
    """`call` run with a client against the fixture's answers; every answer asked for, nothing else."""

    async def run(replay: Replay) -> T:
        async with WaybackClient(replay_settings(root, replay)) as client:
            return await call(client)

    with Replay(fixture) as replay:
        result = asyncio.run(run(replay))
    assert replay.unexpected == [] and replay.left == 0, (replay.unexpected, replay.left)
    return result, replay


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
