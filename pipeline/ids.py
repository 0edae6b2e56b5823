"""Record ids, pure: canonical URLs, draft ids derived from them, case numbers.

A draft id is stable for a source: the same canonical URL always gives the same id,
so a re-crawl updates its draft instead of making another. The id is readable (host
and the end of the path) and unique (a hash of the whole canonical URL).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import string
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from pipeline.errors import InvalidId
from pipeline.models import CASE_ID_PATTERN, DRAFT_ID_MAX, DRAFT_ID_PATTERN

__all__ = [
    "GITHUB_HOSTS",
    "archived_original",
    "candidate_id",
    "canonical_url",
    "case_base_url",
    "case_id",
    "case_number",
    "check_case_id",
    "check_draft_id",
    "draft_id_for",
    "is_case_id",
    "part_draft_id",
    "same_page_key",
    "slugify",
]

# Query parameters that only track where a click came from; they never change the page.
_TRACKING = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$", re.IGNORECASE)
# GitHub treats owner and repository names case-insensitively.
GITHUB_HOSTS = ("github.com", "raw.githubusercontent.com", "gist.github.com")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_CASE_ID = re.compile(CASE_ID_PATTERN)
_DRAFT_ID = re.compile(DRAFT_ID_PATTERN)


def _normalise_escapes(text: str, safe: str) -> str:
    """Decode escapes of unreserved characters only (RFC 3986, 6.2.2.2) and upper-case the rest.

    `%2F` stays `%2F`: decoding it would turn one path segment into two.
    """

    def fix(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return quote(_ESCAPE.sub(fix, text), safe=safe + "%")


def _ipv4_part(part: str) -> int | None:
    """One part of an IPv4 host as inet_aton reads it: `0x` hexadecimal, leading-zero octal, or decimal."""
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16) if re.fullmatch(r"[0-9a-fA-F]*", part[2:]) else None
    if len(part) > 1 and part.startswith("0"):
        return int(part[1:], 8) if re.fullmatch(r"[0-7]+", part[1:]) else None
    return int(part) if part.isascii() and part.isdigit() else None


def _ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address of a host written as IPv4 in any spelling a resolver or a browser accepts, or None.

    The WHATWG URL Standard's IPv4 parser (as inet_aton): one to four parts, each decimal,
    octal (`0177`) or hexadecimal (`0x7f`), the last filling the bytes left, so `2130706433`,
    `0177.0.0.1`, `0x7f.0.0.1` and `127.1` are all 127.0.0.1.
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if not 1 <= len(parts) <= 4 or "" in parts:
        return None
    numbers = [_ipv4_part(part) for part in parts]
    if any(n is None for n in numbers):
        return None
    *head, last = (n for n in numbers if n is not None)
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    return ipaddress.IPv4Address(sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last)


def address_host(host: str) -> str | None:
    """The one written form of a host that is an IP address, however it was spelt; None for a name.

    IPv4 as a dotted quad (see `_ipv4`); IPv6 in brackets, compressed (RFC 5952), or as the
    IPv4 address it maps (`[::ffff:127.0.0.1]` is 127.0.0.1, the same host).
    """
    host = host.lower().strip("[]")
    if ":" in host:
        try:
            ip = ipaddress.IPv6Address(host)
        except ValueError:
            return None
        return str(ip.ipv4_mapped) if ip.ipv4_mapped else f"[{ip.compressed}]"
    address = _ipv4(host)
    return str(address) if address is not None else None


def _remove_dot_segments(path: str) -> str:
    """`.` and `..` segments resolved (RFC 3986, 5.2.4); `..` never climbs above the root."""
    segments = path.split("/")
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(resolved) > 1:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")  # `/a/.` and `/a/b/..` name the folder: `/a/`
    return "/".join(resolved)


def canonical_url(url: str) -> str:
    """The form of `url` used to recognise the same source twice.

    Lower-cases scheme and host (and a GitHub owner and repository), writes an IP address
    host in one form (`address_host`), drops default ports, fragments and tracking
    parameters, resolves dot segments of the path (RFC 3986, 6.2.2.3), sorts the query,
    and normalises percent-escapes. The rest of the path's case, its empty segments and its
    trailing slash are kept: servers may treat them as different pages (`/web/2020/https://x`
    is not `/web/2020/https:/x`). Raises ValueError for a bad port.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    port = parts.port  # ValueError for a port that is not a number in range
    host = address_host(host) or (f"[{host}]" if ":" in host else host)
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    # Escapes first: `%2E%2E` is `..` (RFC 3986, 6.2.2.2 before 6.2.2.3).
    path = _normalise_escapes(parts.path, safe="/:@!$&'()*+,;=")
    path = (_remove_dot_segments(path) if path.startswith("/") else path) or "/"
    if host in GITHUB_HOSTS:
        segments = path.split("/")
        path = "/".join([*(s.lower() for s in segments[:3]), *segments[3:]])
    params = [p for p in parts.query.split("&") if p and not _TRACKING.match(unquote(p.partition("=")[0]))]
    query = "&".join(sorted(_normalise_escapes(p, safe="/:@!$'()*+,;=?") for p in params))
    return urlunsplit((scheme, netloc, path, query, ""))


# https://web.archive.org/web/20220621124002/https://example.com/post (with id_, if_ ... after the stamp)
_ARCHIVED = re.compile(r"^https?://web\.archive\.org/web/\d{1,14}[a-z_]*/(https?://.+)$", re.IGNORECASE)
_PAGE_SUFFIX = re.compile(r"(/index)?\.(html?|php|aspx?)$|/+$", re.IGNORECASE)


def archived_original(url: str) -> str | None:
    """The page a Wayback Machine capture link is of (lists link captures of dead pages); else None."""
    match = _ARCHIVED.match(url.strip())
    return match.group(1) if match else None


def same_page_key(url: str) -> str:
    """A looser key than `canonical_url`, for telling whether a feed proposes a page already known:
    a capture link is its original's, and the scheme, a leading `www.`, a trailing slash and an
    `.html` (or `/index.html`) ending are ignored, the spellings one post goes by on a blog that
    moved (`/2023/05/01/post.html` kept as an alias of `/2023/05/01/post/`). Raises ValueError for
    a bad port."""
    canonical = canonical_url(archived_original(url) or url)
    parts = urlsplit(canonical)
    host = parts.netloc.removeprefix("www.")
    path = _PAGE_SUFFIX.sub("", parts.path)
    return f"{host}{path}" + (f"?{parts.query}" if parts.query else "")


def candidate_id(url: str) -> str:
    """The id of the candidate a feed proposes for `url`: one per page, whatever its spelling."""
    return "c-" + hashlib.sha256(same_page_key(url).encode("utf-8")).hexdigest()[:10]


def slugify(text: str, limit: int = 80) -> str:
    """Lower-case letters and digits joined by single dashes, at most `limit` long ("" for none)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-")


def draft_id_for(url: str) -> str:
    """The draft id of a source URL: `<site>-<last path part>-<hash>`, at most 70 characters."""
    canonical = canonical_url(url)
    parts = urlsplit(canonical)
    segments = [s for s in unquote(parts.path).split("/") if s]
    hostname = (parts.hostname or "").removeprefix("www.")
    # On GitHub the owner says more than the host does.
    site = segments[0] if hostname in GITHUB_HOSTS and segments else hostname
    host = slugify(site, 24)
    tail = slugify(re.sub(r"\.(md|html?|pdf|txt|rst)$", "", segments[-1]) if segments else "", 36)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:8]
    return "-".join(p for p in (host, tail, digest) if p)


def part_draft_id(draft_id: str, number: int) -> str:
    """The id of the draft of incident `number` (1, 2, ...) of the document drafted as `draft_id`."""
    return f"{draft_id}-part-{number}"


def check_draft_id(value: str) -> str:
    """Raise InvalidId unless `value` can name a draft file (no separators, no dots, no escape)."""
    if not _DRAFT_ID.fullmatch(value) or len(value) > DRAFT_ID_MAX:
        raise InvalidId(
            f"invalid draft id {value!r}: expected lower-case letters, digits and single dashes", value=value
        )
    return value


def is_case_id(value: str) -> bool:
    """Whether `value` is a case's id (IL-0428) rather than a draft's: the one test wherever either may come."""
    return _CASE_ID.fullmatch(value) is not None


def check_case_id(value: str) -> str:
    if not _CASE_ID.fullmatch(value):
        raise InvalidId(f"invalid case id {value!r}: expected PREFIX-NNNN, such as IL-0428", value=value)
    return value


def case_number(value: str, prefix: str) -> int | None:
    """The number of a case id with this prefix (`IL-0428` → 428), or None for another prefix."""
    head, _, number = value.rpartition("-")
    if head != prefix or not number.isdigit():
        return None
    return int(number)


def case_id(prefix: str, number: int, digits: int = 4) -> str:
    return check_case_id(f"{prefix}-{number:0{digits}d}")


def case_base_url(base_url: str) -> str:
    """The site's base without a trailing slash, and without the `/cases` older settings ended in
    (`https://host/app/cases/` was the prefix put before an id; the site's base is `https://host/app`)."""
    base = base_url.rstrip("/")
    return base.removesuffix("/cases")
