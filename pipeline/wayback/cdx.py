"""Reading the Wayback Machine's index (CDX): every capture of a URL, or of every URL under a folder.

As the CDX server answers (its README; edgi's client meets it every day):
- rows are keyed by SURT (pipeline.surt): an exact lookup matches every spelling of a URL,
  so rows are told apart by their key, never by comparing URLs;
- rows come in key order, then time order; `limit=-N` gives the last N rows of that order,
  which over a folder are the alphabetically last URLs, not the newest captures: so the
  newest capture of a URL is found by its timestamp, whatever the order, over every row;
- a large answer is cut at its limit and ends with a resume key, which the next request
  sends back (`showResumeKey`, `resumeKey`) until a page has none;
- an unchanged re-capture is a revisit row (`warc/revisit`, status `-`): a capture all the same,
  of the status of the capture it repeats; when that capture is not in the answer (a lookup since
  a moment), it is no page until `resolve` says what it repeats;
- a redirect the page answered when captured is a 3xx row (a third of real rows): never the
  newest capture, which is the newest 2xx (`CdxResult.newest`);
- some rows' `original` is no URL (an e-mail address, a relative path): dropped (`fetchable`);
- a site the archive blocks answers 403 "Blocked Site Error", not rows.

Each row is read with waybackpy's public `CDXSnapshot` (the one part of waybackpy that
serves: its reader has no timeout, retries on its own and hides resume keys). A row it
cannot read (a timestamp with a month or day of 00, a short row) is kept as what can be read
of it (`Unreadable`): when it may be newer than the newest readable capture, the newest
cannot be told and `newest` says None, `readable` False; the others stand. The manual says
the same for a reader (docs/archive.md, "How the index answers").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from waybackpy.cdx_snapshot import CDXSnapshot

from pipeline.errors import WaybackError, WaybackUnavailable
from pipeline.models import check_url
from pipeline.surt import surt_key
from pipeline.wayback.limits import Limits
from pipeline.wayback.request import ArchiveRequest
from pipeline.wayback.urls import ArchivedUrl


class _Caller(Protocol):
    """What reading the index needs of a client (`WaybackClient` is one): its rate-limited call."""

    limits: Limits

    async def call(self, request: ArchiveRequest) -> httpx.Response: ...


__all__ = [
    "PUBLIC_WAYBACK",
    "CdxQuery",
    "CdxResult",
    "CdxRow",
    "Unreadable",
    "fetchable",
    "legible",
    "read_index",
    "snapshot_timestamp",
    "snapshot_url",
]

FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
# Rows a page holds at most; past it the server answers with a resume key.
PAGE_ROWS = 5000
# Pages read at most for one lookup (a folder of 500,000 captures): past it, said, not silent.
MAX_PAGES = 100
# Captures with a status of 2xx or 3xx, and revisits (status "-"); the server matches a filter
# against the whole field. 3xx rows are asked for though never the newest capture: a revisit may
# repeat one (and so is no page), and a recorded link to one is still found in the index.
_GOOD = "statuscode:([23][0-9][0-9]|-)"


# Where a reader follows a capture, unless `wayback_public_url` names another (a stand-in's own).
PUBLIC_WAYBACK = "https://web.archive.org"


def snapshot_url(timestamp: str, url: str, base: str = PUBLIC_WAYBACK) -> str:
    """The link a reader follows: https://web.archive.org/web/<timestamp>/<url> (`base` for another)."""
    return str(ArchivedUrl(base, timestamp, "", url))


def snapshot_timestamp(link: str | None) -> str | None:
    """The timestamp of a link `snapshot_url` made (no flags after it); None for anything else."""
    archived = ArchivedUrl.parse(link) if link else None
    return archived.stamp if archived is not None and not archived.flags else None


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
    def archived_url(self) -> ArchivedUrl:
        """The capture's link, as a reader follows it."""
        return ArchivedUrl(self.base, self.timestamp, "", self.original)

    @property
    def link(self) -> str:
        return str(self.archived_url)

    @property
    def revisit(self) -> bool:
        return self.mimetype == "warc/revisit" or self.statuscode == "-"


@dataclass(frozen=True)
class Unreadable:
    """What can be read of a row that could not be read whole: the legible leading digits of its
    timestamp ("" when none), and its status when it can be told ("" else)."""

    stamp: str
    statuscode: str = ""


@dataclass
class CdxResult:
    """What the index holds for one lookup.

    The newest capture of a URL is its newest row of a 2xx page, a revisit counted as the
    capture it repeats (docs/archive.md, "How the index answers"): a 3xx row records a redirect,
    whose playback is another URL's capture, and a link or a hash of it would be of no page.
    """

    rows: list[CdxRow] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # keys of URLs with a row that could not be read
    unreadable_rows: dict[str, list[Unreadable]] = field(default_factory=dict)  # by key: what can be read
    # By (key, timestamp) of a revisit: the status of the capture it repeats, read by `resolve`.
    repeated: dict[tuple[str, str], str] = field(default_factory=dict)
    dropped: int = 0  # rows whose `original` is no fetchable http(s) URL (mailto:, a relative path)
    blocked: bool = False  # the archive will not show captures of this site
    truncated: bool = False  # more pages than MAX_PAGES

    _keyed: dict[str, list[CdxRow]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _keyed_rows: int = field(default=-1, init=False, repr=False, compare=False)

    def _by_key(self) -> dict[str, list[CdxRow]]:
        """The rows by key, oldest first: made once for the rows read (a folder holds thousands)."""
        if self._keyed_rows != len(self.rows):
            keyed: dict[str, list[CdxRow]] = {}
            for row in sorted(self.rows, key=lambda r: r.timestamp):
                keyed.setdefault(row.urlkey, []).append(row)
            self._keyed, self._keyed_rows = keyed, len(self.rows)
        return self._keyed

    def rows_for(self, url: str) -> list[CdxRow]:
        """The captures of one URL (any spelling), oldest first, redirects and revisits included."""
        return list(self._by_key().get(surt_key(url), []))

    def status_of(self, row: CdxRow) -> str | None:
        """A row's page status; a revisit's is that of the capture it repeats (the latest earlier
        row of its URL with its digest, in this answer or in the one `resolve` read), None when
        that capture is in neither."""
        if not row.revisit:
            return row.statuscode
        earlier = (
            r
            for r in reversed(self._by_key().get(row.urlkey, []))
            if r.timestamp < row.timestamp and r.digest == row.digest and not r.revisit
        )
        repeated = next(earlier, None)
        return repeated.statuscode if repeated else self.repeated.get((row.urlkey, row.timestamp))

    def is_page(self, row: CdxRow) -> bool:
        """Whether the row is a capture of a page: a 2xx, or a revisit of one. A revisit whose
        repeated capture is unknown is none: it may repeat a redirect (a lookup since a moment
        holds the revisit, not what it repeats); `unresolved` lists them for `resolve`."""
        status = self.status_of(row)
        return status is not None and status.startswith("2")

    def unresolved(self, url: str) -> list[CdxRow]:
        """The revisits of `url` newer than its newest known page whose repeated capture is not in
        the answer: each may be the newest page, or a redirect's re-capture."""
        newest = self.newest_readable(url)
        return [
            r
            for r in self.rows_for(url)
            if r.revisit and self.status_of(r) is None and (newest is None or r.timestamp > newest.timestamp)
        ]

    def resolve(self, earlier: CdxResult) -> None:
        """Take the statuses of the captures unresolved revisits repeat from `earlier`, a lookup of
        the rows before them (`Archiver.newest` makes it): a revisit that repeats none of its rows
        stays unknown, and no page (its capture was no 2xx or 3xx, or is not in the index)."""
        for row in [r for key in self._by_key().values() for r in key if r.revisit and self.status_of(r) is None]:
            repeated = next(
                (
                    r
                    for r in reversed(earlier._by_key().get(row.urlkey, []))
                    if r.timestamp < row.timestamp and r.digest == row.digest and not r.revisit
                ),
                None,
            )
            if repeated is not None:
                self.repeated[(row.urlkey, row.timestamp)] = repeated.statuscode

    def newest_readable(self, url: str) -> CdxRow | None:
        """The newest readable capture of a page of `url`, whatever the unreadable rows: for a
        lookup that needs a capture made since a moment, not the newest one."""
        return next((r for r in reversed(self.rows_for(url)) if self.is_page(r)), None)

    def newest(self, url: str) -> CdxRow | None:
        """The newest capture of a page of `url`; None when there is none, or when a row that could
        not be read may be newer (then which is newest cannot be told: `readable` says so)."""
        if not self.readable(url):
            return None
        return self.newest_readable(url)

    def readable(self, url: str) -> bool:
        """Whether the newest capture can be told: no row that could not be read may be newer than
        the newest readable one, by what can be read of its timestamp (a month or day of 00 keeps
        its year, or its year and month). A row whose status is legible and no page's is no rival."""
        key = surt_key(url)
        if key not in self.unreadable:
            return True
        newest = self.newest_readable(url)
        for row in self.unreadable_rows.get(key, []):
            if row.statuscode and row.statuscode != "-" and not row.statuscode.startswith("2"):
                continue
            if not row.stamp or newest is None or row.stamp >= newest.timestamp[: len(row.stamp)]:
                return False
        return True


def fetchable(url: str) -> bool:
    """Whether a row's `original` is a URL a reader can follow: one a record may cite
    (`models.check_url`: http(s), a host, a numeric port), with a host name or address and no user
    part. The index holds others (an e-mail address with `http://` put before it, `mailto:`, a bare
    relative path, `data:`), which are no captures of a page; edgi's client skips them too."""
    try:
        check_url(url)
    except ValueError:
        return False
    parts = urlsplit(url)
    return "@" not in parts.netloc and bool(_HOST.fullmatch(parts.hostname or ""))


# A host name (labels of letters, digits, `-`, `_`), an IPv4 address, or an IPv6 one.
_HOST = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.?|[0-9a-f:.]+")
_STAMPS = ((14, "%Y%m%d%H%M%S"), (12, "%Y%m%d%H%M"), (10, "%Y%m%d%H"), (8, "%Y%m%d"), (6, "%Y%m"), (4, "%Y"))


def legible(stamp: str) -> str:
    """The leading digits of a timestamp that can be read: `20000800241623` (day 00) gives
    `200008`, `20000012170449` (month 00) gives `2000`; nothing legible gives ""."""
    digits = stamp[:14]
    for length, pattern in _STAMPS:
        if len(digits) >= length and digits[:length].isdigit():
            try:
                datetime.strptime(digits[:length], pattern)
            except ValueError:
                continue
            return digits[:length]
    return ""


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
    """One row into the result; a row whose `original` is no fetchable URL is dropped; a row that
    cannot be read puts its URL's key into `unreadable`, with what can be read of it."""
    key = str(row[fields.index("urlkey")]) if "urlkey" in fields and len(row) > fields.index("urlkey") else "?"
    values = {name: str(value) for name, value in zip(fields, row, strict=False)}  # a short row: by position
    if "original" in values and not fetchable(values["original"]):
        result.dropped += 1
        return
    if len(row) != len(fields):
        _unreadable(result, key, values)
        return
    try:
        snapshot = CDXSnapshot({name: values.get(name, "-") for name in FIELDS})
    except (ValueError, KeyError):  # a timestamp strptime refuses, such as a month of 00
        _unreadable(result, key, values)
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


def _unreadable(result: CdxResult, key: str, values: dict[str, str]) -> None:
    """A row that could not be read: its key, and what can be read of its timestamp and status."""
    result.unreadable.add(key)
    status = values.get("statuscode", "")
    legible_status = status if status == "-" or (len(status) == 3 and status.isdigit()) else ""
    result.unreadable_rows.setdefault(key, []).append(Unreadable(legible(values.get("timestamp", "")), legible_status))


@dataclass(frozen=True)
class CdxQuery:
    """What one lookup asks of the index: the captures of `url` (of every URL under it, with
    `prefix`), made from `since` until `until` (timestamps; None leaves that end open), of those
    payloads only when `digests` names some."""

    url: str
    prefix: bool = False
    since: str | None = None
    until: str | None = None
    digests: frozenset[str] = frozenset()

    def params(self) -> list[tuple[str, str]]:
        """The lookup as the CDX server's parameters: every page's, but for its resume key."""
        params = [
            ("url", self.url),
            ("matchType", "prefix" if self.prefix else "exact"),
            ("output", "json"),
            ("fl", ",".join(FIELDS)),
            ("filter", _GOOD),
            ("limit", str(PAGE_ROWS)),
            ("showResumeKey", "true"),
        ]
        if self.since:
            params.append(("from", self.since))
        if self.until:
            params.append(("to", self.until))
        if self.digests:  # base32: no character a regular expression reads
            params.append(("filter", f"digest:({'|'.join(sorted(self.digests))})"))
        return params


async def read_index(client: _Caller, query: CdxQuery, *, base: str = PUBLIC_WAYBACK) -> CdxResult:
    """Every readable capture the index holds for the query, page after page; `base`: of the rows' links."""
    params = query.params()
    result = CdxResult()
    resume: str | None = None
    for _ in range(MAX_PAGES):
        page = params + ([("resumeKey", resume)] if resume else [])
        response = await client.call(ArchiveRequest("cdx", "GET", "/cdx/search/cdx", client.limits.cdx, params=page))
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
