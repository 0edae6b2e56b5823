"""Who is believed on a source's org, title, date and kind (pipeline.precedence): the registry's hint,
then the page's own word, then the feed entry's, then the address, field by field; on extraction,
on a draft before its page is read, and through a crawl of a page a feed proposed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pipeline.crawl import crawl
from pipeline.draft import new_draft
from pipeline.extract import extract
from pipeline.ids import draft_id_for
from pipeline.models import FeedEntry, SourceEntry
from pipeline.precedence import Hints, Said, decide, guess_source_kind
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.store import Store

# A page that states its title and date in TOML front matter and its publisher in a copyright line,
# and one that states nothing, on a host nothing is known of.
STATING = (
    "https://blog.rust-lang.org/inside-rust/posts/crates-io-incident/",
    '+++\ntitle = "crates.io incident report"\ndate = 2020-02-26\n+++\n\nThe index stopped updating.\n\n'
    "© 2020 The Rust Project Developers\n",
)
SILENT = ("https://blog.example.org/posts/crates-io-incident/", "The index stopped updating for an hour.\n")
HINT = Said(org="Hinted Org", title="Hinted title", date="2019-01", date_kind="published")
FEED = Said(org="Feed Org", title="Feed title", date="2026-01-01", date_kind="published")
PAGE = Said(org="Rust Project", title="crates.io incident report", date="2020-02-26", date_kind="published")
# The weakest guesses: the silent page's host, and (plain text stating no title) its first line.
ADDRESS = Said(org="example", title="The index stopped updating for an hour.")


@pytest.mark.parametrize(
    ("hinted", "stated", "listed"), list(itertools.product([True, False], repeat=3)), ids=lambda on: "yn"[not on]
)
def test_each_field_comes_from_the_first_party_that_says_anything(hinted: bool, stated: bool, listed: bool) -> None:
    url, text = STATING if stated else SILENT
    hint = HINT if hinted else Said()
    x = extract(
        text.encode(),
        url,
        "text/plain; charset=utf-8",  # front matter makes it Markdown source, served as text or not
        hints=Hints(registry=hint, feed=FEED if listed else Said()),
    )
    parties = [p for p, on in ((HINT, hinted), (PAGE, stated), (FEED, listed)) if on]
    first = parties[0] if parties else None
    assert x.org == (first or ADDRESS).org
    assert x.title == (first or ADDRESS).title
    assert (x.date, x.date_kind) == ((first.date, first.date_kind) if first else (None, None))


def test_a_feed_s_date_only_fills_what_the_page_leaves_empty() -> None:
    """The feed entry's date is when it was posted: a date the page's text gives outranks it."""
    dated = (
        "# CoreDNS upgrade issue\n\n## Timeline\n\n| Time | Event |\n| --- | --- |\n| 2020-02-03 11:21 | pods crash |\n"
    )
    x = extract(dated.encode(), "https://blog.example.org/pm.md", hints=Hints(feed=FEED))
    assert (x.title, x.date, x.date_kind, x.org) == ("CoreDNS upgrade issue", "2020-02-03", "timeline", "Feed Org")


def test_a_date_s_kind_comes_with_it_and_a_slug_with_its_org() -> None:
    decided = decide(Said(), Said(org="Rust Project", org_slug="rust-lang"), FEED, Said(org="rust-lang", kind="blog"))
    assert (decided.org, decided.org_slug, decided.date_kind, decided.kind) == (
        "Rust Project",
        "rust-lang",
        "published",
        "blog",
    )
    assert decide(Said(org="  "), Said(), Said(), Said(org="Acme Corp")).org_slug == "acme-corp", "a blank hint is none"


def test_a_draft_before_its_page_is_read_has_the_registry_s_word_then_the_feed_s() -> None:
    listed = FeedEntry(title="Feed title", date="2026-01-01", org="Feed Org")
    url = "https://blog.example.org/posts/outage/"
    from_feed = new_draft(SourceEntry(url=url, feed_entry=listed))
    assert (from_feed.org, from_feed.title, from_feed.date, from_feed.sources[0].kind) == (
        "Feed Org",
        {"en": "Feed title"},
        "2026-01-01",
        "blog",
    )
    hinted = new_draft(SourceEntry(url=url, org="Acme", title="Cache stampede", kind="github", feed_entry=listed))
    assert (hinted.org, hinted.title, hinted.date, hinted.sources[0].kind) == (
        "Acme",
        {"en": "Cache stampede"},
        "2026-01-01",
        "github",
    )
    assert new_draft(SourceEntry(url="https://github.com/acme/pm/blob/main/x.md")).sources[0].kind == "github"


def test_a_crawled_page_a_feed_proposed_keeps_its_own_title_and_date_and_the_feed_s_org(
    farm: SiteFarm, root: Path
) -> None:
    """The demo's first hour: a feed dated 2026-01-01, titled `+++`, on 127.0.0.1; the page's TOML
    front matter read though it is served as plain text at a URL without a suffix."""
    site = farm.add_site("blog")
    site.pages["/inside-rust/crates-io-incident/"] = Page.markdown(STATING[1])
    url = site.url("/inside-rust/crates-io-incident/")
    listed = FeedEntry(title="+++", date="2026-01-01", org="Rust Project")
    (root / "sources" / "found.yaml").write_text(
        f"- url: {url}\n  feed_entry: {{title: '+++', date: '2026-01-01', org: Rust Project}}\n"
    )
    store = Store(root)
    assert store.read_sources()[0][0].entry.feed_entry == listed
    crawl(store, Settings(root=root, allow_private_hosts=True, per_host_delay_s=0.0))
    draft = store.read_draft(draft_id_for(url))
    assert (draft.org, draft.title, draft.date, draft.date_kind) == (
        "Rust Project",
        {"en": "crates.io incident report"},
        "2020-02-26",
        "published",
    )
    assert draft.org_slug == "rust-project"


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://status.acme.example/incidents/1", "status-page"),
        ("https://acme.instatus.com/cl9", "status-page"),  # a customer's page on a hosted platform
        ("https://acme.statuspage.io/", "status-page"),
        ("https://www.acmestatus.com/history", "status-page"),  # a site named for its status
        ("https://www.statuspage.io/blog/launch", "blog"),  # the platform's own site
        ("https://instatus.com/blog/how-we-work", "blog"),
        ("https://docs.instatus.com/getting-started", "docs"),
        ("https://blog.status.io/2024/launch", "blog"),
        ("https://blog.acme.example/outage", "blog"),
        ("https://acme.example/status/", "blog"),
        ("http://127.0.0.1:8080/post", "blog"),
    ],
)
def test_the_address_tells_a_status_page_by_its_host(url: str, kind: str) -> None:
    assert guess_source_kind(url) == kind
