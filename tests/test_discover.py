"""Discovery, called as a library: saved real feeds served by a local site farm with their real
content types, read with conditional requests, their entries proposed as candidates, accepted,
dismissed, registered; and the feeds that go wrong, each failing alone."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from feedsamples import (
    CARGO_POSTMORTEM,
    CONTENT_TYPES,
    PARSE_POSTMORTEM_URL,
    SAUCE_EDITED_URL,
    atom_feed,
    gcp_incidents,
    parse_without_postmortem,
    postmortem_update,
    sample,
    sample_text,
    sauce_with_postmortem,
    statuspage_json,
)
from helpers import archive_settings

from pipeline.archive import archive
from pipeline.candidates import accept, candidates, dismiss
from pipeline.crawl import crawl
from pipeline.discover import DiscoverReport, FeedReport, discover
from pipeline.errors import RecordError
from pipeline.ids import candidate_id, draft_id_for
from pipeline.models import Candidate, CandidateState, FeedEntry, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate


@pytest.fixture
def settings(root: Path) -> Settings:
    return Settings(root=root, allow_private_hosts=True, per_host_delay_s=0.0, max_retries=0, total_timeout_s=5.0)


@pytest.fixture
def site(farm: SiteFarm) -> Site:
    return farm.add_site("feeds")


def write_feeds(root: Path, *feeds: dict[str, Any]) -> None:
    (root / "sources" / "feeds.yaml").write_text(yaml.safe_dump(list(feeds), sort_keys=False))


def register(root: Path, *entries: dict[str, Any], file: str = "test.yaml") -> None:
    (root / "sources" / file).write_text(yaml.safe_dump(list(entries), sort_keys=False))


def serve(site: Site, path: str, name: str, body: bytes | None = None, **page: Any) -> str:
    """Serve a saved feed (or `body` in its stead) at `path` with the content type its server uses."""
    page.setdefault("content_type", CONTENT_TYPES[name])
    site.pages[path] = Page(sample(name) if body is None else body, **page)
    return site.url(path)


def serve_atom(site: Site, path: str, entries: list[dict[str, str]]) -> str:
    site.pages[path] = Page(atom_feed(entries), content_type="application/atom+xml")
    return site.url(path)


def of(report: DiscoverReport, url: str) -> FeedReport:
    (found,) = [f for f in report.feeds if f.url == url]
    return found


def listed(store: Store) -> dict[str, Candidate]:
    found, faults = store.read_candidates()
    assert faults == []
    return {c.url: c for c in found}


def html_page(title: str) -> Page:
    return Page.html(
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        "<p>On 2 May 2024 the job queue stopped draining for 40 minutes after a deploy.</p>"
        "<h2>Root cause</h2><p>A configuration set the worker pool size to zero.</p></article></body></html>"
    )


# ------------------------------------------------------------ every kind of feed


def test_every_kind_of_feed_is_read_from_its_real_copy_and_proposes_candidates(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    urls = {
        "rust": serve(site, "/inside-rust/feed.xml", "atom.xml"),
        "github-blog": serve(site, "/feed/", "rss2-wordpress.xml"),
        "parse": serve(site, "/history.rss", "rss2.xml"),
        "sauce": serve(site, "/history.atom", "statuspage-history.atom"),
        "githubstatus": serve(site, "/api/v2/incidents.json", "statuspage-incidents.json"),
        "quay": serve(site, "/index.json", "statuspage-index-2016.json"),
        "gcp": serve(site, "/incidents.json", "gcp-incidents.json"),
        "danluu": serve(site, "/danluu/README.md", "danluu-README-excerpt.md"),
        "rust-index": serve(site, "/inside-rust/index.html", "html-index.html"),
    }
    kinds = {"rust": "atom", "github-blog": "rss", "gcp": "gcp-incidents", "danluu": "markdown-list"}
    kinds |= {"rust-index": "html-links"} | dict.fromkeys(["parse", "sauce", "githubstatus", "quay"], "statuspage")
    feeds = [{"url": urls[name], "kind": kinds[name], "name": name} for name in urls]
    feeds[-1]["selector"] = "table.post-list a"
    write_feeds(root, *feeds)

    report = discover(store, settings)

    assert report.counts() == {
        "read": 9,
        "not_modified": 0,
        "unchanged": 0,
        "not_due": 0,
        "failed": 0,
        "deferred": 0,
        "candidates": 2 + 3 + 1 + 1 + 9 + 6,
        "registered": 0,
        "updated": 0,
    }
    proposed = {name: len(of(report, url).candidates) for name, url in urls.items()}
    assert proposed == {
        "rust": 2,
        "github-blog": 3,
        "parse": 1,  # the incident with a Postmortem paragraph
        "sauce": 0,  # none has one yet
        "githubstatus": 0,
        "quay": 0,
        "gcp": 1,
        "danluu": 9,
        "rust-index": 6,
    }
    assert [of(report, urls[n]).filtered for n in ("parse", "sauce", "githubstatus", "quay")] == [1, 3, 1, 1]
    assert all(f.warnings == [] for f in report.feeds)
    assert report.bytes_read == sum(len(site.pages[p].body) for p in site.pages)
    assert report.requests == 10, "each feed once, and robots.txt"

    found = listed(store)
    assert len(found) == 22
    parse = found[PARSE_POSTMORTEM_URL]
    assert (parse.feed, parse.feed_text, parse.why, parse.date) == (
        urls["parse"],
        True,
        "it has a postmortem",
        "2013-12-24",
    )
    text = store.state.feed_text(parse.id)
    assert text and text.startswith("# Elevated error rates and latency\n\n# Summary of the December 24")
    gcp = found[site.url("/incidents/T8gmtofFSTGT5tbhyciF")]
    assert gcp.feed_text and "## Root Cause" in (store.state.feed_text(gcp.id) or "")
    cloudflare = found["https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/"]
    assert (cloudflare.org, cloudflare.why) == ("Cloudflare", "every entry of the feed is taken")
    assert cloudflare.listed_as and cloudflare.listed_as.startswith("https://web.archive.org/web/20220621124002/")
    assert site.url("/inside-rust/2023/05/01/cargo-postmortem.html") in found, "relative links resolved"
    assert found[CARGO_POSTMORTEM].title == "Postmortem Analysis in Cargo"
    assert all(c.id == candidate_id(c.url) and c.state == CandidateState.OPEN for c in found.values())
    assert store.candidates_path.read_text().startswith("# Pages the feeds of feeds.yaml proposed")
    assert validate(store).faults == []


# ------------------------------------------------------------ asking again


def test_a_second_run_answered_304_downloads_and_writes_nothing(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    atom = serve(site, "/feed.xml", "atom.xml")
    listing = serve(site, "/README.md", "danluu-README-excerpt.md")
    write_feeds(root, {"url": atom, "kind": "atom"}, {"url": listing, "kind": "markdown-list"})
    first = discover(store, settings)
    assert first.candidates_written == 11 and first.bytes_read > 0
    before = store.candidates_path.read_bytes()
    states = store.state.read_feed_states()
    assert states[atom].etag == site.pages["/feed.xml"].etag and states[atom].sha256

    again = discover(store, settings)

    assert [f.outcome for f in again.feeds] == ["not_modified", "not_modified"]
    assert (again.bytes_read, again.candidates_written, again.writes) == (0, 0, 0)
    assert store.candidates_path.read_bytes() == before, "byte for byte"
    assert (site.bodies["/feed.xml"], site.requests["/feed.xml"]) == (1, 2)
    kept = store.state.read_feed_states()[atom]
    assert (kept.etag, kept.last_modified) == (states[atom].etag, states[atom].last_modified), "a 304 keeps them"
    assert kept.entries == states[atom].entries


def test_a_server_that_ignores_validators_and_sends_the_same_bytes_is_unchanged(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    url = serve(site, "/feed.xml", "atom.xml", conditional=False)
    write_feeds(root, {"url": url, "kind": "atom"})
    discover(store, settings)
    before = store.candidates_path.read_bytes()

    again = discover(store, settings)

    (feed,) = again.feeds
    assert feed.outcome == "unchanged" and feed.bytes_read == len(sample("atom.xml"))
    assert (again.candidates_written, again.writes, feed.changed) == (0, 0, 0)
    assert store.candidates_path.read_bytes() == before
    assert site.bodies["/feed.xml"] == 2


# ------------------------------------------------------------ feeds that go wrong


def test_broken_xml_with_entries_is_read_and_read_whole_next_time(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    broken = sample_text("atom.xml").replace("</feed>", "")
    url = serve(site, "/feed.xml", "atom.xml", body=broken.encode())
    write_feeds(root, {"url": url, "kind": "atom"})

    first = discover(store, settings)

    (feed,) = first.feeds
    assert feed.outcome == "read" and len(feed.candidates) == 2
    assert len(feed.warnings) == 1 and feed.warnings[0].startswith("malformed: ")
    assert store.state.read_feed_states()[url].sha256 is None, "no validators kept for a feed read in part"

    again = discover(store, settings)

    assert again.feeds[0].outcome == "read" and site.bodies["/feed.xml"] == 2, "asked whole, not 'modified since?'"
    assert (again.feeds[0].changed, again.candidates_written) == (0, 0), "its entries are known"


def test_each_broken_feed_fails_in_one_line_and_the_others_are_read(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    html = serve(site, "/html-as-atom", "html-index.html", content_type="application/atom+xml")
    cut = sample_text("atom.xml")
    no_entries = serve(site, "/cut.xml", "atom.xml", body=cut[: cut.index("<entry>") - 20].encode())
    bad_status = serve(site, "/api/v2/incidents.json", "statuspage-incidents.json", body=b'{"incidents": [{"id": ')
    bad_gcp = serve(site, "/incidents.json", "gcp-incidents.json", body=b'[{"id": "a", "begin": ')
    wrong_type = serve(site, "/page.html", "html-index.html")
    latin = sample_text("atom.xml").replace("Postmortem Analysis in Cargo", "Café outage – a naïve retry")
    cp1252 = serve(
        site, "/cp1252.xml", "atom.xml", body=latin.encode("cp1252"), content_type="application/atom+xml; charset=utf-8"
    )
    good = serve(site, "/good.xml", "rss2-wordpress.xml")
    write_feeds(
        root,
        {"url": html, "kind": "atom"},
        {"url": no_entries, "kind": "atom"},
        {"url": bad_status, "kind": "statuspage"},
        {"url": bad_gcp, "kind": "gcp-incidents"},
        {"url": wrong_type, "kind": "atom"},
        {"url": cp1252, "kind": "atom"},
        {"url": good, "kind": "rss"},
    )

    report = discover(store, settings)

    assert report.failures() == {"not-a-feed": 4, "unsupported-type": 1}
    for url, words in [
        (html, "not an Atom or RSS feed (SAXParseException: "),
        (no_entries, "not an Atom or RSS feed (SAXParseException: "),
        (bad_status, "not a Statuspage incidents document: "),
        (bad_gcp, "not a Google Cloud incidents document: "),
    ]:
        feed = of(report, url)
        assert (feed.outcome, feed.reason) == ("failed", "not-a-feed")
        assert feed.message and feed.message.startswith(f"{url}: {words}") and "\n" not in feed.message
        assert feed.candidates == []
    refused = of(report, wrong_type)
    assert (refused.reason, refused.bytes_read) == ("unsupported-type", 0), "refused before its body"
    assert refused.message == f"{wrong_type}: served text/html, which is not one of " + ", ".join(
        ["application/atom+xml", "application/rss+xml", "application/xml", "text/xml", "application/rdf+xml"]
    )
    latin_feed = of(report, cp1252)
    assert latin_feed.outcome == "read" and latin_feed.warnings[0].startswith("declared encoding overridden: ")
    assert listed(store)[CARGO_POSTMORTEM].title == "Café outage – a naïve retry"
    assert (of(report, good).outcome, len(of(report, good).candidates)) == ("read", 3)
    states = store.state.read_feed_states()
    failure = states[html].failure
    assert failure is not None and failure.reason == "not-a-feed"
    assert states[html].sha256 is None and states[good].failure is None


def test_a_feed_that_never_ends_or_stalls_fails_and_the_others_are_read(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    endless = site.url("/endless.xml")
    site.pages["/endless.xml"] = Page(behavior="endless", content_type="application/atom+xml")
    stalled = site.url("/stalled.json")
    site.pages["/stalled.json"] = Page(sample("gcp-incidents.json"), content_type="application/json", behavior="stall")
    good = serve(site, "/good.xml", "atom.xml")
    write_feeds(
        root, {"url": endless, "kind": "atom"}, {"url": stalled, "kind": "gcp-incidents"}, {"url": good, "kind": "atom"}
    )
    quick = settings.model_copy(update={"max_body_bytes": 64 * 1024, "total_timeout_s": 1.0})

    report = discover(store, quick)

    assert (of(report, endless).outcome, of(report, endless).reason) == ("failed", "too-large")
    assert (of(report, stalled).outcome, of(report, stalled).reason) == ("failed", "timeout")
    assert (of(report, good).outcome, len(of(report, good).candidates)) == ("read", 2)
    assert set(listed(store)) == {
        CARGO_POSTMORTEM,
        "https://blog.rust-lang.org/inside-rust/2023/04/17/1.69.0-prerelease.html",
    }


def test_a_feed_whose_host_asks_to_wait_an_hour_is_deferred_and_asked_again_next_run(
    farm: SiteFarm, site: Site, store: Store, settings: Settings, root: Path
) -> None:
    busy = farm.add_site("busy")
    busy.pages["/feed.xml"] = Page(status=429, headers={"Retry-After": "3600"}, conditional=False)
    good = serve(site, "/feed.xml", "atom.xml")
    write_feeds(root, {"url": busy.url("/feed.xml"), "kind": "atom", "schedule": "7d"}, {"url": good, "kind": "atom"})

    report = discover(store, settings)

    deferred = of(report, busy.url("/feed.xml"))
    assert (deferred.outcome, deferred.reason) == ("deferred", "deferred")
    assert deferred.message and "asked to wait 3600 s (Retry-After)" in deferred.message
    assert of(report, good).outcome == "read"
    assert store.state.read_feed_states()[busy.url("/feed.xml")].checked_at is None, "not counted as asked"
    busy.pages["/feed.xml"] = Page(
        atom_feed([{"url": busy.url("/pm"), "title": "Busy day"}]), content_type="application/atom+xml"
    )
    again = discover(store, settings)
    assert of(again, busy.url("/feed.xml")).outcome == "read"


def test_a_feed_of_ten_thousand_entries_proposes_max_feed_entries(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    body = "\n\n".join(f"[Org {n}](https://example.org/pm/{n}). Outage {n}." for n in range(10_000)).encode()
    url = serve(site, "/README.md", "danluu-README-excerpt.md", body=body)
    write_feeds(root, {"url": url, "kind": "markdown-list"})

    report = discover(store, settings.model_copy(update={"max_feed_entries": 50}))

    (feed,) = report.feeds
    assert (feed.entries, len(feed.candidates)) == (50, 50)
    assert feed.warnings == ["kept the first 50 of 10000 entries (max_feed_entries)"]
    assert len(listed(store)) == 50 and "https://example.org/pm/49" in listed(store)
    assert len(store.state.read_feed_states()[url].entries) == 50


# ------------------------------------------------------------ entries that change


def test_an_open_candidate_follows_its_entry(site: Site, store: Store, settings: Settings, root: Path) -> None:
    post = site.url("/posts/queue.html")
    feed = serve_atom(site, "/feed.xml", [{"url": post, "title": "Queue outage", "updated": "2024-05-01T00:00:00Z"}])
    write_feeds(root, {"url": feed, "kind": "atom"})
    discover(store, settings)
    first = listed(store)[post]
    assert (first.title, first.date, first.updated_at) == ("Queue outage", "2024-05-01", None)

    serve_atom(
        site, "/feed.xml", [{"url": post, "title": "Queue outage: the full story", "updated": "2024-05-03T08:00:00Z"}]
    )
    report = discover(store, settings)

    (feed_report,) = report.feeds
    assert (feed_report.changed, feed_report.updated, feed_report.candidates) == (1, [post], [])
    assert report.candidates_written == 1
    now = listed(store)[post]
    assert (now.id, now.title, now.date, now.found_at) == (
        first.id,
        "Queue outage: the full story",
        "2024-05-03",
        first.found_at,
    )
    assert now.updated_at is not None and now.updated_at > first.found_at


def test_a_registered_page_whose_entry_changes_is_to_be_crawled_again(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    post = site.url("/posts/queue.html")
    register(root, {"url": site.url("/posts/queue/"), "org": "Acme"})  # the same post, another spelling
    feed = serve_atom(site, "/feed.xml", [{"url": post, "title": "Queue outage"}])
    write_feeds(root, {"url": feed, "kind": "atom"})

    first = discover(store, settings)

    assert (first.feeds[0].known, first.feeds[0].candidates, first.recrawl) == (1, [], [])
    serve_atom(site, "/feed.xml", [{"url": post, "title": "Queue outage (updated)", "updated": "2024-05-04T00:00:00Z"}])

    again = discover(store, settings)

    assert again.recrawl == [SourceEntry(url=site.url("/posts/queue/"), org="Acme")]
    assert again.feeds[0].updated == [site.url("/posts/queue/")]
    assert not store.candidates_path.exists(), "never proposed"


@dataclass(frozen=True)
class Awaited:
    """A feed whose incident gets its postmortem later: the feed's `kind`, its sample's `name`, its bytes
    `before` and `after` the postmortem came, the postmortem's `page` (a path on the site, or a URL)
    and the `words` its text begins with."""

    kind: str
    name: str
    before: bytes
    after: bytes
    page: str
    words: str


@pytest.mark.parametrize(
    "awaited",
    [
        pytest.param(
            Awaited(
                "statuspage",
                "statuspage-history.atom",
                sample("statuspage-history.atom"),
                sauce_with_postmortem("# Tunnels failed to start\n\nA certificate expired on the tunnel proxies."),
                SAUCE_EDITED_URL,
                "# 2020-November-03 Resolved Service Incident\n\n# Tunnels failed to start\n\nA certificate expired",
            ),
            id="statuspage-atom",
        ),
        pytest.param(
            Awaited(
                "statuspage",
                "rss2.xml",
                parse_without_postmortem(),
                sample("rss2.xml"),
                PARSE_POSTMORTEM_URL,
                "# Elevated error rates and latency\n\n# Summary of the December 24 Parse Service Disruption",
            ),
            id="statuspage-rss",
        ),
        pytest.param(
            Awaited(
                "gcp-incidents",
                "gcp-incidents.json",
                gcp_incidents(report=None),
                gcp_incidents(),
                "/incidents/T8gmtofFSTGT5tbhyciF",
                "# Google Cloud VMware Engine (GCVE) Stretched Cluster customers are experiencing zonal outages",
            ),
            id="gcp",
        ),
    ],
)
def test_an_incident_is_proposed_once_its_postmortem_comes(
    site: Site, store: Store, settings: Settings, root: Path, awaited: Awaited
) -> None:
    url = serve(site, "/feed", awaited.name, body=awaited.before)
    write_feeds(root, {"url": url, "kind": awaited.kind})
    page = site.url(awaited.page) if awaited.page.startswith("/") else awaited.page

    first = discover(store, settings)

    assert first.feeds[0].candidates == [] and first.feeds[0].filtered >= 1
    serve(site, "/feed", awaited.name, body=awaited.after)

    again = discover(store, settings)

    assert again.feeds[0].candidates == [candidate_id(page)] and again.feeds[0].changed == 1
    proposed = listed(store)[page]
    assert proposed.feed_text and proposed.why == "it has a postmortem"
    text = store.state.feed_text(proposed.id)
    assert text and text.startswith(awaited.words)


@dataclass(frozen=True)
class Revised:
    """A feed that carries a postmortem's text: the feed's `kind`, its sample's `name`, and its bytes
    for a `version(words, at)` of the postmortem (`words` in it, revised `at`)."""

    kind: str
    name: str
    version: Callable[[str, str], bytes]


@pytest.mark.parametrize(
    "revised",
    [
        pytest.param(
            Revised(
                "statuspage",
                "statuspage-index-2016.json",
                lambda words, at: statuspage_json(
                    "statuspage-index-2016.json",
                    postmortem_body="## Summary<br />On 2 June 2016 no email left Quay.io for 27 hours. "
                    f"{words}<br /><br />## Root cause<br />The mail relay's credentials had expired.",
                    postmortem_published_at=at,
                    updated_at=at,
                ),
            ),
            id="statuspage-json",
        ),
        pytest.param(
            Revised(
                "gcp-incidents",
                "gcp-incidents.json",
                lambda words, at: gcp_incidents(
                    report="## Incident Report\n## Summary\n"
                    "On 14 July 2026 stretched clusters lost inter-site traffic. "
                    f"{words}\n## Root Cause\nA network configuration update exposed a gap in the routing logic.",
                    modified=at,
                ),
            ),
            id="gcp",
        ),
    ],
)
def test_a_registered_source_drafted_from_its_feed_is_rewritten_when_its_postmortem_changes(
    site: Site, store: Store, settings: Settings, root: Path, revised: Revised
) -> None:
    name, version = revised.name, revised.version
    url = serve(site, "/feed", name, body=version("Users could not sign up.", "2026-08-01T00:00:00+00:00"))
    write_feeds(root, {"url": url, "kind": revised.kind})
    discover(store, settings)
    (proposed,) = listed(store).values()
    accepted = accept(store, settings, [proposed.id])
    (drafted,) = accepted.drafts
    assert drafted.outcome == "new" and drafted.wrote
    first = store.read_draft(drafted.draft_id)
    assert "Users could not sign up." in (first.text or "")
    store.update_draft(first.id, lambda d: d.model_copy(update={"summary": {"en": "A writer's summary."}}))

    serve(site, "/feed", name, body=version("Password resets were lost too.", "2026-08-09T00:00:00+00:00"))
    report = discover(store, settings)

    assert report.feeds[0].updated == [proposed.url] and report.recrawl == [], "drafted from the feed, not crawled"
    (rewritten,) = report.drafts
    assert (rewritten.draft_id, rewritten.outcome, rewritten.wrote) == (drafted.draft_id, "updated", True)
    draft = store.read_draft(drafted.draft_id)
    assert "Password resets were lost too." in (draft.text or "")
    assert "Users could not sign up." not in (draft.text or "")
    assert draft.summary == {"en": "A writer's summary."}, "a person's edit is kept, as the crawl keeps it"
    assert draft.origin.url == proposed.url


def test_an_open_candidate_s_revised_postmortem_is_what_accept_drafts(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    updates = json.loads(sample("statuspage-incidents.json"))["incidents"][0]["incident_updates"]

    def version(words: str, at: str) -> bytes:
        body = f"## Summary<br />Up to 2% of Git SSH connections failed. {words}<br /><br />## Cause<br />A bad host."
        return statuspage_json(
            "statuspage-incidents.json", incident_updates=[postmortem_update(body, at), *updates], updated_at=at
        )

    url = serve(
        site,
        "/api/v2/incidents.json",
        "statuspage-incidents.json",
        body=version("First draft.", "2024-09-20T10:00:00Z"),
    )
    write_feeds(root, {"url": url, "kind": "statuspage"})
    discover(store, settings)
    serve(site, "/api/v2/incidents.json", "statuspage-incidents.json", body=version("Revised.", "2024-09-21T10:00:00Z"))
    discover(store, settings)
    (candidate,) = listed(store).values()

    (drafted,) = accept(store, settings, [candidate.id]).drafts

    text = store.read_draft(drafted.draft_id).text or ""
    assert "Revised." in text and "First draft." not in text
    assert store.state.feed_text(candidate.id) is None, "the cached text is dropped once drafted"


# ------------------------------------------------------------ one page, many spellings


def test_a_page_registered_in_another_spelling_is_not_proposed_again(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    register(
        root,
        {"url": "https://blog.rust-lang.org/inside-rust/2023/05/01/cargo-postmortem/"},  # the blog's form now
        {"url": "http://www.allegro.tech/2018/08/postmortem-why-allegro-went-down/"},  # http, www., a slash
        {"url": "https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022"},  # the list links a capture
        {"url": "https://web.archive.org/web/2019/https://aws.amazon.com/message/2329B7/"},  # a capture registered
    )
    atom = serve(site, "/feed.xml", "atom.xml")
    listing = serve(site, "/README.md", "danluu-README-excerpt.md")
    write_feeds(root, {"url": atom, "kind": "atom"}, {"url": listing, "kind": "markdown-list"})

    report = discover(store, settings)

    assert (len(of(report, atom).candidates), of(report, atom).known) == (1, 1)
    assert (len(of(report, listing).candidates), of(report, listing).known) == (6, 3)
    found = listed(store)
    assert "https://blog.rust-lang.org/inside-rust/2023/04/17/1.69.0-prerelease.html" in found
    for registered in (
        CARGO_POSTMORTEM,
        "https://allegro.tech/2018/08/postmortem-why-allegro-went-down.html",
        "https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/",
        "https://aws.amazon.com/message/2329B7/",
    ):
        assert registered not in found


def test_the_same_page_in_two_feeds_is_proposed_once(site: Site, store: Store, settings: Settings, root: Path) -> None:
    """The Inside Rust feed links `…/cargo-postmortem.html`; its index links the same posts relatively."""
    here = site.url("").rstrip("/")
    atom = serve(
        site,
        "/inside-rust/feed.xml",
        "atom.xml",
        body=sample("atom.xml").replace(b"https://blog.rust-lang.org", here.encode()),
    )
    index = serve(site, "/inside-rust/index.html", "html-index.html")
    write_feeds(
        root,
        {"url": atom, "kind": "atom", "name": "inside-rust"},
        {"url": index, "kind": "html-links", "selector": "table.post-list a"},
    )

    report = discover(store, settings)

    assert (len(of(report, atom).candidates), len(of(report, index).candidates), of(report, index).known) == (2, 4, 2)
    found = listed(store)
    assert len(found) == 6
    cargo = found[site.url("/inside-rust/2023/05/01/cargo-postmortem.html")]
    assert cargo.feed == atom, "proposed by the feed read first"


def test_a_feed_listed_twice_is_read_once(site: Site, store: Store, settings: Settings, root: Path) -> None:
    url = serve(site, "/feed.xml", "atom.xml")
    again = "HTTP" + url.removeprefix("http") + "#again"  # the same feed in another spelling
    write_feeds(root, {"url": url, "kind": "atom", "name": "rust"}, {"url": again, "kind": "atom"})

    report = discover(store, settings, ["rust", url])

    assert [f.url for f in report.feeds] == [url] and site.requests["/feed.xml"] == 1
    assert [str(f) for f in report.faults] == [
        f"sources/feeds.yaml:4: url: duplicate of the feed at sources/feeds.yaml:1: {url}"
    ]


# ------------------------------------------------------------ what a feed entry says


def test_include_and_exclude_choose_what_is_proposed_and_say_why(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    blog = serve(site, "/feed/", "rss2-wordpress.xml")
    rust = serve(site, "/feed.xml", "atom.xml")
    write_feeds(
        root,
        {"url": blog, "kind": "rss", "include": ["scalar|universe"], "exclude": ["AGENDA"]},
        {"url": rust, "kind": "atom", "include": ["SERDE_DERIVE"]},
    )

    report = discover(store, settings)

    assert (len(of(report, blog).candidates), of(report, blog).filtered) == (1, 2)
    assert (len(of(report, rust).candidates), of(report, rust).filtered) == (1, 1)
    found = listed(store)
    assert found["https://github.blog/2022-10-13-the-story-of-scalar/"].why == (
        "'Scalar' in the title (include 'scalar|universe')"
    )
    assert found[CARGO_POSTMORTEM].why == "'serde_derive' in the summary (include 'SERDE_DERIVE')"


def test_a_feed_with_auto_accept_registers_what_it_finds(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    listing = serve(site, "/README.md", "danluu-README-excerpt.md")
    parse = serve(site, "/history.rss", "rss2.xml")
    write_feeds(
        root,
        {"url": listing, "kind": "markdown-list", "include": ["BGP"], "auto_accept": True, "source_kind": "blog"},
        {"url": parse, "kind": "statuspage", "org": "Parse", "auto_accept": True},
    )

    report = discover(store, settings)

    assert not store.candidates_path.exists(), "nothing waits for a person"
    assert of(report, listing).registered == [
        "https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/",
        "https://status.cloud.google.com/incident/compute/16007",
    ]
    assert [e.url for e in report.recrawl] == of(report, listing).registered, "pages to crawl now"
    sources = {s.entry.url: s for s in store.read_sources()[0]}
    cloudflare = sources["https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/"]
    assert cloudflare.file == "sources/discovered.yaml"
    # The list's link text names the org: the feed entry's word, below the page's (pipeline.precedence);
    # the feed's source_kind is the operator's, a hint.
    assert (cloudflare.entry.discovered_from, cloudflare.entry.feed_entry.org, cloudflare.entry.kind) == (
        listing,
        "Cloudflare",
        "blog",
    )
    incident = sources[PARSE_POSTMORTEM_URL].entry
    assert (incident.discovered_from, incident.org, incident.feed_text) == (parse, "Parse", True)
    (drafted,) = report.drafts
    assert (drafted.url, drafted.outcome) == (PARSE_POSTMORTEM_URL, "new"), "drafted at once from the feed's text"
    draft = store.read_draft(draft_id_for(PARSE_POSTMORTEM_URL))
    assert draft.org == "Parse" and "Parse Service Disruption" in (draft.text or "")
    assert validate(store).faults == []

    again = discover(store, settings)
    assert again.counts()["registered"] == 0 and again.drafts == []


def test_a_feed_with_its_own_schedule_is_read_when_due_or_named(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    weekly = serve(site, "/weekly.xml", "atom.xml")
    daily = serve(site, "/daily.xml", "rss2-wordpress.xml")
    write_feeds(
        root, {"url": weekly, "kind": "atom", "name": "weekly", "schedule": "7d"}, {"url": daily, "kind": "rss"}
    )
    discover(store, settings)

    again = discover(store, settings)

    assert [(f.url, f.outcome) for f in again.feeds] == [(weekly, "not_due"), (daily, "not_modified")]
    assert site.requests["/weekly.xml"] == 1
    named = discover(store, settings, ["weekly"])
    assert [(f.url, f.outcome) for f in named.feeds] == [(weekly, "not_modified")]
    assert site.requests["/weekly.xml"] == 2 and site.requests["/daily.xml"] == 2


def test_naming_an_unknown_feed_is_one_line_and_asks_nothing(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    write_feeds(root, {"url": serve(site, "/feed.xml", "atom.xml"), "kind": "atom", "name": "rust"})
    with pytest.raises(RecordError) as raised:
        discover(store, settings, ["rust", "nope"])
    assert str(raised.value) == "sources/feeds.yaml: no feed named 'nope' (feeds: rust)"
    assert site.requests == {}


# ------------------------------------------------------------ a person's answer


@pytest.fixture
def proposed(site: Site, store: Store, settings: Settings, root: Path) -> dict[str, str]:
    """Candidates of three feeds: Inside Rust's two posts, Parse's postmortem, the list's nine links."""
    feeds = {
        "rust": serve(site, "/feed.xml", "atom.xml"),
        "parse": serve(site, "/history.rss", "rss2.xml"),
        "danluu": serve(site, "/README.md", "danluu-README-excerpt.md"),
    }
    kinds = {"rust": "atom", "parse": "statuspage", "danluu": "markdown-list"}
    write_feeds(root, *({"url": url, "kind": kinds[name], "name": name} for name, url in feeds.items()))
    discover(store, settings)
    return feeds


def test_accepting_a_candidate_registers_it_and_it_is_not_proposed_again(
    site: Site, store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    cargo = listed(store)[CARGO_POSTMORTEM]

    report = accept(store, settings, [cargo.id])

    assert report.registered == [
        SourceEntry(
            url=CARGO_POSTMORTEM,
            discovered_from=proposed["rust"],
            # the feed's title and posting date: below what the page says (pipeline.precedence)
            feed_entry=FeedEntry(title="Postmortem Analysis in Cargo", date="2023-05-01"),
        )
    ]
    assert (report.drafts, report.waiting_for_text) == ([], []), "a page: the crawl drafts it"
    (source,) = [s for s in store.read_sources()[0] if s.entry.url == CARGO_POSTMORTEM]
    assert source.file == "sources/discovered.yaml"
    assert CARGO_POSTMORTEM not in listed(store) and cargo not in candidates(store)

    edited = sample_text("atom.xml").replace("Postmortem Analysis in Cargo", "Postmortem analysis in Cargo")
    serve(site, "/feed.xml", "atom.xml", body=edited.encode())
    again = discover(store, settings, ["rust"])
    assert again.feeds[0].candidates == [] and again.feeds[0].updated == [CARGO_POSTMORTEM]
    assert [e.url for e in again.recrawl] == [CARGO_POSTMORTEM]


def test_a_candidate_registered_by_hand_meanwhile_is_no_longer_listed_and_the_next_reading_clears_it(
    site: Site, store: Store, settings: Settings, root: Path, proposed: dict[str, str]
) -> None:
    cargo = listed(store)[CARGO_POSTMORTEM]
    # Another spelling of the page, as a person would type it (what a crash inside an accept leaves too).
    register(root, {"url": CARGO_POSTMORTEM.removesuffix(".html") + "/"})

    assert cargo not in candidates(store), "registered: no longer waiting for anyone"
    assert CARGO_POSTMORTEM in listed(store), "still in the file until a reading clears it"

    edited = sample_text("atom.xml").replace("1.69.0 pre-release testing", "1.69.0 pre-release testing!")
    serve(site, "/feed.xml", "atom.xml", body=edited.encode())
    report = discover(store, settings, ["rust"])

    assert report.feeds[0].candidates == [] and report.candidates_written == 1
    assert CARGO_POSTMORTEM not in listed(store)


def test_accepting_a_candidate_whose_feed_carries_its_text_drafts_it_at_once(
    store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    parse = listed(store)[PARSE_POSTMORTEM_URL]

    report = accept(store, settings, [parse.id])

    (entry,) = report.registered
    assert (entry.feed_text, entry.discovered_from) == (True, proposed["parse"])
    (drafted,) = report.drafts
    assert (drafted.outcome, drafted.downloaded) == ("new", False)
    draft = store.read_draft(drafted.draft_id)
    assert draft.origin.url == PARSE_POSTMORTEM_URL
    assert "Rearchitecting our client discovery process" in (draft.text or "")
    assert store.state.feed_text(parse.id) is None


def test_a_candidate_accepted_where_its_feed_s_text_is_missing_is_drafted_by_the_next_discover(
    store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    parse = listed(store)[PARSE_POSTMORTEM_URL]
    store.state.drop_feed_text(parse.id)  # proposed on another machine: its text stayed there

    report = accept(store, settings, [parse.id])

    assert (report.drafts, report.waiting_for_text) == ([], [PARSE_POSTMORTEM_URL])
    assert proposed["parse"] not in store.state.read_feed_states(), "read whole next time"
    again = discover(store, settings)
    assert of(again, proposed["parse"]).outcome == "read"
    (drafted,) = again.drafts
    assert (drafted.url, drafted.outcome) == (PARSE_POSTMORTEM_URL, "new")
    assert "Parse Service Disruption" in (store.read_draft(drafted.draft_id).text or "")
    assert discover(store, settings).drafts == [], "once"


def test_accept_all_from_a_feed_takes_its_open_candidates_only(
    store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    allegro = listed(store)["https://allegro.tech/2018/08/postmortem-why-allegro-went-down.html"]
    dismiss(store, [allegro.id], reason="an old post")

    report = accept(store, settings, all_from="danluu")

    assert len(report.registered) == 8
    assert all(e.discovered_from == proposed["danluu"] for e in report.registered)
    left = listed(store)
    assert {c.feed for c in left.values() if c.state == "open"} == {proposed["rust"], proposed["parse"]}
    assert left[allegro.url].state == "dismissed", "a dismissed one stays dismissed"


def test_a_dismissed_candidate_is_never_proposed_again_even_when_its_entry_changes(
    site: Site, store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    cargo = listed(store)[CARGO_POSTMORTEM]

    (dismissed,) = dismiss(store, [cargo.id], reason="a process write-up, not an outage")

    assert (dismissed.state, dismissed.reason) == ("dismissed", "a process write-up, not an outage")
    assert cargo.id not in {c.id for c in candidates(store)}
    assert [c.id for c in candidates(store, dismissed=True)] == [cargo.id]

    edited = sample_text("atom.xml").replace("Postmortem Analysis in Cargo", "Postmortem Analysis in Cargo (updated)")
    serve(site, "/feed.xml", "atom.xml", body=edited.encode())
    report = discover(store, settings)

    rust = of(report, proposed["rust"])
    assert (rust.changed, rust.known, rust.candidates, rust.updated) == (1, 1, [], [])
    kept = listed(store)[CARGO_POSTMORTEM]
    assert (kept.state, kept.title, kept.reason) == ("dismissed", "Postmortem Analysis in Cargo", dismissed.reason)


def test_an_unknown_or_dismissed_id_is_refused_and_nothing_changes(
    store: Store, settings: Settings, proposed: dict[str, str]
) -> None:
    found = listed(store)
    cargo, parse = found[CARGO_POSTMORTEM], found[PARSE_POSTMORTEM_URL]
    dismiss(store, [parse.id])
    before = store.candidates_path.read_bytes()

    with pytest.raises(RecordError, match=r"^sources/candidates.yaml: no candidate c-0000000000$"):
        accept(store, settings, [cargo.id, "c-0000000000"])
    with pytest.raises(RecordError, match=rf"^sources/candidates.yaml: {parse.id} was dismissed \(None\)$"):
        accept(store, settings, [cargo.id, parse.id])
    with pytest.raises(RecordError, match=r"no candidate c-0000000000"):
        dismiss(store, [cargo.id, "c-0000000000"])
    with pytest.raises(RecordError, match=r"^sources/feeds.yaml: no feed named 'nope'$"):
        accept(store, settings, all_from="nope")

    assert store.candidates_path.read_bytes() == before
    assert store.read_sources()[0] == [] and not (store.sources_dir / "discovered.yaml").exists()


# ------------------------------------------------------------ the rest of the pipeline


def test_the_crawl_skips_a_source_whose_text_is_its_feed_s(
    site: Site, store: Store, settings: Settings, root: Path
) -> None:
    register(root, {"url": site.url("/incidents/abc"), "feed_text": True}, {"url": site.url("/pm.html")})
    site.pages["/pm.html"] = html_page("Queue backlog")

    report = crawl(store, settings)

    outcomes = {s.url: (s.outcome, s.reason) for s in report.sources}
    assert outcomes == {site.url("/incidents/abc"): ("skipped", "feed-text"), site.url("/pm.html"): ("new", None)}
    assert site.requests["/incidents/abc"] == 0 and not store.exists("draft", draft_id_for(site.url("/incidents/abc")))


def test_validate_names_each_fault_of_feeds_and_candidates_in_one_line(cli: Callable, root: Path) -> None:
    (root / "sources" / "feeds.yaml").write_text(
        "- url: https://example.org/feed.xml\n"
        "  kind: atom\n"
        "  name: good\n"
        "- url: https://example.org/other.xml\n"
        "  kind: podcast\n"
        "- url: https://example.org/index.html\n"
        "  kind: html-links\n"
        "- url: https://example.org/index2.html\n"
        "  kind: html-links\n"
        '  selector: "a[href"\n'
        "- url: https://example.org/three.xml\n"
        "  kind: rss\n"
        '  include: ["(unclosed"]\n'
        "- url: https://example.org/four.xml\n"
        "  kind: rss\n"
        "  schedule: weekly\n"
        "- url: https://example.org/five.xml\n"
        "  kind: rss\n"
        "  inclde: [outage]\n"
        "- url: https://EXAMPLE.org/feed.xml#top\n"
        "  kind: rss\n"
    )
    (root / "sources" / "candidates.yaml").write_text(
        "- id: c-0123456789\n  url: https://example.org/a\n  feed: https://example.org/feed.xml\n  why: x\n"
        "  found_at: 2026-01-01T00:00:00Z\n"
        "- id: c-0123456789\n  url: https://example.org/b\n  feed: https://example.org/feed.xml\n  why: x\n"
        "  found_at: 2026-01-01T00:00:00Z\n"
        "- id: nope\n  url: https://example.org/c\n  feed: https://example.org/feed.xml\n"
        "  found_at: 2026-01-01T00:00:00Z\n  state: maybe\n"
    )

    result = cli("validate", "--root", str(root))

    assert result.exit_code == 1
    assert sorted(result.stdout.splitlines()) == sorted(
        [
            "sources/feeds.yaml:4: kind: Input should be 'atom', 'rss', 'statuspage', 'gcp-incidents', "
            "'markdown-list' or 'html-links'",
            "sources/feeds.yaml:6: -: an html-links feed needs a selector (the CSS selector of its links)",
            "sources/feeds.yaml:8: selector: not a CSS selector: Malformed attribute selector at position 1 line 1: "
            "a[href ^",
            "sources/feeds.yaml:11: include.0: not a regular expression: '(unclosed' (missing ), unterminated "
            "subpattern at position 0)",
            "sources/feeds.yaml:14: schedule: 'weekly' is not an interval such as 30m, 6h or 7d",
            "sources/feeds.yaml:17: inclde: extra inputs are not permitted",
            "sources/feeds.yaml:20: url: duplicate of the feed at sources/feeds.yaml:1: https://example.org/feed.xml",
            "sources/candidates.yaml:6: id: c-0123456789 is at line 1 too",
            "sources/candidates.yaml:11: id: String should match pattern '^c-[0-9a-f]{10}$'",
            "sources/candidates.yaml:11: why: required field is missing",
            "sources/candidates.yaml:11: state: Input should be 'open' or 'dismissed'",
        ]
    )
    assert result.stderr == "checked 0 sources, 1 feed, 1 candidate, 0 drafts, 0 cases: 11 faults\n"


# ------------------------------------------------------------ as a person runs it


@pytest.fixture
def flow_env(monkeypatch: pytest.MonkeyPatch, prefect_api: None) -> None:
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    monkeypatch.setenv("INCIDENTLIB_PER_HOST_DELAY_S", "0")
    monkeypatch.setenv("INCIDENTLIB_MAX_RETRIES", "0")


def test_the_discover_command_runs_the_flow_and_crawls_what_the_feeds_registered_or_changed(
    farm: SiteFarm, root: Path, flow_env: None, cli: Callable
) -> None:
    blog = farm.add_site("blog")
    queue, certs, dns = (blog.url(f"/posts/{slug}.html") for slug in ("queue", "certs", "dns"))
    for slug, title in (("queue", "Queue backlog"), ("certs", "Certificate rotation"), ("dns", "DNS outage")):
        blog.pages[f"/posts/{slug}.html"] = html_page(title)
    site = farm.add_site("feeds")
    auto = serve_atom(site, "/auto.xml", [{"url": queue, "title": "Queue backlog"}])
    news = serve_atom(site, "/news.xml", [{"url": certs, "title": "Certificate rotation"}])
    write_feeds(
        root,
        {"url": auto, "kind": "atom", "name": "auto", "auto_accept": True},
        {"url": news, "kind": "atom", "name": "news"},
    )
    store = Store(root)
    discover(store, Settings(root=root), ["news"])  # proposed earlier, and accepted by a person
    assert cli("candidates", "accept", candidate_id(certs), "--root", str(root)).exit_code == 0
    serve_atom(
        site,
        "/news.xml",
        [
            {"url": dns, "title": "DNS outage", "updated": "2024-05-09T00:00:00Z"},
            {"url": certs, "title": "Certificate rotation, revised", "updated": "2024-05-08T00:00:00Z"},
        ],
    )

    result = cli("discover", "--root", str(root))

    assert result.exit_code == 0, result.output
    rows = dict(re.findall(r"│ (\w[\w :]*?) +│ +(\d+) │", result.stdout))
    assert {k: rows[k] for k in ("read", "candidates", "registered", "updated", "crawled: new")} == {
        "read": "2",
        "candidates": "1",
        "registered": "1",
        "updated": "1",
        "crawled: new": "2",
    }
    assert result.stdout.rstrip().endswith("see them with: incidentlib candidates")
    # The page the auto_accept feed registered and the accepted page whose entry changed: both crawled.
    assert store.read_draft(draft_id_for(queue)).title == {"en": "Queue backlog"}
    assert store.read_draft(draft_id_for(certs)).title == {"en": "Certificate rotation"}
    assert blog.requests["/posts/dns.html"] == 0, "a candidate waits for a person"
    assert [c.url for c in candidates(store)] == [dns]
    assert store.state.read_runs()["discover"].state == "completed"
    assert store.state.read_runs()["discover"].counts["registered"] == 1

    again = json.loads(cli("discover", "--root", str(root), "--json").stdout)

    assert again["counts"]["not_modified"] == 2 and again["bytes_read"] == 0
    assert (again["candidates_written"], again["writes"], again["recrawl"], again["crawl"]) == (0, 0, [], None)


def test_the_discover_command_names_an_unknown_feed_in_one_line_before_any_flow_run(
    site: Site, root: Path, cli: Callable
) -> None:
    write_feeds(root, {"url": serve(site, "/feed.xml", "atom.xml"), "kind": "atom", "name": "rust"})

    result = cli("discover", "--root", str(root), "--feed", "rust", "--feed", "nope")

    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: sources/feeds.yaml: no feed named 'nope' (feeds: rust)\n"
    assert site.requests == {} and Store(root).state.read_runs() == {}


def test_the_candidates_commands(store: Store, proposed: dict[str, str], cli: Callable) -> None:
    wide = {"COLUMNS": "250"}
    root = str(store.root)
    found = listed(store)
    cargo, parse = found[CARGO_POSTMORTEM], found[PARSE_POSTMORTEM_URL]
    allegro = found["https://allegro.tech/2018/08/postmortem-why-allegro-went-down.html"]

    text = cli("candidates", "--root", root, env=wide)
    assert text.exit_code == 0
    assert "12 candidates" in text.stdout
    assert all(c.id in text.stdout for c in found.values())
    assert "Postmortem Analysis in Cargo" in text.stdout and "every entry of the feed is taken" in text.stdout
    assert text.stdout.count("the feed carries its text") == 1
    as_json = json.loads(cli("candidates", "--root", root, "--json").stdout)
    assert [c["id"] for c in as_json] == [c.id for c in candidates(store)]
    assert {c["url"]: c for c in as_json}[PARSE_POSTMORTEM_URL]["feed_text"] is True
    only = json.loads(cli("candidates", "--feed", "parse", "--root", root, "--json").stdout)
    assert [c["id"] for c in only] == [parse.id]
    unknown = cli("candidates", "--feed", "nope", "--root", root)
    assert (unknown.exit_code, unknown.stderr) == (1, "Error: sources/feeds.yaml: no feed named 'nope'\n")

    accepted = cli("candidates", "accept", parse.id, cargo.id, "--root", root)
    draft_id = draft_id_for(PARSE_POSTMORTEM_URL)
    assert accepted.stdout.splitlines() == [
        f"registered {PARSE_POSTMORTEM_URL} in sources/discovered.yaml",
        f"registered {CARGO_POSTMORTEM} in sources/discovered.yaml",
        f"drafted {PARSE_POSTMORTEM_URL} from its feed's text -> drafts/{draft_id}.json",
    ]
    assert store.exists("draft", draft_id)

    dismissed = cli("candidates", "dismiss", allegro.id, "--reason", "an old post", "--root", root)
    assert dismissed.stdout == f"dismissed {allegro.id} {allegro.url}\n"
    listing = cli("candidates", "--dismissed", "--root", root, env=wide).stdout
    assert "1 candidate dismissed" in listing and allegro.id in listing and "an old post" in listing

    before = store.candidates_path.read_bytes()
    refused = cli("candidates", "accept", "c-0000000000", "--root", root)
    assert (refused.exit_code, refused.stderr) == (1, "Error: sources/candidates.yaml: no candidate c-0000000000\n")
    nothing = cli("candidates", "accept", "--root", root)
    assert (nothing.exit_code, nothing.stderr) == (
        1,
        "Error: name the candidates to accept (their ids), or --all-from FEED\n",
    )
    assert store.candidates_path.read_bytes() == before

    rest = json.loads(cli("candidates", "accept", "--all-from", "danluu", "--root", root, "--json").stdout)
    assert len(rest["registered"]) == 8 and rest["drafts"] == [] and rest["waiting_for_text"] == []
    assert all(e["discovered_from"] == proposed["danluu"] for e in rest["registered"])
    left = cli("candidates", "--root", root, "--json")
    assert [c["url"] for c in json.loads(left.stdout)] == [
        "https://blog.rust-lang.org/inside-rust/2023/04/17/1.69.0-prerelease.html"
    ]


def test_discovery_proposes_registers_drafts_and_archives_a_page_by_its_canonical_url(
    site: Site, store: Store, root: Path, wayback: WaybackStandIn
) -> None:
    settings = archive_settings(root, wayback, max_retries=0, total_timeout_s=5.0)
    tracked = site.url("/incidents/102?utm_source=feed&page=2")
    dotted = site.url("/pm/./initech.html")
    blog = serve_atom(site, "/feed.xml", [{"url": tracked, "title": "API outage"}])
    listing = site.url("/README.md")
    site.pages["/README.md"] = Page(
        f"- [Initech]({dotted}). The TPS reports went missing.\n".encode(), content_type="text/markdown"
    )
    write_feeds(
        root,
        {"url": blog, "kind": "atom", "name": "blog"},
        {"url": listing, "kind": "markdown-list", "auto_accept": True},
    )
    incident, initech = site.url("/incidents/102?page=2"), site.url("/pm/initech.html")

    report = discover(store, settings)

    (candidate,) = candidates(store)
    assert (candidate.url, candidate.listed_as) == (incident, tracked), "the tracking parameter gone, page=2 kept"
    assert of(report, listing).registered == [initech], "the dot segment resolved"
    accept(store, settings, [candidate.id])
    assert sorted(s.entry.url for s in store.read_sources()[0]) == [incident, initech]

    page = "<html><head><title>{0}</title></head><body><h1>{0}</h1><p>The {0} lasted an hour.</p></body></html>"
    site.pages["/incidents/102"] = Page.html(page.format("API outage"))
    site.pages["/pm/initech.html"] = Page.html(page.format("Initech outage"))
    crawl(store, settings)
    archive(store, settings)

    for url in (incident, initech):
        draft = store.read_draft(draft_id_for(url))
        assert (draft.origin.url, [s.url for s in draft.sources]) == (url, [url])
        assert (draft.sources[0].archived or "").endswith(f"/{url}")
    assert sorted(c.requested for c in wayback.captures) == [incident, initech], "captures asked for by the same URL"
