"""Link lists: a Markdown list of postmortems (markdown-it-py) and the links of an HTML page that a
CSS selector picks out (BeautifulSoup with soupsieve, as the extractor reads HTML).

A Markdown list entry is a paragraph or a list item that begins with a link, the form curated lists
use (`[Company](url). What happened.`): the link's text is the org and the rest is the summary.
Links to a fragment of the list itself (a table of contents) or to a relative path are not entries.
"""

from __future__ import annotations

from urllib.parse import urldefrag, urljoin

from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from markdown_it.token import Token
from soupsieve import SelectorSyntaxError

from pipeline.feeds.items import FeedItem, FeedReading, NotAFeed, fingerprint, plain
from pipeline.ids import archived_original, canonical_url

__all__ = ["check_selector", "read_html_links", "read_markdown_list"]

_MARKDOWN = MarkdownIt("commonmark")


def read_markdown_list(body: bytes, base_url: str, *, limit: int) -> FeedReading:
    text = body.decode("utf-8-sig", "replace")
    if "\x00" in text:
        raise NotAFeed("not a Markdown list (binary bytes)")
    tokens = _MARKDOWN.parse(text)
    items: list[FeedItem] = []
    seen: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type != "inline" or index == 0 or tokens[index - 1].type != "paragraph_open":
            continue
        item = _list_item(token, base_url)
        if item is not None and item.key not in seen:
            seen.add(item.key)
            items.append(item)
    reading = FeedReading(items=items[:limit], total=len(items))
    if len(items) > limit:
        reading.warnings.append(f"kept the first {limit} of {len(items)} entries (max_feed_entries)")
    return reading


def _list_item(token: Token, base_url: str) -> FeedItem | None:
    children = token.children or []
    if not children or children[0].type != "link_open":
        return None
    href = str(children[0].attrs.get("href") or "").strip()
    if not href.startswith(("http://", "https://")):
        return None  # a table of contents' fragment, a relative link: not a postmortem
    close = _link_end(children, 0)
    link_text = "".join(c.content for c in children[1:close] if c.type in ("text", "code_inline")).strip()
    rest = _inline_text(children[_after_links(children, close + 1) :]).strip().lstrip(".,:;-–— ").strip()
    original = archived_original(href)
    url = original or href
    title = _first_sentence(rest) or link_text or None
    return FeedItem(
        url=url,
        key=canonical_url(url),
        fingerprint=fingerprint(link_text, rest),
        title=plain(title, limit=200),
        summary=plain(rest),
        org=link_text or None,
        listed_as=href if original else None,
    )


def _link_end(children: list[Token], start: int) -> int:
    """The index of the link_close of the link opened at `start` (the end when it has none)."""
    return next((i for i in range(start, len(children)) if children[i].type == "link_close"), len(children))


def _after_links(children: list[Token], at: int) -> int:
    """Where the entry's words start: past more links that follow the first with only a comma between,
    `[Basecamp](url), [see also](url2). What happened.`, whose link texts are no part of the summary."""
    while True:
        next_at = at
        if next_at < len(children) and children[next_at].type == "text" and not children[next_at].content.strip(" ,;"):
            next_at += 1
        if next_at >= len(children) or children[next_at].type != "link_open":
            return at
        at = _link_end(children, next_at) + 1


def _inline_text(children: list[Token]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


def _first_sentence(text: str) -> str:
    for stop in (". ", "! ", "? "):
        at = text.find(stop)
        if 0 < at < 200:
            return text[: at + 1]
    return text


def check_selector(selector: str) -> str | None:
    """Why `selector` is no CSS selector soupsieve reads; None when it is one."""
    try:
        BeautifulSoup("", "html.parser").select(selector)
    except SelectorSyntaxError as exc:
        return " ".join(str(exc).split())
    return None


def read_html_links(body: bytes, base_url: str, selector: str, *, limit: int) -> FeedReading:
    soup = BeautifulSoup(body, "lxml")
    if soup.find() is None:
        raise NotAFeed("not an HTML page (no elements)")
    base = soup.find("base", href=True)
    base_url = urljoin(base_url, str(base["href"])) if base else base_url
    items: list[FeedItem] = []
    seen: set[str] = set()
    for element in soup.select(selector):
        links = [element] if element.name == "a" else element.select("a[href]")
        for link in links:
            href = str(link.get("href") or "").strip()
            url = urldefrag(urljoin(base_url, href)).url
            if not href or not url.startswith(("http://", "https://")) or url == urldefrag(base_url).url:
                continue
            key = canonical_url(url)
            if key in seen:
                continue
            seen.add(key)
            title = plain(link.get_text(" "), limit=200)
            items.append(FeedItem(url=url, key=key, fingerprint=fingerprint(title), title=title))
    reading = FeedReading(items=items[:limit], total=len(items))
    if not items:
        reading.warnings.append(f"the selector {selector!r} picked out no links")
    if len(items) > limit:
        reading.warnings.append(f"kept the first {limit} of {len(items)} links (max_feed_entries)")
    return reading
