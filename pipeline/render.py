"""A case's texts as HTML, pure: the small Markdown its writers use, text in and safe `Markup` out.

    markdown("Set `CUDA_LAUNCH_BLOCKING=1`.\\n\\n- a\\n- b")
    # Markup('<p>Set <code>CUDA_LAUNCH_BLOCKING=1</code>.</p>\\n<ul>\\n<li>a</li>\\n<li>b</li>\\n</ul>')
    markdown("one line, `code`")    # Markup('one line, <code>code</code>'): a lone paragraph inline

The subset is what the narratives hold (a lesson as a "- " list, a command in backticks, a link in an
action item): inline code, emphasis, lists, links and bare URLs linked. It is rendered by markdown-it-py,
a CommonMark parser already used to read Markdown postmortems (pipeline/extract/markdown.py), kept up and
safe by default (it validates link targets; its HTML escapes every text), with linkify-it-py for bare URLs.
Not a hand-written regex pass: nested emphasis, code spans holding `*` and lists are where those fail.

Every text comes from a crawled page or a person, so the limits are strict:
- raw HTML is text (`html=False`): `<script>` is shown, never run;
- a link is a link only to http, https or mailto; any other target (`javascript:`, `data:`, a relative
  path) is shown as the text it was written as; each link is `rel="nofollow noopener"`;
- headings, images, block quotes, code blocks, tables and rules are not part of the subset: a text's "#"
  or "![...](...)" is shown as written (a case's text is a passage of a page, not a page);
- control and bidirectional characters are removed first (pipeline.gate), as from every text a page prints;
- a single newline is a line break (`breaks`), as the texts were shown before they were rendered.
A text of one paragraph comes out inline, without `<p>`, so it sits in a line as plain text did.

A title is a line, often inside a link: `inline` renders only its inline code and emphasis (no links, no
lists), and `inline_text` gives the same line as plain text, for a page's `<title>`:

    inline("`train_step` 멈춤")         # Markup('<code>train_step</code> 멈춤')
    inline_text("`train_step` 멈춤")    # 'train_step 멈춤'

A value a page's own code (not a template) prints is escaped by `escaped`, markupsafe's escaping as a str.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape

from pipeline.gate import clean_text

__all__ = ["SCHEMES", "browser_rules", "escaped", "inline", "inline_text", "markdown", "shown_url"]

SCHEMES = frozenset({"http", "https", "mailto"})
REL = "nofollow noopener"  # every link's rel
# The block rules kept: paragraphs and lists (and what lists need to end). Every other block rule of
# CommonMark is off, so its syntax is text.
_BLOCK = ["paragraph", "list"]
# The inline rules: an image is parsed (so that its "[...](...)" is not taken for a link) and written back
# as the text it was (`_image_as_text`).
_INLINE = ["backticks", "times", "emphasis", "link", "image", "linkify", "newline", "escape", "entity", "autolink"]
_CORE = ["linkify"]
# linkify-it's fuzzy matching ("example.com" without a scheme) would link words that are not links.
_LINKIFY = {"fuzzy_link": False, "fuzzy_email": False}
_OPTIONS = {"html": False, "linkify": True, "breaks": True, "typographer": False}


def _times(state: StateInline, silent: bool) -> bool:
    """markdown-it's inline rule `times`: a `*` between two digits is a multiplication (`1024*14`, a
    tensor's shape or a count of devices, written so in postmortems), text, never emphasis: CommonMark
    would read `1024*14 ... 1024*12` as an emphasis from the first to the second. Before `emphasis`; a code
    span's `*` never reaches it (the span is read whole first). facets.js holds the same rule."""
    pos, src = state.pos, state.src
    if src[pos] != "*" or pos == 0 or pos + 1 >= state.posMax:
        return False
    if not ("0" <= src[pos - 1] <= "9" and "0" <= src[pos + 1] <= "9"):
        return False
    if not silent:
        state.pending += "*"
    state.pos = pos + 1
    return True


def _link_text(decode: Callable[[str], str]) -> Callable[[str], str]:
    """markdown-it's link text, which decodes a link's percent-escapes (`%ED%95%9C` shows as `한`), but kept
    as written when it would decode to a control or format character or a space other than " " (`%1B`, a
    right-to-left override): a page never prints those, and the gate let the escaped text through as plain
    ASCII. facets.js holds the same rule."""

    def shown(url: str) -> str:
        text = decode(url)
        return url if _unprintable(text) else text

    return shown


def _unprintable(text: str) -> bool:
    """Whether a decoded URL holds a control or format character or a space other than " " (a line break,
    a right-to-left override that would make it read as another address): then it is shown as written."""
    return any(c != " " and unicodedata.category(c)[0] in "CZ" for c in text)


def _validate(url: str) -> bool:
    """A link target markdown-it may link: http, https and mailto only (what it does not link stays text)."""
    return urlsplit(url.strip()).scheme.lower() in SCHEMES


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "zero",  # nothing enabled; what follows is the whole subset
        dict(_OPTIONS),
    )
    md.inline.ruler.before("emphasis", "times", _times)
    md.enable(_BLOCK + _INLINE + _CORE)
    md.validateLink = _validate  # type: ignore[method-assign]
    md.normalizeLinkText = _link_text(md.normalizeLinkText)  # type: ignore[method-assign,assignment]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image_as_text)
    md.linkify.set(dict(_LINKIFY))  # type: ignore[union-attr]
    return md


def _link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", REL)
    return str(self.renderToken(tokens, idx, options, env))


def _image_as_text(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    title = token.attrGet("title")
    titled = f' "{title}"' if title else ""
    said = f"![{token.content}]({token.attrGet('src') or ''}{titled})"
    return str(escape(said))


# A text with none of these, no list marker at its start and no space at its ends is rendered as markdown-it
# renders it: its HTML escaped. Most narratives are such, and a parse costs a hundred times this look.
_SYNTAX = re.compile(r"[`*_\[\]<>&\\!\n\r]|://|www\.|mailto:", re.IGNORECASE)
_LIST_START = re.compile(r"(?:[-+*]|\d+[.)])(?:\s|$)")


def _plain(text: str) -> bool:
    return not (_SYNTAX.search(text) or _LIST_START.match(text) or text != text.strip())


def markdown(text: str) -> Markup:
    """`text` as safe HTML: the subset above rendered, everything else escaped. The text passes the gate
    first (pipeline.gate), as every string a page prints does: what comes out is Markup, which the pages'
    `finalize` leaves as it is."""
    text = clean_text(text)
    return Markup(escapeHtml(text)) if _plain(text) else _parsed(text)


@lru_cache(maxsize=8192)  # a text is shown on its case page and in listings, in one language or both
def _parsed(text: str) -> Markup:
    md = _parser()
    tokens = md.parse(text)
    if [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]:
        return Markup(md.renderer.render(tokens[1].children or [], md.options, {}))
    html = md.renderer.render(tokens, md.options, {})
    return Markup(html.rstrip("\n"))


# A title's subset: code spans and emphasis, with backslash escapes and entities as CommonMark reads them.
_TITLE_RULES = ["backticks", "times", "emphasis", "escape", "entity"]
_TITLE_SYNTAX = re.compile(r"[`*_\\&]")


@cache
def _title_parser() -> MarkdownIt:
    md = MarkdownIt("zero", {"html": False, "linkify": False, "breaks": False, "typographer": False})
    md.inline.ruler.before("emphasis", "times", _times)
    md.enable(_TITLE_RULES)
    return md


def inline(text: str) -> Markup:
    """A line (a title) as safe inline HTML: its code spans and emphasis rendered, nothing else; never a
    link, so it may sit inside one. The text passes the gate first, as `markdown`'s does."""
    text = clean_text(text)
    return Markup(escapeHtml(text)) if not _TITLE_SYNTAX.search(text) else _inlined(text)


@lru_cache(maxsize=8192)
def _inlined(text: str) -> Markup:
    return Markup(_title_parser().renderInline(text))


def inline_text(text: str) -> str:
    """The line `inline` renders, as plain text (not escaped): its code's text without backticks, its
    emphasis without asterisks, for where no markup may go (a page's `<title>`, a feed's title)."""
    text = clean_text(text)
    if not _TITLE_SYNTAX.search(text):
        return text
    tokens = _title_parser().parseInline(text)
    children = (tokens[0].children or []) if tokens else []
    return "".join(t.content for t in children if t.type in ("text", "code_inline", "text_special"))


def browser_rules() -> bytes:
    """The subset as the browser renders it (assets/markdown.json, read by the facet script's cards with
    markdown-it's own JavaScript, assets/vendor/): the options, the rules enabled, linkify-it's settings
    (in its JavaScript names), the schemes linked and the links' rel, and a title's rules. Written from
    the constants above, so that the rule lives here only."""
    camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), name): value for name, value in _LINKIFY.items()}
    rules = {
        "options": _OPTIONS,
        "rules": _BLOCK + _INLINE + _CORE,
        "linkify": camel,
        "schemes": sorted(SCHEMES),
        "rel": REL,
        "title": _TITLE_RULES,
    }
    return json.dumps(rules, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def shown_url(url: str) -> str:
    """A URL as a reader reads it: its percent-escapes decoded (`PM2019-009%20-%20Kubernetes` shows as
    `PM2019-009 - Kubernetes`, `%ED%95%9C` as `한`). For display only: an `href` keeps the URL as it is, and
    the text shown is still escaped for HTML where it is printed (decoding `%3Cb%3E` gives the text `<b>`,
    never a tag). A URL whose escapes decode to a control or format character (a line break, a
    right-to-left override that would make it read as another address) or to bytes that are not UTF-8 is
    shown as it is."""
    if "%" not in url:
        return url
    decoded = unquote(url, errors="replace")
    if "\ufffd" in decoded or _unprintable(decoded):
        return url
    return decoded


def escaped(value: object) -> str:
    """`value` escaped for HTML as markupsafe's `escape` does it (`&<>'"`; an object with `__html__` taken
    as safe), but as a plain `str`, for the f-strings the site's pages are built of: `escape` makes a
    `Markup` object each time, and the some four million escapes of a 10,000-case site's build spent
    1.5 s of its processor time so."""
    if type(value) is str:
        return (
            value.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace("'", "&#39;")
            .replace('"', "&#34;")
        )
    return str(escape(value))
