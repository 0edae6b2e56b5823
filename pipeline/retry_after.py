"""The `Retry-After` header, pure: one reading for the fetcher and the archive client.

RFC 9110, 10.2.3: the value is either a number of seconds or an HTTP-date. A date in the
past means "now"; anything else unreadable means the header is not there.
"""

from __future__ import annotations

import email.utils
import time
from datetime import UTC

__all__ = ["retry_after_seconds"]


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait that `value` asks for; None when there is no readable value.

    `now` (seconds since the epoch) is the moment an HTTP-date is measured from.
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": no zone said; HTTP-dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
