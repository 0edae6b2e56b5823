"""One request to the archive, as `WaybackClient.call` makes it (and the index's reader asks it to)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.wayback.limits import RateLimiter

__all__ = ["ArchiveRequest"]


@dataclass(frozen=True)
class ArchiveRequest:
    """One request: what it counts as, the rate it waits its turn of, and what is sent. The keys are
    never in it: `auth` says only that the call sends them, in the header the client builds."""

    kind: str  # what it counts as in the client's `requests`: save, status, user, cdx, web
    method: str
    path: str
    limiter: RateLimiter | None = None  # the rate it waits for a slot of; None: none (playback)
    auth: bool = False
    params: Sequence[tuple[str, str]] = ()
    data: Mapping[str, str] | None = None
    accept: str = "application/json"
