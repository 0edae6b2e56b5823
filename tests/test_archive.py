"""Archiving against the Wayback stand-in: every failure of the reference, survived, nothing lost."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from helpers import ago, archive_settings, drafts_for, pipes, settings_env

from pipeline.archive import archive
from pipeline.draft import new_draft
from pipeline.models import ArchiveState, SourceEntry, utc_now
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store

pytestmark = pytest.mark.runs_long(40)  # seconds in all: such modules start first (conftest.py)

HTML = "<html><body><h1>Outage</h1><p>The gateway failed for an hour after a deploy.</p></body></html>"


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("blog")
    for n in range(3):
        site.pages[f"/pm/{n}"] = Page.html(HTML.replace("an hour", f"{n} hours"))
    return site


def distinct_pages(farm: SiteFarm, name: str, count: int) -> list[str]:
    """A site of `count` pages that differ from each other, and their URLs."""
    site = farm.add_site(name)
    for n in range(count):
        site.pages[f"/pm/{n}"] = Page.html(HTML.replace("an hour", f"{n} hours"))
    return [site.url(f"/pm/{n}") for n in range(count)]


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {outcome: n for outcome, n in counts.items() if n}


def states(store: Store) -> dict[str, tuple[str, str | None, str | None]]:
    return {s.url: (s.archive.status, s.archive.reason, s.archived) for d in store.drafts() for s in d.sources}


def test_every_source_is_captured_then_confirmed_then_left_alone(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    settings = archive_settings(root, wayback)

    first = archive(store, settings)
    assert first.counts()["captured"] == 3
    for url in urls:
        (capture,) = wayback.captures_of(url)
        source = next(s for d in store.drafts() for s in d.sources if s.url == url)
        assert source.archived == f"https://web.archive.org/web/{capture.timestamp}/{url}"
        # Attempts count only the page's own trouble; a capture that went through used none.
        assert (source.archive.status, source.archive.confirmed, source.archive.attempts) == ("captured", False, 0)

    second = archive(store, settings)
    assert second.counts()["confirmed"] == 3 and second.requests["save"] == 0
    third = archive(store, settings)
    assert third.sources == [] and sum(third.requests.values()) == 0


def test_a_recent_capture_is_reused(store: Store, root: Path, site: Site, wayback: WaybackStandIn) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    archive(store, archive_settings(root, wayback))
    other = Store(root.parent / "other")
    drafts_for(other, url)
    report = archive(other, archive_settings(other.root, wayback, reuse_capture_within_s=86400))
    assert report.counts()["reused"] == 1 and report.requests["save"] == 0
    assert len(wayback.captures_of(url)) == 1


def test_without_keys_it_looks_up_and_waits(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    captured, new = site.url("/pm/0"), site.url("/pm/1")
    archive(Store(root.parent / "earlier"), archive_settings(root.parent / "earlier", wayback))  # nothing there yet
    drafts_for(Store(root.parent / "earlier"), captured)
    archive(Store(root.parent / "earlier"), archive_settings(root.parent / "earlier", wayback))
    drafts_for(store, captured, new)
    caplog.set_level(logging.WARNING, logger="incidentlib.archive")
    keyless = archive_settings(
        root, wayback, wayback_access_key=None, wayback_secret_key=None, reuse_capture_within_s=86400
    )
    report = archive(store, keyless)
    assert report.keys is False
    assert states(store)[captured][0] == "captured"
    assert states(store)[new][:2] == ("pending", "no-keys")
    assert [r.message for r in caplog.records].count(
        "archive: no archive keys; looking up existing captures only, new ones wait"
    ) == 1


def test_bad_keys_capture_nothing_and_say_so(store: Store, root: Path, site: Site, wayback: WaybackStandIn) -> None:
    drafts_for(store, site.url("/pm/0"))
    report = archive(store, archive_settings(root, wayback, wayback_secret_key="wrong"))
    assert report.keys is False
    assert states(store)[site.url("/pm/0")][:2] == ("pending", "bad-keys")
    assert wayback.captures == [] and wayback.counts["save"] == 0


def test_a_429_storm_pauses_everyone_and_loses_nothing(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    wayback.failures.storm_429 = 2
    settings = archive_settings(root, wayback)
    for _ in range(3):
        archive(store, settings)
    assert all(state[0] == "captured" for state in states(store).values())
    assert all(len(wayback.captures_of(u)) == 1 for u in urls)
    assert wayback.counts["429"] == 2, "after the first 429 everyone backed off"


def test_a_5xx_after_a_capture_finds_the_capture_instead_of_making_another(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.error_after_capture = 1
    report = archive(store, archive_settings(root, wayback))
    assert report.counts()["captured"] == 1
    assert len(wayback.captures_of(url)) == 1 and wayback.counts["save"] == 1


def test_a_job_stuck_pending_is_kept_and_polled_next_time(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.stuck_pending = True
    archive(store, archive_settings(root, wayback, poll_timeout_s=0.1))
    source = next(store.drafts()).sources[0]
    assert (source.archive.status, source.archive.reason) == ("pending", "job-pending")
    job_id = source.archive.job_id
    assert job_id in wayback.jobs
    wayback.failures.stuck_pending = False
    archive(store, archive_settings(root, wayback))
    assert states(store)[url][0] == "captured"
    assert wayback.counts["save"] == 1, "the same job was polled, not a new one submitted"


def test_a_forgotten_job_is_kept_as_pending_not_failed(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.expire_jobs = True  # the service answers the default pending body
    report = archive(store, archive_settings(root, wayback, poll_timeout_s=0.2))
    assert report.counts()["submitted"] == 1 and wayback.counts["save"] == 1
    source = next(store.drafts()).sources[0]
    assert (source.archive.status, source.archive.reason, source.archive.attempts) == ("pending", "job-pending", 0)
    assert source.archive.job_id is not None


def left_by_an_earlier_run(store: Store, url: str, hours_ago: float) -> None:
    """A draft whose source an earlier run submitted `hours_ago` and never saw to its end."""
    draft = new_draft(SourceEntry(url=url))
    submitted = ArchiveState(
        reason="job-submitted", job_id="spn2-0123456789abcdef", job_submitted_at=utc_now() - timedelta(hours=hours_ago)
    )
    source = draft.sources[0].model_copy(update={"archive": submitted})
    store.write_draft(draft.model_copy(update={"sources": [source]}))


def test_a_job_older_than_the_services_memory_is_looked_up_in_the_index(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    left_by_an_earlier_run(store, url, hours_ago=2)
    made = (utc_now() - timedelta(hours=2) + timedelta(minutes=1)).strftime("%Y%m%d%H%M%S")
    wayback.add_capture(url, made, b"<html>the page as captured then</html>")
    report = archive(store, archive_settings(root, wayback))
    assert nonzero(report.counts()) == {"captured": 1}
    assert wayback.counts["save"] == 0 and wayback.counts["status"] == 0, "an hour-old job id is not asked about"
    assert states(store)[url] == ("captured", None, f"https://web.archive.org/web/{made}/{url}")


def test_a_job_older_than_the_services_memory_with_no_capture_is_submitted_again(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    left_by_an_earlier_run(store, url, hours_ago=2)
    report = archive(store, archive_settings(root, wayback))
    assert nonzero(report.counts()) == {"captured": 1} and wayback.counts["save"] == 1
    assert len(wayback.captures_of(url)) == 1


def test_a_capture_not_yet_in_the_index_is_recorded_now_and_confirmed_later(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.cdx_lag_s = 3600
    settings = archive_settings(root, wayback)
    archive(store, settings)
    archive(store, settings)
    source = next(store.drafts()).sources[0]
    assert (source.archive.status, source.archive.confirmed) == ("captured", False)
    assert source.archived is not None
    wayback.failures.cdx_lag_s = 0
    archive(store, settings)
    assert next(store.drafts()).sources[0].archive.confirmed is True
    assert wayback.counts["save"] == 1


def test_errors_inside_200_are_retried_or_final_as_they_deserve(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    retried, blocked = site.url("/pm/0"), site.url("/pm/1")
    drafts_for(store, retried, blocked)
    wayback.failures.error_in_200 = 1
    wayback.failures.job_errors[blocked] = "error:blocked-url"
    settings = archive_settings(root, wayback, capture_sessions=1)
    archive(store, settings)
    after_first = states(store)
    assert after_first[blocked][:2] == ("failed", "blocked-url")
    archive(store, settings)
    assert states(store)[retried][0] == "captured"
    assert states(store)[blocked][:2] == ("failed", "blocked-url"), "a permanent failure is not tried again"
    assert wayback.counts["save"] == 3


def captured_by_another_library(root: Path, wayback: WaybackStandIn, url: str) -> None:
    """`url` captured just now by someone else (another data root on the same account)."""
    earlier = root.parent / "earlier"
    drafts_for(Store(earlier), url)
    archive(Store(earlier), archive_settings(earlier, wayback))


def test_a_capture_made_within_the_hour_is_reused_not_claimed_as_new(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    captured_by_another_library(root, wayback, url)
    drafts_for(store, url)
    report = archive(store, archive_settings(root, wayback))  # the service answers with the earlier job
    assert nonzero(report.counts()) == {"reused": 1}
    (capture,) = wayback.captures_of(url)
    assert states(store)[url] == ("captured", None, f"https://web.archive.org/web/{capture.timestamp}/{url}")
    assert next(store.drafts()).sources[0].archive.reused is True


def test_too_many_daily_captures_means_captured_today(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    captured_by_another_library(root, wayback, url)
    wayback.per_url_daily, wayback.dedupe_s = 1, 0
    drafts_for(store, url)
    report = archive(store, archive_settings(root, wayback))
    assert nonzero(report.counts()) == {"reused": 1}
    assert len(wayback.captures_of(url)) == 1


def test_a_session_limit_is_waited_out_within_the_run_with_no_attempt_used(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.session_limit = 2
    report = archive(store, archive_settings(root, wayback, max_capture_attempts=1))
    assert nonzero(report.counts()) == {"captured": 1} and wayback.counts["save"] == 3
    assert next(store.drafts()).sources[0].archive.attempts == 0


def test_sessions_that_never_free_leave_the_sources_waiting_for_the_next_run(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    wayback.failures.session_limit = 10_000
    settings = archive_settings(root, wayback, session_wait_s=0.3, max_capture_attempts=1)
    report = archive(store, settings)
    assert report.waiting() == {"user-session-limit": 3}
    assert {state[:2] for state in states(store).values()} == {("pending", "user-session-limit")}
    wayback.failures.session_limit = 0
    assert nonzero(archive(store, settings).counts()) == {"captured": 3}


def test_one_session_on_the_account_is_shared_in_turn_without_a_refused_submit(
    store: Store, root: Path, farm: SiteFarm
) -> None:
    urls = distinct_pages(farm, "turns", 4)
    drafts_for(store, *urls)
    with WaybackStandIn(
        WaybackRules(sessions=1, job_seconds=0.2, captures_per_minute=6000, cdx_per_minute=6000)
    ) as wayback:
        report = archive(store, archive_settings(root, wayback, capture_sessions=3))
        assert nonzero(report.counts()) == {"captured": 4}
        assert wayback.counts["save"] == 4, "the account's one session was read, not found out by refusals"


def test_a_redirected_capture_keeps_both_urls(store: Store, root: Path, site: Site, wayback: WaybackStandIn) -> None:
    site.pages["/old"] = Page.redirect("/pm/2")
    drafts_for(store, site.url("/old"))
    archive(store, archive_settings(root, wayback))
    source = next(store.drafts()).sources[0]
    assert source.url == site.url("/old")
    assert source.archive.captured_url == site.url("/pm/2")
    assert (source.archived or "").endswith("/" + site.url("/pm/2"))


def test_an_archived_error_page_is_not_a_capture(store: Store, root: Path, site: Site, wayback: WaybackStandIn) -> None:
    drafts_for(store, site.url("/missing"))
    archive(store, archive_settings(root, wayback))
    assert states(store)[site.url("/missing")] == ("failed", "not-found", None)
    assert "(HTTP status=404)" in (next(store.drafts()).sources[0].archive.detail or "")


def test_the_keys_never_reach_a_log_or_a_record(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    drafts_for(store, site.url("/pm/0"), site.url("/missing"))
    caplog.set_level(logging.DEBUG)
    archive(store, archive_settings(root, wayback))
    archive(store, archive_settings(root, wayback, wayback_secret_key="wrong-secret-value"))
    everything = caplog.text + "".join(p.read_text() for p in root.rglob("*") if p.is_file())
    assert "test-secret" not in everything and "wrong-secret-value" not in everything
    assert "test-access" not in everything
    assert "test-secret" not in repr(archive_settings(root, wayback))


def test_a_run_killed_at_any_point_is_finished_by_the_next_with_nothing_lost_or_doubled(
    store: Store, root: Path, farm: SiteFarm, wayback: WaybackStandIn
) -> None:
    urls = distinct_pages(farm, "many", 8)
    drafts_for(store, *urls)
    wayback.job_seconds = 0.05  # jobs take a moment, so kills land between submit and success too
    settings = archive_settings(root, wayback, capture_sessions=2)
    env = {**os.environ, **settings_env(settings)}
    worker = Path(__file__).with_name("workers.py")
    for sources_before_kill in (0, 1, 3, 5):
        proc = subprocess.Popen(
            [sys.executable, str(worker), "archive", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        stdin, stdout = pipes(proc)
        assert stdout.readline().strip() == "ready"
        stdin.write("go\n")
        stdin.flush()
        for _ in range(sources_before_kill):
            if not stdout.readline():
                break
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        for n in range(8):  # an archive run adds nothing a test would later need to find
            assert len(wayback.captures_of(urls[n])) <= 1, "a capture was made twice"
    for _ in range(3):
        archive(store, settings)
    assert {url: state[0] for url, state in states(store).items()} == {url: "captured" for url in urls}
    assert [len(wayback.captures_of(u)) for u in urls] == [1] * 8


@pytest.mark.usefixtures("prefect_api")
def test_a_missing_capture_limit_stops_captures_without_using_up_attempts(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    settings = archive_settings(root, wayback, capture_limit="no-such-limit")
    for _ in range(3):
        report = archive(store, settings)
        assert report.problem == "no-capture-limit"
    source = next(s for d in store.drafts() for s in d.sources)
    assert (source.archive.status, source.archive.reason, source.archive.attempts) == ("pending", "no-capture-limit", 0)
    assert wayback.counts["save"] == 0


@pytest.mark.usefixtures("prefect_api")
def test_with_the_capture_limit_in_place_captures_take_its_slots(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate

    with get_client(sync_client=True) as client:
        client.create_global_concurrency_limit(
            GlobalConcurrencyLimitCreate(name="test-captures", limit=10, slot_decay_per_second=100)
        )
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    report = archive(store, archive_settings(root, wayback, capture_limit="test-captures"))
    assert report.counts()["captured"] == 3 and report.problem is None


def test_a_second_archive_run_of_the_data_root_leaves_its_sources_to_the_first(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    with store.state.lock("captures"):  # an archive run in another process holds it
        report = archive(store, archive_settings(root, wayback))
    assert report.busy and report.sources == [] and wayback.counts["save"] == 0
    assert states(store)[url][0] == "pending"
    assert archive(store, archive_settings(root, wayback)).counts()["captured"] == 1


def test_archived_links_name_the_public_base_of_the_settings(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    """The demo points `wayback_public_url` at its stand-in, whose own copies its links then open."""
    url = site.url("/pm/0")
    drafts_for(store, url)
    settings = archive_settings(root, wayback, wayback_public_url=wayback.url + "/")

    assert archive(store, settings).counts()["captured"] == 1
    (capture,) = wayback.captures_of(url)
    (source,) = [s for d in store.drafts() for s in d.sources]
    assert source.archived == f"{wayback.url}/web/{capture.timestamp}/{url}"
    assert archive(store, settings).counts()["confirmed"] == 1, "the index's row names the same link"


# ------------------------------------------------------------ playback and the index, as they answer


def reused_link(store: Store, root: Path, wayback: WaybackStandIn, url: str) -> tuple[dict[str, int], str | None]:
    """One draft citing `url`, archived with a reuse window of a day: the counts, and its link."""
    drafts_for(store, url)
    report = archive(store, archive_settings(root, wayback, reuse_capture_within_s=86400))
    return nonzero(report.counts()), next(store.drafts()).sources[0].archived


def test_a_redirect_newer_than_the_page_is_not_the_capture_reused(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    page = wayback.add_capture(url, ago(3), HTML.encode())
    wayback.add_capture(url, ago(2), b"moved", statuscode=301, location="/pm/1")
    wayback.add_capture(url, ago(1), b"moved", statuscode=301, location="/pm/1")  # a revisit of the redirect
    counts, link = reused_link(store, root, wayback, url)
    assert counts == {"reused": 1} and link == f"https://web.archive.org/web/{page.timestamp}/{url}"


def test_a_revisit_of_an_old_redirect_is_not_the_capture_reused(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    """The run's lookup asks for rows since the reuse window's start: the revisit is in it, the
    redirect it repeats is not; one lookup more says what it repeats."""
    url = site.url("/pm/0")
    wayback.add_capture(url, ago(40), HTML.encode())
    wayback.add_capture(url, ago(30), b"moved", statuscode=301, location="/pm/1")
    redirect = wayback.add_capture(url, ago(1), b"moved", statuscode=301, location="/pm/1")
    assert redirect.revisit
    counts, link = reused_link(store, root, wayback, url)
    # No link to a redirect's re-capture. The service's `if_not_archived_within` would count that
    # capture too (the stand-in's does) and capture nothing: the page is captured outright instead.
    (capture,) = [c for c in wayback.captures_of(url) if c.statuscode == 200 and c.timestamp > redirect.timestamp]
    assert counts == {"captured": 1} and link == f"https://web.archive.org/web/{capture.timestamp}/{url}"
    assert wayback.counts["save"] == 1, "one submit, without the window"


def test_a_revisit_of_an_old_page_is_the_capture_reused(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    wayback.add_capture(url, ago(40), HTML.encode())
    again = wayback.add_capture(url, ago(1), HTML.encode())
    assert again.revisit
    counts, link = reused_link(store, root, wayback, url)
    assert counts == {"reused": 1} and link == f"https://web.archive.org/web/{again.timestamp}/{url}"
    assert wayback.counts["cdx"] == 2, "the window's lookup, then the one that says what the revisit repeats"


def test_a_row_whose_original_is_no_url_is_not_the_capture_reused(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    page = wayback.add_capture(url, ago(3), HTML.encode())
    wayback.failures.bad_rows = {url: "mailto,relative"}
    counts, link = reused_link(store, root, wayback, url)
    assert counts == {"reused": 1} and link == f"https://web.archive.org/web/{page.timestamp}/{url}"


def test_a_capture_young_enough_is_reused_whatever_an_unreadable_row_may_be(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    older = wayback.add_capture(url, ago(3), HTML.encode())
    wayback.failures.bad_rows = {url: "newer-timestamp"}
    counts, link = reused_link(store, root, wayback, url)
    # The run needs a capture within its reuse window, not the newest: the readable one is.
    assert counts == {"reused": 1} and link == f"https://web.archive.org/web/{older.timestamp}/{url}"


def test_an_archived_5xx_or_429_trips_no_breaker(root: Path, wayback: WaybackStandIn) -> None:
    import asyncio

    from pipeline.errors import ArchivedErrorPage
    from pipeline.wayback import WaybackClient

    wayback.add_capture("https://forum.example/a", ago(2), b"busy", statuscode=503)
    wayback.add_capture("https://forum.example/b", ago(2), b"slow down", statuscode=429)
    settings = archive_settings(root, wayback, breaker_backoff_s=600)

    async def play() -> list[int]:
        statuses = []
        async with WaybackClient(settings) as client:
            for capture in wayback.captures:
                try:
                    await client.capture_bytes(capture.timestamp, capture.original)
                except ArchivedErrorPage as exc:
                    statuses.append(exc.status)
                assert client.breaker.wait() == 0
            # The next call goes at once; the index lists no error page (the client asks for 2xx and 3xx).
            assert (await client.index("https://forum.example/a")).rows == []
        return statuses

    assert asyncio.run(play()) == [503, 429]


def test_a_replayed_2xx_other_than_200_is_the_captures_bytes(root: Path, wayback: WaybackStandIn) -> None:
    """The index counts any 2xx as a page (`CdxResult.is_page`); playback's bytes say the same."""
    import asyncio

    from pipeline.wayback import WaybackClient

    for path, status in (("/a", 203), ("/b", 206)):
        wayback.add_capture(f"https://forum.example{path}", ago(2), f"page {status}".encode(), statuscode=status)

    async def play() -> list[bytes]:
        async with WaybackClient(archive_settings(root, wayback)) as client:
            return [await client.capture_bytes(c.timestamp, c.original) for c in wayback.captures]

    assert asyncio.run(play()) == [b"page 203", b"page 206"]
