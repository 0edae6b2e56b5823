"""Atom and RSS feeds, Statuspage's history.atom and history.rss among them, read with feedparser.

feedparser is given a file object, never the bytes: given bytes or a string it first tries them
as a file name or a URL, and a feed whose body is `/etc/passwd` would be read from disk.
It never raises: `bozo` says something was off and `bozo_exception` what. A document with no
entries and a parse error (or no feed version) is not a feed; broken XML that still gives
entries is read, with a warning, as a browser would.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any
from urllib.parse import urljoin

import feedparser

from pipeline.feeds.items import FeedItem, FeedReading, NotAFeed, fingerprint, iso_date, plain

__all__ = ["read_syndication", "statuspage_postmortem"]

# Warnings, not faults: the entries came through.
_HARMLESS = (feedparser.CharacterEncodingOverride, feedparser.NonXMLContentType)


def read_syndication(
    body: bytes, content_type: str | None, base_url: str, *, limit: int, statuspage: bool = False
) -> FeedReading:
    parsed = feedparser.parse(
        io.BytesIO(body),
        response_headers={"content-type": content_type or "", "content-location": base_url},
        # Feed HTML is only ever turned into text here, never shown: neither is needed, and they are
        # most of feedparser's time on a large feed.
        sanitize_html=False,
        resolve_relative_uris=False,
    )
    problem = parsed.get("bozo_exception") if parsed.get("bozo") else None
    entries: list[Any] = parsed.entries
    if not entries and (problem is not None or not parsed.get("version")):
        what = f"{type(problem).__name__}: {problem}" if problem is not None else "no feed version found"
        raise NotAFeed(f"not an Atom or RSS feed ({_one_line(what)})")
    reading = FeedReading(total=len(entries))
    if problem is not None:
        kind = "declared encoding overridden" if isinstance(problem, _HARMLESS) else "malformed"
        reading.warnings.append(f"{kind}: {_one_line(str(problem))}; read {len(entries)} entries")
    for entry in entries[:limit]:
        item = _item(entry, base_url, statuspage=statuspage)
        if item is not None:
            reading.items.append(item)
    if len(entries) > limit:
        reading.warnings.append(f"kept the first {limit} of {len(entries)} entries (max_feed_entries)")
    return reading


def _item(entry: Any, base_url: str, *, statuspage: bool) -> FeedItem | None:
    link = entry.get("link") or (entry.get("id") if entry.get("guidislink") else None)
    if not link:
        return None
    url = urljoin(base_url, link.strip())
    if not url.startswith(("http://", "https://")):
        return None
    title = plain(entry.get("title"))
    markup = _markup(entry)
    date = iso_date(entry.get("published_parsed") or entry.get("updated_parsed"))
    text = None
    if statuspage:
        postmortem = statuspage_postmortem(markup)
        if postmortem:
            text = f"# {title or url}\n\n{postmortem}\n"
    # RSS has only pubDate, and never moves it on an edit (a Statuspage item whose postmortem came
    # days later keeps its date): the text is what changes, so it is hashed too. `updated` is asked
    # for only where the feed has one: feedparser falls back to `published` with a DeprecationWarning.
    stamp = entry.get("updated") if "updated" in entry else entry.get("published")
    return FeedItem(
        url=url,
        key=url,
        fingerprint=fingerprint(stamp, title, markup),
        title=title,
        summary=plain(markup),
        date=date,
        text=text,
    )


def _markup(entry: Any) -> str:
    content = entry.get("content")
    if content:
        return " ".join(part.get("value", "") for part in content)
    return str(entry.get("summary") or "")


# A Statuspage update is one paragraph: `<small>date</small><br><strong>Status</strong> - body`.
_UPDATE = re.compile(r"<p>(.*?)</p>", re.DOTALL | re.IGNORECASE)
_STATUS = re.compile(r"<strong>\s*([^<]+?)\s*</strong>\s*-?\s*", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def statuspage_postmortem(markup: str) -> str | None:
    """The postmortem a Statuspage incident carries in its history feed: the update labelled
    Postmortem, its Markdown source flattened with <br> (as the page writes it), put back in lines."""
    for paragraph in _UPDATE.findall(markup):
        status = _STATUS.search(paragraph)
        if status and status.group(1).strip().lower() == "postmortem":
            body = _BREAK.sub("\n", paragraph[status.end() :])
            text = html.unescape(re.sub(r"<[^>]*>", "", body)).strip()
            return text or None
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]
