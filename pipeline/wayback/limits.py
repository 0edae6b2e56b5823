"""The archive's limits, kept by this process: one rate limiter per kind of call, and one breaker.

The service's figures (the Save Page Now 2 document, revisions of 2026; edgi's client):
an account sustains about 7 captures a minute; the index (CDX) allows 30 requests a minute
and its maintainers ask clients to stay a fifth under it; status polls have a limit of
their own. Over a limit the service answers 429 without Retry-After, and a client that
keeps going for over a minute is refused at the firewall for an hour, doubling. So the
limiters space calls evenly (no burst, so no window of the service's ever sees more), and
the breaker pauses every call of the process after a 429 or a refused connection.
"""

from __future__ import annotations

import threading
import time

__all__ = ["Breaker", "Limits", "RateLimiter", "limits_for"]


# Calls leave evenly spaced but arrive with the network's jitter: at exactly the service's rate, one
# arriving late and the next on time put one call too many in its window (a 429 in 1 of 12 calls
# in the test at 5 a second). 8 % under the rate leaves 80 ms of jitter at 5 a second, 0.7 s at 7 a minute.
_MARGIN = 1.08


class RateLimiter:
    """At most `per_minute` calls a minute, evenly spaced, a little under the rate (`margin`). Thread-safe:
    tasks run in threads, each with its own event loop."""

    def __init__(self, per_minute: float, margin: float = _MARGIN) -> None:
        self.interval = 60.0 / per_minute * margin
        self._next = 0.0
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next slot; the seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            return start - now


class Breaker:
    """After a 429 or a refused connection every caller pauses; the pause doubles while they go on
    (up to `max_backoff_s`), and the trips are forgotten after a call that succeeds."""

    def __init__(self, backoff_s: float, max_backoff_s: float = 900.0) -> None:
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.trips = 0
        self._open_until = 0.0
        self._lock = threading.Lock()

    def trip(self, retry_after: float | None = None) -> float:
        with self._lock:
            pause = retry_after if retry_after is not None else min(self.backoff_s * 2**self.trips, self.max_backoff_s)
            self.trips += 1
            self._open_until = max(self._open_until, time.monotonic() + pause)
            return pause

    def close(self) -> None:
        with self._lock:
            self.trips = 0

    def wait(self) -> float:
        with self._lock:
            return max(0.0, self._open_until - time.monotonic())


class Limits:
    """What every call of this process to one archive shares."""

    def __init__(self, captures: float, polls: float, cdx: float, backoff_s: float) -> None:
        self.captures = RateLimiter(captures)
        self.polls = RateLimiter(polls)
        self.cdx = RateLimiter(cdx)
        self.breaker = Breaker(backoff_s)


_lock = threading.Lock()
_shared: dict[tuple[str, float, float, float, float], Limits] = {}


def limits_for(url: str, captures: float, polls: float, cdx: float, backoff_s: float) -> Limits:
    """The process's limits for one archive service (and one set of rates)."""
    key = (url, captures, polls, cdx, backoff_s)
    with _lock:
        if key not in _shared:
            _shared[key] = Limits(captures, polls, cdx, backoff_s)
        return _shared[key]
