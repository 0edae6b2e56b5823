"""Extraction: bytes in, text + metadata + sections out. Pure: no network, no files.

    extract(body, url, content_type) -> Extraction

The URL and the content type decide how the bytes are read (HTML, Markdown, plain
text or PDF); the URL also decides the organisation when the page does not say. Each
reader turns its format into blocks (pipeline.extract.blocks), and the rest — sections
mapped to case fields, the full text, the summary — is built the same way for all.
"""

from __future__ import annotations

import codecs
import contextlib
import html as html_lib
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from charset_normalizer import from_bytes

from pipeline import gate
from pipeline.errors import EmptyDocument, UnsupportedContent
from pipeline.extract.blocks import Block, full_text, sections_from
from pipeline.extract.dates import date_in_url, dates_in
from pipeline.extract.frontmatter import FrontMatter, front_matter_facts
from pipeline.extract.html import read_html
from pipeline.extract.incidents import IncidentHeading, incident_ranges
from pipeline.extract.lists import list_items
from pipeline.extract.markdown import has_front_matter, read_markdown
from pipeline.extract.pdf import read_pdf
from pipeline.extract.prose import Passage, answers, prose_passages
from pipeline.extract.summary import summary_from
from pipeline.extract.tags import Suggestion, suggest_tag_reasons
from pipeline.fields import TERM_LISTS
from pipeline.ids import GITHUB_HOSTS
from pipeline.models import Section, SectionField
from pipeline.orgs import PageSays, known_org
from pipeline.precedence import Hints, Said, address_said, decide
from pipeline.vocabulary import Kind

__all__ = ["Extraction", "decode_text", "detect_format", "extract", "org_for_url"]

_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mkd")
_TEXT_SUFFIXES = (".txt", ".rst", ".log")
_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", re.IGNORECASE)
# Front matter, or an ATX heading on a line of its own, in the first bytes.
_MARKDOWN_SNIFF = re.compile(rb"\A(?:---|\+\+\+)\s*\n|^#{1,6} \S", re.MULTILINE)
# The vocabularies a draft's tags are suggested from: those of the case's lists of terms (root causes, a
# choice of one, are read from their own section).
_TAG_KINDS: tuple[Kind, ...] = tuple(TERM_LISTS.values())
# The page's own <title>, whose site part ("… | Example Blog") may name its publisher.
_TITLE_TAG = re.compile(r"<title[^>]*>([^<]{1,500})</title>", re.IGNORECASE)
_ITEM_FIELDS = (SectionField.ACTION_ITEMS, SectionField.REMEDIATION)
_PUBLISHED_CUE = re.compile(r"(posted|published|written|updated|date)(\s+on)?\W{0,5}$", re.IGNORECASE)


@dataclass(frozen=True)
class Extraction:
    url: str
    format: str  # "html", "markdown", "text" or "pdf"
    title: str | None
    date: str | None
    date_kind: str | None
    org: str | None
    org_slug: str | None
    text: str
    sections: list[Section]
    summary: str | None
    tags: dict[Kind, list[str]] = field(default_factory=dict)  # vocabulary kind -> suggested terms
    # Each suggested term with the words of `text` that suggested it, and where they stand.
    tag_reasons: dict[Kind, list[Suggestion]] = field(default_factory=dict)
    # Action items and remediation steps, one string each, links kept as "text (URL)".
    items: dict[SectionField, list[str]] = field(default_factory=dict)
    # Where each incident starts, when the document tells several (a logbook, a monthly report).
    incidents: list[IncidentHeading] = field(default_factory=list)
    # The prose fields' passages from sentences and timeline entries (`prose.prose_passages`).
    passages: dict[str, list[Passage]] = field(default_factory=dict)
    # When the document's own headings separate several incidents: one extraction for each,
    # of the blocks under its heading (its `text` and offsets are that part's own).
    parts: list[Extraction] = field(default_factory=list)
    # What the front matter states (severity, start, resolution, components); its lines head `text`.
    front: FrontMatter = field(default_factory=FrontMatter)
    # What the gate (pipeline.gate) took out of the document's text and title: control characters,
    # non-characters, bidirectional controls. The crawl says so in the draft's history.
    removed: gate.Removed = field(default_factory=gate.Removed)

    def texts_for(self, target: SectionField, threshold: float = 0.0) -> list[str]:
        """The texts of the sections that fill `target`: by their heading, or by their own words
        when that is sure enough (`Section.confidence` at least `threshold`)."""
        return [
            s.text
            for s in self.sections
            if s.field == target and s.text and (s.confidence is None or s.confidence >= threshold)
        ]

    @property
    def headings_unknown(self) -> int:
        """Headings that name no case field, neither by their words nor their section's: kept as
        sections of the document's own, and counted (bench/extraction.py reports the figure)."""
        return sum(1 for s in self.sections if s.heading and s.field is None)


def detect_format(url: str, content_type: str | None, body: bytes) -> str:
    """How to read a document: from its content type, else its URL, else its first bytes."""
    mime = (content_type or "").split(";")[0].strip().lower()
    path = urlsplit(url).path.lower()
    if mime == "application/pdf" or body[:5] == b"%PDF-":
        return "pdf"
    if mime in ("text/markdown", "text/x-markdown") or path.endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    if mime in ("text/html", "application/xhtml+xml"):
        return "html"
    if mime == "text/plain":
        # Markdown source served as plain text, front matter first (a blog's source file, a raw
        # view without a suffix): its front matter holds the title and the date.
        return "markdown" if has_front_matter(body[:4096].decode("utf-8", "ignore")) else "text"
    if not mime:
        # No content type (a saved file): the URL's suffix, then the bytes themselves.
        if path.endswith(_TEXT_SUFFIXES):
            return "text"
        head = body[:2048].lstrip()
        if re.match(rb"(?i)<!doctype html|<html|<\?xml|<head|<body", head) or re.search(rb"(?i)<body|<div|<p>", head):
            return "html"
        if _MARKDOWN_SNIFF.search(head):
            return "markdown"
        if path.endswith((".html", ".htm")):
            return "html"
        return "text"
    raise UnsupportedContent(
        f"{mime or 'unknown content type'} is not a document incidentlib reads (HTML, Markdown, plain text or PDF)",
        url=url,
    )


# Byte-order marks, which decide alone (WHATWG Encoding Standard, "decode").
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Labels browsers read as windows-1252, which prints 0x80–0x9F (’ “ ” – —) where Latin-1 has
# control characters (WHATWG Encoding Standard, "windows-1252" labels); Python names them so.
_READ_AS_WINDOWS_1252 = {"iso8859-1", "ascii"}
# What windows-1252 makes of text in another script: runs of accented letters (Cyrillic,
# Greek, CJK), or signs inside words (Central European letters: `spowodowa³a`).
_ACCENTED_RUN = re.compile(r"[^\W\d_a-zA-Z]{3,}")
_SIGN_IN_WORD = re.compile(r"(?<=[^\W\d_])[\u00a1-\u00b6\u00b8-\u00bf](?=[^\W\d_])")


def _declared_charsets(body: bytes, content_type: str | None) -> list[str]:
    """The charsets the page declares, the HTTP header's first (it wins over <meta>)."""
    declared = _CHARSET.search(content_type or "")
    meta = _META_CHARSET.search(body[:4096])
    return [c for c in (declared.group(1) if declared else None, meta.group(1).decode() if meta else None) if c]


def _decode_declared(body: bytes, label: str) -> str | None:
    try:
        codec = codecs.lookup(label).name
    except LookupError:
        return None
    for name in ("cp1252", codec) if codec in _READ_AS_WINDOWS_1252 else (codec,):
        try:
            return body.decode(name)
        except UnicodeDecodeError:
            continue
    return None


# What the reading of a page is judged on: enough text to tell one code page from another,
# where the whole page may be megabytes (decoded once, when the code page is chosen).
_SAMPLE_BYTES = 64 * 1024
# The letters windows-1254 (Turkish) has where windows-1252 has ð ý þ Ð Ý Þ: ğ ı ş Ğ İ Ş.
_TURKISH_IN_1252 = re.compile(r"[ðýþÐÝÞ]")
# Icelandic and Faroese, which write ð ý þ, write vowels with an acute accent in every sentence;
# Turkish never does.
_ACUTE_VOWEL = re.compile(r"[áéíóúÁÉÍÓÚ]")


def _latin_code_page(sample: bytes) -> str | None:
    """windows-1252 when the sample reads as Latin-script text in it, accented letters here and
    there within plain words (`Café outage – naïve retry`); windows-1254 when those letters are
    the ones Turkish has in their place (`daðýtým` is `dağıtım`); else None."""
    try:
        text = sample.decode("cp1252")  # one byte a letter: the sample's end cuts none in two
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90 and 0x9D are not windows-1252
        return None
    accented = sum(1 for char in text if char.isalpha() and not char.isascii())
    in_runs = sum(len(run) for run in _ACCENTED_RUN.findall(text))
    if in_runs > accented / 10 or _SIGN_IN_WORD.search(text):
        return None
    if _TURKISH_IN_1252.search(text) and not _ACUTE_VOWEL.search(text):
        return "cp1254"
    return "cp1252"


def decode_text(body: bytes, content_type: str | None, url: str) -> str:
    """Bytes to text, the first way that works of:

    1. a byte-order mark;
    2. UTF-8, when the bytes are UTF-8: a wrong declaration is common, and text in another
       encoding is almost never valid UTF-8 by chance;
    3. the declared charset (HTTP header, then <meta>) when the bytes decode under it, Latin-1
       and ASCII read as windows-1252, as browsers do;
    4. windows-1252 when it reads as Latin text (windows-1254 when the letters it differs in
       read as Turkish): charset-normalizer, for one, takes a page of windows-1252 for a rare
       code page (cp775, cp1250) when only a few letters tell them apart;
    5. charset-normalizer's best guess that puts no sign inside a word (Cyrillic, Greek, CJK,
       Central European, ...).

    Steps 4 and 5 judge the first 64 KiB, and the page is decoded once, in the code page chosen.
    """
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, "replace")
    if b"\x00" in body[:4096]:
        raise UnsupportedContent(f"binary content served as {content_type or 'text'}", url=url)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for label in _declared_charsets(body, content_type):
        text = _decode_declared(body, label)
        if text is not None:
            return text
    sample = body[:_SAMPLE_BYTES]
    latin = _latin_code_page(sample)
    if latin is not None:
        with contextlib.suppress(UnicodeDecodeError):  # a byte past the sample that it lacks
            return body.decode(latin)
    guesses = from_bytes(body)  # best first; each decodes the page only when asked for its text
    if not guesses:
        raise UnsupportedContent("bytes that are not text in any known encoding", url=url)
    # On a short page its first guess may be a code page that puts signs inside words.
    fitting = (m for m in guesses if not _SIGN_IN_WORD.search(sample.decode(m.encoding, "ignore")))
    return str(next(fitting, guesses[0]))


def org_for_url(url: str) -> str:
    """The organisation a URL suggests: the owner on GitHub, else the site's own name."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    segments = [s for s in parts.path.split("/") if s]
    if host in GITHUB_HOSTS and segments:
        return segments[0]
    if re.fullmatch(r"[\d.]+|[\da-f:]+", host):
        return host  # an address names no organisation
    labels = [label for label in host.split(".") if label not in ("www", "blog", "engineering", "status", "docs")]
    return labels[-2] if len(labels) >= 2 else (labels[0] if labels else host)


def _text_date(blocks: list[Block], sections: list[Section]) -> tuple[str | None, str | None]:
    """The first date written in the body, and what kind of date that is."""
    timeline = {s.text for s in sections if s.field == SectionField.TIMELINE}
    for block in blocks:
        found = dates_in(block.text)
        if not found:
            continue
        first = found[0]
        if _PUBLISHED_CUE.search(block.text[: first.position]):
            return first, "published"
        in_timeline = any(block.render() in text for text in timeline)
        return first, "timeline" if in_timeline else "incident"
    return None, None


def _front_matter_date(value: object) -> str | None:
    """A date from front matter: a YAML/TOML date, an ISO string, or a date written out."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    if isinstance(value, str):
        found = dates_in(value)
        return found[0] if found else None
    return None


def _plain_blocks(text: str) -> list[Block]:
    return [Block(re.sub(r"[ \t]+", " ", p).strip()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def extract(
    body: bytes,
    url: str,
    content_type: str | None = None,
    *,
    hints: Hints | None = None,
    favor: str = "balanced",
) -> Extraction:
    """Read one fetched document. `hints`: what was said of it before: the registry's hints (its
    org, title, date), which win, and what the feed entry that proposed it said, which the page's
    own word outranks (pipeline.precedence decides each).

    Raises UnsupportedContent, UnreadableDocument or EmptyDocument with the reason.
    """
    kind = detect_format(url, content_type, body)
    page_title: str | None = None
    first_line: str | None = None
    page_date: str | None = None
    site_name: str | None = None
    says = PageSays()  # what the page says of its publisher (pipeline.orgs)
    date_kind: str | None = "published"
    front_facts = FrontMatter()
    if kind == "pdf":
        pdf = read_pdf(body)
        blocks, page_title, page_date = pdf.blocks, pdf.title, pdf.date
    else:
        text = decode_text(body, content_type, url)
        if kind == "markdown":
            document = read_markdown(text)
            blocks, front = document.blocks, document.front_matter
            page_title = str(front.get("title") or "") or next((b.text for b in blocks if b.level == 1), None)
            page_date = _front_matter_date(front.get("date") or front.get("published") or front.get("pubDate"))
            front_facts = front_matter_facts(front, document.front_matter_text)
            if not page_date and front_facts.started is not None:
                # A status page's incident states when it began, not when it was published.
                page_date, date_kind = _front_matter_date(front_facts.started.value), "incident"
            says = PageSays(text=text)
        elif kind == "html":
            page = read_html(text, url, favor=favor)
            blocks, page_title, page_date, site_name = page.blocks, page.title, page.date, page.site_name
            title_tag = _TITLE_TAG.search(text)
            tag = gate.clean(html_lib.unescape(title_tag.group(1))).text.strip() if title_tag else None
            says = PageSays(site_name, tag, text)
        else:
            blocks = _plain_blocks(text)
            # Plain text states no title: its first short line is a guess, below a feed's title.
            first_line = next((b.text for b in blocks if len(b.text) <= 200), None)

    # The gate, once the document's entities and escapes are read: nothing it removes reaches a field.
    blocks, removed = _gated(blocks)
    page_title, first_line, site_name = (_gated_text(t, removed, "title") for t in (page_title, first_line, site_name))
    if not any(b.text.strip() for b in blocks):
        raise EmptyDocument(f"no text found in the {kind} document", url=url)
    sections = sections_from(blocks)

    if not page_date:
        page_date = date_in_url(url)
    if not page_date and page_title:
        in_title = dates_in(page_title)
        if in_title:
            page_date, date_kind = in_title[0], "incident"
    if not page_date:
        page_date, date_kind = _text_date(blocks, sections)

    # The organisation that had the incident, not the account or platform hosting the page.
    stated = Said.of_org(known_org(url, says=says), title=page_title, date=page_date, date_kind=date_kind)
    address = replace(address_said(url, site_name), title=first_line)
    if address.org is None:
        address = replace(address, org=org_for_url(url))  # no host at all: what the URL's text gives
    told = hints or Hints()
    decided = decide(told.registry, stated, told.feed, address)
    whole = Extraction(
        url=url,
        format=kind,
        title=decided.title,
        date=decided.date,
        date_kind=decided.date_kind,
        org=decided.org,
        org_slug=decided.org_slug,
        front=front_facts,
        **_content(blocks, sections, lead=front_facts.lead),
    )
    incidents = incident_ranges(blocks, whole.text)
    parts = [_part(whole, heading.heading, blocks[first:end]) for heading, first, end in incidents]
    return replace(whole, incidents=[heading for heading, _, _ in incidents], parts=parts, removed=removed)


def _gated(blocks: list[Block]) -> tuple[list[Block], gate.Removed]:
    """The blocks with every text and link the gate passes, and what it removed from them."""
    removed = gate.Removed()
    out = []
    for block in blocks:
        text = gate.clean(block.text)
        links = tuple(replace(link, label=gate.clean(link.label).text) for link in block.links)
        if text.removed or links != block.links:
            removed.add(text.removed, "text")
            block = replace(block, text=text.text, links=links)
        out.append(block)
    return out, removed


def _gated_text(text: str | None, removed: gate.Removed, where: str) -> str | None:
    if text is None:
        return None
    done = gate.clean(text)
    removed.add(done.removed, where)
    return done.text


def _content(blocks: list[Block], sections: list[Section], lead: str = "") -> dict[str, Any]:
    """What the blocks tell, for a document or one incident of it: text, sections, summary, tags,
    lists and the prose fields' passages. `lead`: the front matter's lines the draft's evidence
    quotes, set before the text (they are in no section)."""
    full = f"{lead}\n\n{full_text(blocks)}" if lead else full_text(blocks)
    passages = prose_passages(sections)
    reasons = suggest_tag_reasons(_TAG_KINDS, full)
    return {
        "text": full,
        "sections": sections,
        "summary": summary_from(blocks, answers=answers(sections, passages)),
        "tags": {kind: [s.term for s in found] for kind, found in reasons.items()},
        "tag_reasons": reasons,
        "items": {f: list_items(blocks, f) for f in _ITEM_FIELDS},
        "passages": passages,
    }


def _part(document: Extraction, heading: str, blocks: list[Block]) -> Extraction:
    """One incident of a document that tells several: its blocks, titled by the document and its
    heading, dated by its heading when the heading holds a date ("Lineage - November 5, 2021")."""
    in_heading = dates_in(heading)
    return Extraction(
        url=document.url,
        format=document.format,
        title=f"{document.title}: {heading}" if document.title and document.title != heading else heading,
        date=in_heading[0] if in_heading else document.date,
        date_kind="incident" if in_heading else document.date_kind,
        org=document.org,
        org_slug=document.org_slug,
        **_content(blocks, sections_from(blocks)),
    )
