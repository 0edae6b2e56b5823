"""Keeping archived links current, against the site farm and the Wayback stand-in."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import ArchiveCommands, ago, archive_settings, artifact_text

from pipeline.archive import archive
from pipeline.draft import new_draft
from pipeline.links import RefreshReport, links, refresh
from pipeline.models import Case, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate

PAGE = "<html><body><h1>{title}</h1><p>{text}</p></body></html>"


def page(text: str, title: str = "Outage report") -> Page:
    return Page.html(PAGE.format(title=title, text=text))


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    site = farm.add_site("blog")
    for name in ("changed", "moved", "dead", "gone", "blocked", "missing", "newer", "same"):
        site.pages[f"/pm/{name}"] = page(f"The {name} incident: the API failed for an hour after a deploy.")
    return site


NAMES = ("changed", "moved", "dead", "gone", "blocked", "missing", "newer", "same")


@dataclass
class Refreshed:
    report: RefreshReport
    urls: dict[str, str]
    case_before: bytes
    settings: Settings


@pytest.fixture
def refreshed(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, make_case: Callable[..., Case]
) -> Refreshed:
    """Every kind of source, archived, then changed on the live site, then refreshed once."""
    urls = {name: site.url(f"/pm/{name}") for name in NAMES}
    for name in NAMES:
        if name != "missing":
            store.write_draft(new_draft(SourceEntry(url=urls[name])))
    settings = archive_settings(root, wayback)
    # A refresh runs weeks after the capture; here it runs within the second, where the service
    # would answer with its capture of the last hour (that case has its own test below).
    wayback.dedupe_s = 0
    # This page changed before it was archived: its capture already holds the new text.
    site.pages["/pm/newer"] = page("The newer incident: rewritten before it was archived.")
    archive(store, settings)
    # A published case cites the page that will change, with the capture made above.
    captured = next(s.archived for d in store.drafts() for s in d.sources if s.url == urls["changed"])
    store.write_case(make_case("IL-0007", sources=[{"url": urls["changed"], "kind": "blog", "archived": captured}]))
    # One source has no capture at all.
    store.write_draft(new_draft(SourceEntry(url=urls["missing"])))

    site.pages["/pm/changed"] = page("The changed incident: the write-up now names the faulty load balancer.")
    site.pages["/pm/moved"] = Page.redirect("/pm/same", status=301)
    site.pages["/pm/dead"] = Page(b"gone", status=404)
    site.pages["/pm/gone"] = Page(b"gone", status=410)
    site.pages["/pm/blocked"] = Page(b"no bots", status=403)
    case_before = store.path("case", "IL-0007").read_bytes()
    return Refreshed(refresh(store, settings), urls, case_before, settings)


def test_refresh_sorts_every_source_by_what_its_page_answers(refreshed: Refreshed) -> None:
    urls = refreshed.urls
    outcome = {s.url: (s.outcome, s.status) for s in refreshed.report.sources}
    assert outcome == {
        urls["changed"]: ("re-archived", "ok"),
        urls["moved"]: ("moved", "moved"),
        urls["dead"]: ("gone", "gone"),
        urls["gone"]: ("gone", "gone"),
        urls["blocked"]: ("blocked", "blocked"),
        urls["missing"]: ("re-archived", "ok"),
        urls["newer"]: ("unchanged", "ok"),
        urls["same"]: ("unchanged", "ok"),
    }
    assert refreshed.report.counts() == {
        "checked": 8,
        "unchanged": 2,
        "re-archived": 2,
        "moved": 1,
        "gone": 2,
        "blocked": 1,
        "waiting": 0,
        "failed": 0,
    }


def test_a_case_citing_a_changed_page_gets_the_new_capture_and_nothing_else(
    refreshed: Refreshed, store: Store, wayback: WaybackStandIn
) -> None:
    url = refreshed.urls["changed"]
    before, after = json.loads(refreshed.case_before), json.loads(store.path("case", "IL-0007").read_bytes())
    newest = wayback.captures_of(url)[-1]
    assert after["sources"][0]["archived"] == f"https://web.archive.org/web/{newest.timestamp}/{url}"
    assert after["sources"][0]["archived"] != before["sources"][0]["archived"]
    assert {k for k in before if before[k] != after[k]} == {"sources", "updated_at"}
    assert validate(store).faults == []


def test_a_gone_page_keeps_its_capture(refreshed: Refreshed, store: Store) -> None:
    dead = next(s for d in store.drafts() for s in d.sources if s.url == refreshed.urls["dead"])
    assert dead.archived is not None
    gone = links(store, "gone")
    assert sorted(s.url for s in gone) == sorted([refreshed.urls["dead"], refreshed.urls["gone"]])
    assert all(s.archived for s in gone)


def test_a_moved_page_is_listed_with_where_it_went(refreshed: Refreshed, store: Store) -> None:
    assert [(s.url, s.moved_to) for s in links(store, "moved")] == [(refreshed.urls["moved"], refreshed.urls["same"])]


def test_a_second_refresh_with_nothing_changed_captures_and_writes_nothing(
    refreshed: Refreshed, store: Store, wayback: WaybackStandIn
) -> None:
    saves = wayback.counts["save"]
    again = refresh(store, refreshed.settings)
    assert again.counts()["re-archived"] == 0 and wayback.counts["save"] == saves
    assert again.records_updated == 0


def archived_once(store: Store, root: Path, wayback: WaybackStandIn, url: str) -> tuple[Settings, str | None]:
    """One draft citing `url`, archived: the settings used, and its capture's link."""
    store.write_draft(new_draft(SourceEntry(url=url)))
    settings = archive_settings(root, wayback)
    archive(store, settings)
    return settings, next(store.drafts()).sources[0].archived


def test_a_failing_archive_decides_nothing_and_loses_nothing(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/changed")
    settings, link = archived_once(store, root, wayback, url)
    site.pages["/pm/changed"] = page("Rewritten entirely.")
    wayback.failures.storm_429 = 1000
    report = refresh(store, settings.model_copy(update={"breaker_backoff_s": 0.01}))
    assert [(s.outcome, s.reason) for s in report.sources] == [("waiting", "index-unavailable")]
    assert next(store.drafts()).sources[0].archived == link


def test_a_page_changed_within_the_hour_waits_and_a_later_refresh_archives_it(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, make_case: Callable[..., Case]
) -> None:
    url = site.url("/pm/changed")
    settings, link = archived_once(store, root, wayback, url)
    store.write_case(make_case("IL-0007", sources=[{"url": url, "kind": "blog", "archived": link}]))
    site.pages["/pm/changed"] = page("Rewritten within the hour.")
    # The service answers a second capture within its hour with the first: no newer capture.
    report = refresh(store, settings)
    assert [(s.outcome, s.reason) for s in report.sources] == [("waiting", "capture-not-newer")]
    assert next(store.drafts()).sources[0].archived == link
    assert json.loads(store.path("case", "IL-0007").read_bytes())["sources"][0]["archived"] == link
    wayback.dedupe_s = 0  # the hour has passed
    again = refresh(store, settings)
    assert [s.outcome for s in again.sources] == ["re-archived"]
    newest = wayback.captures_of(url)[-1]
    assert json.loads(store.path("case", "IL-0007").read_bytes())["sources"][0]["archived"] == (
        f"https://web.archive.org/web/{newest.timestamp}/{url}"
    )


def test_cdx_requests_are_shared_by_urls_of_one_folder(
    store: Store, root: Path, farm: SiteFarm, wayback: WaybackStandIn
) -> None:
    site = farm.add_site("many")
    for n in range(20):
        site.pages[f"/pm/{n}"] = page(f"Incident {n}.")
        store.write_draft(new_draft(SourceEntry(url=site.url(f"/pm/{n}"))))
    settings = archive_settings(root, wayback)
    archive(store, settings)
    report = refresh(store, settings)
    assert report.counts()["unchanged"] == 20
    assert report.requests["cdx"] == 1


def test_refresh_and_links_commands(archive_commands: ArchiveCommands, site: Site) -> None:
    store, root, wayback, cli = (
        archive_commands.store,
        archive_commands.root,
        archive_commands.wayback,
        archive_commands.cli,
    )
    archive_commands.use(archive_settings(root, wayback))
    for name in ("dead", "same"):
        store.write_draft(new_draft(SourceEntry(url=site.url(f"/pm/{name}"))))
    archive(store, archive_settings(root, wayback))
    site.pages["/pm/dead"] = Page(b"gone", status=410)
    result = cli("refresh", "--root", str(root))
    assert result.exit_code == 0, result.output
    assert f"gone {site.url('/pm/dead')}" in result.stdout
    listed = cli("links", "--status", "gone", "--root", str(root))
    assert listed.stdout.startswith(f"gone {site.url('/pm/dead')} (archived: https://web.archive.org/web/")
    assert len(listed.stdout.splitlines()) == 1
    assert "**gone**" in artifact_text("refresh-report")


def test_with_the_default_reuse_window_a_changed_page_still_gets_a_new_capture(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/changed")
    store.write_draft(new_draft(SourceEntry(url=url)))
    # The operator's settings: an existing capture younger than 30 days is reused by `archive`.
    settings = archive_settings(root, wayback).model_copy(
        update={"reuse_capture_within_s": Settings.model_fields["reuse_capture_within_s"].default}
    )
    archive(store, settings)
    link = next(store.drafts()).sources[0].archived
    wayback.dedupe_s = 0  # the refresh runs long after the capture
    site.pages["/pm/changed"] = page("The changed incident: rewritten a week later.")
    report = refresh(store, settings)
    assert [s.outcome for s in report.sources] == ["re-archived"]
    newest = wayback.captures_of(url)[-1]
    assert next(store.drafts()).sources[0].archived == f"https://web.archive.org/web/{newest.timestamp}/{url}" != link


# ------------------------------------------------------------ playback and the index, as they answer


def held(store: Store, root: Path, site: Site, wayback: WaybackStandIn, name: str) -> tuple[str, str, Settings]:
    """A draft citing a page whose capture the archive holds already (made 3 hours ago, of the
    live bytes): the URL, the capture's link and the settings."""
    url = site.url(f"/pm/{name}")
    capture = wayback.add_capture(url, ago(3), site.pages[f"/pm/{name}"].body)
    store.write_draft(new_draft(SourceEntry(url=url)))
    return url, f"https://web.archive.org/web/{capture.timestamp}/{url}", archive_settings(root, wayback)


def outcomes(report: RefreshReport) -> list[tuple[str, str | None, str | None]]:
    return [(s.outcome, s.reason, s.archived) for s in report.sources]


def test_a_redirect_newer_than_the_page_never_keeps_refresh_waiting(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url, link, settings = held(store, root, site, wayback, "same")
    wayback.add_capture(url, ago(2), b"moved", statuscode=301, location="/pm/moved")
    wayback.add_capture(url, ago(1), b"moved", statuscode=301, location="/pm/moved")  # its revisit
    for _ in range(2):
        assert outcomes(refresh(store, settings)) == [("unchanged", None, link)]
    assert next(store.drafts()).sources[0].archived == link and wayback.counts["save"] == 0


def test_an_excluded_capture_is_not_hashed_and_fails_the_link_as_blocked_site(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url, _, settings = held(store, root, site, wayback, "same")
    wayback.failures.excluded_urls = {url}
    assert outcomes(refresh(store, settings)) == [("failed", "blocked-site", None)]
    assert next(store.drafts()).sources[0].archived is None, "no link to a capture no reader can see"
    assert wayback.counts["save"] == 0


def test_an_old_unreadable_row_changes_nothing_and_a_newer_one_is_said(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url, link, settings = held(store, root, site, wayback, "same")
    wayback.failures.bad_rows = {url: "timestamp,mailto"}  # a month of 00 in 2000, an e-mail address
    assert outcomes(refresh(store, settings)) == [("unchanged", None, link)]
    wayback.failures.bad_rows = {url: "newer-timestamp"}  # a day of 00, a year after the capture
    # An index row is not the source's answer: the page waits, compared with its newest readable capture.
    report = refresh(store, settings)
    assert outcomes(report) == [("waiting", "index-row-unreadable", link)] and wayback.counts["save"] == 0


def test_a_page_that_changed_is_captured_whatever_a_newer_unreadable_row(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url, link, settings = held(store, root, site, wayback, "changed")
    wayback.failures.bad_rows = {url: "newer-timestamp"}
    site.pages["/pm/changed"] = page("The changed incident: rewritten since its capture.")
    (source,) = refresh(store, settings).sources
    newest = wayback.captures_of(url)[-1]
    assert (source.outcome, source.reason) == ("re-archived", "index-row-unreadable"), "the row is said"
    assert source.archived == f"https://web.archive.org/web/{newest.timestamp}/{url}" != link
    assert next(store.drafts()).sources[0].archived == source.archived


def test_a_recorded_link_to_a_redirects_row_gives_way_to_the_newest_page(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, make_case: Callable[..., Case]
) -> None:
    url, link, settings = held(store, root, site, wayback, "same")
    redirect = wayback.add_capture(url, ago(2), b"moved", statuscode=301, location="/pm/moved")
    to_redirect = f"https://web.archive.org/web/{redirect.timestamp}/{url}"
    store.write_case(make_case("IL-0008", sources=[{"url": url, "kind": "blog", "archived": to_redirect}]))
    report = refresh(store, settings)
    # The page is hashed (one playback) and found unchanged; the case's link moves to it, older as it is.
    assert outcomes(report) == [("unchanged", None, link)] and report.requests["web"] == 1
    assert store.read_case("IL-0008").sources[0].archived == link
    assert next(store.drafts()).sources[0].archived == link


def test_a_recorded_link_to_an_archived_error_page_still_leads_to_a_capture(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, make_case: Callable[..., Case]
) -> None:
    url = site.url("/pm/same")
    # The index lists no 4xx row (the client asks for 2xx and 3xx); playback replays it as archived.
    capture = wayback.add_capture(url, ago(3), b"not found then", statuscode=404)
    link = f"https://web.archive.org/web/{capture.timestamp}/{url}"
    store.write_case(make_case("IL-0007", sources=[{"url": url, "kind": "blog", "archived": link}]))
    report = refresh(store, archive_settings(root, wayback))
    # Kept as a capture (playback answers it with Memento-Datetime), and read (one playback more): a
    # capture of an error page is no copy of the page that answers now, so the page is captured anew.
    (source,) = report.sources
    newest = wayback.captures_of(url)[-1]
    assert (source.outcome, source.reason) == ("re-archived", None) and report.requests["web"] == 2
    assert source.archived == f"https://web.archive.org/web/{newest.timestamp}/{url}" != link
    assert store.read_case("IL-0007").sources[0].archived == source.archived


# ------------------------------------------------------------ an index that lags behind the recorded capture


def refreshed_by_command(cli: Callable[..., Any], root: Path) -> list[tuple[str, str | None]]:
    """`incidentlib refresh --json`: each link's outcome and reason."""
    result = cli("refresh", "--root", str(root), "--json")
    assert result.exit_code == 0, result.output
    return [(s["outcome"], s["reason"]) for s in json.loads(result.stdout)["sources"]]


def link_state(cli: Callable[..., Any], root: Path) -> dict[str, Any]:
    """What `incidentlib links --json` keeps of the one link."""
    (state,) = json.loads(cli("links", "--root", str(root), "--json").stdout)
    return dict(state)


@pytest.fixture
def lagging(archive_commands: ArchiveCommands, site: Site) -> tuple[str, str]:
    """A page archived while the index lags behind its capture, as the service's does for about 20 s
    after a job (playback serves the capture at once): its URL and the recorded link, newer than any
    row the index shows."""
    store, wayback = archive_commands.store, archive_commands.wayback
    url = site.url("/pm/changed")
    store.write_draft(new_draft(SourceEntry(url=url)))
    settings = archive_settings(archive_commands.root, wayback)
    archive_commands.use(settings)
    wayback.failures.index_lag_s = 3600.0  # held out of the index, no sleep: the switch, not the clock
    archive(store, settings)
    link = next(store.drafts()).sources[0].archived
    assert link is not None and wayback.captures_of(url), "captured and recorded, unconfirmed"
    return url, link


def test_a_page_changed_after_a_capture_the_index_does_not_show_yet_is_re_archived(
    lagging: tuple[str, str], root: Path, site: Site, wayback: WaybackStandIn, cli: Callable[..., Any]
) -> None:
    url, link = lagging
    wayback.dedupe_s = 0  # the refresh runs after the service's hour
    site.pages["/pm/changed"] = Page.html(
        PAGE.format(title="Outage report", text="The changed incident.") + "<h2>Follow-up</h2><p>A section added.</p>"
    )
    assert refreshed_by_command(cli, root) == [("re-archived", None)]
    state = link_state(cli, root)
    assert state["text_sha"] and state["capture_text_sha"] == state["text_sha"], "compared, then captured anew"
    newest = wayback.captures_of(url)[-1]
    assert state["archived"] == f"https://web.archive.org/web/{newest.timestamp}/{url}" != link


def test_within_the_services_hour_a_changed_page_waits_and_is_never_called_unchanged(
    lagging: tuple[str, str], root: Path, site: Site, wayback: WaybackStandIn, cli: Callable[..., Any]
) -> None:
    """The issue's runs: the index 20 s behind, SPN2's dedupe window; the page got a section after
    its capture. Twice refreshed within the hour, it waits; the hour gone, it is re-archived."""
    url, link = lagging
    site.pages["/pm/changed"] = Page.html(
        PAGE.format(title="Outage report", text="The changed incident.") + "<h2>Follow-up</h2><p>A section added.</p>"
    )
    for _ in range(2):
        assert refreshed_by_command(cli, root) == [("waiting", "capture-not-newer")]
        state = link_state(cli, root)
        assert state["text_sha"] and state["capture_text_sha"] and state["text_sha"] != state["capture_text_sha"]
        assert state["archived"] == link and state["etag"] is None
    wayback.failures.index_lag_s, wayback.dedupe_s = 0.0, 0
    assert refreshed_by_command(cli, root) == [("re-archived", None)]
    assert len(wayback.captures_of(url)) == 2


def test_an_unchanged_page_is_unchanged_after_a_comparison_with_its_recorded_capture(
    lagging: tuple[str, str], root: Path, wayback: WaybackStandIn, cli: Callable[..., Any]
) -> None:
    url, link = lagging
    assert refreshed_by_command(cli, root) == [("unchanged", None)]
    state = link_state(cli, root)
    assert state["text_sha"] and state["capture_text_sha"] == state["text_sha"] and state["archived"] == link
    assert len(wayback.captures_of(url)) == 1, "nothing captured again"


def test_a_recorded_capture_playback_cannot_show_yet_waits_and_is_not_compared_with_an_older_one(
    archive_commands: ArchiveCommands, site: Site
) -> None:
    store, root, wayback, cli = (
        archive_commands.store,
        archive_commands.root,
        archive_commands.wayback,
        archive_commands.cli,
    )
    url = site.url("/pm/changed")
    wayback.add_capture(url, ago(48), site.pages["/pm/changed"].body)  # an older capture, in the index
    store.write_draft(new_draft(SourceEntry(url=url)))
    settings = archive_settings(root, wayback)
    archive_commands.use(settings)
    wayback.failures.cdx_lag_s = 3600.0  # the new capture out of the index and of playback alike
    archive(store, settings)
    link = next(store.drafts()).sources[0].archived
    site.pages["/pm/changed"] = page("The changed incident: a section added after the capture.")
    for _ in range(2):
        assert refreshed_by_command(cli, root) == [("waiting", "capture-not-indexed")]
        state = link_state(cli, root)
        assert state["capture_text_sha"] is None and state["archived"] == link and state["etag"] is None
    wayback.failures.cdx_lag_s, wayback.dedupe_s = 0.0, 0
    assert refreshed_by_command(cli, root) == [("re-archived", None)]
