"""The Wayback stand-in's index: the CDX server's answers over the captures the stand-in holds.

Pure: `answer(captures, query, ...)` turns the captures and a query string into the reply the
CDX server would give (`GET /cdx/search/cdx`); the HTTP side, the rate limit and the lag are
the stand-in's (pipeline/standins/wayback.py). Where each answer comes from is listed in the
manual (docs/archive.md, "Where the stand-in's answers come from"; the server's classes are
named below); how the pipeline's reader meets it is there too ("How the index answers"). The
points a client trips over:

- Every row's `urlkey` is the SURT of the URL (`pipeline.surt.surt_key`), and rows come in
  (urlkey, timestamp) order. An exact lookup compares urlkeys, so the scheme, a leading
  `www.`, the default port and case are ignored; `matchType=prefix` (or a trailing `*`)
  scans `pipeline.surt.prefix_range`; `host` and `domain` (or a leading `*.`) the host's keys.
- `limit=N` is the first N rows in that order, `limit=-N` the last N in that order (the
  server's "skips all but last N"), which over a prefix is the alphabetically last URLs,
  not the newest captures.
- `showResumeKey=true` with the limit reached appends a resume key (text: a blank line and
  the key; JSON: `[]` and `["key"]`); `resumeKey=` continues strictly after it. The key is
  `quote_plus(urlkey + " " + timestamp with its last character raised by one)`.
- `filter=[!]field:regex` matches the whole field (the server's `Matcher.matches`, so
  `re.fullmatch`); `~field:text` is a substring match (FieldRegexFilter). `collapse=field[:N]`
  merges adjacent rows only. `from`/`to` bound the timestamp, padded to 14 digits.
- A re-capture whose digest equals the previous capture's (same urlkey) is a revisit:
  mimetype `warc/revisit`, statuscode `-`, unless `resolveRevisits=true` (RevisitResolver).
- `output=json`: a header row of the field names, then the rows, all strings; no rows is
  `[]`. Text: one space-separated row a line, `text/plain;charset=UTF-8`.
- A 3xx capture (an archived redirect) is a row with its status, like any other.
- A blocked site answers 403 `text/plain` with the AdministrativeAccessControlException
  header and body (a recorded answer).
- Malformed rows, on request (`bad_rows`, `BAD_ROW_KINDS`): timestamps with a month or day of
  00, a short row, rows whose `original` is no URL (an e-mail address, a bare path).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import quote_plus, unquote_plus, urlsplit

from pipeline.surt import prefix_range, surt_key

__all__ = ["BAD_ROW_KINDS", "FIELDS", "Capture", "Reply", "answer", "digest_of", "resume_key"]

# The default fields, in the server's order (its "Field Order").
FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")

# The recorded answer for a blocked site (2020): status, content type, header and body.
_BLOCKED = (
    "org.archive.util.io.RuntimeIOException: org.archive.wayback.exception.AdministrativeAccessControlException: "
    "Blocked Site Error"
)
# The malformed rows the real index holds (docs/archive.md, "How the index answers"): a timestamp
# with a month of 00 (crawls of 2000), one with a day of 00, and a row with a field missing.
BAD_TIMESTAMP = "20000012170449"
_SHORT_ROW_TIMESTAMP = "20000101000000"
# The kinds of malformed rows `bad_rows` can ask for, each a value of its own (several: "a,b").
BAD_ROW_KINDS = ("timestamp", "fields", "newer-timestamp", "mailto", "relative")
# A row of the index, with whether it is one field short (the malformed-row switch).
_Row = tuple[dict[str, str], bool]


@dataclass
class Reply:
    """One HTTP answer of the stand-in."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, data: object, status: int = 200) -> Reply:
        return cls(status, json.dumps(data).encode())

    @classmethod
    def text(cls, text: str, status: int = 200) -> Reply:
        return cls(status, text.encode(), "text/plain;charset=UTF-8")


@dataclass
class Capture:
    """One capture the archive holds: one row of the index, and the bytes `/web/` serves."""

    timestamp: str
    original: str  # the URL captured, after redirects
    requested: str  # the URL submitted
    statuscode: int  # the page's own HTTP status
    digest: str
    mimetype: str
    body: bytes
    made_at: float  # time.monotonic() of the capture, for the lag, the dedupe and if_not_archived_within
    urlkey: str = ""  # surt_key(original) when left empty
    revisit: bool = False  # the same digest as the previous capture of the urlkey
    job_id: str | None = None
    delayed: bool = False  # captured with delay_wb_availability=1: in the index ~12 hours later
    location: str | None = None  # a 3xx capture's Location (an archived redirect), absolute

    def __post_init__(self) -> None:
        if not self.urlkey:
            self.urlkey = surt_key(self.original)

    def row(self, resolve_revisits: bool = False) -> dict[str, str]:
        """The index's fields for this capture, as the server prints them (all strings)."""
        revisit = self.revisit and not resolve_revisits
        return {
            "urlkey": self.urlkey,
            "timestamp": self.timestamp,
            "original": self.original,
            "mimetype": "warc/revisit" if revisit else self.mimetype,
            "statuscode": "-" if revisit else str(self.statuscode),
            "digest": self.digest,
            "length": str(len(self.body)),
        }


def digest_of(body: bytes) -> str:
    """The index's digest: base32 of the SHA-1 of the payload."""
    return base64.b32encode(hashlib.sha1(body).digest()).decode()


def resume_key(urlkey: str, timestamp: str) -> str:
    """The key that resumes after the row (urlkey, timestamp): CDXServer prints
    `URLEncoder.encode(urlkey + " " + incLastChar(timestamp))`, e.g. `…+2001041400593%3A`."""
    return quote_plus(f"{urlkey} {timestamp[:-1]}{chr(ord(timestamp[-1]) + 1)}")


def _host_key(url: str) -> str:
    """The host part of a URL's key (`com,example` for https://www.example.com/x)."""
    return surt_key(url).split(")", 1)[0]


def _blocked(url: str, blocked_hosts: Collection[str]) -> bool:
    host = _host_key(url.lstrip("*."))
    for entry in blocked_hosts:
        blocked = _host_key(entry if "://" in entry else f"http://{entry}/")
        if host == blocked or host.startswith(blocked + ","):  # a blocked site's subdomains too
            return True
    return False


def _in_range(url: str, match_type: str) -> Callable[[str], bool]:
    """A test of urlkeys for the match type (RANGE: UrlSurtRangeComputer.determineRange)."""
    if match_type == "exact":
        key = surt_key(url)
        return lambda k: k == key
    if match_type == "prefix":
        low, high = prefix_range(url)
        return lambda k: low <= k < high
    host = _host_key(url)
    if match_type == "host":
        return lambda k: k.startswith(host + ")")
    return lambda k: k.startswith((host + ")", host + ","))  # domain: the host and its subdomains


def _bad_row(url: str, kind: str, newest: str) -> _Row:
    """A malformed row for `url`, of one of BAD_ROW_KINDS:

    - `timestamp`: the timestamp 20000012170449 (a month of 00), older than any capture here;
    - `fields`: a row one field short (its last, `length`);
    - `newer-timestamp`: a timestamp with a day of 00 in the year after `newest` (the URL's
      newest capture, or now), so that by what can be read of it, it is the newest row;
    - `mailto`: a row at the newest capture's timestamp (after it in the answer), whose
      `original` is an e-mail address with `http://mailto:` before it, under the URL's own key
      (as the real index holds under `gov,epa)/`);
    - `relative`: the same, whose `original` is the URL's bare path.
    """
    year = int(newest[:4]) + 1
    stamps = {"timestamp": BAD_TIMESTAMP, "fields": _SHORT_ROW_TIMESTAMP, "newer-timestamp": f"{year}0800241623"}
    parts = urlsplit(url if "://" in url else f"http://{url}")
    originals = {"mailto": f"http://mailto:webmaster@{parts.hostname}/", "relative": parts.path or "/"}
    row = {
        "urlkey": surt_key(url),
        "timestamp": stamps.get(kind, newest),
        "original": originals.get(kind, url),
        "mimetype": "text/html" if kind != "mailto" else "unk",
        "statuscode": "200",
        "digest": digest_of(kind.encode()),
        "length": "0",
    }
    return row, kind == "fields"


def _bad_rows(bad_rows: Mapping[str, str], covers: Callable[[str], bool], rows: list[_Row]) -> list[_Row]:
    """The malformed rows `bad_rows` ({url: "kind[,kind]"}) asks for, of the URLs the lookup covers."""
    made = []
    for url, kinds in bad_rows.items():
        key = surt_key(url)
        if not covers(key):
            continue
        stamps = [r[0]["timestamp"] for r in rows if r[0]["urlkey"] == key]
        newest = max(stamps, default=datetime.now(UTC).strftime("%Y%m%d%H%M%S"))
        made += [_bad_row(url, kind.strip(), newest) for kind in kinds.split(",") if kind.strip()]
    return made


def _filters(expressions: list[str]) -> Callable[[dict[str, str]], bool]:
    """The row tests of `filter=[!][~]field:regex` (FieldRegexFilter: the regex must match the whole
    field, `!` negates, `~` makes it a plain substring test)."""
    tests = []
    for expression in expressions:
        negate = expression.startswith("!")
        rest = expression[1:] if negate else expression
        contains = rest.startswith("~")
        name, _, pattern = (rest[1:] if contains else rest).partition(":")
        regex = None if contains else re.compile(pattern)
        tests.append((name, pattern, regex, negate))

    def keep(row: dict[str, str]) -> bool:
        for name, pattern, regex, negate in tests:
            value = row.get(name, "-")
            hit = pattern in value if regex is None else regex.fullmatch(value) is not None
            if hit == negate:
                return False
        return True

    return keep


def _collapse(rows: list[_Row], spec: str) -> list[_Row]:
    """`collapse=field[:N]`: of adjacent rows whose field (its first N characters) is equal, the first."""
    name, _, digits = spec.partition(":")
    width = int(digits) if digits.isdigit() else None
    kept: list[_Row] = []
    last: str | None = None
    for row in rows:
        value = row[0].get(name, "-")[:width]
        if value != last:
            kept.append(row)
        last = value
    return kept


def _first(query: Mapping[str, list[str]], name: str, default: str = "") -> str:
    values = query.get(name)
    return values[0] if values else default


def answer(
    captures: Iterable[Capture],
    query: Mapping[str, list[str]],
    *,
    blocked_hosts: Collection[str] = (),
    bad_rows: Mapping[str, str] | None = None,
    max_rows: int = 150_000,
) -> Reply:
    """The CDX server's answer to `query` (parsed once, as parse_qs gives it) over `captures`."""
    url = _first(query, "url")
    if not url:
        return Reply.text("url parameter is required\n", 400)  # HttpCDXWriter.printError
    url, match_type = _lookup(url, _first(query, "matchType", "exact"))
    if match_type not in ("exact", "prefix", "host", "domain"):
        return Reply.text(f"Sorry, matchType={match_type} is not supported by this server\n", 400)
    if _blocked(url, blocked_hosts):
        # Recorded for text output only; JSON is given the same answer, unconfirmed.
        return Reply(
            403, (_BLOCKED + "\n").encode(), "text/plain;charset=UTF-8", {"X-Archive-Wayback-Runtime-Error": _BLOCKED}
        )
    try:
        keep = _filters(query.get("filter", []))
    except re.error as exc:
        return Reply.text(f"Invalid filter: {exc}\n", 400)
    rows = _selected(captures, query, _in_range(url, match_type), keep, bad_rows or {})
    try:
        limit = int(_first(query, "limit", "0") or 0)
    except ValueError:
        return Reply.text("limit must be a number\n", 400)
    rows, reached = _limited(rows, limit, max_rows)
    key = None
    if _first(query, "showResumeKey") == "true" and reached and rows:
        # Printed only when the limit (or the server's max) was reached (CDXServer line ~631),
        # so the last page may come back empty.
        key = resume_key(rows[-1][0]["urlkey"], rows[-1][0]["timestamp"])
    return _written(rows, query, key)


def _lookup(url: str, match_type: str) -> tuple[str, str]:
    """The URL looked up and the match type: CDXServer.getCdx makes `…/*` a prefix lookup and
    `*.host` a domain one, whatever `matchType` says."""
    if url.endswith("*"):
        return url.rstrip("*"), "prefix"
    if url.startswith("*."):
        return url[2:], "domain"
    return url, match_type


def _selected(
    captures: Iterable[Capture],
    query: Mapping[str, list[str]],
    covers: Callable[[str], bool],
    keep: Callable[[dict[str, str]], bool],
    bad_rows: Mapping[str, str],
) -> list[_Row]:
    """The rows whose urlkey `covers` takes, in (urlkey, timestamp) order, within `from` and `to`,
    after `resumeKey`, kept by the filters, then collapsed."""
    resolve = _first(query, "resolveRevisits") == "true"
    rows = [(c.row(resolve), False) for c in captures if covers(c.urlkey)]
    rows += _bad_rows(bad_rows, covers, rows)
    rows.sort(key=lambda r: (r[0]["urlkey"], r[0]["timestamp"]))
    start, end = _first(query, "from"), _first(query, "to")
    if start:
        rows = [r for r in rows if r[0]["timestamp"] >= start.ljust(14, "0")]
    if end:
        rows = [r for r in rows if r[0]["timestamp"] <= end.ljust(14, "9")]
    resume = _first(query, "resumeKey")
    if resume:
        # The value arrives URL-encoded once more than the key printed; the server decodes it
        # again (CDXServer, line ~403). A key sorts after every row it has passed.
        after = unquote_plus(resume)
        rows = [r for r in rows if f"{r[0]['urlkey']} {r[0]['timestamp']}" >= after]
    rows = [r for r in rows if keep(r[0])]
    for spec in query.get("collapse", []):
        rows = _collapse(rows, spec)
    return rows


def _limited(rows: list[_Row], limit: int, max_rows: int) -> tuple[list[_Row], bool]:
    """The rows `limit` gives (0: all, up to the server's max), and whether that limit was reached."""
    if limit < 0:  # LastNLineProcessor: the last N of the key-ordered stream
        return rows[max(limit, -max_rows) :], False
    cap = min(limit, max_rows) if limit else max_rows
    return rows[:cap], len(rows) >= cap


def _written(rows: list[_Row], query: Mapping[str, list[str]], key: str | None) -> Reply:
    """The rows' fields (`fl`, else all) as JSON or as text, the resume key after them."""
    names = [n for n in _first(query, "fl").split(",") if n] or list(FIELDS)
    table = []
    for row, short in rows:
        cells = [row.get(name, "-") for name in names]
        table.append(cells[:-1] if short and len(cells) > 1 else cells)
    if _first(query, "output") == "json":
        if not table:
            return Reply(200, b"[]\n")
        lines = [json.dumps(names), *(json.dumps(cells) for cells in table)]
        if key is not None:
            lines += ["[]", json.dumps([key])]
        return Reply(200, ("[" + ",\n".join(lines) + "]\n").encode())  # JsonWriter's layout
    text = "".join(" ".join(cells) + "\n" for cells in table)
    if key is not None:
        text += "\n" + key + "\n"  # PlainTextWriter: a blank line, then the key
    return Reply.text(text)
