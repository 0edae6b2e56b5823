"""The archive's own trouble, against the strict stand-in: outages, quotas, delays, the rate limit,
the index's quirks. None of it may fail a source; all of it must be said once and waited out."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import (
    ArchiveCommands,
    ArchiveRoot,
    archive_settings,
    archive_states,
    drafts_for,
    seed_prefect_db,
    settings_env,
)

from pipeline.archive import archive
from pipeline.links import refresh
from pipeline.models import ArchiveState, ArchiveStatus
from pipeline.reasons import Reason
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store
from pipeline.wayback import CdxResult, WaybackClient
from pipeline.wayback.client import read_answer

HTML = "<html><body><h1>Outage</h1><p>The queue backed up for {n} hours after a config push.</p></body></html>"


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("blog")
    for n in range(4):
        site.pages[f"/pm/{n}"] = Page.html(HTML.format(n=n))
    return site


def test_an_outage_over_two_runs_fails_no_source_and_the_third_run_captures(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    settings = archive_settings(root, wayback)
    wayback.down_for(3600)
    for _ in range(2):
        report = archive(store, settings)
        assert report.problem == Reason.SERVICE_UNREACHABLE
        assert report.counts()["failed"] == 0 and report.counts()["waiting"] == 3
        assert {s.status for s in archive_states(store).values()} == {ArchiveStatus.PENDING}
        assert all(s.attempts == 0 for s in archive_states(store).values()), "the service's trouble uses no attempt"
    wayback.failures.down_until = 0.0
    report = archive(store, settings)
    assert report.problem is None and report.counts()["captured"] == 3
    assert wayback.counts["save"] == 3


def test_the_accounts_daily_quota_stops_submitting_and_says_so_once(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    wayback.daily_quota = 1
    urls = [site.url(f"/pm/{n}") for n in range(4)]
    drafts_for(store, *urls)
    report = archive(store, archive_settings(root, wayback, capture_sessions=1))
    assert report.problem == Reason.ACCOUNT_QUOTA
    assert report.counts()["captured"] == 1 and report.counts()["waiting"] == 3
    assert report.counts()["failed"] == 0
    assert wayback.counts["save"] == 1, "the account's count says the quota is used: no submit to be refused"
    assert sum("daily captures are used up" in r.getMessage() for r in caplog.records) == 1


def test_a_refusal_for_the_quota_is_read_as_the_accounts_not_the_sources() -> None:
    answer = read_answer({"status": "error", "message": "You cannot make more than 4,000 captures per day."})
    assert (answer.job_id, answer.error) == (None, Reason.ACCOUNT_QUOTA)


def test_a_paused_host_waits_and_the_other_hosts_are_captured(
    store: Store, root: Path, site: Site, farm: SiteFarm, wayback: WaybackStandIn
) -> None:
    other = farm.add_site("other")
    other.pages["/pm/x"] = Page.html(HTML.format(n=9))
    paused = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *paused, other.url("/pm/x"))
    wayback.failures.host_quota = {site.url("/").split("//", 1)[1].rstrip("/")}
    # One session: submits come one after another, so the first refusal is seen before the next.
    report = archive(store, archive_settings(root, wayback, capture_sessions=1))
    outcome = {s.url: (s.outcome, s.reason) for s in report.sources}
    assert outcome[other.url("/pm/x")] == ("captured", None)
    assert {outcome[url] for url in paused} == {("waiting", Reason.HOST_QUOTA)}
    assert report.problem is None
    assert wayback.counts["save"] == 2, "the host's first refusal pauses its other sources unsubmitted"


def test_a_capture_put_off_by_the_service_is_kept_and_polled_by_the_next_run(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    wayback.failures.delayed_start, wayback.failures.delay_s = 1, 0.5
    settings = archive_settings(root, wayback, poll_timeout_s=0.1)
    first = archive(store, settings)
    state = archive_states(store)[url]
    assert [s.outcome for s in first.sources] == ["submitted"]
    assert state.status == ArchiveStatus.PENDING and state.job_id is not None
    assert state.reason in (Reason.CAPTURE_DELAYED, Reason.JOB_PENDING)
    # The job starts half a second later on the service; the next run polls it to its end.
    second = archive(store, archive_settings(root, wayback))
    assert [s.outcome for s in second.sources] == ["captured"]
    assert wayback.counts["save"] == 1, "the job was polled, not submitted again"


def test_sources_an_earlier_version_failed_for_the_service_wait_again_and_are_captured(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    for_service = site.url("/pm/0")
    for_itself = site.url("/pm/1")
    drafts_for(
        store,
        for_service,
        archive_state=ArchiveState(status=ArchiveStatus.FAILED, reason=Reason.USER_SESSION_LIMIT, attempts=3),
    )
    drafts_for(store, for_itself, archive_state=ArchiveState(status=ArchiveStatus.FAILED, reason=Reason.NOT_FOUND))
    report = archive(store, archive_settings(root, wayback))
    assert [(s.url, s.outcome) for s in report.sources] == [(for_service, "captured")]
    states = archive_states(store)
    assert states[for_service].status == ArchiveStatus.CAPTURED
    assert states[for_itself].status == ArchiveStatus.FAILED and wayback.captures_of(for_itself) == []


def test_captures_at_the_services_own_rate_meet_no_429(store: Store, root: Path, farm: SiteFarm) -> None:
    site = farm.add_site("many")
    urls = []
    for n in range(16):
        site.pages[f"/pm/{n}"] = Page.html(HTML.format(n=n))
        urls.append(site.url(f"/pm/{n}"))
    drafts_for(store, *urls)
    # A three-second window of 15 captures: the client's own 300 a minute is the same rate, and the 16th
    # capture fills the window. The client's margin leaves 240 ms of jitter in a window this long; a
    # one-second window left 80 ms, which a loaded machine's scheduling once took (11 captures of 12).
    with WaybackStandIn(
        WaybackRules(
            access_key="test-access",
            secret_key="test-secret",
            captures_per_minute=15,
            cdx_per_minute=6000,
            rate_window_s=3.0,
            sessions=16,
        )
    ) as wayback:
        report = archive(store, archive_settings(root, wayback, captures_per_minute=300, capture_sessions=16))
        assert report.counts()["captured"] == 16, [(s.url, s.outcome, s.reason) for s in report.sources]
        assert wayback.counts["429"] == 0 and wayback.counts["save"] == 16


def test_no_key_reaches_a_report_an_artifact_or_an_error_message(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    drafts_for(store, site.url("/pm/0"))
    report = archive(store, archive_settings(root, wayback))
    dumped = json.dumps(report.to_dict(), default=str)
    assert "test-secret" not in dumped and "test-access" not in dumped
    # A key the settings refuse is named, never echoed.
    env = {**os.environ, **settings_env(archive_settings(root, wayback))}
    env["INCIDENTLIB_WAYBACK_SECRET_KEY"] = "has a space-secret-value"
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "archive", "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode != 0
    assert "INCIDENTLIB_WAYBACK_SECRET_KEY" in done.stderr
    assert "space-secret-value" not in done.stdout + done.stderr


def index_of(
    wayback: WaybackStandIn, root: Path, url: str, *, prefix: bool = False, since: str | None = None
) -> CdxResult:
    async def look() -> CdxResult:
        async with WaybackClient(archive_settings(root, wayback)) as client:
            return await client.index(url, prefix=prefix, since=since)

    return asyncio.run(look())


def stamp(n: int) -> str:
    return datetime(2025, 1, 1, 12, 0, n, tzinfo=UTC).strftime("%Y%m%d%H%M%S")


def test_the_index_knows_a_url_by_any_spelling(root: Path, wayback: WaybackStandIn) -> None:
    wayback.add_capture("http://www.example.org/pm/1", stamp(1), b"<html>one</html>")
    wayback.add_capture("https://example.org/pm/1", stamp(2), b"<html>two</html>")
    found = index_of(wayback, root, "https://Example.org/pm/1")
    assert [r.timestamp for r in found.rows_for("https://example.org/pm/1")] == [stamp(1), stamp(2)]
    assert found.newest("http://www.example.org/pm/1").original == "https://example.org/pm/1"  # type: ignore[union-attr]


def test_the_index_is_read_page_after_page(root: Path, wayback: WaybackStandIn) -> None:
    wayback.cdx_max_rows = 2
    for n in range(5):
        wayback.add_capture(f"https://example.org/pm/{n}", stamp(n), f"<html>{n}</html>".encode())
    found = index_of(wayback, root, "https://example.org/pm/", prefix=True)
    assert sorted(r.original for r in found.rows) == [f"https://example.org/pm/{n}" for n in range(5)]
    assert wayback.counts["cdx"] == 3 and not found.truncated


def test_a_revisit_is_a_capture_and_a_bad_row_spoils_only_its_url(root: Path, wayback: WaybackStandIn) -> None:
    wayback.add_capture("https://example.org/pm/a", stamp(1), b"<html>same</html>")
    wayback.add_capture("https://example.org/pm/a", stamp(2), b"<html>same</html>")
    wayback.add_capture("https://example.org/pm/b", stamp(3), b"<html>b</html>")
    # A bad row newer, by what can be read of it, than b's capture: b's newest cannot be told.
    wayback.failures.bad_rows = {"https://example.org/pm/b": "newer-timestamp"}
    found = index_of(wayback, root, "https://example.org/pm/", prefix=True)
    rows = found.rows_for("https://example.org/pm/a")
    assert [r.timestamp for r in rows] == [stamp(1), stamp(2)] and rows[-1].revisit
    assert found.readable("https://example.org/pm/a") and not found.readable("https://example.org/pm/b")
    assert found.newest("https://example.org/pm/b") is None and len(found.rows_for("https://example.org/pm/b")) == 1
    # One older than its capture (a month of 00 in 2000) changes nothing.
    wayback.failures.bad_rows = {"https://example.org/pm/b": "timestamp"}
    found = index_of(wayback, root, "https://example.org/pm/", prefix=True)
    assert found.readable("https://example.org/pm/b") and found.newest("https://example.org/pm/b") is not None


def test_a_site_the_index_will_not_show_is_said_so_by_the_refresh(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/0")
    drafts_for(store, url)
    settings = archive_settings(root, wayback)
    archive(store, settings)
    wayback.failures.blocked_hosts = {site.url("/").split("//", 1)[1].rstrip("/")}
    report = refresh(store, settings)
    # The site's owner had it excluded: no later run will see its captures, a person must look.
    assert [(s.outcome, s.reason) for s in report.sources] == [("failed", Reason.BLOCKED_SITE)]
    assert archive_states(store)[url].status == ArchiveStatus.CAPTURED, "its capture is kept"


def test_a_refused_or_unusable_key_reaches_no_output_no_file_and_no_prefect_row(
    archive_commands: ArchiveCommands, site: Site
) -> None:
    root, cli, monkeypatch = archive_commands.root, archive_commands.cli, archive_commands.monkeypatch
    drafts_for(archive_commands.store, site.url("/pm/0"))
    archive_commands.use(archive_settings(root, archive_commands.wayback))
    # Not ASCII: httpx raised UnicodeEncodeError quoting the whole header, which Prefect stored.
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_SECRET_KEY", "s\u00e9cret-unusable-value")
    unusable = cli("archive", "--root", str(root))
    assert unusable.exit_code != 0
    assert "INCIDENTLIB_WAYBACK_SECRET_KEY" in unusable.output
    # Well formed, but not the account's: the flow runs, is told 401, and says so.
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_SECRET_KEY", "refused-secret-value")
    refused = cli("archive", "--root", str(root))
    assert refused.exit_code == 0, refused.output
    # The command's own line, not the run's warning: in-process, where a log line lands depends on which
    # test of the worker first set up Prefect's logging (one CI run lost the warning so).
    assert "captures stopped (bad-keys)" in refused.output
    seen = unusable.output + refused.output
    seen += "".join(p.read_bytes().decode("latin-1") for p in root.rglob("*") if p.is_file())
    prefect_home = Path(os.environ["PREFECT_HOME"])
    seen += "".join(p.read_bytes().decode("latin-1") for p in prefect_home.rglob("*") if p.is_file())
    for secret in ("cret-unusable-value", "refused-secret-value", "test-access"):
        assert secret not in seen, secret


def test_the_archive_command_ends_with_its_own_words_and_its_exit_status(
    archive_root: ArchiveRoot, site: Site, tmp_path: Path, migrated_prefect_db: Path
) -> None:
    """In a process of its own, which starts a Prefect server for the command and stops it at the end:
    the runs' last logs reach that server first, and nothing of Prefect's own trouble is printed.
    Every capture failed (the page is gone): exit status 4."""
    root = archive_root.root
    seed_prefect_db(root, migrated_prefect_db)
    drafts_for(archive_root.store, site.url("/pm/gone"))
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PREFECT_", "INCIDENTLIB_"))}
    env |= settings_env(archive_settings(root, archive_root.wayback)) | {"PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "archive", "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert re.search(r"failed: not-found +│ +1 │", done.stdout), done.stdout
    assert "Error logging to API" not in done.stderr and "Traceback" not in done.stderr
    assert "All connection attempts failed" not in done.stderr
