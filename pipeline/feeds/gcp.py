"""Google Cloud's `status.cloud.google.com/incidents.json`: a bare array, the whole history in one
document, read with pydantic models that take what they know and ignore the rest.

An incident's page is the feed's base joined with its relative `uri`. Its postmortem arrives as a
later update whose text starts "Incident Report" (or "Mini Incident Report"), about ten days after
it ended; that edit moves `modified`, which is what marks the entry changed.
"""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import urljoin

from pydantic import Field, TypeAdapter

from pipeline.feeds.items import FeedItem, FeedReading, Loose, fingerprint, plain, read_json

__all__ = ["read_gcp_incidents"]


class _Update(Loose):
    text: str | None = None
    status: str | None = None
    modified: datetime | None = None


class _Product(Loose):
    title: str | None = None


class _Incident(Loose):
    id: str
    uri: str | None = None
    begin: datetime | None = None
    end: datetime | None = None
    modified: datetime | None = None
    external_desc: str | None = None
    severity: str | None = None
    updates: list[_Update] = Field(default_factory=list)
    affected_products: list[_Product] = Field(default_factory=list)


_INCIDENTS = TypeAdapter(list[_Incident])
# "## Incident Report", "# Mini Incident Report", "## \# Incident Report" (an escaped copy was seen).
_REPORT = re.compile(r"^\s*#*\s*(?:\\#\s*)?(?:mini\s+)?incident\s+report\b", re.IGNORECASE)


def read_gcp_incidents(body: bytes, base_url: str, *, limit: int) -> FeedReading:
    incidents = read_json(body, _INCIDENTS, "a Google Cloud incidents document")
    reading = FeedReading(total=len(incidents))
    for incident in incidents[:limit]:
        url = urljoin(base_url, incident.uri or f"incidents/{incident.id}")
        report = next((u.text for u in incident.updates if u.text and _REPORT.match(u.text)), None)
        products = ", ".join(p.title for p in incident.affected_products if p.title)
        description = (incident.external_desc or "").strip()
        title = plain(description.splitlines()[0] if description else None, limit=200)
        text = None
        if report:
            heading = f"# {title or 'Incident'}"
            facts = [
                f"Began: {incident.begin.isoformat()}" if incident.begin else None,
                f"Ended: {incident.end.isoformat()}" if incident.end else None,
                f"Products: {products}" if products else None,
                f"Severity: {incident.severity}" if incident.severity else None,
            ]
            text = "\n\n".join([heading, "\n".join(f for f in facts if f), report.strip()]) + "\n"
        reading.items.append(
            FeedItem(
                url=url,
                key=url,
                fingerprint=fingerprint(incident.modified.isoformat() if incident.modified else None, title),
                title=title,
                summary=plain(" ".join(x for x in (products, description) if x)),
                date=incident.begin.date().isoformat() if incident.begin else None,
                text=text,
            )
        )
    if len(incidents) > limit:
        reading.warnings.append(f"kept the first {limit} of {len(incidents)} incidents (max_feed_entries)")
    return reading
