"""A link into the Wayback Machine's playback, parsed once: `<base>/web/<stamp><flags>/<original>`.

    https://web.archive.org/web/20240102030405/https://example.org/x
    https://web.archive.org/web/20240102030405id_/https://example.org/x    (the original bytes)
    http://127.0.0.1:8123/web/2024/https://example.org/x                  (a stand-in's, a short stamp)
    /web/20240102030405/https://example.org/x                              (a path, no base)

The link is cut at its first `/web/`, so an original that holds `/web/` itself stays whole, and
nothing in it is decoded or normalised: `str()` gives the link back exactly as it was written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["ArchivedUrl"]

# After `/web/`: a timestamp (at most 14 digits: YYYYMMDDhhmmss), the playback's flags (`id_`,
# `if_`, `im_`, ...), then `/` and the original URL.
_AFTER_WEB = re.compile(r"(?P<stamp>[0-9]{1,14})(?P<flags>[a-z_]*)/(?P<original>.*)", re.DOTALL)
# A shorter stamp names the start of its period: the month and the day 01, the rest 0.
_PADDING = "00000101000000"


@dataclass(frozen=True)
class ArchivedUrl:
    """A capture's link: where the archive is, when the capture was made, how it is played back, of what."""

    base: str  # the archive's scheme and host (`https://web.archive.org`, a stand-in's); "" for a bare path
    stamp: str  # the capture's timestamp, 1 to 14 digits; shorter, the archive plays the capture nearest it
    flags: str  # how playback serves it (`id_`: the original bytes, unrewritten); "" for the page as archived
    original: str  # the URL captured, exactly as written in the link (its query, its percent-escapes)

    @classmethod
    def parse(cls, link: str) -> ArchivedUrl | None:
        """The parts of `<base>/web/<stamp><flags>/<original>`; None for a link of another shape
        (no `/web/`, no digits after it, a stamp longer than 14 digits, no `/` after the flags)."""
        base, web, rest = link.partition("/web/")
        match = _AFTER_WEB.fullmatch(rest) if web else None
        if match is None:
            return None
        return cls(base, match["stamp"], match["flags"], match["original"])

    @property
    def path(self) -> str:
        """The link without its base: what is asked of the archive it is played back from."""
        return f"/web/{self.stamp}{self.flags}/{self.original}"

    @property
    def captured_at(self) -> datetime:
        """The moment the stamp names, in UTC (a shorter stamp: its period's start, `2024` is
        2024-01-01 00:00:00). Raises ValueError for a stamp that names no moment (a month of 00)."""
        padded = self.stamp + _PADDING[len(self.stamp) :]
        return datetime.strptime(padded, "%Y%m%d%H%M%S").replace(tzinfo=UTC)

    def __str__(self) -> str:
        return self.base + self.path
