"""An Atlassian Statuspage's JSON: `/api/v2/incidents.json` (the 50 newest incidents), or the older
public `/index.json`, read with pydantic models that take what they know and ignore the rest.

An incident's public page is `<page url>/incidents/<id>` (its `shortlink` is a redirector on
another host). Its postmortem is `postmortem_body` where the page still serves it (the older
endpoint, some pages), else an update whose status is `postmortem`.
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from pipeline.feeds.items import FeedItem, FeedReading, NotAFeed, fingerprint, plain

__all__ = ["read_statuspage_json"]


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Update(_Loose):
    status: str | None = None
    body: str | None = None
    updated_at: datetime | None = None


class _Incident(_Loose):
    id: str
    name: str | None = None
    status: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    started_at: datetime | None = None
    impact: str | None = None
    incident_updates: list[_Update] = []
    postmortem_body: str | None = None
    postmortem_published_at: datetime | None = None


class _Page(_Loose):
    url: str | None = None
    name: str | None = None


class _Document(_Loose):
    page: _Page | None = None
    incidents: list[_Incident]


def read_statuspage_json(body: bytes, base_url: str, *, limit: int) -> FeedReading:
    try:
        document = _Document.model_validate(json.loads(body))
    except (ValueError, ValidationError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        first = exc.errors(include_url=False)[0] if isinstance(exc, ValidationError) else None
        where = f" at {'.'.join(map(str, first['loc']))}: {first['msg']}" if first else f": {exc}"
        raise NotAFeed(f"not a Statuspage incidents document{where}"[:300]) from None
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
