"""One page, one draft: every spelling of a URL has one canonical form, and existing ids never move."""

from __future__ import annotations

import pytest

from pipeline.ids import address_host, canonical_url, draft_id_for

# Ids written by the versions before dot segments, empty segments and address spellings were
# resolved: drafts on disk carry them, so they must never change.
PINNED = {
    "https://github.com/dfds/postmortems/blob/master/PM2020-007%20-%20Unhealthy%20nodes.md": (
        "dfds-pm2020-007-unhealthy-nodes-8106f689"
    ),
    "https://about.gitlab.com/blog/2017/02/10/postmortem-of-database-outage-of-january-31/": (
        "about-gitlab-com-postmortem-of-database-outage-of-jan-b013b301"
    ),
    "https://arxiv.org/abs/2205.01068": "arxiv-org-2205-01068-e4ee11de",
    "https://www.anthropic.com/engineering/a-postmortem-of-three-recent-issues": (
        "anthropic-com-a-postmortem-of-three-recent-issues-955bc6c9"
    ),
    "https://Status.Example.com:443/incidents/2024-03-05?utm_source=x&b=2&a=1#timeline": (
        "status-example-com-2024-03-05-57e009e8"
    ),
    "http://blog.example.org:8080/post%7e1/%2Fa": "blog-example-org-a-7c65f7bc",
    "http://[2001:db8::1]:8080/a": "2001-db8-1-a-f71649db",
    "http://127.0.0.1:8080/page.html": "127-0-0-1-page-cf57552b",
}


@pytest.mark.parametrize(("url", "draft_id"), PINNED.items())
def test_existing_urls_keep_their_draft_ids(url: str, draft_id: str) -> None:
    assert draft_id_for(url) == draft_id


@pytest.mark.parametrize(
    "spelling",
    [
        "http://127.0.0.1:8080/x/../page.html",
        "http://127.0.0.1:8080/./page.html",
        "http://127.0.0.1:8080/x/y/../.././page.html",
        "http://127.0.0.1:8080/%2E/page.html",
        "http://[::ffff:127.0.0.1]:8080/page.html",
        "http://[::FFFF:7f00:1]:8080/page.html",
        "http://2130706433:8080/page.html",
        "http://0177.0.0.1:8080/page.html",
        "http://0x7f.0.0.1:8080/page.html",
        "http://0x7F000001:8080/page.html",
        "http://127.1:8080/page.html",
        "http://127.0.1:8080/page.html",
        "http://127.0.0.1.:8080/page.html",
    ],
)
def test_every_spelling_of_one_page_is_one_draft(spelling: str) -> None:
    assert canonical_url(spelling) == "http://127.0.0.1:8080/page.html"
    assert draft_id_for(spelling) == PINNED["http://127.0.0.1:8080/page.html"]


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        ("/a/b/c/./../../g", "/a/g"),  # RFC 3986, 5.2.4's own example
        ("/mid/content=5/../6", "/mid/6"),
        ("/../a", "/a"),  # never above the root
        ("/a/.", "/a/"),
        ("/a/b/..", "/a/"),
        ("/a//b///c/", "/a//b///c/"),  # empty segments are kept: a server may read them
        ("/web/2020/https://example.com/x", "/web/2020/https://example.com/x"),  # a Wayback path
        ("/a//../b", "/a/b"),  # `..` climbs out of an empty segment as out of any other
        ("/a/", "/a/"),  # a trailing slash is kept: it may be another page
        ("", "/"),
    ],
)
def test_dot_segments_are_resolved_and_empty_ones_kept(path: str, resolved: str) -> None:
    assert canonical_url(f"https://example.org{path}") == f"https://example.org{resolved}"


@pytest.mark.parametrize(
    ("host", "written"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("0xa.0.0.01", "10.0.0.1"),
        ("012.1", "10.0.0.1"),
        ("167772161", "10.0.0.1"),
        ("0", "0.0.0.0"),
        ("[::1]", "[::1]"),
        ("[2001:DB8:0:0::1]", "[2001:db8::1]"),
        ("[::ffff:a9fe:a9fe]", "169.254.169.254"),
        ("example.org", None),
        ("1.2.3.4.5", None),  # five parts: a name, not an address
        ("256.1.1.1", None),  # out of range: not an address either
        ("08.0.0.1", None),  # not octal
        ("0x1g.0.0.1", None),
    ],
)
def test_address_hosts_are_written_one_way(host: str, written: str | None) -> None:
    assert address_host(host) == written
