"""What a feed reader gives: the entries of one feed, each with what recognises it when it comes again."""

from __future__ import annotations

import hashlib
import html
import json
import re
import time
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from pipeline.models import FeedKind

__all__ = [
    "FEED_TYPES",
    "SUMMARY_LIMIT",
    "FeedItem",
    "FeedReading",
    "Loose",
    "NotAFeed",
    "fingerprint",
    "iso_date",
    "plain",
    "read_json",
]

T = TypeVar("T")

# What each kind of feed is served as. Generic XML and JSON types too: servers label feeds loosely.
_XML = ("application/atom+xml", "application/rss+xml", "application/xml", "text/xml", "application/rdf+xml")
_JSON = ("application/json", "text/json", "application/feed+json")
FEED_TYPES: dict[FeedKind, tuple[str, ...]] = {
    FeedKind.ATOM: _XML,
    FeedKind.RSS: _XML,
    FeedKind.STATUSPAGE: _XML + _JSON,
    FeedKind.GCP_INCIDENTS: _JSON,
    FeedKind.MARKDOWN_LIST: ("text/plain", "text/markdown", "text/x-markdown"),
    FeedKind.HTML_LINKS: ("text/html", "application/xhtml+xml"),
}
# What a summary keeps for matching and for a person to read in the candidates list.
SUMMARY_LIMIT = 500


class NotAFeed(ValueError):
    """The bytes are not a feed of the kind the feed entry says (an HTML page, broken XML or JSON)."""


class Loose(BaseModel):
    """A JSON feed's object as its models read it: what they know is taken, the rest ignored."""

    model_config = ConfigDict(extra="ignore")


def read_json(body: bytes, shape: TypeAdapter[T], what: str) -> T:
    """`body` read as JSON of `shape`; NotAFeed, naming `what` and where it went wrong, when it is not."""
    try:
        return shape.validate_python(json.loads(body))
    except (ValueError, ValidationError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        first = exc.errors(include_url=False)[0] if isinstance(exc, ValidationError) else None
        where = f" at {'.'.join(map(str, first['loc']))}: {first['msg']}" if first else f": {exc}"
        raise NotAFeed(f"not {what}{where}"[:300]) from None


@dataclass(frozen=True)
class FeedItem:
    """One entry of a feed: a page it links to, and what the feed says of it."""

    url: str  # the page, absolute (an archived copy's original, when the feed linked the copy)
    key: str  # what recognises the entry in the next reading (its id, or its URL)
    fingerprint: str  # changes when the feed changes the entry (a postmortem added, a title edited)
    title: str | None = None
    summary: str | None = None  # plain text, at most SUMMARY_LIMIT characters
    date: str | None = None  # YYYY-MM-DD: when it was published, or the incident began
    org: str | None = None  # a link list's link text names the org
    text: str | None = None  # Markdown: the postmortem itself, when the feed carries it
    listed_as: str | None = None  # the link as the feed gave it, where it differs from `url`


@dataclass
class FeedReading:
    items: list[FeedItem] = field(default_factory=list)
    total: int = 0  # entries in the document, before the limit
    warnings: list[str] = field(default_factory=list)  # what was wrong but could still be read


def fingerprint(*parts: str | None) -> str:
    return hashlib.sha256("\x1f".join(p or "" for p in parts).encode("utf-8")).hexdigest()[:16]


def iso_date(value: time.struct_time | None) -> str | None:
    return time.strftime("%Y-%m-%d", value) if value else None


_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def plain(markup: str | None, limit: int = SUMMARY_LIMIT) -> str | None:
    """A feed's HTML snippet as one line of text, for matching and for showing: tags dropped, entities
    undone, white space folded. A regular expression, not a parser: the snippet is never rendered, and
    a parser costs a 10,000-entry feed seconds for what only a filter reads."""
    if not markup:
        return None
    text = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", markup))).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text or None
