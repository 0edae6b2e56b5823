"""The archive client against answers the real service gives (tests/fixtures/wayback/), replayed on loopback.

Each test runs the library's own call (the client's index, jobs, playback, the archive run's
lookup) against a fixture's answers, in order, and checks what the client made of them and
that it asked exactly what the fixture expects: nothing else, nothing left unasked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from wayback_replay import Fixture, Replay, fixtures, load

from pipeline.capture import Archiver, Step
from pipeline.errors import ArchivedErrorPage, WaybackError, WaybackExcluded, WaybackThrottled
from pipeline.settings import Settings
from pipeline.surt import surt_key
from pipeline.wayback import CdxResult, CdxRow, WaybackClient

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


def test_an_archived_redirect_is_followed_to_its_targets_capture(root: Path) -> None:
    fixture = load("web-archived-redirect")
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
    assert len(result.of(url)) == fixture.expect["rows"]
    assert [result.status_of(row) for row in result.of(url)] == ["200", "200", "301", "301"]
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"]


def test_the_archive_run_reuses_the_newest_page_not_a_redirect(root: Path) -> None:
    fixture = load("cdx-newest-redirect")

    async def newest(client: WaybackClient) -> CdxRow | None:
        return await Archiver(client.settings, client, _save_nothing).newest(fixture.expect["url"])

    row, _, _ = played(root, fixture, newest)
    assert row is not None and row.timestamp == fixture.expect["newest"]


async def _save_nothing(draft_id: str | None, url: str, step: Step) -> None:
    """The archive run's save, for a lookup that saves nothing."""


def test_rows_whose_original_is_no_url_are_dropped(root: Path) -> None:
    fixture = load("cdx-not-urls")
    result, _ = index(root, fixture)
    url = fixture.expect["url"]
    assert len(result.of(url)) == fixture.expect["rows"] and result.dropped == fixture.expect["dropped"]
    assert all(row.original.startswith("https://www.agency.example/") for row in result.of(url))
    newest = result.newest(url)
    assert newest is not None and newest.timestamp == fixture.expect["newest"] and "mailto" not in newest.link


def test_newer_unreadable_rows_keep_an_older_one_from_being_called_the_newest(root: Path) -> None:
    fixture = load("cdx-bad-timestamps")

    async def folder(client: WaybackClient) -> CdxResult:
        return await client.index(fixture.expect["url"], prefix=True)

    result, _, _ = played(root, fixture, folder)
    unsure, sure = fixture.expect["unsure"], fixture.expect["sure"]
    assert not result.readable(unsure) and result.newest(unsure) is None
    assert len(result.of(unsure)) == 2, "its readable rows stand"
    assert sorted(row.stamp for row in result.unreadable_rows[surt_key(unsure)]) == fixture.expect["legible"]
    # An unreadable row older than every readable one changes nothing.
    newest = result.newest(sure)
    assert result.readable(sure) and newest is not None and newest.timestamp == fixture.expect["sure_newest"]
