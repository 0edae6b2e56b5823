"""`read_feed`: the reader of a feed's kind, chosen by the feed entry and, for Statuspage, by the bytes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline import gate
from pipeline.feeds.gcp import read_gcp_incidents
from pipeline.feeds.items import FeedItem, FeedReading
from pipeline.feeds.links import read_html_links, read_markdown_list
from pipeline.feeds.statuspage import read_statuspage_json
from pipeline.feeds.syndication import read_syndication
from pipeline.models import FeedKind

__all__ = ["FeedFormat", "read_feed"]


@dataclass(frozen=True)
class FeedFormat:
    """How a feed's document is read, as its entry in `sources/feeds.yaml` says: its kind and, for an
    html-links feed, the CSS selector of the links to take (`models.Feed`)."""

    kind: FeedKind
    selector: str | None = None


def read_feed(
    feed_format: FeedFormat, body: bytes, content_type: str | None, base_url: str, *, limit: int = 1000
) -> FeedReading:
    """The entries of one feed document (at most `limit`, the first ones: feeds list the newest first).

    Raises NotAFeed when the bytes are not a feed of its kind. CPU-bound (a 10,000-entry Atom feed
    takes seconds): call it in a worker thread. Every entry's texts have passed the gate (pipeline.gate).
    """
    reading = _read(feed_format, body, content_type, base_url, limit=limit)
    reading.items = [_gated(item) for item in reading.items]
    return reading


def _gated(item: FeedItem) -> FeedItem:
    """The entry with its title, summary, org and text cleaned of what no record may hold."""
    texts = {name: getattr(item, name) for name in ("title", "summary", "org", "text")}
    cleaned = {name: gate.clean(value).text for name, value in texts.items() if value is not None}
    return item if all(cleaned[n] == texts[n] for n in cleaned) else replace(item, **cleaned)


def _read(feed_format: FeedFormat, body: bytes, content_type: str | None, base_url: str, *, limit: int) -> FeedReading:
    kind, selector = feed_format.kind, feed_format.selector
    if kind == FeedKind.GCP_INCIDENTS:
        return read_gcp_incidents(body, base_url, limit=limit)
    if kind == FeedKind.MARKDOWN_LIST:
        return read_markdown_list(body, base_url, limit=limit)
    if kind == FeedKind.HTML_LINKS:
        assert selector, "an html-links feed has a selector (models.Feed)"
        return read_html_links(body, base_url, selector, limit=limit)
    if kind == FeedKind.STATUSPAGE and body.lstrip()[:1] in (b"{", b"["):
        return read_statuspage_json(body, base_url, limit=limit)
    return read_syndication(body, content_type, base_url, limit=limit, statuspage=kind == FeedKind.STATUSPAGE)
