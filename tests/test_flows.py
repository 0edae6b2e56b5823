"""The crawl as a real Prefect flow run, and as a person runs it: `incidentlib crawl`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from documents import POSTMORTEM_MD
from helpers import artifact_text, seed_prefect_db

from pipeline.ids import draft_id_for
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store

pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.runs_long(40)]


def registry(root: Path, farm: SiteFarm, hosts: int, pages: int) -> list[str]:
    urls = []
    for h in range(hosts):
        site = farm.add_site(f"host{h}")
        for p in range(pages):
            site.pages[f"/pm{p}.md"] = Page.markdown(POSTMORTEM_MD.replace("Cache stampede", f"Stampede {h}.{p}"))
            urls.append(site.url(f"/pm{p}.md"))
    (root / "sources" / "farm.yaml").write_text("".join(f"- url: {u}\n  org: Farm\n" for u in urls))
    return urls


def test_the_crawl_flow_splits_work_by_host_and_publishes_its_summary(
    farm: SiteFarm, root: Path, crawl_env: None
) -> None:
    from pipeline.crawl import CrawlRun
    from pipeline.flows import crawl_flow_for, run

    urls = registry(root, farm, hosts=3, pages=4)
    (root / "sources" / "broken.yaml").write_text("- url: [unclosed\n")

    crawled = run(crawl_flow_for(Settings(root=root)), CrawlRun, root=str(root))

    assert crawled.counts() == {"new": 12, "updated": 0, "unchanged": 0, "failed": 0, "deferred": 0, "skipped": 0}
    assert [str(fault) for fault in crawled.registry_faults] == [
        "sources/broken.yaml:2: -: not valid YAML: expected ',' or ']', but got '<stream end>'"
    ]
    assert sorted(Store(root).ids("draft")) == sorted(draft_id_for(u) for u in urls)
    table = artifact_text("crawl-summary")
    assert '"new"' in table and "12" in table
    assert "## New drafts" in artifact_text("crawl-report")
    assert float(artifact_text("crawl-progress")) == pytest.approx(100.0)


def test_crawl_command_runs_the_flow_and_reruns_change_nothing(
    farm: SiteFarm, root: Path, crawl_env: None, cli: Callable
) -> None:
    registry(root, farm, hosts=2, pages=2)
    farm.sites["host1"].pages["/gone"] = Page(status=410)
    with (root / "sources" / "farm.yaml").open("a") as registry_file:
        registry_file.write(f"- url: {farm.sites['host1'].url('/gone')}\n")

    first = cli("crawl", "--root", str(root))
    assert first.exit_code == 3, first.output  # some sources failed (the one gone), the others went through
    assert "new" in first.stdout and f"failed {farm.sites['host1'].url('/gone')}: http-410: " in first.stdout
    # Progress on stderr: done/total, the rate and the time left.
    assert re.search(r"crawl .* 5/5 +[\d.]+/(s|min) left 0:00:00", first.stderr), first.stderr

    again = cli("crawl", "--root", str(root), "--json")
    summary = json.loads(again.stdout)
    assert summary["counts"] == {"new": 0, "updated": 0, "unchanged": 4, "failed": 1, "deferred": 0, "skipped": 0}
    assert (summary["bodies"], summary["writes"]) == (0, 0)


def test_the_crawl_exit_status_follows_its_outcomes(farm: SiteFarm, root: Path, crawl_env: None, cli: Callable) -> None:
    """0: done, or nothing to do (and said so); 3: some sources failed; 4: every source tried failed."""
    nothing = cli("crawl", "--root", str(root))
    assert nothing.exit_code == 0, nothing.output
    assert "the registry lists no source: add one with `incidentlib add URL`" in nothing.stderr

    site = farm.add_site("down")
    site.pages["/a.md"] = Page(status=503)
    site.pages["/b.md"] = Page(status=404)
    (root / "sources" / "down.yaml").write_text(f"- url: {site.url('/a.md')}\n- url: {site.url('/b.md')}\n")
    failed = cli("crawl", "--root", str(root))
    assert failed.exit_code == 4, failed.output
    assert re.search(r"drafts written +│ +0 │", failed.stdout), "a failure noted on a draft writes no draft"
    as_json = cli("crawl", "--root", str(root), "--json")
    assert as_json.exit_code == 4 and json.loads(as_json.stdout)["writes"] == 0

    site.pages["/a.md"] = Page.markdown(POSTMORTEM_MD)
    some = json.loads((again := cli("crawl", "--root", str(root), "--json")).stdout)
    assert again.exit_code == 3
    assert (some["counts"]["new"], some["counts"]["failed"], some["writes"]) == (1, 1, 1), "its first text: new"


@pytest.mark.usefixtures("crawl_env")
def test_the_crawl_flow_archives_its_new_sources_and_the_archive_flow_confirms_them(
    farm: SiteFarm, root: Path, wayback, monkeypatch: pytest.MonkeyPatch, cli: Callable
) -> None:
    from helpers import archive_settings, settings_env

    for name, value in settings_env(archive_settings(root, wayback)).items():
        monkeypatch.setenv(name, value)
    urls = registry(root, farm, hosts=1, pages=2)
    crawled = json.loads(cli("crawl", "--root", str(root), "--json").stdout)
    assert crawled["archive"]["counts"]["captured"] == 2
    assert all(len(wayback.captures_of(u)) == 1 for u in urls)

    archived = cli("archive", "--root", str(root))
    assert archived.exit_code == 0, archived.output
    assert "confirmed" in archived.stdout
    drafts = list(Store(root).drafts())
    assert all(s.archive.confirmed and s.archived for d in drafts for s in d.sources)
    assert "## Captures" in artifact_text("archive-report")


def test_the_stand_in_command_serves_until_stopped(tmp_path: Path) -> None:
    import signal
    import socket
    import subprocess
    import sys

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "stand-in", "--port", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith(
            f"Wayback stand-in on http://127.0.0.1:{port}"
        )
        answer = httpx.get(f"http://127.0.0.1:{port}/wayback/available", params={"url": "https://example.org/"})
        assert answer.json() == {"url": "https://example.org/", "archived_snapshots": {}}
        refused = httpx.post(f"http://127.0.0.1:{port}/save", data={"url": "https://example.org/"})
        assert refused.status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped" in out


def test_logs_are_a_line_per_problem_and_with_v_a_line_per_source(
    farm: SiteFarm, root: Path, tmp_path: Path, migrated_prefect_db: Path
) -> None:
    """As a person sees them, in a process of its own: no traceback for a page that is gone."""
    import os
    import subprocess
    import sys

    seed_prefect_db(root, migrated_prefect_db)  # the command's own server: its database made already

    urls = registry(root, farm, hosts=1, pages=1)
    gone = farm.sites["host0"].url("/gone")
    farm.sites["host0"].pages["/gone"] = Page(status=410)
    with (root / "sources" / "farm.yaml").open("a") as registry_file:
        registry_file.write(f"- url: {gone}\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PREFECT_", "INCIDENTLIB_"))}
    env |= {
        "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",
        "INCIDENTLIB_PER_HOST_DELAY_S": "0",
        "INCIDENTLIB_MAX_RETRIES": "0",
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    command = [str(Path(sys.executable).parent / "incidentlib")]

    quiet = subprocess.run(
        [*command, "crawl", "--root", str(root)], env=env, capture_output=True, text=True, timeout=300
    )
    assert quiet.returncode == 3, quiet.stderr  # one source of two failed
    mentions = [line for line in quiet.stderr.splitlines() if gone in line]
    assert len(mentions) == 1 and "WARNING" in mentions[0] and "http-410" in mentions[0]
    assert urls[0] not in quiet.stderr and "Traceback" not in quiet.stderr

    loud = subprocess.run(
        [*command, "-v", "crawl", "--root", str(root)], env=env, capture_output=True, text=True, timeout=300
    )
    assert loud.returncode == 3, loud.stderr
    # The command stopped the Prefect server it started once the runs' last logs had reached it:
    # nothing of Prefect's own trouble ends the output (issue 24).
    for output in (quiet.stderr, loud.stderr):
        assert "Error logging to API" not in output and "All connection attempts failed" not in output
    assert [line for line in loud.stderr.splitlines() if urls[0] in line and "unchanged" in line]


def test_a_crawl_with_no_keys_and_the_archive_port_closed_ends_in_seconds_said_once(
    farm: SiteFarm, root: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's bad day: 19 pages crawled with no archive keys and the archive's port closed (its
    connections fail). The crawl drafts its pages, its lookups end at once and say so once, and once
    the archive is back a later archive run captures what waited."""
    import logging
    import socket
    import time

    from helpers import archive_settings, settings_env

    with socket.socket() as probe:  # a port nothing listens on: each connection to it fails at once
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    monkeypatch.setenv("INCIDENTLIB_PER_HOST_DELAY_S", "0")
    monkeypatch.setenv("INCIDENTLIB_MAX_RETRIES", "0")
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_URL", f"http://127.0.0.1:{port}")
    # The service's own index rate (24 a minute) and the breaker's own pause (60 s, doubling): the run
    # must not wait on either when the archive cannot be reached.
    monkeypatch.setenv("INCIDENTLIB_BREAKER_BACKOFF_S", "60")
    site = farm.add_site("blog")
    urls = []
    for n in range(19):
        site.pages[f"/pm/{n}.md"] = Page.markdown(POSTMORTEM_MD.replace("Cache stampede", f"Stampede {n}"))
        urls.append(site.url(f"/pm/{n}.md"))
    (root / "sources" / "blog.yaml").write_text("".join(f"- url: {u}\n  org: Blog\n" for u in urls))

    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        result = cli("crawl", "--root", str(root), "--json")
    took = time.monotonic() - started
    crawled = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert crawled["counts"]["new"] == 19 and crawled["writes"] == 19, "the pages are drafted"
    archived = crawled["archive"]
    assert archived["problem"] == "no-keys" and archived["waiting"] == {"no-keys": 19}
    assert archived["counts"]["failed"] == 0
    # Measured at 3.4 s: the first lookup's tries, then none more (the next slot of the rate may come meanwhile).
    assert archived["seconds"] < 10, "a refused connection is known at once: the lookups end, not wait"
    assert archived["requests"]["cdx"] <= 2, "once the archive is known out, no lookup more"
    assert took < 60, f"the whole crawl flow took {took:.1f} s"  # measured: 9 to 11 s, Prefect's own cost included
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("cannot be reached" in line for line in warned) == 1, warned
    assert not [line for line in warned if any(u in line for u in urls)], "said once, not per source"

    with WaybackStandIn(
        WaybackRules(access_key="test-access", secret_key="test-secret", captures_per_minute=6000, cdx_per_minute=6000),
        port=port,
    ) as wayback:
        for name, value in settings_env(archive_settings(root, wayback)).items():
            monkeypatch.setenv(name, value)
        later = cli("archive", "--root", str(root), "--json")
        assert later.exit_code == 0, later.output
        assert json.loads(later.stdout)["counts"]["captured"] == 19
        assert all(len(wayback.captures_of(u)) == 1 for u in urls)
    drafts = list(Store(root).drafts())
    assert len(drafts) == 19 and all(s.archived for d in drafts for s in d.sources)
