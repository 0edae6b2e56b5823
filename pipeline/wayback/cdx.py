"""Reading the Wayback Machine's index (CDX): every capture of a URL, or of every URL under a folder.

As the CDX server answers (its README; edgi's client meets it every day):
- rows are keyed by SURT (pipeline.surt): an exact lookup matches every spelling of a URL,
  so rows are told apart by their key, never by comparing URLs;
- rows come in key order, then time order; `limit=-N` gives the last N rows of that order,
  which over a folder are the alphabetically last URLs, not the newest captures: so the
  newest capture of a URL is found by its timestamp, whatever the order, over every row;
- a large answer is cut at its limit and ends with a resume key, which the next request
  sends back (`showResumeKey`, `resumeKey`) until a page has none;
- an unchanged re-capture is a revisit row (`warc/revisit`, status `-`): a capture all the same;
- a site the archive blocks answers 403 "Blocked Site Error", not rows.

Each row is read with waybackpy's public `CDXSnapshot` (the one part of waybackpy that
serves: its reader has no timeout, retries on its own and hides resume keys). A row it
cannot read (a timestamp with a month of 00, a short row) costs only its own URL, which is
reported unreadable; the others stand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from waybackpy.cdx_snapshot import CDXSnapshot

from pipeline.errors import WaybackError, WaybackUnavailable
from pipeline.surt import surt_key
from pipeline.wayback.limits import Limits, RateLimiter


class _Caller(Protocol):
    """What reading the index needs of a client (`WaybackClient` is one): its rate-limited call."""

    limits: Limits

    async def call(
        self,
        kind: str,
        method: str,
        path: str,
        limiter: RateLimiter | None,
        *,
        params: list[tuple[str, str]] | None = ...,
    ) -> httpx.Response: ...


__all__ = ["PUBLIC_WAYBACK", "CdxResult", "CdxRow", "read_index", "snapshot_timestamp", "snapshot_url"]

FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
# Rows a page holds at most; past it the server answers with a resume key.
PAGE_ROWS = 5000
# Pages read at most for one lookup (a folder of 500,000 captures): past it, said, not silent.
MAX_PAGES = 100
# Captures with a status of 2xx or 3xx, and revisits (status "-"); the server matches a filter
# against the whole field.
_GOOD = "statuscode:([23][0-9][0-9]|-)"


# Where a reader follows a capture, unless `wayback_public_url` names another (a stand-in's own).
PUBLIC_WAYBACK = "https://web.archive.org"


def snapshot_url(timestamp: str, url: str, base: str = PUBLIC_WAYBACK) -> str:
    """The link a reader follows: https://web.archive.org/web/<timestamp>/<url> (`base` for another)."""
    return f"{base}/web/{timestamp}/{url}"


def snapshot_timestamp(link: str | None) -> str | None:
    """The timestamp of a link `snapshot_url` made; None for anything else."""
    if not link or "/web/" not in link:
        return None
    stamp = link.split("/web/", 1)[1].split("/", 1)[0]
    return stamp if stamp.isdigit() else None


@dataclass(frozen=True)
class CdxRow:
    urlkey: str
    timestamp: str
    original: str
    statuscode: str
    mimetype: str = "text/html"
    digest: str = "-"
    base: str = PUBLIC_WAYBACK  # of the link a reader follows (`wayback_public_url`)

    @property
    def link(self) -> str:
        return snapshot_url(self.timestamp, self.original, self.base)

    @property
    def revisit(self) -> bool:
        return self.mimetype == "warc/revisit" or self.statuscode == "-"


@dataclass
class CdxResult:
    """What the index holds for one lookup."""

    rows: list[CdxRow] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # keys of URLs with a row that could not be read
    blocked: bool = False  # the archive will not show captures of this site
    truncated: bool = False  # more pages than MAX_PAGES

    def of(self, url: str) -> list[CdxRow]:
        """The captures of one URL (any spelling), oldest first."""
        key = surt_key(url)
        return sorted((r for r in self.rows if r.urlkey == key), key=lambda r: r.timestamp)

    def newest(self, url: str) -> CdxRow | None:
        rows = self.of(url)
        return rows[-1] if rows else None

    def readable(self, url: str) -> bool:
        """Whether every row of this URL could be read (else what is known of it is not all there is)."""
        return surt_key(url) not in self.unreadable


def _rows(body: str) -> tuple[list[list[Any]], str | None]:
    """The rows of a JSON page and its resume key, if any: `[[header], rows..., [], [key]]`."""
    if not body.strip():
        return [], None  # the page after the last resume key may be empty
    try:
        data = json.loads(body)
    except ValueError:
        raise WaybackUnavailable("CDX: answered something that is not JSON") from None
    if not isinstance(data, list):
        raise WaybackUnavailable("CDX: answered JSON that is not a list of rows")
    key = None
    if len(data) >= 2 and data[-2] == [] and isinstance(data[-1], list) and len(data[-1]) == 1:
        key = str(data[-1][0])
        data = data[:-2]
    return [row for row in data if isinstance(row, list)], key


def _read(fields: list[str], row: list[Any], result: CdxResult, base: str) -> None:
    """One row into the result, or its URL's key into `unreadable`."""
    key = str(row[fields.index("urlkey")]) if "urlkey" in fields and len(row) > fields.index("urlkey") else "?"
    if len(row) != len(fields):
        result.unreadable.add(key)
        return
    values = dict(zip(fields, (str(v) for v in row), strict=True))
    try:
        snapshot = CDXSnapshot({name: values.get(name, "-") for name in FIELDS})
    except (ValueError, KeyError):  # a timestamp strptime refuses, such as a month of 00
        result.unreadable.add(key)
        return
    result.rows.append(
        CdxRow(
            urlkey=snapshot.urlkey,
            timestamp=snapshot.timestamp,
            original=snapshot.original,
            statuscode=snapshot.statuscode,
            mimetype=snapshot.mimetype,
            digest=snapshot.digest,
            base=base,
        )
    )


async def read_index(
    client: _Caller,
    url: str,
    *,
    prefix: bool = False,
    since: str | None = None,
    until: str | None = None,
    base: str = PUBLIC_WAYBACK,
) -> CdxResult:
    """Every readable capture the index holds for `url` (or under it), page after page; `base`: of
    the rows' links."""
    params = [
        ("url", url),
        ("matchType", "prefix" if prefix else "exact"),
        ("output", "json"),
        ("fl", ",".join(FIELDS)),
        ("filter", _GOOD),
        ("limit", str(PAGE_ROWS)),
        ("showResumeKey", "true"),
    ]
    if since:
        params.append(("from", since))
    if until:
        params.append(("to", until))
    result = CdxResult()
    resume: str | None = None
    for _ in range(MAX_PAGES):
        page = params + ([("resumeKey", resume)] if resume else [])
        response = await client.call("cdx", "GET", "/cdx/search/cdx", client.limits.cdx, params=page)
        if response.status_code == 403 and "Blocked Site Error" in (
            response.text + response.headers.get("X-Archive-Wayback-Runtime-Error", "")
        ):
            result.blocked = True
            return result
        if response.status_code != 200:
            raise WaybackError(f"CDX: answered HTTP {response.status_code}: {response.text.strip()[:200]}")
        rows, resume = _rows(response.text)
        if rows:
            header, *body = rows
            fields = [str(name) for name in header]
            for row in body:
                _read(fields, row, result, base)
        if not resume:
            return result
    result.truncated = True
    return result
