"""Drafts, pure: how a draft begins for a registered source.

A new draft carries only what the registry and the URL tell: its stable id, the
source, the hints. The review fields are empty: nobody has written or reviewed it yet.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pipeline.ids import GITHUB_HOSTS, canonical_url, draft_id_for
from pipeline.models import Draft, DraftSource, Origin, Review, SourceEntry, utc_now

__all__ = ["guess_source_kind", "new_draft"]


def guess_source_kind(url: str) -> str:
    """The source kind a URL suggests when the registry gives none."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.lower()
    if host in GITHUB_HOSTS:
        return "issue" if "/issues/" in path or "/pull/" in path else "github"
    if host.endswith("arxiv.org") or path.endswith(".pdf"):
        return "paper"
    if host.startswith("status.") or "statuspage" in host or "/incidents/" in path:
        return "status-page"
    if host.startswith("docs.") or "/docs/" in path:
        return "docs"
    return "blog"


def new_draft(entry: SourceEntry) -> Draft:
    """The draft a source starts as, before anything is fetched: review fields left open."""
    return Draft(
        id=draft_id_for(entry.url),
        org=entry.org,
        date=entry.date,
        title={"en": entry.title} if entry.title else None,
        sources=[DraftSource(url=entry.url, kind=entry.kind or guess_source_kind(entry.url))],
        origin=Origin(url=entry.url, canonical_url=canonical_url(entry.url)),
        review=Review(),
        created_at=utc_now(),
    )
