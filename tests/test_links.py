"""Keeping archived links current, against the site farm and the Wayback stand-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import archive_settings

from pipeline.archive import archive
from pipeline.draft import new_draft
from pipeline.links import links, refresh
from pipeline.models import SourceEntry
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


def test_refresh_sorts_every_kind_of_source(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn, make_case
) -> None:
    names = ("changed", "moved", "dead", "gone", "blocked", "missing", "newer", "same")
    urls = {name: site.url(f"/pm/{name}") for name in names}
    for name in names:
        if name != "missing":
            store.write_draft(new_draft(SourceEntry(url=urls[name])))
    settings = archive_settings(root, wayback)
    # This page changed before it was archived: its capture already holds the new text.
    site.pages["/pm/newer"] = page("The newer incident: rewritten before it was archived.")
    archive(store, settings)
    # A published case cites the page that will change, with the capture made above.
    captured = next(s.archived for d in store.drafts() for s in d.sources if s.url == urls["changed"])
    case = make_case("IL-0007", sources=[{"url": urls["changed"], "kind": "blog", "archived": captured}])
    store.write_case(case)
    # One source has no capture at all.
    store.write_draft(new_draft(SourceEntry(url=urls["missing"])))

    site.pages["/pm/changed"] = page("The changed incident: the write-up now names the faulty load balancer.")
    site.pages["/pm/moved"] = Page.redirect("/pm/same", status=301)
    site.pages["/pm/dead"] = Page(b"gone", status=404)
    site.pages["/pm/gone"] = Page(b"gone", status=410)
    site.pages["/pm/blocked"] = Page(b"no bots", status=403)
    case_bytes = store.path("case", "IL-0007").read_bytes()

    report = refresh(store, settings)

    outcome = {s.url: (s.outcome, s.status) for s in report.sources}
    assert outcome[urls["changed"]] == ("re-archived", "ok")
    assert outcome[urls["moved"]] == ("moved", "moved")
    assert outcome[urls["dead"]] == ("gone", "gone")
    assert outcome[urls["gone"]] == ("gone", "gone")
    assert outcome[urls["blocked"]] == ("blocked", "blocked")
    assert outcome[urls["missing"]] == ("re-archived", "ok")
    assert outcome[urls["newer"]] == ("unchanged", "ok")
    assert outcome[urls["same"]] == ("unchanged", "ok")
    assert report.counts() == {
        "checked": 8,
        "unchanged": 2,
        "re-archived": 2,
        "moved": 1,
        "gone": 2,
        "blocked": 1,
        "failed": 0,
    }

    # The case now cites the new capture; nothing else in it moved but updated_at.
    before, after = json.loads(case_bytes), json.loads(store.path("case", "IL-0007").read_bytes())
    assert after["sources"][0]["archived"] != before["sources"][0]["archived"]
    newest = wayback.captures_of(urls["changed"])[-1]
    assert after["sources"][0]["archived"] == f"https://web.archive.org/web/{newest.timestamp}/{urls['changed']}"
    assert {k for k in before if before[k] != after[k]} == {"sources", "updated_at"}
    # A gone page keeps its capture.
    dead = next(s for d in store.drafts() for s in d.sources if s.url == urls["dead"])
    assert dead.archived is not None
    gone = links(store, "gone")
    assert sorted(s.url for s in gone) == sorted([urls["dead"], urls["gone"]])
    assert all(s.archived for s in gone)
    assert links(store, "moved")[0].moved_to == urls["same"]
    assert validate(store).faults == []

    # Nothing changed since: a second refresh captures nothing and writes no record.
    saves = wayback.counts["save"]
    again = refresh(store, settings)
    assert again.counts()["re-archived"] == 0 and wayback.counts["save"] == saves
    assert again.records_updated == 0


def test_a_failing_archive_decides_nothing_and_loses_nothing(
    store: Store, root: Path, site: Site, wayback: WaybackStandIn
) -> None:
    url = site.url("/pm/changed")
    store.write_draft(new_draft(SourceEntry(url=url)))
    settings = archive_settings(root, wayback)
    archive(store, settings)
    link = next(store.drafts()).sources[0].archived
    site.pages["/pm/changed"] = page("Rewritten entirely.")
    wayback.failures.storm_429 = 1000
    report = refresh(store, settings.model_copy(update={"breaker_backoff_s": 0.01}))
    assert [(s.outcome, s.reason) for s in report.sources] == [("failed", "index-unavailable")]
    assert next(store.drafts()).sources[0].archived == link


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


def test_refresh_and_links_commands(
    store: Store,
    root: Path,
    site: Site,
    wayback: WaybackStandIn,
    prefect_api: None,
    cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conftest import settings_env
    from prefect.artifacts import Artifact

    for name, value in settings_env(archive_settings(root, wayback)).items():
        monkeypatch.setenv(name, value)
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
    report = Artifact.get("refresh-report")
    assert report is not None and "**gone**" in report.data
