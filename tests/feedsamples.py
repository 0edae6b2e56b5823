"""The saved feeds of tests/fixtures/feeds (cut copies of real public feeds, see its README.md), the
content types they are served with, and the few edits the tests make to them: a postmortem added
later, a report revised, an entry retitled. Also feeds built from scratch, for pages on a site farm."""

from __future__ import annotations

import html
import json
from typing import Any
from xml.sax.saxutils import escape

from helpers import TESTS

FEEDS = TESTS / "fixtures" / "feeds"

# What each saved feed is served as, by its real server.
CONTENT_TYPES = {
    "atom.xml": "application/atom+xml",
    "rss2.xml": "application/rss+xml",
    "rss2-wordpress.xml": "application/rss+xml; charset=UTF-8",
    "statuspage-history.atom": "application/atom+xml",
    "statuspage-incidents.json": "application/json",
    "statuspage-index-2016.json": "application/json; charset=utf-8",
    "gcp-incidents.json": "application/json",
    "danluu-README-excerpt.md": "text/plain; charset=utf-8",
    "html-index.html": "text/html; charset=utf-8",
}

# The Statuspage Atom entry that was edited a week after it was published (README.md).
SAUCE_EDITED = "Incident/5479540"
SAUCE_EDITED_URL = "https://status.us-west-1.saucelabs.com/incidents/ynqp21mr3mnq"
PARSE_POSTMORTEM_URL = "http://status.parse.com/incidents/p9hy357zjvb3"
CARGO_POSTMORTEM = "https://blog.rust-lang.org/inside-rust/2023/05/01/cargo-postmortem.html"


def sample(name: str) -> bytes:
    return (FEEDS / name).read_bytes()


def sample_text(name: str) -> str:
    return sample(name).decode("utf-8")


def statuspage_paragraph(status: str, markdown: str, when: str = "Nov 10, 10:41 PST") -> str:
    """One update of a Statuspage incident as its history feeds write it: the Markdown's line breaks
    as <br />, the status in <strong>."""
    body = html.escape(markdown, quote=False).replace("\n", "<br />")
    return f"<p><small>{when}</small><br><strong>{status}</strong> - {body}</p>"


def sauce_with_postmortem(markdown: str, updated: str = "2020-11-17T09:00:00-08:00") -> bytes:
    """statuspage-history.atom after Sauce Labs added a postmortem to the incident edited later:
    the paragraph on top of its content (newest first) and `<updated>` moved, as Statuspage does."""
    text = sample_text("statuspage-history.atom")
    start = text.index(SAUCE_EDITED)
    head, entry = text[:start], text[start:]
    entry = entry.replace("<updated>2020-11-10T10:41:55-08:00</updated>", f"<updated>{updated}</updated>", 1)
    marker = '<content type="html">'
    paragraph = escape(statuspage_paragraph("Postmortem", markdown))
    entry = entry.replace(marker, marker + paragraph, 1)
    return (head + entry).encode("utf-8")


def parse_without_postmortem() -> bytes:
    """rss2.xml as it was on Dec 24, before the Postmortem paragraph was added (its pubDate is the same)."""
    text = sample_text("rss2.xml")
    start = text.index("&lt;p&gt;&lt;small&gt;Dec 26, 10:22 PST")
    end = text.index("&lt;p&gt;&lt;small&gt;Dec 24, 11:21 PST")
    return (text[:start] + text[end:]).encode("utf-8")


def statuspage_json(name: str, **incident: Any) -> bytes:
    """A Statuspage JSON sample with fields of its one incident replaced (a postmortem added)."""
    document = json.loads(sample(name))
    document["incidents"][0].update(incident)
    return json.dumps(document, indent=1).encode("utf-8")


def postmortem_update(markdown: str, at: str = "2024-09-20T10:00:00.000Z") -> dict[str, Any]:
    """An `incident_updates` item of status postmortem, newest first as the API lists them."""
    return {"id": "pm0000000001", "status": "postmortem", "body": markdown, "created_at": at, "updated_at": at}


def gcp_incidents(report: str | None = "keep", modified: str | None = None) -> bytes:
    """gcp-incidents.json with its Incident Report update kept ("keep"), replaced by `report`, or
    dropped (None, as it was before the report came, about ten days after the incident)."""
    incidents = json.loads(sample("gcp-incidents.json"))
    incident = incidents[0]
    if report is None:
        incident["updates"] = incident["updates"][1:]
        incident["most_recent_update"] = incident["updates"][0]
        incident["modified"] = "2026-07-14T21:31:52+00:00"
    elif report != "keep":
        incident["updates"][0]["text"] = report
        incident["most_recent_update"]["text"] = report
    if modified:
        incident["modified"] = modified
    return json.dumps(incidents, indent=1).encode("utf-8")


def atom_feed(entries: list[dict[str, str]], title: str = "Engineering blog") -> bytes:
    """An Atom feed of `entries` (url, title, and optional updated, summary), newest first."""
    parts = []
    for entry in entries:
        updated = entry.get("updated", "2024-05-01T00:00:00Z")
        summary = f"<summary>{escape(entry['summary'])}</summary>" if "summary" in entry else ""
        parts.append(
            f'<entry><title>{escape(entry["title"])}</title><link href="{escape(entry["url"])}"/>'
            f"<id>{escape(entry['url'])}</id><published>{updated}</published><updated>{updated}</updated>"
            f"{summary}</entry>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>{escape(title)}</title><id>urn:test:feed</id><updated>2024-05-01T00:00:00Z</updated>"
        + "".join(parts)
        + "</feed>\n"
    ).encode("utf-8")


def big_atom(n: int, base: str = "https://example.org/posts") -> bytes:
    """An Atom feed of `n` entries, newest (0) first."""
    return atom_feed([{"url": f"{base}/{i}", "title": f"Outage {i}"} for i in range(n)])
