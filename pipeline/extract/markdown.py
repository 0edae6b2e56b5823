"""Markdown (and its front matter) to blocks, pure.

Read with markdown-it-py (CommonMark plus tables), so headings, lists, tables and
code are what a Markdown renderer sees, not what a regular expression guesses.
Front matter is YAML between `---` lines or TOML between `+++` lines.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from pipeline.extract.blocks import Block, Link

__all__ = ["MarkdownDocument", "has_front_matter", "read_markdown"]

_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?(---|\+\+\+)[ \t]*\r?\n(.*?)\r?\n\1[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
# A URL written out in text, without the punctuation that ends its sentence or closes its bracket.
_BARE_URL = re.compile(r"https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]")
_PARSER = MarkdownIt("commonmark").enable("table")


@dataclass
class MarkdownDocument:
    blocks: list[Block]
    front_matter: dict[str, Any] = field(default_factory=dict)
    front_matter_text: str = ""  # as written, between its fences: the lines evidence quotes


def _front_matter(text: str) -> tuple[dict[str, Any], str, str]:
    """The front matter as read, the document after it, and the front matter as written."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text, ""
    fence, raw = match.groups()
    try:
        data = tomllib.loads(raw) if fence == "+++" else yaml.safe_load(raw)
    except (tomllib.TOMLDecodeError, yaml.YAMLError):
        return {}, text, ""  # not front matter after all: keep the text as the author wrote it
    if not isinstance(data, dict):
        return {}, text[match.end() :], ""
    return data, text[match.end() :], raw


def has_front_matter(text: str) -> bool:
    """Whether `text` begins with front matter that reads as a mapping (YAML or TOML)."""
    return bool(_front_matter(text)[0])


def _inline(token: Token) -> tuple[str, tuple[Link, ...]]:
    """The words of an inline token, and its links: `[label](url)`, `<url>`, reference links
    (markdown-it resolves all three to link tokens) and URLs written out in the text."""
    parts: list[str] = []
    links: list[Link] = []
    href: str | None = None
    label: list[str] = []
    for child in token.children or []:
        if child.type == "link_open":
            href, label = str(child.attrs.get("href") or ""), []
        elif child.type == "link_close":
            if href:
                links.append(Link(re.sub(r"\s+", " ", "".join(label)).strip(), href))
            href = None
        elif child.type in ("text", "code_inline"):
            parts.append(child.content)
            if href is not None:
                label.append(child.content)
            else:
                links += [Link(url, url) for url in _BARE_URL.findall(child.content)]
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
            label.append(" ")
        elif child.type == "image":
            parts.append(child.content)  # the alt text
    return re.sub(r"\s+", " ", "".join(parts)).strip(), tuple(links)


def _inline_text(token: Token) -> str:
    return _inline(token)[0]


# The tokens that open and close a list or a blockquote: what they nest, and by how much.
_NESTING = {
    "bullet_list_open": ("list", 1),
    "ordered_list_open": ("list", 1),
    "bullet_list_close": ("list", -1),
    "ordered_list_close": ("list", -1),
    "blockquote_open": ("blockquote", 1),
    "blockquote_close": ("blockquote", -1),
}


def read_markdown(text: str) -> MarkdownDocument:
    front, body, raw = _front_matter(text)
    tokens = _PARSER.parse(body)
    blocks: list[Block] = []
    depth = {"list": 0, "blockquote": 0}  # how deep in lists and in blockquotes the token stands
    row: list[str] | None = None
    for index, token in enumerate(tokens):
        kind = token.type
        if kind in _NESTING:
            what, step = _NESTING[kind]
            depth[what] += step
        elif kind == "heading_open":
            content = _inline_text(tokens[index + 1])
            if content:
                blocks.append(Block(content, level=int(token.tag[1])))
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            if any(row):
                blocks.append(Block(" | ".join(row), kind="row"))
            row = None
        elif kind == "inline" and row is not None:
            row.append(_inline_text(token))
        elif kind == "inline" and tokens[index - 1].type == "paragraph_open":
            content, links = _inline(token)
            if content:
                kind_of = "item" if depth["list"] > 0 else "para"
                blocks.append(Block(content, kind=kind_of, links=links, quoted=depth["blockquote"] > 0))
        elif kind in ("fence", "code_block", "html_block"):
            literal = _literal_block(token)
            if literal is not None:
                blocks.append(literal)
    return MarkdownDocument(blocks, front, raw)


def _literal_block(token: Token) -> Block | None:
    """A code block as written, or an HTML block's text with its tags gone, as one block; None
    when it holds no text."""
    if token.type == "html_block":
        content = re.sub(r"\s+", " ", _TAG.sub(" ", token.content)).strip()
        return Block(content) if content else None
    return Block(token.content.rstrip("\n")) if token.content.strip() else None
