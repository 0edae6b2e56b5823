"""Feeds read: bytes in, the entries they list out. No I/O (pipeline.discover fetches them).

    reading = read_feed(FeedFormat(FeedKind.ATOM), body, content_type, base_url, limit=1000)
    for item in reading.items: item.url, item.title, item.fingerprint, ...

One reader per kind of feed, each with the library that reads it best:
syndication.py  Atom and RSS, Statuspage's history.atom/.rss too (feedparser)
statuspage.py   Statuspage's JSON (api/v2/incidents.json, the older index.json) (pydantic)
gcp.py          Google Cloud's incidents.json (pydantic)
links.py        Markdown link lists (markdown-it-py) and an HTML page's links (BeautifulSoup)

A reader raises NotAFeed when the bytes are not a feed of its kind; a feed that is broken
but still gives entries is read, with a warning.
"""

from __future__ import annotations

from pipeline.feeds.items import FEED_TYPES, FeedItem, FeedReading, NotAFeed
from pipeline.feeds.read import FeedFormat, read_feed

__all__ = ["FEED_TYPES", "FeedFormat", "FeedItem", "FeedReading", "NotAFeed", "read_feed"]
