"""HTML to blocks and metadata, pure.

The main text comes from trafilatura, which measured best on the shared corpora; its
output keeps the page's own headings, lists and tables, and those become the blocks.
Its tree is walked with lxml, which trafilatura has already parsed (parsing the page
again with BeautifulSoup would double the cost per page). When trafilatura finds no
main text, readability-lxml is the fallback and BeautifulSoup reads its result.

The headline and the publication date are read from the parsed page before
trafilatura runs: its h1s, <title>, <meta> tags, JSON-LD and the byline under the
headline. htmldate is only the last resort for the date.
"""

from __future__ import annotations

import html as html_entities
import json
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from urllib.parse import urljoin, urlsplit

import trafilatura
from bs4 import BeautifulSoup
from htmldate import find_date
from lxml.etree import ElementDefaultClassLookup, HTMLParser, LxmlError, ParserError, XPath, strip_elements, strip_tags
from lxml.html import HtmlComment, HtmlElement, HtmlEntity, HtmlProcessingInstruction
from lxml.html import fromstring as html_fromstring
from readability import Document as ReadabilityDocument
from trafilatura.settings import DEFAULT_CONFIG, MANUALLY_CLEANED, MANUALLY_STRIPPED, Document
from trafilatura.utils import DOCTYPE_TAG, FAULTY_HTML, INVALID_XML_CHARS, is_dubious_html

from pipeline.extract.blocks import Block, Link
from pipeline.extract.dates import dates_in, machine_date

__all__ = ["HtmlDocument", "TitleMetadata", "choose_title", "read_html"]

# "Title | Site", "Site - Title", "Title :: Site", "Title — Site", "Title / Section"
_TITLE_SEPARATOR = re.compile(r"\s+(?:[|\-–—·•»:/]{1,2})\s+")
# Not part of what a reader sees as the heading ("Copy item path" buttons, hidden tooltips).
_NOT_TEXT = {"script", "style", "template", "noscript", "button", "svg"}
_BLOCK_TAGS = {"br", "div", "p", "li", "h1", "h2", "h3", "h4", "h5", "h6"}
# Meta names that declare when a page was published (not updated).
_PUBLISHED_META = re.compile(
    r"publish|pub[-_]?date|issued|created|^date$|citation_(?:publication_|online_)?date|^dc(?:terms)?\.date$|uploaddate",
    re.IGNORECASE,
)
_NOT_PUBLISHED_META = re.compile(r"modif|updat|expir|publisher", re.IGNORECASE)
_HIDDEN = {"script", "style", "noscript", "template"}
_TEXT_AFTER = XPath("following::text()[position() <= 80]")
_TEXT_BEFORE = XPath("preceding::text()[position() <= 30]")
_PAGE_LENGTH = XPath("string-length(normalize-space(//body))")
_DATE_ELEMENTS = XPath('//time | //*[@itemprop="datePublished"]')
_PARTIAL_SHARE = 2 / 5
# The characters trafilatura's INVALID_XML_CHARS deletes.
_INVALID_XML = tuple(map(chr, (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF)))
# Under this many characters, trafilatura takes its result for a failure and tries the whole page.
_MIN_EXTRACTED = DEFAULT_CONFIG.getint("DEFAULT", "MIN_EXTRACTED_SIZE")
# Elements trafilatura deletes with their content (its public MANUALLY_CLEANED list), and
# those it unwraps (MANUALLY_STRIPPED), in every pass but its fallbacks on the whole page:
# done once before its first pass, its XPath rules (each a Python call per element) have
# fewer elements to visit.
# Left to it: a form that holds the page's text, a figure that holds a table, a formula,
# and the <head> (its <title> tells it the headline apart from the text).
_BOILERPLATE = tuple(
    tag
    for tag in dict.fromkeys(
        (
            "nav",
            "aside",
            "footer",
            "script",
            "style",
            "svg",
            "noscript",
            "select",
            "button",
            "input",
            "iframe",
            "link",
            "meta",
            *MANUALLY_CLEANED,
        )
    )
    if tag not in ("form", "figure", "math", "head")
)
_DELETED = tuple(tag for tag in _BOILERPLATE if tag != "script")
_SIDEBARS = {"nav", "aside", "footer"}
# The stripped parts that may hold an article (a <noscript>, a <fieldset>), unlike menus and footers.
_HOLDERS = tuple(tag for tag in _DELETED if tag not in _SIDEBARS)
_UNWRAPPED = tuple(MANUALLY_STRIPPED)
# A byline sits right under (or just over) the headline.
_BYLINE_AFTER, _BYLINE_BEFORE = 300, 100
# A paragraph longer than a byline is prose; inline tags do not end a line.
_BYLINE_LINE = 150
_INLINE_TAGS = {
    "a",
    "abbr",
    "b",
    "cite",
    "code",
    "em",
    "font",
    "i",
    "mark",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "time",
    "u",
}
# trafilatura's own parser settings, with one change. lxml.html's parser asks a Python
# method which class each element gets (a form, an input, a label...), and trafilatura's
# XPath rules make lxml build an element for every attribute they test: thousands of
# Python calls a page, about 4 % of the time. Here every element is a plain HtmlElement,
# chosen in C; trafilatura, htmldate and this module need nothing more.
_PARSER = HTMLParser(collect_ids=False, default_doctype=False, encoding="utf-8", remove_comments=True, remove_pis=True)
_PARSER.set_element_class_lookup(
    ElementDefaultClassLookup(element=HtmlElement, comment=HtmlComment, pi=HtmlProcessingInstruction, entity=HtmlEntity)
)


@dataclass(frozen=True)
class TitleMetadata:
    """What a page's metadata calls it, beside its h1s: og:title (or twitter:title), its <title>, its
    JSON-LD headline; and the site's own name (og:site_name), which is not the page's title."""

    og_title: str | None = None
    page_title: str | None = None
    headline: str | None = None
    site_name: str | None = None


@dataclass
class HtmlDocument:
    blocks: list[Block]
    title: str | None
    date: str | None
    site_name: str | None


def _clean(text: str | None) -> str:
    # str.split() knows the same whitespace as re's \s, at a fraction of the cost.
    return " ".join(text.split()) if text else ""


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def _same(a: str, b: str) -> bool:
    """Nearly the same words both ways (a site name written slightly differently)."""
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and len(wa & wb) >= 0.8 * max(len(wa), len(wb))


def _is_site(text: str, sites: list[str], host: str) -> bool:
    """Whether a title part or a heading is the site's name rather than the page's."""
    if not _words(text):
        return True
    if any(_same(text, site) for site in sites):
        return True
    joined = "".join(re.findall(r"\w+", text.lower()))
    labels = [label for label in host.split(".") if label and label != "www"]
    return bool(labels) and joined in ("".join(labels), "".join(labels[:-1]))


def _strip_site(heading: str, sites: list[str], host: str) -> str:
    """A heading with a leading or trailing site name cut off ("Story – Site")."""
    cuts = list(_TITLE_SEPARATOR.finditer(heading))
    if (
        cuts
        and _is_site(heading[cuts[-1].end() :], sites, host)
        and not _is_site(heading[: cuts[-1].start()], sites, host)
    ):
        return heading[: cuts[-1].start()].strip()
    if (
        cuts
        and _is_site(heading[: cuts[0].start()], sites, host)
        and not _is_site(heading[cuts[0].end() :], sites, host)
    ):
        return heading[cuts[0].end() :].strip()
    return heading


def choose_title(h1s: list[str], metadata: TitleMetadata, url: str | None = None) -> str | None:
    """The headline of a page.

    The first-level heading is the headline on most pages, but many pages also give
    the site's name or a call to action an h1. So an h1 is taken when it agrees with a
    part of the page's <title>, og:title or JSON-LD headline other than the site's
    name, else the first such part. The site's name is og:site_name, the host name, or
    by convention the last part of "Title | Site". Pass the h1s in order of preference
    (those inside <article> or <main> first): the first of equally good ones wins.
    """
    host = (urlsplit(url).hostname or "").lower() if url else ""
    references = [r for r in (metadata.og_title, metadata.page_title, metadata.headline) if r]
    site_name = metadata.site_name
    # A "site name" that is the whole title names nothing.
    sites = [site_name] if site_name and not any(_same(site_name, r) for r in references) else []
    parts: list[str] = []
    fallback = None
    for reference in references:
        pieces = [p.strip() for p in _TITLE_SEPARATOR.split(reference) if p.strip()]
        kept = [p for p in pieces if not _is_site(p, sites, host)]
        if len(kept) == len(pieces) > 1:
            kept = kept[:-1]
        parts += kept
        fallback = fallback or (kept[0] if kept else None)
    candidates = [_strip_site(h, sites, host) for h in h1s if h and not _is_site(h, sites, host)]
    if candidates and not references:
        return candidates[0]
    if candidates and parts:
        best = max(candidates, key=lambda h: max(_overlap(h, p) for p in parts))
        if max(_overlap(best, p) for p in parts) >= 0.5:
            return best
    return fallback or (candidates[0] if candidates else None)


def _heading_text(element) -> str:
    """What a reader sees of a heading: <br> and blocks are spaces, buttons and hidden parts are not text."""
    out: list[str] = []

    def walk(node) -> None:
        if not isinstance(node.tag, str) or node.tag in _NOT_TEXT or node.get("hidden") is not None:
            return
        if node.tag in _BLOCK_TAGS:
            out.append(" ")
        out.append(node.text or "")
        for child in node:
            walk(child)
            out.append(child.tail or "")

    walk(element)
    return _clean("".join(out))


def _metas(tree) -> dict[str, str]:
    """Every <meta> name, property or itemprop (lower case) with its first non-empty content."""
    found: dict[str, str] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").strip().lower()
        content = _clean(meta.get("content"))
        if key and content and key not in found:
            found[key] = content
    return found


def _json_ld(tree) -> list[dict]:
    """The objects of the page's JSON-LD, outer ones first (@graph and mainEntity opened)."""
    objects: list[dict] = []
    for script in tree.iterfind('.//script[@type="application/ld+json"]'):
        try:
            pending = [json.loads(script.text or "")]
        except ValueError:
            continue
        while pending and len(objects) < 200:
            item = pending.pop(0)
            if isinstance(item, list):
                pending.extend(item)
            elif isinstance(item, dict):
                objects.append(item)
                pending.extend(
                    item[k]
                    for k in ("@graph", "mainEntity", "mainEntityOfPage")
                    if isinstance(item.get(k), (list, dict))
                )
    return objects


def _ld_text(objects: list[dict], key: str) -> str | None:
    for item in objects:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return _clean(html_entities.unescape(value))
    return None


def _visible(texts) -> list[str]:
    """Text nodes a reader sees: not the inside of a script or a style."""
    return [t for t in texts if t.is_tail or t.getparent().tag not in _HIDDEN]


def _not_a_byline(text) -> bool:
    """Whether a text node is in a sidebar or footer, or in a paragraph of prose (where a
    date is what the story is about, not when it was posted)."""
    element = text.getparent().getparent() if text.is_tail else text.getparent()
    if element is None:
        return False
    if element.tag in _SIDEBARS or any(a.tag in _SIDEBARS for a in element.iterancestors()):
        return True
    while element is not None and element.tag in _INLINE_TAGS:
        element = element.getparent()
    return element is not None and element.tag == "p" and len(element.text_content()) > _BYLINE_LINE


def _line_date(texts: list[str], *, after: bool) -> str | None:
    """The first date after the headline (or the last before it) within the byline's reach, not in prose."""
    texts = [t for t in texts if t.strip()]
    joined, starts = "", []
    for text in texts:
        starts.append(len(joined))
        joined += " ".join(text.split()) + " "
    found = dates_in(joined)
    if after:
        candidates = [d for d in found if d.position <= _BYLINE_AFTER]
    else:
        candidates = [d for d in reversed(found) if d.position >= len(joined) - _BYLINE_BEFORE]
    for date in candidates:
        text = texts[bisect_right(starts, date.position) - 1]
        if not (hasattr(text, "getparent") and _not_a_byline(text)):
            return str(date)
    return None


def _byline_date(headline) -> str | None:
    """The date shown just under (or just over) the headline: what a reader sees as the page's date."""
    return _line_date([_heading_text(headline), *_visible(_TEXT_AFTER(headline))], after=True) or _line_date(
        _visible(_TEXT_BEFORE(headline)), after=False
    )


def _article_time(tree) -> str | None:
    """A <time> (or itemprop=datePublished) in the article or its header, not in a sidebar or footer."""
    for element in _DATE_ELEMENTS(tree):
        places = {a.tag for a in element.iterancestors()}
        if places & {"article", "main", "header"} and not places & _SIDEBARS:
            value = machine_date(element.get("datetime") or element.get("content")) or machine_date(
                _clean(element.text_content())
            )
            if value:
                return value
    return None


def _published(tree, headline, metas: dict[str, str], objects: list[dict], url: str | None) -> str | None:
    """The publication date, from the most explicit statement to the least.

    A page's declared publication date (article:published_time and its kin), then the
    date its byline shows, a <time> in the article, JSON-LD's datePublished (often the
    creation stamp of a page rewritten since, so after what the page shows), and last
    htmldate's quick pass.
    """
    for key, content in metas.items():
        if _PUBLISHED_META.search(key) and not _NOT_PUBLISHED_META.search(key):
            value = machine_date(content)
            if value:
                return value
    value = _byline_date(headline) if headline is not None else None
    value = value or _article_time(tree) or machine_date(_ld_text(objects, "datePublished"))
    if value:
        return value
    # htmldate's extensive search (dateparser) cost a third of a page's time; the text's
    # own dates are read by the caller, which can tell an incident's date from a post's.
    return find_date(tree, url=url, original_date=True, extensive_search=False, outputformat="%Y-%m-%d")


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
                blocks.append(Block(text, quoted=tag == "quote"))  # trafilatura's <quote>: a <blockquote>
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


def _links_by_text(tree, url: str | None) -> dict[str, tuple[Link, ...]]:
    """The links of each list item and paragraph of the page, by its text (nested lists aside).

    trafilatura is not asked for links: with them its text F1 on the WCXB dev set fell (.9427 to
    .9408) and heading anchors came in as links. The page's own items are read instead, before
    trafilatura runs, and a block gets the links of the item whose text it has.
    """
    found: dict[str, tuple[Link, ...]] = {}
    for element in _LINKED_ITEMS(tree):
        if element.find(".//ul") is None and element.find(".//ol") is None:
            text = element.text_content()  # in C; only an item with a list inside needs the walk
            anchors = list(element.iter("a"))
        else:
            texts: list[str] = []
            anchors = []
            _own_parts(element, texts, anchors)
            text = "".join(texts)
        links = []
        for anchor in anchors:
            href = (anchor.get("href") or "").strip()
            if href:
                # urljoin took half the time of this function; most links are absolute already.
                absolute = href if href.startswith(("https://", "http://")) or not url else urljoin(url, href)
                links.append(Link(_clean(anchor.text_content()), absolute))
        if links:
            found.setdefault(_clean(text), tuple(links))
    return found


# List items and paragraphs with a link in them: the only ones whose links a block may need.
_LINKED_ITEMS = XPath("//li[.//a[@href]] | //p[.//a[@href]]")


def _own_parts(element, texts: list[str], anchors: list) -> None:
    """The text and anchors of an element, without those of lists nested in it."""
    if element.text:
        texts.append(element.text)
    for child in element:
        if isinstance(child.tag, str) and child.tag not in ("ul", "ol"):
            if child.tag == "a":
                anchors.append(child)
                texts.append(child.text_content())
            else:
                _own_parts(child, texts, anchors)
        if child.tail:
            texts.append(child.tail)


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
            blocks.append(Block(text, kind="item", quoted=element.find_parent("blockquote") is not None))
        elif element.name == "tr":
            blocks.append(
                Block(" | ".join(_clean(c.get_text(" ")) for c in element.find_all(["td", "th"])), kind="row")
            )
        else:
            blocks.append(Block(text, quoted=element.find_parent("blockquote") is not None))
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


def _repaired(markup: str, beginning: str) -> str:
    """trafilatura's repair_faulty_html: what libxml2 refuses or misreads, mended.

    Its regex pass over the whole page for characters libxml2 refuses costs a sixth of
    the parse; looking for each of them with `in` (a memchr-like scan) costs a third of
    that, and few pages have any. The other repairs are its own, on the first lines.
    """
    if any(char in markup for char in _INVALID_XML):
        markup = INVALID_XML_CHARS.sub("", markup)
    if "doctype" in beginning:  # lxml bug 1955915: a doctype with a slash in it
        first, newline, rest = markup.partition("\n")
        fixed = DOCTYPE_TAG.sub("", first, count=1)
        if fixed != first:
            markup = fixed + newline + rest
    for line in markup[:4096].splitlines()[:4]:  # a self-closing <html/>
        if "<html" in line and line.endswith("/>"):
            return FAULTY_HTML.sub(r"\1>", markup, count=1)
    return markup


def _parse(markup: str):
    """The page's tree as trafilatura's load_html makes it (same repairs, same refusal of
    what is not HTML), built with the parser above; None when there is none."""
    beginning = markup[:50].lower()
    markup = _repaired(markup, beginning)
    try:
        tree = html_fromstring(markup, parser=_PARSER)
    except (ValueError, LxmlError):  # ValueError: a str that declares its own encoding
        tree = None
    if tree is None or len(tree) < 1:
        try:
            tree = html_fromstring(markup.encode("utf-8", "surrogatepass"), parser=_PARSER)
        except (ValueError, LxmlError):
            return None
    if is_dubious_html(beginning) and len(tree) < 2:
        return None
    return tree


def _held_text(tree) -> int:
    """Characters of the paragraphs in the parts stripped before trafilatura, menu entries
    and links aside: an article there is what balanced mode's fallback on the whole page reads."""
    paragraphs = {p for holder in tree.iter(*_HOLDERS) for p in holder.iter("p")}
    return sum(len(_clean(p.text_content())) for p in paragraphs if next(p.iterancestors("li", "a"), None) is None)


def _keep_preformatted(tree):
    """A <pre> without <code> in it gets one, so trafilatura keeps it as a code block with
    its lines rather than as a quote whose lines the blocks join (kubectl output, logs)."""
    for pre in tree.iter("pre"):
        if pre.find(".//code") is None:
            code = pre.makeelement("code")
            code.text, pre.text = pre.text, None
            code.extend(list(pre))
            pre.append(code)
    return tree


def _trafilatura(tree: HtmlElement, url: str | None, favor: str, *, fast: bool) -> Document | None:
    """trafilatura's extraction of the main text, as a tree of its XML (the body alone)."""
    document = trafilatura.bare_extraction(
        tree,
        url=url,
        fast=fast,
        output_format="xml",  # the body alone, no text rendering
        with_metadata=False,
        include_formatting=False,  # blocks keep words, not bold: fewer elements in its passes
        include_tables=True,
        include_comments=False,
        favor_precision=favor == "precision",
        favor_recall=favor == "recall",
    )
    assert document is None or isinstance(document, Document)  # a dict only with as_dict=True
    return document


def read_html(markup: str, url: str | None = None, *, favor: str = "balanced") -> HtmlDocument:
    """Blocks, title, publication date and site name of an HTML page."""
    tree = _parse(markup)
    if tree is None:  # too small or too broken for lxml's document parser
        return HtmlDocument(_soup_blocks(markup), None, None, None)
    metas = _metas(tree)
    objects = _json_ld(tree)
    site_name = metas.get("og:site_name") or metas.get("application-name")
    title_element = next(tree.iter("title"), None)
    page_title = _clean(title_element.text_content()) if title_element is not None else None
    # h1s in the article or main part first: on a tie they are the headline.
    h1s = sorted(tree.iter("h1"), key=lambda h: not any(a.tag in ("article", "main") for a in h.iterancestors()))[:8]
    texts = [_heading_text(h) for h in h1s]
    metadata = TitleMetadata(
        og_title=metas.get("og:title") or metas.get("twitter:title"),
        page_title=page_title,
        headline=_ld_text(objects, "headline"),
        site_name=site_name,
    )
    title = choose_title(texts, metadata, url)
    headline = next((h for h, text in zip(h1s, texts, strict=False) if title and title in text), None)
    date = _published(tree, headline, metas, objects, url)
    _keep_preformatted(tree)
    links = _links_by_text(tree, url)

    held = _held_text(tree) if favor == "balanced" else 0  # before stripping
    if favor != "recall":  # see _BOILERPLATE; recall mode brings deleted parts back when nothing else is left
        for script in list(tree.iter("script")):
            if script.get("type") != "application/ld+json":  # trafilatura looks for forum threads there
                script.drop_tree()
        strip_elements(tree, *_DELETED, with_tail=False)
        strip_tags(tree, *_UNWRAPPED)
    # trafilatura's own rules alone are enough on more than 9 pages in 10, at half the
    # cost of its full cascade. When they hold under two fifths of the text outside menus
    # and footers, they may have caught only part of the article (or none): then the
    # cascade's second opinions (readability, jusText) run too; in balanced mode also
    # when they find less than trafilatura itself calls a result. That mode then falls
    # back on the whole page, so when the stripped parts held an article (a <noscript>
    # one), the cascade gets the page as it came; otherwise the stripped page, where a
    # short status update stays free of the "enable JavaScript" notice beside it.
    document = _trafilatura(tree, url, favor, fast=True)
    found = len(_clean(document.raw_text)) if document is not None else 0
    code = sum(len(_clean(e.text)) for e in tree.iter(_HIDDEN))
    short = favor == "balanced" and found < _MIN_EXTRACTED
    if short or found < _PARTIAL_SHARE * (_PAGE_LENGTH(tree) - code):
        whole = _keep_preformatted(_parse(markup)) if held >= _MIN_EXTRACTED else tree
        document = _trafilatura(whole, url, favor, fast=False)
    blocks = _blocks_from_tree(document.body) if document is not None and document.body is not None else []
    if not blocks:
        blocks = _fallback_blocks(markup)
    if links:
        blocks = [replace(b, links=links[b.text]) if not b.is_heading and b.text in links else b for b in blocks]
    return HtmlDocument(blocks, title or None, date, site_name)
