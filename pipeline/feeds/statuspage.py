"""An Atlassian Statuspage's JSON: `/api/v2/incidents.json` (the 50 newest incidents), or the older
public `/index.json`, read with pydantic models that take what they know and ignore the rest.

An incident's public page is `<page url>/incidents/<id>` (its `shortlink` is a redirector on
another host). Its postmortem is `postmortem_body` where the page still serves it (the older
endpoint, some pages), else an update whose status is `postmortem`.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urljoin, urlsplit

from pydantic import Field, TypeAdapter

from pipeline.feeds.items import FeedItem, FeedReading, Loose, fingerprint, plain, read_json

__all__ = ["read_statuspage_json"]


class _Update(Loose):
    status: str | None = None
    body: str | None = None
    updated_at: datetime | None = None


class _Incident(Loose):
    id: str
    name: str | None = None
    status: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    started_at: datetime | None = None
    impact: str | None = None
    incident_updates: list[_Update] = Field(default_factory=list)
    postmortem_body: str | None = None
    postmortem_published_at: datetime | None = None


class _Page(Loose):
    url: str | None = None
    name: str | None = None


class _Document(Loose):
    page: _Page | None = None
    incidents: list[_Incident]


def read_statuspage_json(body: bytes, base_url: str, *, limit: int) -> FeedReading:
    document = read_json(body, TypeAdapter(_Document), "a Statuspage incidents document")
    page_url = (document.page.url if document.page and document.page.url else None) or _origin(base_url)
    reading = FeedReading(total=len(document.incidents))
    for incident in document.incidents[:limit]:
        url = urljoin(page_url.rstrip("/") + "/", f"incidents/{incident.id}")
        updates = incident.incident_updates
        postmortem = (incident.postmortem_body or "").strip() or next(
            ((u.body or "").strip() for u in updates if (u.status or "").lower() == "postmortem" and u.body), None
        )
        began = incident.started_at or incident.created_at
        title = plain(incident.name)
        reading.items.append(
            FeedItem(
                url=url,
                key=url,
                fingerprint=fingerprint(
                    _stamp(incident.updated_at), _stamp(incident.postmortem_published_at), title, str(len(updates))
                ),
                title=title,
                summary=plain(updates[0].body if updates else None),
                date=began.date().isoformat() if began else None,
                text=f"# {title or url}\n\n{_lines(postmortem)}\n" if postmortem else None,
            )
        )
    if len(document.incidents) > limit:
        reading.warnings.append(f"kept the first {limit} of {len(document.incidents)} incidents (max_feed_entries)")
    return reading


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _stamp(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _lines(text: str) -> str:
    # Statuspage writes line breaks in an update's body as <br />.
    return text.replace("<br />", "\n").replace("<br/>", "\n").replace("<br>", "\n")
