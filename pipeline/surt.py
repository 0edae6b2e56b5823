"""SURT keys, pure: how the Wayback Machine's index (CDX) names a URL.

The index's `urlkey` is a Sort-friendly URI Reordering Transform of the URL after the
archive's canonicalisation: `https://www.Example.com:443/Path/?b=2&a=1` is
`com,example)/path?a=1&b=2`. The scheme, a leading `www` (with digits), a default port, a
fragment, case and query order are all ignored, so two spellings of one page share one
key, and an exact lookup compares keys, not URLs. A prefix key keeps a trailing slash, so
that the folder `/docs/` does not also match `/docs-old/`.

Written here rather than taken from the `surt` package: its last release is from 2018,
and its regular expressions fail to compile under warnings-as-errors. The rules follow the
archive's own (iipc/webarchive-commons: IAURLCanonicalizer, UrlSurtRangeComputer) for the
http(s) URLs a library of postmortems cites.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote, unquote, urlsplit

__all__ = ["prefix_range", "surt_key"]

_WWW = re.compile(r"^www\d*\.")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Session ids servers put in paths and queries; the archive drops them from keys.
_PATH_SESSION = re.compile(r";jsessionid=[0-9a-z]{32}$", re.IGNORECASE)
_QUERY_SESSION = re.compile(r"^(jsessionid|phpsessid|sid|aspsessionid[a-z]{8})=[0-9a-z]{16,32}$", re.IGNORECASE)
# Bytes kept as they are in a key's path and query; everything else is %-escaped (lower-cased after).
_SAFE = "!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"


def _unescape(text: str) -> str:
    """Percent-unescaped until nothing changes (the archive unescapes repeatedly)."""
    while True:
        once = unquote(text)
        if once == text:
            return text
        text = once


def _host(host: str) -> str:
    host = _unescape(host).strip(".").lower()
    host = re.sub(r"\.{2,}", ".", host)
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        pass  # not a name IDNA can spell: kept as written
    return _WWW.sub("", host)


def _path(path: str, *, keep_slash: bool) -> str:
    path = _unescape(path) or "/"
    trailing = path.endswith("/")
    path = posixpath.normpath(path.replace("//", "/"))
    path = "/" + path.lstrip("/") if path != "." else "/"
    if trailing and path != "/" and keep_slash:
        path += "/"
    path = _PATH_SESSION.sub("", path)
    return quote(path, safe=_SAFE).lower()


def _query(query: str) -> str:
    pairs = [p for p in query.split("&") if p and not _QUERY_SESSION.match(_unescape(p))]
    escaped = [quote(_unescape(p), safe=_SAFE).lower() for p in pairs]
    return "&".join(sorted(escaped))


def surt_key(url: str, *, prefix: bool = False) -> str:
    """The index's key for `url`; with `prefix`, the key of a folder to look under (its slash kept)."""
    text = re.sub(r"[\t\r\n]", "", url.strip())
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    host = _host(parts.hostname or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    labels = ",".join(reversed(host.split("."))) if host and not host.replace(".", "").isdigit() else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        labels += f":{port}"
    key = f"{labels})" + _path(parts.path, keep_slash=prefix)
    query = _query(parts.query)
    return key + ("?" + query if query else "")


def prefix_range(url: str) -> tuple[str, str]:
    """The keys a prefix lookup of `url` covers: from its key up to, not including, the key with
    its last character raised by one (how the index computes a prefix range)."""
    key = surt_key(url, prefix=True)
    return key, key[:-1] + chr(ord(key[-1]) + 1)
