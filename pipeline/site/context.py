"""What every part of the reader's site is built from: the published cases and where the site lives.

    ctx = SiteContext.of(cases, base_url="https://example.org/incidentlib/app", built_at=now)
    ctx.case_url("IL-0001")        # https://example.org/incidentlib/app/cases/IL-0001
    ctx.cases                      # the cases' cards, newest first
    ctx.case("IL-0001")            # the whole case, read when first asked for

A site of 10,000 cases is mostly made of things that did not change since the last build, so the site
does not hold every case in memory: it holds each case's `Card`, the few fields its listings, facets,
feeds and index read (and a digest of the case's file, which names the case's version), and reads the
whole case only for a page that is made anew. A card is plain data, kept between builds by the build's
shell (`pipeline.site.build`), so an unchanged case is not even parsed.

Pure: no file, no clock (the build time is given), no network; the cases come from the loaders given
(`SiteContext.of` takes them in memory). Cases are ordered newest first by `date`, then by id, the order
of the listing, the feeds and `modified_id.csv` alike.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import ClassVar, NamedTuple

from pydantic import TypeAdapter

from pipeline.ids import case_base_url
from pipeline.models import Case, LinkState
from pipeline.records import dump_json
from pipeline.settings import Settings
from pipeline.site.labels import LANGS, Lang

__all__ = ["EVERY", "Card", "Planned", "SiteContext", "SiteEdition", "case_group", "everything", "text_in"]


# The group of files showing the whole library (the listings, the facets' indexes, the library's feeds
# and index): planned on every build. Any other group shows a few cases: a case's pages, a term's listing.
EVERY = "every"


def everything(group: str) -> bool:
    """Which groups a build plans: here, every one (a first build, or one after the code or settings changed)."""
    return True


def case_group(case_id: str) -> str:
    """The group of a case's own files (its pages, its record in the API)."""
    return f"case:{case_id}"


class Planned(NamedTuple):
    """A file to be: what it is made of (`inputs`: equal inputs, equal bytes; None: made each time), how,
    and the group of files it is planned with (`EVERY`, or a name such as "case:IL-0001", "facet:org:acme").

    A build whose last build made the file from the same inputs (and finds it there) does not make it. A
    rebuild plans again only the groups showing a changed case (each planner's `groups`); a file of any
    other group is as the last build planned it, so one outside `EVERY` must have inputs."""

    inputs: str | None
    make: Callable[[], bytes]
    group: str = EVERY


@dataclass(frozen=True)
class Card:
    """A case as the site's listings, facets, feeds and index read it, by the case's own field names.

    `digest` (SHA-256) and `crc` (CRC-32, what a zip member records) are of the case file's bytes: equal
    digests, equal case. A card is rebuilt from the case whenever the file changes (`Card.of`)."""

    # What a card works out once and keeps, with itself, in the build's cache of cards (its properties).
    CACHED: ClassVar[tuple[str, ...]] = ("facet_row", "modified", "index_entry")

    id: str
    digest: str
    crc: int
    size: int
    date: str
    updated_at: datetime
    org: str
    org_slug: str
    title: dict[str, str]
    domain: list[str]
    components: list[str]
    symptoms: list[str]
    contributing: list[str]
    root_cause: str
    severity: str
    related: list[str]
    recurrence_of: str | None
    sources: list[str]  # the sources' URLs
    withdrawn: datetime | None
    merged_into: str | None
    published: datetime | None
    aliases: list[str]
    machine_translations: list[str]  # the paths of its machine-translated texts: a compact row marks its title

    @classmethod
    def of(cls, case: Case, data: bytes) -> Card:
        """The card of `case`, whose file holds `data`."""
        return cls(
            id=case.id,
            digest=hashlib.sha256(data).hexdigest(),
            crc=zlib.crc32(data),
            size=len(data),
            date=case.date,
            updated_at=case.updated_at,
            org=case.org,
            org_slug=case.org_slug,
            title=dict(case.title),
            # Each term once (the facets count a case once a term).
            domain=list(dict.fromkeys(case.domain)),
            components=list(dict.fromkeys(case.components)),
            symptoms=list(dict.fromkeys(case.symptoms)),
            contributing=list(dict.fromkeys(case.contributing)),
            root_cause=case.root_cause,
            severity=case.severity,
            related=list(case.related),
            recurrence_of=case.recurrence_of,
            sources=[source.url for source in case.sources],
            withdrawn=case.withdrawn,
            merged_into=case.merged_into,
            published=case.published,
            aliases=list(case.aliases),
            machine_translations=list(case.machine_translations),
        )

    # What the whole-library files say of the case, worked out once a version of the card: kept with the
    # card between builds (the cards are pickled with what they cached), so a rebuild after one change
    # joins 10,000 strings instead of making and encoding 10,000 objects. Of the card's fields alone.

    @cached_property
    def facet_row(self) -> str:
        """The case's entry in api/v1/facets.json (the facet script's data), as compact JSON."""
        title = {
            lang: self.title.get(lang) or self.title.get("en") or next(iter(self.title.values()), "") for lang in LANGS
        }
        row = {
            "id": self.id,
            "title": title,
            "org": self.org_slug,
            "year": self.date[:4],
            "domain": self.domain,
            "component": self.components,
            "symptom": self.symptoms,
            "contributing": self.contributing,
            "root_cause": self.root_cause,
            "severity": self.severity,
        }
        return json.dumps(row, ensure_ascii=False, separators=(",", ":"))

    @cached_property
    def modified(self) -> str:
        """`updated_at` as the record's JSON spells it (pydantic's: `Z` for UTC)."""
        return _json_time(self.updated_at)

    @cached_property
    def index_entry(self) -> str:
        """The case's entry in api/v1/index.json, as compact JSON (times as the record spells them): OSV's
        `published`, `modified`, `withdrawn` and `aliases`, and the survivor of a merge (`merged_into`);
        each key always there, null (or []) when the record has none."""
        entry = {
            "id": self.id,
            "published": _json_time(self.published) if self.published else None,
            "modified": self.modified,
            "title": self.title,
            "org": self.org,
            "date": self.date,
            "withdrawn": _json_time(self.withdrawn) if self.withdrawn else None,
            "aliases": self.aliases,
            "merged_into": self.merged_into,
        }
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def text_in(texts: Mapping[str, str] | None, lang: str) -> tuple[str, str | None]:
    """The text in `lang`, or in another language with that language: (text, None) or (text, its lang);
    the other is English when there is one. What a page shows and what the facet script lists alike."""
    if not texts:
        return "", None
    if lang in texts:
        return texts[lang], None
    other = "en" if "en" in texts else next(iter(texts))
    return texts[other], other


# A new library's licence for its own texts: the settings' defaults (Settings.site_licence, its URL).
LICENCE: tuple[str, str] = (
    Settings.model_fields["site_licence"].default,
    Settings.model_fields["site_licence_url"].default,
)

_TIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _json_time(value: datetime) -> str:
    """A time as the record's JSON spells it (pydantic's: `Z` for UTC)."""
    text: str = _TIME.dump_python(value, mode="json")
    return text


def _case_file(case: Case) -> bytes:
    """The bytes the store writes for `case` (records.dump_record without validating it again)."""
    return dump_json(case.model_dump(mode="json"))


@dataclass(frozen=True)
class SiteEdition:
    """One build of the site, besides its cases: the public base URL its pages stand under, when it is
    built, what the last link refresh found (by source URL) and the line each listing ends with (by
    language)."""

    base_url: str
    built_at: datetime
    links: Mapping[str, LinkState] | None = None
    note: Mapping[str, str] | None = None
    # The licence of the library's texts, (name, address) (Settings.site_licence, site_licence_url); None: the default.
    licence: tuple[str, str] | None = None
    # What the registry (sources/*.yaml) says of each source's licence, by the source's URL.
    licences: Mapping[str, str] | None = None


@dataclass(frozen=True)
class SiteContext:
    cases: tuple[Card, ...]  # newest first
    base_url: str  # no trailing slash: https://host/incidentlib/app
    built_at: datetime  # timezone-aware; the citation's retrieval date and the feeds' updated fallback
    load: Callable[[str], Case]  # a case by id, whole (read when a page needs it)
    raw: Callable[[str], bytes]  # a case's file, byte for byte (the API serves it as it is)
    langs: tuple[Lang, ...] = LANGS
    # What the last link refresh found, by source URL (State.read_links): a case page shows each source's state.
    links: Mapping[str, LinkState] = field(default_factory=dict)
    # The line each listing ends with, by language (Settings.site_note).
    note: Mapping[str, str] = field(default_factory=dict)
    # The licence of the library's texts, (name, address): every page's footer names it.
    licence: tuple[str, str] = field(default_factory=lambda: LICENCE)
    # Each source's licence where the registry says it, by URL: the sources page names it.
    licences: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        cases: Iterable[Case],
        *,
        base_url: str,
        built_at: datetime,
        links: Mapping[str, LinkState] | None = None,
        note: Mapping[str, str] | None = None,
        licence: tuple[str, str] | None = None,
        licences: Mapping[str, str] | None = None,
    ) -> SiteContext:
        """A context over cases in memory (their files' bytes are the store's serialisation of them)."""
        by_id = {case.id: case for case in cases}
        files = {case_id: _case_file(case) for case_id, case in by_id.items()}
        cards = [Card.of(case, files[case.id]) for case in by_id.values()]
        edition = SiteEdition(base_url, built_at, links, note, licence, licences)
        return cls.of_cards(cards, load=by_id.__getitem__, raw=files.__getitem__, edition=edition)

    @classmethod
    def of_cards(
        cls, cards: Iterable[Card], *, load: Callable[[str], Case], raw: Callable[[str], bytes], edition: SiteEdition
    ) -> SiteContext:
        """A context over cards, whose cases `load` reads whole and `raw` byte for byte."""
        ordered = sorted(cards, key=lambda c: c.id)
        ordered.sort(key=lambda c: c.date, reverse=True)
        base = case_base_url(edition.base_url)
        links, note = dict(edition.links or {}), dict(edition.note or {})
        licence, licences = edition.licence or LICENCE, dict(sorted((edition.licences or {}).items()))
        return cls(
            tuple(ordered),
            base,
            edition.built_at,
            load,
            raw,
            links=links,
            note=note,
            licence=licence,
            licences=licences,
        )

    def case(self, case_id: str) -> Case:
        """The whole case (the loader's; the build's shell reads each case once)."""
        return self.load(case_id)

    def case_url(self, case_id: str) -> str:
        """A case's permanent URL: the base, then `/cases/{id}` (what promotion writes into `url`)."""
        return f"{self.base_url}/cases/{case_id}"

    def by_id(self) -> dict[str, Card]:
        return {card.id: card for card in self.cases}
