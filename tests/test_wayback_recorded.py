"""The archive client against answers the real service gives (tests/fixtures/wayback/), replayed on loopback.

Each test runs the library's own call (the client's index, jobs, playback) against a fixture's
answers, in order, and checks what the client made of them and that it asked exactly what the
fixture expects: nothing else, nothing left unasked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wayback_replay import Fixture, Replay, fixtures, load

from pipeline.settings import Settings
from pipeline.wayback import CdxResult, WaybackClient


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
