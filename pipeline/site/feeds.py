"""Atom feeds of new and updated cases, in each of the site's languages (RustSec's and AIID's way).

    files = render(ctx)     # {"ko/feed.xml": b"<?xml ...", "en/components/nccl/feed.xml": ..., ...}

    {lang}/feed.xml                     every case
    {lang}/components/{term}/feed.xml   the cases naming one component (each term a case names)
    {lang}/orgs/{slug}/feed.xml         one organisation's cases

Each feed holds the newest `FEED_ENTRIES` changes, newest first by `updated_at`. An entry's id is the case's
permanent URL (`ctx.case_url`), never changing however the site moves; its `updated` is the case's
`updated_at`, its title and summary are in the feed's language (the other's where that one is missing), and
it links to the case's page in that language. A withdrawn case stays in its feeds, its withdrawal being
news: its title says so and its summary gives the reason and the survivor.

Pure and deterministic: a feed's own `updated` is its newest entry's `updated_at` (the build time only for
a feed with no entry), so an unchanged library gives the same bytes and the build rewrites nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from feedgen.entry import FeedEntry
from feedgen.feed import FeedGenerator

from pipeline import __version__
from pipeline.models import Case
from pipeline.site.context import SiteContext
from pipeline.site.labels import Lang, ui
from pipeline.vocabulary import vocabulary

__all__ = ["FEED_ENTRIES", "feed_paths", "render"]

FEED_ENTRIES = 50  # a reader polling daily misses nothing unless fifty cases change in a day
_ATOM = "application/atom+xml"


def _in(texts: dict[str, str] | None, lang: Lang) -> str:
    """A text in `lang`, else in English, else in any language it has (a published title always has one)."""
    texts = texts or {}
    return texts.get(lang) or texts.get("en") or next(iter(texts.values()), "")


def _newest(cases: Iterable[Case]) -> list[Case]:
    ordered = sorted(cases, key=lambda c: c.id)
    ordered.sort(key=lambda c: c.updated_at, reverse=True)
    return ordered[:FEED_ENTRIES]


def _summary(case: Case, lang: Lang) -> str:
    summary = _in(case.summary, lang)
    if case.withdrawn is None:
        return summary
    why = f": {case.withdrawn_reason.rstrip('.')}." if case.withdrawn_reason else "."
    said = [ui("withdrawn", lang) + why]
    if case.merged_into:
        said.append(ui("merged_into", lang, id=case.merged_into))
    return " ".join([*said, summary])


def _entry(ctx: SiteContext, case: Case, lang: Lang) -> FeedEntry:
    entry = FeedEntry()
    entry.id(ctx.case_url(case.id))
    title = f"{case.id}: {_in(case.title, lang)}"
    entry.title(f"{ui('withdrawn', lang)}: {title}" if case.withdrawn is not None else title)
    entry.updated(case.updated_at)
    entry.summary(_summary(case, lang))
    entry.link(href=f"{ctx.base_url}/{lang}/cases/{case.id}/", rel="alternate", type="text/html", hreflang=lang)
    entry.author(name=case.org)
    for component in case.components:
        entry.category(term=component, label=vocabulary().terms["components"][component].label_in(lang))
    return entry


def _feed(ctx: SiteContext, path: str, title: str, page: str, entries: list[FeedEntry], lang: Lang) -> bytes:
    feed = FeedGenerator()
    feed.id(f"{ctx.base_url}/{path}")
    feed.title(title)
    feed.language(lang)
    feed.link(href=f"{ctx.base_url}/{path}", rel="self", type=_ATOM)
    feed.link(href=f"{ctx.base_url}/{page}", rel="alternate", type="text/html", hreflang=lang)
    feed.generator("incidentlib", version=__version__)
    feed.updated(max((e.updated() for e in entries), default=ctx.built_at))
    for entry in entries:
        feed.add_entry(entry, order="append")
    data: bytes = feed.atom_str(pretty=True)
    return data


def _groups(ctx: SiteContext) -> dict[str, tuple[str, str, list[Case]]]:
    """Each feed but the whole library's, by its path under a language: (kind, name, its cases)."""
    groups: dict[str, tuple[str, str, list[Case]]] = {}
    for case in ctx.cases:
        for component in case.components:
            groups.setdefault(f"components/{component}", ("component", component, []))[2].append(case)
        groups.setdefault(f"orgs/{case.org_slug}", ("org", case.org, []))[2].append(case)
    return dict(sorted(groups.items()))


def feed_paths(ctx: SiteContext) -> list[str]:
    """Every feed's site-relative path, for the pages to link (`<link rel="alternate">`)."""
    return [f"{lang}/{where}feed.xml" for lang in ctx.langs for where in ["", *(f"{g}/" for g in _groups(ctx))]]


def render(ctx: SiteContext) -> dict[str, bytes]:
    """Every feed, by its site-relative path."""
    files: dict[str, bytes] = {}
    groups = _groups(ctx)
    for lang in ctx.langs:
        made: dict[str, FeedEntry] = {}  # one entry a case, shared by every feed that lists it

        def entries(cases: Iterable[Case], lang: Lang = lang, made: dict[str, FeedEntry] = made) -> list[FeedEntry]:
            for case in (newest := _newest(cases)):
                if case.id not in made:
                    made[case.id] = _entry(ctx, case, lang)
            return [made[case.id] for case in newest]

        site = ui("site_title", lang)
        files[f"{lang}/feed.xml"] = _feed(ctx, f"{lang}/feed.xml", site, f"{lang}/", entries(ctx.cases), lang)
        for where, (kind, name, cases) in groups.items():
            label = vocabulary().terms["components"][name].label_in(lang) if kind == "component" else name
            path = f"{lang}/{where}/feed.xml"
            files[path] = _feed(ctx, path, f"{site}: {label}", f"{lang}/{where}/", entries(cases), lang)
    return files
