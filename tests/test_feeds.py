"""The feed readers, pure: saved copies of real feeds (tests/fixtures/feeds) in, entries out.

Every kind `sources/feeds.yaml` names, and the ways a feed goes wrong: broken XML, a wrong
encoding, HTML or broken JSON where a feed should be, more entries than are read.
"""

from __future__ import annotations

import json

import pytest
from feedsamples import (
    CARGO_POSTMORTEM,
    CONTENT_TYPES,
    PARSE_POSTMORTEM_URL,
    SAUCE_EDITED_URL,
    big_atom,
    gcp_incidents,
    parse_without_postmortem,
    postmortem_update,
    sample,
    sample_text,
    sauce_with_postmortem,
    statuspage_json,
)
from helpers import REPO

from pipeline.discover import match
from pipeline.feeds import FeedFormat, FeedItem, FeedReading, NotAFeed, read_feed
from pipeline.models import Feed, FeedKind
from pipeline.store import Store

RUST_INDEX = "https://blog.rust-lang.org/inside-rust/index.html"
DANLUU = "https://raw.githubusercontent.com/danluu/post-mortems/master/README.md"


def read(
    kind: FeedKind, name: str, base_url: str = "https://example.org/feed", selector: str | None = None
) -> FeedReading:
    return read_feed(FeedFormat(kind, selector), sample(name), CONTENT_TYPES[name], base_url)


def by_url(reading: FeedReading) -> dict[str, FeedItem]:
    return {item.url: item for item in reading.items}


# ------------------------------------------------------------ every kind of feed


def test_an_atom_feed_gives_its_entries_newest_first() -> None:
    reading = read(FeedKind.ATOM, "atom.xml")

    assert (reading.total, reading.warnings) == (2, [])
    cargo, release = reading.items
    assert (cargo.url, cargo.title, cargo.date) == (CARGO_POSTMORTEM, "Postmortem Analysis in Cargo", "2023-05-01")
    assert cargo.summary and cargo.summary.startswith("At 01:52 UTC, 2022-10-28, rust-lang/cargo#11183 was merged")
    assert "<" not in cargo.summary and "&#x3D;" not in cargo.summary, "the HTML is text now"
    assert cargo.text is None, "a blog's feed carries no postmortem of its own: the page is crawled"
    assert release.title == "1.69.0 pre-release testing" and release.date == "2023-04-17"
    assert cargo.fingerprint != release.fingerprint


def test_an_rss_feed_gives_its_items_even_without_a_description() -> None:
    reading = read(FeedKind.RSS, "rss2-wordpress.xml", "https://github.blog/feed/")

    assert [(i.url, i.title, i.date) for i in reading.items] == [
        ("https://github.blog/2022-10-13-the-story-of-scalar/", "The Story of Scalar", "2022-10-13"),
        (
            "https://github.blog/2022-10-11-the-github-universe-2022-agenda-is-live/",
            "The GitHub Universe 2022 agenda is live",
            "2022-10-11",
        ),
        ("https://github.blog/2022-10-06-js13k-2022-winners/", "js13kGames 2022 winners 🏆", "2022-10-06"),
    ]
    assert all(i.summary is None and i.text is None for i in reading.items)


def test_a_statuspage_rss_item_carries_its_postmortem_as_text() -> None:
    items = by_url(read(FeedKind.STATUSPAGE, "rss2.xml", "http://status.parse.com/history.rss"))

    outage = items[PARSE_POSTMORTEM_URL]
    assert outage.text is not None
    assert outage.text.startswith(
        "# Elevated error rates and latency\n\n# Summary of the December 24 Parse Service Disruption\n\n"
        "We would like to share some more details"
    )
    assert "\n* Adding extensive debug output to our API HTTP service" in outage.text, "<br /> back to lines"
    assert "\n* Rearchitecting our client discovery process" in outage.text
    assert "This incident has been resolved" not in outage.text, "only the Postmortem update"
    assert "<" not in outage.text
    assert outage.date == "2013-12-24", "RSS gives the resolution's date, not the postmortem's"
    assert items["http://status.parse.com/incidents/hss47d2yk45f"].text is None, "no postmortem, no text"


def test_the_same_rss_read_as_a_plain_feed_carries_no_text() -> None:
    items = by_url(read(FeedKind.RSS, "rss2.xml"))
    assert set(items) == {PARSE_POSTMORTEM_URL, "http://status.parse.com/incidents/hss47d2yk45f"}
    assert all(i.text is None for i in items.values())


def test_an_rss_item_whose_postmortem_came_later_changes_its_fingerprint_not_its_date() -> None:
    before = by_url(
        read_feed(FeedFormat(FeedKind.STATUSPAGE), parse_without_postmortem(), "application/rss+xml", "http://x/")
    )
    after = by_url(read(FeedKind.STATUSPAGE, "rss2.xml"))

    assert before[PARSE_POSTMORTEM_URL].text is None
    assert before[PARSE_POSTMORTEM_URL].date == after[PARSE_POSTMORTEM_URL].date
    assert before[PARSE_POSTMORTEM_URL].fingerprint != after[PARSE_POSTMORTEM_URL].fingerprint
    other = "http://status.parse.com/incidents/hss47d2yk45f"
    assert before[other].fingerprint == after[other].fingerprint


def test_a_statuspage_atom_history_without_postmortems_gives_no_text() -> None:
    reading = read(FeedKind.STATUSPAGE, "statuspage-history.atom")

    assert len(reading.items) == 3 and all(i.text is None for i in reading.items)
    edited = by_url(reading)[SAUCE_EDITED_URL]
    assert (edited.title, edited.date) == ("2020-November-03 Resolved Service Incident", "2020-11-03")
    assert edited.summary and "Sauce Connect tunnels failed to start" in edited.summary
    assert "<var" not in edited.summary


def test_a_postmortem_added_to_a_statuspage_atom_entry_becomes_its_text() -> None:
    before = by_url(read(FeedKind.STATUSPAGE, "statuspage-history.atom"))
    body = sauce_with_postmortem("# Tunnel start failures\n\nA certificate expired on the tunnel proxies.\n\n* Alert")
    after = by_url(read_feed(FeedFormat(FeedKind.STATUSPAGE), body, "application/atom+xml", "https://x/"))

    edited = after[SAUCE_EDITED_URL]
    assert edited.text == (
        "# 2020-November-03 Resolved Service Incident\n\n"
        "# Tunnel start failures\n\nA certificate expired on the tunnel proxies.\n\n* Alert\n"
    )
    assert edited.fingerprint != before[SAUCE_EDITED_URL].fingerprint
    assert edited.date == "2020-11-03", "published, not updated"
    unchanged = "https://status.us-west-1.saucelabs.com/incidents/08fk1fzrw8p8"
    assert after[unchanged].fingerprint == before[unchanged].fingerprint and after[unchanged].text is None


def test_a_statuspage_incidents_json_links_the_incident_page_and_waits_for_a_postmortem() -> None:
    (incident,) = read(FeedKind.STATUSPAGE, "statuspage-incidents.json", "https://x/api/v2/incidents.json").items

    assert incident.url == "https://www.githubstatus.com/incidents/r3x7x31k7nn1", "the page's own URL, no shortlink"
    assert (incident.title, incident.date) == ("Disruption with Git SSH", "2024-09-16")
    assert incident.summary == "This incident has been resolved."
    assert incident.text is None

    document = json.loads(sample("statuspage-incidents.json"))
    updates = document["incidents"][0]["incident_updates"]
    body = statuspage_json(
        "statuspage-incidents.json",
        incident_updates=[postmortem_update("## What happened<br />An SSH host ran out of file handles."), *updates],
        updated_at="2024-09-20T10:00:00.000Z",
    )
    (later,) = read_feed(FeedFormat(FeedKind.STATUSPAGE), body, "application/json", "https://x/").items
    assert later.text == "# Disruption with Git SSH\n\n## What happened\nAn SSH host ran out of file handles.\n"
    assert later.fingerprint != incident.fingerprint and later.url == incident.url


def test_the_older_statuspage_index_json_gives_its_postmortem_body() -> None:
    (incident,) = read(FeedKind.STATUSPAGE, "statuspage-index-2016.json").items
    assert incident.url == "http://status.quay.io/incidents/8kxqfd750j11"
    assert (incident.title, incident.date, incident.text) == ("Investigating issue sending email", "2016-06-02", None)

    body = statuspage_json(
        "statuspage-index-2016.json",
        postmortem_body="The mail relay's credentials had expired.<br /><br />We now alert before they do.",
        postmortem_published_at="2016-06-10T12:00:00.000-04:00",
    )
    (later,) = read_feed(FeedFormat(FeedKind.STATUSPAGE), body, "application/json", "https://x/").items
    assert later.text == (
        "# Investigating issue sending email\n\n"
        "The mail relay's credentials had expired.\n\nWe now alert before they do.\n"
    )
    assert later.fingerprint != incident.fingerprint


def test_a_google_cloud_incident_report_becomes_the_text() -> None:
    (incident,) = read(
        FeedKind.GCP_INCIDENTS, "gcp-incidents.json", "https://status.cloud.google.com/incidents.json"
    ).items

    assert incident.url == "https://status.cloud.google.com/incidents/T8gmtofFSTGT5tbhyciF"
    assert incident.date == "2026-07-14"
    assert incident.title and incident.title.startswith("Google Cloud VMware Engine (GCVE) Stretched Cluster")
    assert incident.summary and incident.summary.startswith("VMWare engine Google Cloud VMware Engine")
    assert incident.text is not None
    head, facts, report = incident.text.split("\n\n", 2)
    assert head == f"# {incident.title}"
    assert facts.splitlines() == [
        "Began: 2026-07-14T17:00:00+00:00",
        "Ended: 2026-07-15T03:40:00+00:00",
        "Products: VMWare engine",
        "Severity: medium",
    ]
    assert report.startswith("## Incident Report\n## Summary\nOn Tuesday, 14 July 2026 10:00 PT")
    assert "**Description**" not in incident.text, "only the report, not the earlier updates"


def test_a_google_cloud_incident_without_its_report_has_no_text_until_it_comes() -> None:
    (before,) = read_feed(
        FeedFormat(FeedKind.GCP_INCIDENTS), gcp_incidents(report=None), "application/json", "https://x/"
    ).items
    (after,) = read_feed(FeedFormat(FeedKind.GCP_INCIDENTS), gcp_incidents(), "application/json", "https://x/").items
    mini = gcp_incidents(report="# Mini Incident Report\nA zonal control plane dropped routes for 10 hours.")
    (short,) = read_feed(FeedFormat(FeedKind.GCP_INCIDENTS), mini, "application/json", "https://x/").items

    assert before.text is None and after.text is not None
    assert before.fingerprint != after.fingerprint, "the report moved `modified`"
    assert short.text and short.text.endswith(
        "# Mini Incident Report\nA zonal control plane dropped routes for 10 hours.\n"
    )


def test_a_markdown_list_gives_its_links_unwrapped_and_skips_its_table_of_contents() -> None:
    reading = read(FeedKind.MARKDOWN_LIST, "danluu-README-excerpt.md", DANLUU)
    items = by_url(reading)

    assert not any("#" in url or "raw.githubusercontent.com" in url for url in items), "no table of contents"
    assert list(items)[:5] == [
        "https://allegro.tech/2018/08/postmortem-why-allegro-went-down.html",
        "https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/",
        "https://status.cloud.google.com/incident/compute/16007",
        "https://aws.amazon.com/message/2329B7/",
        "https://signalvnoise.com/posts/3729-basecamp-network-attack-postmortem",
    ]
    cloudflare = items["https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/"]
    assert cloudflare.listed_as == (
        "https://web.archive.org/web/20220621124002/https://blog.cloudflare.com/cloudflare-outage-on-june-21-2022/"
    )
    assert cloudflare.org == "Cloudflare"
    assert cloudflare.title == (
        "An incorrect ordering of the disabled BGP advertised prefixes caused malfunction on 19 datacenters."
    )
    allegro = items["https://allegro.tech/2018/08/postmortem-why-allegro-went-down.html"]
    assert (allegro.org, allegro.listed_as) == ("Allegro", None)
    assert allegro.title == "E-commerce site went down after a sudden traffic spike caused by a marketing campaign."
    assert allegro.summary and allegro.summary.endswith("even though hardware resources were available.")
    amazon = items["https://aws.amazon.com/message/2329B7/"]
    assert amazon.title == "An unknown event caused a transformer to fail.", "the first sentence"
    digest = items["http://www.availabilitydigest.com:80/articles.htm"]
    assert digest.listed_as and digest.listed_as.startswith("https://web.archive.org/web/20190914025003/")


def test_a_second_link_beside_the_first_is_not_the_entry_s_words() -> None:
    """`[Basecamp](url), [see also](url2). Basecamp's network …`: the words start after both links."""
    items = by_url(read(FeedKind.MARKDOWN_LIST, "danluu-README-excerpt.md", DANLUU))

    basecamp = items["https://signalvnoise.com/posts/3729-basecamp-network-attack-postmortem"]
    assert basecamp.org == "Basecamp"
    assert basecamp.title == "Basecamp's network was under a DDoS attack during a 100-minute window on March 24, 2014."
    assert "https://signalvnoise.com/posts/3728-basecamp-was-under-network-attack-this-morning" not in items


def test_a_markdown_list_item_and_a_relative_link_are_read_as_the_list_writes_them() -> None:
    body = (
        b"# Postmortems\n\n"
        b"- [Acme](https://acme.example/pm/1). The queue stalled.\n"
        b"- [Local](docs/pm.md). A relative link: not a postmortem.\n"
        b"- [Acme again](https://ACME.example/pm/1#top). The same page.\n"
        b"- plain words, no link\n"
    )
    reading = read_feed(FeedFormat(FeedKind.MARKDOWN_LIST), body, "text/markdown", "https://x/README.md")
    assert [(i.url, i.org, i.title) for i in reading.items] == [
        ("https://acme.example/pm/1", "Acme", "The queue stalled.")
    ]


def test_an_html_index_gives_the_links_its_selector_picks_resolved() -> None:
    reading = read(FeedKind.HTML_LINKS, "html-index.html", RUST_INDEX, selector="table.post-list a")

    assert reading.warnings == []
    assert [(i.url, i.title) for i in reading.items] == [
        (CARGO_POSTMORTEM, "Postmortem Analysis in Cargo"),
        ("https://blog.rust-lang.org/inside-rust/2023/04/17/1.69.0-prerelease.html", "1.69.0 pre-release testing"),
        ("https://blog.rust-lang.org/inside-rust/2023/02/08/dns-outage-portmortem.html", "DNS Outage on 2023-01-25"),
        (
            "https://blog.rust-lang.org/inside-rust/2021/04/28/rustup-1.24.0-incident-report.html",
            "Rustup 1.24.0 release incident report for 2021-04-27",
        ),
        (
            "https://blog.rust-lang.org/inside-rust/2020/02/26/crates-io-incident-report.html",
            "crates.io incident report for 2020-02-20",
        ),
        (
            "https://blog.rust-lang.org/inside-rust/2019/10/24/docsrs-outage-postmortem.html",
            "docs.rs outage postmortem",
        ),
    ]


def test_an_html_index_s_base_element_and_a_selector_of_containers_are_honoured() -> None:
    body = (
        b'<html><head><base href="https://blog.example/posts/"></head><body>'
        b'<ul class="posts"><li><a href="one/">One</a> <a href="one/#comments">3 comments</a></li>'
        b'<li><a href="/two.html">Two</a></li></ul><a href="elsewhere/">Not a post</a></body></html>'
    )
    reading = read_feed(FeedFormat(FeedKind.HTML_LINKS, "ul.posts li"), body, "text/html", "https://mirror.example/")
    assert [(i.url, i.title) for i in reading.items] == [
        ("https://blog.example/posts/one/", "One"),
        ("https://blog.example/two.html", "Two"),
    ]

    none = read(FeedKind.HTML_LINKS, "html-index.html", RUST_INDEX, selector="div.no-such-thing a")
    assert (none.items, none.warnings) == ([], ["the selector 'div.no-such-thing a' picked out no links"])


def test_the_same_bytes_give_the_same_fingerprints() -> None:
    for kind, name in [
        (FeedKind.ATOM, "atom.xml"),
        (FeedKind.STATUSPAGE, "rss2.xml"),
        (FeedKind.GCP_INCIDENTS, "gcp-incidents.json"),
        (FeedKind.MARKDOWN_LIST, "danluu-README-excerpt.md"),
    ]:
        first, second = read(kind, name), read(kind, name)
        assert [(i.key, i.fingerprint) for i in first.items] == [(i.key, i.fingerprint) for i in second.items]


# ------------------------------------------------------------ broken feeds


def test_broken_xml_that_still_gives_entries_is_read_with_a_warning() -> None:
    broken = sample_text("atom.xml").replace("<title>1.69.0 pre-release testing</title>", "<title>1.69 & up</title>")
    reading = read_feed(FeedFormat(FeedKind.ATOM), broken.encode(), "application/atom+xml", "https://x/")

    assert [i.title for i in reading.items] == ["Postmortem Analysis in Cargo", "1.69 & up"]
    (warning,) = reading.warnings
    assert warning.startswith("malformed: ") and warning.endswith("read 2 entries") and "\n" not in warning


def test_a_feed_cut_off_after_its_first_entry_gives_that_entry() -> None:
    text = sample_text("atom.xml")
    cut = text[: text.index("<entry>", text.index("</entry>"))]
    reading = read_feed(FeedFormat(FeedKind.ATOM), cut.encode(), "application/atom+xml", "https://x/")
    assert [i.url for i in reading.items] == [CARGO_POSTMORTEM]
    assert reading.warnings and reading.warnings[0].startswith("malformed: ")


def test_broken_xml_with_no_entries_is_not_a_feed() -> None:
    text = sample_text("atom.xml")
    cut = text[: text.index("<entry>") - 20]
    with pytest.raises(NotAFeed, match=r"^not an Atom or RSS feed \(SAXParseException: .*\)$"):
        read_feed(FeedFormat(FeedKind.ATOM), cut.encode(), "application/atom+xml", "https://x/")


def test_cp1252_bytes_declared_utf8_are_read_with_a_warning() -> None:
    text = sample_text("atom.xml").replace("Postmortem Analysis in Cargo", "Café outage – a naïve retry")
    body = text.encode("cp1252")
    reading = read_feed(FeedFormat(FeedKind.ATOM), body, "application/atom+xml; charset=utf-8", "https://x/")

    assert reading.items[0].title == "Café outage – a naïve retry"
    (warning,) = reading.warnings
    assert warning.startswith("declared encoding overridden: ") and "Windows-1252" in warning


@pytest.mark.parametrize("kind", [FeedKind.ATOM, FeedKind.RSS, FeedKind.STATUSPAGE])
def test_an_html_page_where_a_feed_should_be_is_not_a_feed(kind: FeedKind) -> None:
    with pytest.raises(NotAFeed) as raised:
        read_feed(FeedFormat(kind), sample("html-index.html"), "application/xml", RUST_INDEX)
    assert str(raised.value).startswith("not an Atom or RSS feed (") and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("kind", "body", "message"),
    [
        (
            FeedKind.STATUSPAGE,
            b'{"page": {"url": "https://x"}, "incidents": [',
            "not a Statuspage incidents document: ",
        ),
        (FeedKind.STATUSPAGE, b'{"page": {}}', "not a Statuspage incidents document at incidents: Field required"),
        (
            FeedKind.STATUSPAGE,
            b'{"incidents": [{"name": "x"}]}',
            "not a Statuspage incidents document at incidents.0.id",
        ),
        (FeedKind.GCP_INCIDENTS, b'[{"id": "a",', "not a Google Cloud incidents document: Expecting "),
        (FeedKind.GCP_INCIDENTS, b'{"incidents": []}', "not a Google Cloud incidents document at : Input should be a"),
        (FeedKind.GCP_INCIDENTS, b"<!doctype html><p>Sign in</p>", "not a Google Cloud incidents document: Expecting"),
        (FeedKind.GCP_INCIDENTS, b"\xff\xfe[]", "not a Google Cloud incidents document: "),
    ],
)
def test_broken_json_is_not_a_feed(kind: FeedKind, body: bytes, message: str) -> None:
    with pytest.raises(NotAFeed) as raised:
        read_feed(FeedFormat(kind), body, "application/json", "https://x/incidents.json")
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


# ------------------------------------------------------------ size


def test_a_feed_of_ten_thousand_entries_keeps_the_first_max_feed_entries() -> None:
    reading = read_feed(FeedFormat(FeedKind.ATOM), big_atom(10_000), "application/atom+xml", "https://x/", limit=50)

    assert (len(reading.items), reading.total) == (50, 10_000)
    assert [i.url for i in reading.items[:2]] == ["https://example.org/posts/0", "https://example.org/posts/1"]
    assert reading.warnings == ["kept the first 50 of 10000 entries (max_feed_entries)"]


def test_a_list_of_ten_thousand_links_keeps_the_default_thousand() -> None:
    body = "\n\n".join(f"[Org {n}](https://example.org/pm/{n}). Outage {n}." for n in range(10_000)).encode()
    reading = read_feed(FeedFormat(FeedKind.MARKDOWN_LIST), body, "text/plain", "https://x/README.md")

    assert (len(reading.items), reading.total) == (1000, 10_000)
    assert reading.items[-1].url == "https://example.org/pm/999"
    assert reading.warnings == ["kept the first 1000 of 10000 entries (max_feed_entries)"]


# ------------------------------------------------------------ the filters


def feed(kind: FeedKind = FeedKind.ATOM, **fields: object) -> Feed:
    return Feed.model_validate({"url": "https://example.org/feed.xml", "kind": kind, **fields})


def test_include_matches_title_or_summary_in_any_case_and_says_what_matched() -> None:
    cargo, release = read(FeedKind.ATOM, "atom.xml").items

    assert match(feed(include=["POSTMORTEM"]), cargo) == "'Postmortem' in the title (include 'POSTMORTEM')"
    assert match(feed(include=["serde_derive"]), cargo) == "'serde_derive' in the summary (include 'serde_derive')"
    assert match(feed(include=["postmortem|incident"]), release) is None
    assert match(feed(), release) == "every entry of the feed is taken"


def test_exclude_rules_an_entry_out_whatever_include_says() -> None:
    cargo, release = read(FeedKind.ATOM, "atom.xml").items

    assert match(feed(exclude=["pre-release"]), release) is None
    assert match(feed(exclude=["pre-release"]), cargo) == "every entry of the feed is taken"
    assert match(feed(include=["cargo"], exclude=["NIGHTLY RELEASE"]), cargo) is None, "in the summary, any case"


def test_a_status_page_entry_is_taken_only_with_its_postmortem() -> None:
    items = by_url(read(FeedKind.STATUSPAGE, "rss2.xml"))
    statuspage = feed(FeedKind.STATUSPAGE)

    assert match(statuspage, items[PARSE_POSTMORTEM_URL]) == "it has a postmortem"
    assert match(statuspage, items["http://status.parse.com/incidents/hss47d2yk45f"]) is None
    assert (
        match(feed(FeedKind.STATUSPAGE, include=["hosting"]), items["http://status.parse.com/incidents/hss47d2yk45f"])
        is None
    )
    assert match(feed(FeedKind.STATUSPAGE, exclude=["latency"]), items[PARSE_POSTMORTEM_URL]) is None


def test_the_starter_feeds_validate_and_each_of_their_kinds_reads_a_saved_copy_of_a_real_feed() -> None:
    feeds, faults = Store(REPO).read_feeds()
    assert faults == [] and len(feeds) >= 8
    assert all(f.feed.name for f in feeds), "every starter feed has a name for --feed"
    copies = {
        FeedKind.ATOM: "atom.xml",
        FeedKind.RSS: "rss2-wordpress.xml",
        FeedKind.STATUSPAGE: "statuspage-history.atom",
        FeedKind.GCP_INCIDENTS: "gcp-incidents.json",
        FeedKind.MARKDOWN_LIST: "danluu-README-excerpt.md",
        FeedKind.HTML_LINKS: "html-index.html",
    }
    for registered in feeds:
        feed = registered.feed
        name = copies[feed.kind]
        reading = read_feed(FeedFormat(feed.kind, feed.selector), sample(name), CONTENT_TYPES[name], feed.url)
        assert reading.items, f"{registered.where}: its kind reads no entry of {name}"
