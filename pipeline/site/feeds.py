"""Atom feeds of new and updated cases, in each of the site's languages (RustSec's and AIID's way).

    files = render(ctx)     # {"ko/feed.xml": b"<?xml ...", "en/components/nccl/feed.xml": ..., ...}

    {lang}/feed.xml                     every case
    {lang}/components/{term}/feed.xml   the cases naming one component (each term a case names)
    {lang}/orgs/{slug}/feed.xml         one organisation's cases

Each feed holds the newest `FEED_ENTRIES` changes, newest first by `updated_at`. An entry's id is the case's
permanent URL (`ctx.case_url`), never changing however the site moves; its `updated` is the case's
`updated_at`, its title and summary are in the feed's language (the other's where that one is missing), and
it links to the case's page in that language. A withdrawn case stays in its feeds, its withdrawal being
news: its title says so and its summary gives the reason and the survivor. A term's or an org's feed goes
with its page, once its every case is withdrawn: the build removes it.

Each entry says the language it is written in (`xml:lang`): its title's, the feed's or, where the case lacks
it, the one its text falls back to, a withdrawal's words said in that same language; its summary and its
categories are marked where theirs differ. Its `published` is the case's first publication where the record
has it, its `updated` the case's `updated_at`.

Pure and deterministic: a feed's own `updated` is its newest entry's `updated_at` (the build time only for
a feed with no entry), so an unchanged library gives the same bytes and the build rewrites nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, partial
from importlib import resources

from feedgen.entry import FeedEntry
from feedgen.feed import FeedGenerator
from lxml import etree

from pipeline import __version__, gate
from pipeline.models import Case
from pipeline.site.context import EVERY, Card, Planned, SiteContext, everything
from pipeline.site.labels import LANGS, Lang, ui
from pipeline.vocabulary import vocabulary

__all__ = ["FEED_ENTRIES", "feed_paths", "groups", "plan", "render"]

_log = logging.getLogger(__name__)

FEED_ENTRIES = 50  # a reader polling daily misses nothing unless fifty cases change in a day
_ATOM = "application/atom+xml"


def _in(texts: dict[str, str] | None, lang: Lang) -> str:
    """A text in `lang`, else in English, else in any language it has (a published title always has one)."""
    texts = texts or {}
    return texts.get(lang) or texts.get("en") or next(iter(texts.values()), "")


def _newest_first(cases: Iterable[Card]) -> list[Card]:
    """Newest change first, then by id: the feeds' order (a group taken from this list keeps it)."""
    ordered = sorted(cases, key=lambda c: c.id)
    ordered.sort(key=lambda c: c.updated_at, reverse=True)
    return ordered


def _lang_of(texts: dict[str, str] | None, lang: Lang) -> str | None:
    """The language `_in` takes the text in, when it is not `lang` (None when it is)."""
    texts = texts or {}
    if texts.get(lang):
        return None
    return "en" if texts.get("en") else next(iter(texts), None)


def _written_in(texts: dict[str, str] | None, lang: Lang) -> Lang:
    """The language a text is shown in on `lang`'s feed: `lang`, or the one `_in` falls back to (English, or
    the feed's own for a language the site has no words for)."""
    other = _lang_of(texts, lang)
    return next((known for known in LANGS if known == other), lang)


def _summary(case: Case, lang: Lang) -> str:
    """The summary, after what a withdrawal says, in the summary's own language: a Korean feed's entry whose
    summary falls back to English says "Withdrawn case" in English too, so its text is in one language."""
    summary = _in(case.summary, lang)
    if case.withdrawn is None:
        return summary
    lang = _written_in(case.summary, lang)
    why = f": {case.withdrawn_reason.rstrip('.')}." if case.withdrawn_reason else "."
    said = [ui("withdrawn", lang) + why]
    if case.merged_into:
        said.append(ui("merged_into", lang, id=case.merged_into))
    return " ".join([*said, summary])


class EntryFault(ValueError):
    """One case's feed entry could not be made: the case and the field, for the build to name and skip."""

    def __init__(self, case_id: str, field: str, problem: str) -> None:
        super().__init__(f"{case_id}: {field}: {problem}")
        self.case_id, self.field = case_id, field


def _xml(value: str) -> str:
    """A text for a feed, XML's last line: what the gate removes is removed (the records hold none; this is
    for a record that slipped past them), and lxml checks it as feedgen's writer will."""
    text = gate.clean_text(value)
    etree.Element("x").text = text  # ValueError for what XML 1.0 cannot hold
    return text


def _title(case: Case, lang: Lang) -> str:
    title = f"{case.id}: {_in(case.title, lang)}"
    return f"{ui('withdrawn', _written_in(case.title, lang))}: {title}" if case.withdrawn is not None else title


def _entry(ctx: SiteContext, case: Case, lang: Lang) -> FeedEntry:
    """A case's entry; EntryFault naming the case and the field when one of its texts cannot be written."""
    entry = FeedEntry()
    entry.id(ctx.case_url(case.id))
    steps: list[tuple[str, Callable[[], object]]] = [
        ("title", lambda: entry.title(_xml(_title(case, lang)))),
        ("updated_at", lambda: entry.updated(case.updated_at)),
        # When first published (Atom's `published`), where the record says: a case published before it did has none.
        ("published", lambda: entry.published(case.published) if case.published else None),
        ("summary", lambda: entry.summary(_xml(_summary(case, lang)))),
        (
            "url",
            lambda: entry.link(
                href=f"{ctx.base_url}/{lang}/cases/{case.id}/", rel="alternate", type="text/html", hreflang=lang
            ),
        ),
        ("org", lambda: entry.author(name=_xml(case.org))),
        (
            "components",
            lambda: [
                entry.category(term=c, label=vocabulary().terms["components"][c].label_in(lang))
                for c in case.components
            ],
        ),
    ]
    for field, step in steps:
        try:
            step()
        except Exception as exc:  # whatever the field's value makes feedgen or lxml raise: that case's alone
            raise EntryFault(case.id, field, str(exc) or type(exc).__name__) from exc
    return entry


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _entry_xml(case_id: str, entry: FeedEntry, marks: Mapping[str, str]) -> bytes:
    """An entry's element as it stands in every feed that lists it, serialised once: its `xml:lang` the
    language its title is really in, and its summary or categories marked with theirs where they differ
    (feedgen sets no attribute on an entry or its elements; Atom allows it on any, and an element's holds
    for what it contains). A feed's entries are spliced in as these bytes (`_feed`): a case is in a dozen
    feeds, and building and serialising its element in each, then parsing each feed again to mark it, was
    most of the feeds' time. EntryFault, as `_entry`'s, for what feedgen or lxml refuse in the element."""
    try:
        element = entry.atom_entry()
        if "" in marks:
            element.set(_XML_LANG, marks[""])
        for name, lang in marks.items():
            for child in element.findall(name) if name else []:
                child.set(_XML_LANG, lang)
        data: bytes = etree.tostring(element, encoding="UTF-8", xml_declaration=False)
    except ValueError as exc:
        raise EntryFault(case_id, "entry", str(exc) or type(exc).__name__) from exc
    return data


@dataclass(frozen=True)
class _Feed:
    """One feed in one language: its site-relative path, its title, the page it follows, its cases
    (newest first) and its group (`EVERY`, or `feed:` and where it stands)."""

    path: str
    title: str
    page: str
    cards: list[Card]
    group: str


def _feed(ctx: SiteContext, which: _Feed, entries: Sequence[tuple[FeedEntry, bytes]], lang: Lang) -> bytes:
    """The feed `which`: its head as feedgen writes it, then its entries' elements (`_entry_xml`), newest
    first. feedgen's elements are not in Atom's namespace (it writes `xmlns` as a plain attribute), so an
    entry's bytes are the same inside any feed: the feed is its head with them spliced in before its end."""
    feed = FeedGenerator()
    feed.id(f"{ctx.base_url}/{which.path}")
    feed.title(which.title)
    feed.language(lang)
    feed.link(href=f"{ctx.base_url}/{which.path}", rel="self", type=_ATOM)
    feed.link(href=f"{ctx.base_url}/{which.page}", rel="alternate", type="text/html", hreflang=lang)
    feed.generator("incidentlib", version=__version__)
    feed.updated(max((entry.updated() for entry, _ in entries), default=ctx.built_at))
    head: bytes = feed.atom_str(pretty=False)
    end = head.rindex(b"</feed>")
    return b"".join([head[:end], *(data for _, data in entries), head[end:]])


def _listed(card: Card) -> bool:
    """Listed, and so on its term's and org's pages (pages.listed): not withdrawn, not merged."""
    return card.withdrawn is None and card.merged_into is None


def _groups(ctx: SiteContext, cards: Iterable[Card] | None = None) -> dict[str, tuple[str, str, list[Card]]]:
    """Each feed but the whole library's, by its path under a language: (kind, name, its cases, in the order
    of `cards`, the context's by default)."""
    groups: dict[str, tuple[str, str, list[Card]]] = {}
    for card in ctx.cases if cards is None else cards:
        for component in card.components:
            groups.setdefault(f"components/{component}", ("component", component, []))[2].append(card)
        groups.setdefault(f"orgs/{card.org_slug}", ("org", card.org, []))[2].append(card)
    return dict(sorted(groups.items()))


def _standing(groups: dict[str, tuple[str, str, list[Card]]]) -> dict[str, tuple[str, str, list[Card]]]:
    """The groups whose page stands: a term or org with a listed case (pages.listed). A feed goes with its
    page: once its every case is withdrawn or merged, no feed follows a page that is gone."""
    return {where: group for where, group in groups.items() if any(_listed(card) for card in group[2])}


def feed_paths(ctx: SiteContext) -> list[str]:
    """Every feed's site-relative path, for the pages to link (`<link rel="alternate">`)."""
    standing = _standing(_groups(ctx))
    return [f"{lang}/{where}feed.xml" for lang in ctx.langs for where in ["", *(f"{g}/" for g in standing)]]


@cache
def _code_mark() -> str:
    """What a feed's bytes depend on besides its cases: this module, the labels, the vocabulary's."""
    digest = hashlib.sha256(__version__.encode())
    for package, name in (
        ("pipeline.site", "feeds.py"),
        ("pipeline.site", "labels.py"),
        ("pipeline", "vocabulary.yaml"),
    ):
        digest.update(resources.files(package).joinpath(name).read_bytes())
    return digest.hexdigest()


def _entry_langs(case: Case, lang: Lang) -> dict[str, str]:
    """A case's entry's `xml:lang` on `lang`'s feed (key ""): its title's; then its summary's, and its
    categories' (labelled in the feed's language), where they differ from the entry's."""
    entry = _written_in(case.title, lang)
    marks = {"": entry, "summary": _written_in(case.summary, lang), "category": lang}
    return {name: said for name, said in marks.items() if not name or said != entry}


class _Entries:
    """Each case's entry in one language, made and serialised once (`_entry_xml`) and shared by every feed
    that lists it."""

    def __init__(self, ctx: SiteContext, lang: Lang) -> None:
        self.ctx, self.lang = ctx, lang
        self._made: dict[str, tuple[FeedEntry, bytes]] = {}
        self._faulty: set[str] = set()

    def __call__(self, cards: Sequence[Card]) -> list[tuple[FeedEntry, bytes]]:
        made = []
        for card in cards:
            if card.id not in self._made and card.id not in self._faulty:
                case = self.ctx.case(card.id)
                marks = _entry_langs(case, self.lang)
                try:
                    entry = _entry(self.ctx, case, self.lang)
                    data = _entry_xml(case.id, entry, marks)
                except EntryFault as fault:  # one case's fault costs its entry, never the feed or the build
                    _log.warning("site: feeds: %s; the case's entry is left out of its feeds", fault)
                    self._faulty.add(card.id)
                    continue
                self._made[card.id] = (entry, data)
            if card.id in self._made:
                made.append(self._made[card.id])
        return made


def groups(ctx: SiteContext, cards: Iterable[Card]) -> set[str]:
    """The groups of feeds that show any of `cards`: their components' and their orgs' (the library's are
    in `EVERY`)."""
    return {_feed_group(where) for where in _groups(ctx, cards)}


def _feed_group(where: str) -> str:
    return f"feed:{where}"


def plan(ctx: SiteContext, wanted: Callable[[str], bool] = everything) -> dict[str, Planned]:
    """Every feed (the library's, and those of the groups `wanted`), by its site-relative path, with its
    inputs (its entries' cases, the base, the code)."""
    planned: dict[str, Planned] = {}
    ordered = _newest_first(ctx.cases)  # sorted once: each group, taken from it, is newest first already
    groups = _standing(_groups(ctx, ordered))  # a group planned no more: its feeds removed (SiteTree.sync)
    for lang in ctx.langs:
        entries = _Entries(ctx, lang)
        site = ui("site_title", lang)
        feeds = [_Feed(f"{lang}/feed.xml", site, f"{lang}/", ordered, EVERY)]
        for where, (kind, name, cards) in groups.items():
            if not wanted(group := _feed_group(where)):
                continue
            label = vocabulary().terms["components"][name].label_in(lang) if kind == "component" else name
            feeds.append(_Feed(f"{lang}/{where}/feed.xml", f"{site}: {label}", f"{lang}/{where}/", cards, group))
        for feed in feeds:
            newest = replace(feed, cards=feed.cards[:FEED_ENTRIES])
            inputs = "\x00".join(
                [_code_mark(), ctx.base_url, feed.path, feed.title, feed.page]
                + [f"{c.id}:{c.digest}" for c in newest.cards]
                + ([] if newest.cards else [ctx.built_at.isoformat()])
            )
            planned[feed.path] = Planned(inputs, partial(_made_feed, newest, entries), feed.group)
    return planned


def _made_feed(feed: _Feed, entries: _Entries) -> bytes:
    """`feed`, its entries made (or taken) from `entries`, which holds the context and the language."""
    return _feed(entries.ctx, feed, entries(feed.cards), entries.lang)


def render(ctx: SiteContext) -> dict[str, bytes]:
    """Every feed, by its site-relative path."""
    return {path: planned.make() for path, planned in plan(ctx).items()}
