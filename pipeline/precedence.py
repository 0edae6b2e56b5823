"""Who is believed on a source's org, title, date and kind: one ordered rule, field by field.

Four parties may say something of a source before a person reads it, and they disagree. In order:

1. **the registry**: the operator's hints on its entry in `sources/*.yaml` (`org`, `title`, `date`,
   `kind`, as `incidentlib add URL --org … --kind …` writes them; a feed's own `org` and
   `source_kind` in `sources/feeds.yaml`, for what it proposes);
2. **the page**: its front matter (YAML or TOML), its title, the date it states (its metadata or
   byline, its URL, its title, its text), its site's own name, and what `orgs.yaml` knows of its
   address;
3. **the feed entry** that proposed it (`SourceEntry.feed_entry`): its title, the org it names (a
   list's link text), and its date, which is when the entry was posted, not when the incident
   happened: it only fills what the page leaves empty;
4. **the address** alone: the account or the domain it names (`dfds`, `rust-lang`, `127.0.0.1`),
   the weakest guess of an org, and the kind of source the URL suggests.

The first party that says anything of a field decides it; a date's kind comes with the date (a
hint's or a feed's date is `published`). `decide` is the rule; extraction (pipeline.extract) calls
it with all four, and a draft made before its page is read (pipeline.draft) without the page.
See docs/crawl.md ("Who is believed").
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pipeline.ids import GITHUB_HOSTS, slugify
from pipeline.models import SourceEntry
from pipeline.orgs import Org, guessed_org, is_status_host

__all__ = [
    "PARTIES",
    "Hints",
    "Said",
    "address_said",
    "decide",
    "feed_said",
    "guess_source_kind",
    "registry_said",
    "source_hints",
]

PARTIES = ("registry", "page", "feed", "address")
_ORG_LIMIT = 200


@dataclass(frozen=True)
class Said:
    """What one party says of a source; None where it says nothing."""

    org: str | None = None
    org_slug: str | None = None  # with `org`: the slug it goes by (orgs.yaml's own, else the name's)
    title: str | None = None
    date: str | None = None
    date_kind: str | None = None  # with `date`: which date it is (published, incident, timeline, ...)
    kind: str | None = None  # the source's kind (blog, github, status-page, ...)

    @classmethod
    def hint(
        cls, org: str | None = None, title: str | None = None, date: str | None = None, kind: str | None = None
    ) -> Said:
        """What a hint says, the registry's or a feed entry's: its date is when the source was published."""
        return cls(org=org, title=title, date=date, date_kind="published" if date else None, kind=kind)

    @classmethod
    def of_org(cls, org: Org | None, **fields: str | None) -> Said:
        return cls(org=org.name if org else None, org_slug=org.slug if org else None, **fields)


@dataclass(frozen=True)
class Hints:
    """What is said of a source before its page is read: the registry's hints, which outrank the
    page, and the word of the feed entry that proposed it, which the page outranks."""

    registry: Said = Said()
    feed: Said = Said()


def _text(value: str | None) -> str | None:
    return value.strip() or None if value else None


def decide(registry: Said, page: Said, feed: Said, address: Said) -> Said:
    """Each field from the first party, in the order of `PARTIES`, that says anything of it."""
    parties = (registry, page, feed, address)
    by_org = next((p for p in parties if _text(p.org)), None)
    by_date = next((p for p in parties if p.date), None)
    org = (_text(by_org.org) or "")[:_ORG_LIMIT] if by_org else None
    return Said(
        org=org or None,
        org_slug=((by_org.org_slug if by_org else None) or slugify(org or "") or None) if org else None,
        title=next((t for p in parties if (t := _text(p.title))), None),
        date=by_date.date if by_date else None,
        date_kind=by_date.date_kind if by_date else None,
        kind=next((p.kind for p in parties if p.kind), None),
    )


def registry_said(entry: SourceEntry) -> Said:
    """The registry's hints: what the operator wrote on the source's entry."""
    return Said.hint(entry.org, entry.title, entry.date, entry.kind)


def feed_said(entry: SourceEntry) -> Said:
    """What the feed entry that proposed the source said of it (a posting date is a `published` one)."""
    said = entry.feed_entry
    return Said.hint(said.org, said.title, said.date)


def source_hints(entry: SourceEntry) -> Hints:
    """What the registry and the feed said of a registered source, for reading its page."""
    return Hints(registry=registry_said(entry), feed=feed_said(entry))


def guess_source_kind(url: str) -> str:
    """The source kind a URL suggests when the registry gives none."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.lower()
    if host in GITHUB_HOSTS:
        return "issue" if "/issues/" in path or "/pull/" in path else "github"
    if host.endswith("arxiv.org") or path.endswith(".pdf"):
        return "paper"
    if is_status_host(host) or "/incidents/" in path:
        return "status-page"
    if host.startswith("docs.") or "/docs/" in path:
        return "docs"
    return "blog"


def address_said(url: str, site_name: str | None = None, *, org: bool = True) -> Said:
    """What the address alone suggests: an org where nothing is known of it (`orgs.guessed_org`),
    and a kind of source; `org=False`: the kind alone."""
    return Said.of_org(guessed_org(url, site_name) if org else None, kind=guess_source_kind(url))
