"""The archive's bad day and a library's scale: the client's own congestion, an archive that cannot be
reached, outages and 429 bursts met by runs with deadlines. A run that knows the archive is out ends
at once and says so once; no call waits past the run's deadline; later runs capture what waited."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from helpers import ArchiveCommands, archive_settings, drafts_for

from pipeline.archive import archive
from pipeline.links import refresh
from pipeline.models import ArchiveStatus
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.standins.server import QuietServer
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store
from pipeline.wayback import ArchiveRequest, WaybackClient
from pipeline.wayback.client import CONNECTIONS

HTML = "<html><body><h1>Outage {n}</h1><p>The queue backed up for {n} hours after a config push.</p></body></html>"
# What a run may take past its deadline: a request in flight then ends within its timeout (1 s here).
MARGIN_S = 1.5


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("blog")
    for n in range(19):
        site.pages[f"/pm/{n}"] = Page.html(HTML.format(n=n))
    return site


class _Slow(BaseHTTPRequestHandler):
    """Answers every request after `delay` seconds, counting how many it holds at once."""

    protocol_version = "HTTP/1.1"
    delay = 0.3
    lock = threading.Lock()
    now = 0
    most = 0

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # http.server's name
        cls = type(self)
        with cls.lock:
            cls.now += 1
            cls.most = max(cls.most, cls.now)
        time.sleep(cls.delay)  # the slow service itself, not a wait of the test's
        with cls.lock:
            cls.now -= 1
        body = b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_pool_exhausted_by_slow_answers_trips_no_breaker(root: Path) -> None:
    server = QuietServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        # Three times the client's connections at once, each answer slower than half the pool's
        # timeout: queued inside the pool, the last ones would wait past it (a PoolTimeout).
        settings = Settings(
            root=root, wayback_url=f"http://127.0.0.1:{server.server_address[1]}", wayback_timeout_s=0.5
        )

        async def many() -> tuple[list[int], int]:
            async with WaybackClient(settings) as client:
                answers = await asyncio.gather(
                    *(client.call(ArchiveRequest("web", "GET", f"/web/{n}/x")) for n in range(3 * CONNECTIONS))
                )
                return [a.status_code for a in answers], client.breaker.trips

        statuses, trips = asyncio.run(many())
    finally:
        server.shutdown()
        server.server_close()
    assert statuses == [200] * (3 * CONNECTIONS)
    assert trips == 0, "the client's own congestion is not the service's trouble"
    assert _Slow.most <= CONNECTIONS


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_without_keys_a_refused_archive_ends_the_lookups_at_once_said_once(
    store: Store, root: Path, site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    # A crawl's 19 new drafts, archived with no keys against an archive that refuses connections,
    # at the service's own rates and the breaker's real pause (60 s, doubling).
    drafts_for(store, *(site.url(f"/pm/{n}") for n in range(19)))
    settings = Settings(
        root=root,
        allow_private_hosts=True,
        wayback_url=f"http://127.0.0.1:{_closed_port()}",
        breaker_backoff_s=60.0,
    )
    with caplog.at_level(logging.WARNING, logger="incidentlib.archive"):
        report = archive(store, settings)
    assert report.problem == Reason.NO_KEYS
    assert report.counts()["waiting"] == 19 and report.counts()["failed"] == 0
    assert report.seconds < 10, "a refused connection is known at once: the lookups end, not wait out the breaker"
    # The first lookup's three tries take 3 s; the next lookup's slot of the rate (2.7 s on) may come meanwhile.
    assert report.requests["cdx"] <= 2, "once the archive is known out, no lookup more"
    said = [r.getMessage() for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(said) == 1, said


def _states(store: Store) -> dict[str, ArchiveStatus]:
    return {s.url: s.archive.status for d in store.drafts() for s in d.sources}


def test_an_outage_then_a_429_burst_end_each_run_by_its_deadline_and_later_runs_converge(
    store: Store, root: Path, site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(6)]
    drafts_for(store, *urls)
    deadline = 2.0
    with WaybackStandIn(
        WaybackRules(
            access_key="test-access", secret_key="test-secret", sessions=1, job_seconds=(0.1, 0.3), cdx_per_minute=6000
        )
    ) as wayback:
        wayback.captures_per_minute = 600
        settings = archive_settings(
            root,
            wayback,
            capture_sessions=1,
            breaker_backoff_s=0.05,
            archive_run_s=deadline,
            wayback_timeout_s=1.0,
            poll_interval_s=0.05,
        )
        wayback.down_for(3600)  # the service out: the first run knows it at once
        with caplog.at_level(logging.WARNING, logger="incidentlib.archive"):
            first = archive(store, settings)
        assert first.problem == Reason.SERVICE_UNREACHABLE
        assert first.counts()["waiting"] == 6 and first.counts()["failed"] == 0
        assert first.seconds < deadline
        assert sum("cannot be reached" in r.getMessage() for r in caplog.records) == 1

        wayback.failures.down_until = 0.0  # back, with a burst of 429s
        wayback.failures.storm_429 = 3
        runs = []
        for _ in range(4):
            report = archive(store, settings)
            runs.append(report)
            assert report.seconds <= deadline + MARGIN_S, f"a run went {report.seconds:.2f} s past its deadline"
            assert report.counts()["failed"] == 0
            if set(_states(store).values()) == {ArchiveStatus.CAPTURED}:
                break
        assert set(_states(store).values()) == {ArchiveStatus.CAPTURED}, [r.counts() for r in runs]
        assert len(runs) <= 3, "the library converges within a few runs of the service coming back"
        assert all(len(wayback.captures_of(url)) == 1 for url in urls), "no source captured twice"


def test_a_breaker_pause_longer_than_the_run_is_not_waited_out(store: Store, root: Path, site: Site) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(store, *urls)
    with WaybackStandIn(
        WaybackRules(access_key="test-access", secret_key="test-secret", cdx_per_minute=6000)
    ) as wayback:
        wayback.captures_per_minute = 600
        wayback.failures.storm_429 = 1
        short = archive_settings(root, wayback, breaker_backoff_s=2.0, archive_run_s=0.5, wayback_timeout_s=1.0)
        first = archive(store, short)
        assert first.seconds < 0.5 + MARGIN_S, "the 2 s pause passes the run's deadline: no call waits it out"
        assert first.counts()["failed"] == 0 and first.counts()["captured"] == 0
        assert wayback.counts["429"] == 1
        second = archive(store, short.model_copy(update={"archive_run_s": 10.0}))
        assert second.counts()["captured"] == 3 and second.seconds < 10.0
        assert all(len(wayback.captures_of(url)) == 1 for url in urls)


def test_a_refresh_with_the_archive_out_ends_at_once_and_the_next_one_re_archives(
    store: Store, root: Path, site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    urls = [site.url(f"/pm/{n}") for n in range(4)]
    drafts_for(store, *urls)
    with WaybackStandIn(
        WaybackRules(access_key="test-access", secret_key="test-secret", cdx_per_minute=6000)
    ) as wayback:
        wayback.captures_per_minute = 600
        settings = archive_settings(root, wayback, archive_run_s=5.0, wayback_timeout_s=1.0)
        wayback.down_for(3600)
        with caplog.at_level(logging.WARNING):
            out = refresh(store, settings)
        assert out.archive_out and out.seconds < 5.0
        assert out.counts()["waiting"] == 4 and out.counts()["failed"] == 0
        assert sum("cannot be reached" in r.getMessage() for r in caplog.records) == 1
        wayback.failures.down_until = 0.0
        back = refresh(store, settings)
        assert not back.archive_out and back.counts()["re-archived"] == 4
        assert all(len(wayback.captures_of(url)) == 1 for url in urls)


# ------------------------------------------------------------ the service's passing trouble, through the command


@pytest.mark.parametrize(
    ("switch", "count"),
    [
        ("drop_answers", 5),  # answers cut off mid-way (RemoteProtocolError): the bench's "cannot be reached"
        ("stall_answers", 3),  # answers later than the client's timeout: a read timeout, three in a row
        ("html_5xx", 4),  # the service's 502 pages
    ],
)
def test_the_archive_command_rides_out_the_services_passing_trouble(
    archive_commands: ArchiveCommands, site: Site, switch: str, count: int
) -> None:
    root, wayback, cli = archive_commands.root, archive_commands.wayback, archive_commands.cli
    urls = [site.url(f"/pm/{n}") for n in range(4)]
    drafts_for(archive_commands.store, *urls)
    archive_commands.use(archive_settings(root, wayback, wayback_timeout_s=0.5))
    wayback.failures.stall_s = 1.0
    setattr(wayback.failures, switch, count)  # the first answers of the run: the account's sessions, lookups
    result = cli("archive", "--root", str(root), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["problem"] is None, "the service was there all along: it was never taken for out"
    assert report["counts"]["captured"] == 4 and report["waiting"] == {}, report["counts"]
    assert getattr(wayback.failures, switch) == 0, "every answer the switch spoiled was met"
    assert all(len(wayback.captures_of(url)) == 1 for url in urls), "no source captured twice"
    if switch == "drop_answers":
        assert wayback.counts["dropped"] == count


def test_an_archive_refusing_every_connection_stops_the_run_and_the_next_captures_what_waits(
    archive_commands: ArchiveCommands, site: Site
) -> None:
    root, wayback, cli = archive_commands.root, archive_commands.wayback, archive_commands.cli
    urls = [site.url(f"/pm/{n}") for n in range(3)]
    drafts_for(archive_commands.store, *urls)
    archive_commands.use(archive_settings(root, wayback, wayback_timeout_s=0.5))
    wayback.failures.drop_answers = 1  # passing trouble first, then the archive gone
    wayback.down_for(3600)
    out = cli("archive", "--root", str(root))
    assert out.exit_code == 0, out.output
    assert "captures stopped (service-unreachable)" in out.output
    assert re.search(r"waiting: service-unreachable +│ +3 │", out.stdout), out.stdout
    assert re.search(r"captured +│ +0 │", out.stdout), out.stdout
    wayback.failures.down_until = 0.0  # back: the next run picks up what waited
    back = cli("archive", "--root", str(root), "--json")
    report = json.loads(back.stdout)
    assert report["problem"] is None and report["counts"]["captured"] == 3, report["counts"]
    assert all(len(wayback.captures_of(url)) == 1 for url in urls)
