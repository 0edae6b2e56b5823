"""What every part of the reader's site is built from: the published cases and where the site lives.

    ctx = SiteContext.of(cases, base_url="https://example.org/incidentlib/app", built_at=now)
    ctx.case_url("IL-0001")        # https://example.org/incidentlib/app/cases/IL-0001

Pure: no file, no clock (the build time is given), no network. Cases are ordered newest first by
`date`, then by id, the order of the listing, the feeds and `modified_id.csv` alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.models import Case, LinkState
from pipeline.site.labels import LANGS, Lang

__all__ = ["SiteContext", "case_base_url"]


def case_base_url(base_url: str) -> str:
    """The site's base without a trailing slash, and without the `/cases` older settings ended in
    (`https://host/app/cases/` was the prefix put before an id; the site's base is `https://host/app`)."""
    base = base_url.rstrip("/")
    return base.removesuffix("/cases")


@dataclass(frozen=True)
class SiteContext:
    cases: tuple[Case, ...]  # newest first
    base_url: str  # no trailing slash: https://host/incidentlib/app
    built_at: datetime  # timezone-aware; the citation's retrieval date and the feeds' updated fallback
    langs: tuple[Lang, ...] = LANGS
    # What the last link refresh found, by source URL (Store.read_links): a case page shows each source's state.
    links: Mapping[str, LinkState] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        cases: Iterable[Case],
        *,
        base_url: str,
        built_at: datetime,
        links: Mapping[str, LinkState] | None = None,
    ) -> SiteContext:
        ordered = sorted(cases, key=lambda c: c.id)
        ordered.sort(key=lambda c: c.date, reverse=True)
        return cls(tuple(ordered), case_base_url(base_url), built_at, links=dict(links or {}))

    def case_url(self, case_id: str) -> str:
        """A case's permanent URL: the base, then `/cases/{id}` (what promotion writes into `url`)."""
        return f"{self.base_url}/cases/{case_id}"

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}
