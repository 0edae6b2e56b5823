"""HTML to blocks and metadata, pure.

The main text comes from trafilatura, which measured best on the shared corpora; its
output keeps the page's own headings, lists and tables, and those become the blocks.
Its tree is walked with lxml, which trafilatura has already parsed (parsing the page
again with BeautifulSoup would double the cost per page). When trafilatura finds no
main text, readability-lxml is the fallback and BeautifulSoup reads its result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import trafilatura
from htmldate import find_date
from bs4 import BeautifulSoup
from lxml import html as lxml_html
from lxml.etree import ParserError
from readability import Document as ReadabilityDocument
from trafilatura.utils import load_html

from pipeline.extract.blocks import Block

__all__ = ["HtmlDocument", "choose_title", "read_html"]

_SPACE = re.compile(r"\s+")
# "Title | Site", "Site - Title", "Title :: Site", "Title — Site"
_TITLE_SEPARATOR = re.compile(r"\s+(?:[|\-–—·•»:]{1,2})\s+")


@dataclass
class HtmlDocument:
    blocks: list[Block]
    title: str | None
    date: str | None
    site_name: str | None


def _clean(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def _split_title(title: str) -> tuple[str, set[str]]:
    """The main part of a <title> or og:title, and the other parts (usually the site name)."""
    parts = [p for p in _TITLE_SEPARATOR.split(title) if p.strip()]
    if len(parts) <= 1:
        return title.strip(), set()
    main = max(parts, key=len)
    return main.strip(), {" ".join(sorted(_words(p))) for p in parts if p is not main}


def choose_title(h1s: list[str], og_title: str | None, page_title: str | None, site_name: str | None) -> str | None:
    """The headline of a page.

    The first-level heading is the headline on most pages, but many pages also give
    the site's name or a call to action an h1. So an h1 is taken when it agrees with
    the page's <title> or og:title (which are about the article), else the main part
    of og:title or <title> with the site name cut off.
    """
    reference = og_title or page_title or ""
    main, others = _split_title(reference)
    if page_title and og_title:
        others |= _split_title(page_title)[1]
    if site_name:
        others.add(" ".join(sorted(_words(site_name))))
    candidates = [h for h in h1s if h and " ".join(sorted(_words(h))) not in others]
    if candidates:
        best = max(candidates, key=lambda h: _overlap(h, reference))
        if not reference or _overlap(best, reference) >= 0.5:
            return best if reference else candidates[0]
    return main or (candidates[0] if candidates else None)


def _meta(tree: lxml_html.HtmlElement, *names: str) -> str | None:
    for name in names:
        found = tree.xpath(f'//meta[@property="{name}" or @name="{name}"]/@content')
        if found and _clean(found[0]):
            return _clean(found[0])
    return None


def _blocks_from_tree(body) -> list[Block]:
    blocks: list[Block] = []

    def items(element, depth: int = 0) -> None:
        for item in element.iterchildren("item"):
            own = "".join(t for node in [item] for t in _own_text(node))
            if _clean(own):
                blocks.append(Block(_clean(own), kind="item"))
            for nested in item.iterchildren("list"):
                items(nested, depth + 1)

    for element in body.iterchildren():
        tag = element.tag
        if tag == "head":
            rend = element.get("rend") or "h2"
            level = int(rend[1]) if re.fullmatch(r"h[1-6]", rend) else 2
            if _clean(element.text_content() if hasattr(element, "text_content") else "".join(element.itertext())):
                blocks.append(Block(_clean("".join(element.itertext())), level=level))
        elif tag == "list":
            items(element)
        elif tag == "table":
            for row in element.iter("row"):
                cells = [_clean("".join(cell.itertext())) for cell in row.iterchildren("cell")]
                if any(cells):
                    blocks.append(Block(" | ".join(cells), kind="row"))
        elif tag == "code":
            text = "".join(element.itertext()).strip("\n")
            if text.strip():
                blocks.append(Block(text))
        else:
            text = _clean("".join(element.itertext()))
            if text:
                blocks.append(Block(text))
    return blocks


def _own_text(item):
    """Text of a list item without the text of lists nested in it."""
    if item.text:
        yield item.text
    for child in item:
        if child.tag != "list":
            yield from child.itertext()
        if child.tail:
            yield child.tail


def _soup_blocks(markup: str) -> list[Block]:
    """Headings, paragraphs, list items, table rows and code of an HTML fragment, read with BeautifulSoup."""
    soup = BeautifulSoup(markup, "html.parser")
    for noise in soup.find_all(["script", "style", "noscript", "nav", "footer", "template"]):
        noise.decompose()
    blocks = []
    for element in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "tr"]):
        text = _clean(element.get_text(" "))
        if not text:
            continue
        if element.name.startswith("h"):
            blocks.append(Block(text, level=int(element.name[1])))
        elif element.name == "li":
            blocks.append(Block(text, kind="item"))
        elif element.name == "tr":
            blocks.append(Block(" | ".join(_clean(c.get_text(" ")) for c in element.find_all(["td", "th"])), kind="row"))
        else:
            blocks.append(Block(text))
    if not blocks:
        text = _clean(soup.get_text(" "))
        blocks = [Block(text)] if text else []
    return blocks


def _fallback_blocks(markup: str) -> list[Block]:
    """When trafilatura finds no main text: readability-lxml's article, else the whole page's text.

    A short page (a status update of two sentences) is too small for either to call it
    an article, and its text is still the document.
    """
    try:
        summary = ReadabilityDocument(markup).summary(html_partial=True)
    except (ParserError, ValueError, TypeError):
        summary = ""
    return (_soup_blocks(summary) if summary else []) or _soup_blocks(markup)


def read_html(markup: str, url: str | None = None, *, favor: str = "precision") -> HtmlDocument:
    """Blocks, title, publication date and site name of an HTML page."""
    tree = load_html(markup)
    if tree is None:  # too small or too broken for lxml's document parser
        return HtmlDocument(_soup_blocks(markup), None, None, None)
    # Read the headline candidates first: trafilatura prunes the tree it is given.
    h1s = [_clean(h.text_content()) for h in tree.iter("h1")][:5]
    og_title = _meta(tree, "og:title", "twitter:title")
    titles = tree.xpath("//title")
    page_title = _clean(titles[0].text_content()) if titles else None
    site_name = _meta(tree, "og:site_name", "application-name")

    # htmldate directly, not trafilatura's metadata pass: the title and site name are
    # read above, and the rest of that pass (authors, categories) would cost a third
    # of the page's time for nothing.
    date = find_date(tree, url=url, original_date=True, extensive_search=True, outputformat="%Y-%m-%d")
    document = trafilatura.bare_extraction(
        tree,
        url=url,
        with_metadata=False,
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        favor_precision=favor == "precision",
        favor_recall=favor == "recall",
    )
    blocks = _blocks_from_tree(document.body) if document is not None and document.body is not None else []
    if not blocks:
        blocks = _fallback_blocks(markup)
    title = choose_title(h1s, og_title, page_title, site_name)
    return HtmlDocument(blocks, title or None, date, site_name)
