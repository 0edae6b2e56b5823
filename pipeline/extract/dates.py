"""Dates written in text and URLs, pure. Formats seen in postmortems, nothing fuzzy.

Hand-written rather than dateparser: dateparser guesses a date from almost any
number, and a wrong date on a case is worse than none. Only unambiguous forms are read:
2020-10-06, 2020/10/06 in a URL path, "October 6, 2020", "6 October 2020", "Oct 6 2020".
"""

from __future__ import annotations

import re
from datetime import date

__all__ = ["DateFound", "date_in_url", "dates_in", "machine_date"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_FORMS = [
    re.compile(rf"\b{_YEAR}-(?P<mnum>[01]\d)-(?P<day>[0-3]\d)\b"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
_URL_DATE = re.compile(r"/((?:19|20)\d{2})[/-]([01]\d)[/-]([0-3]\d)(?:[/_-]|$)")
# A timestamp as metadata writes it: 2020-10-06T09:00:00Z, 2020-10-06 09:00, 2020/10/06.
_MACHINE_DATE = re.compile(r"\s*((?:19|20)\d{2})[-/.]([01]?\d)[-/.]([0-3]?\d)(?!\d)")


class DateFound(str):
    """An ISO date string that remembers where in the text it stood."""

    position: int

    def __new__(cls, value: str, position: int) -> DateFound:
        found = super().__new__(cls, value)
        found.position = position
        return found


def _iso(year: str, month: int, day: str) -> str | None:
    try:
        return date(int(year), month, int(day)).isoformat()
    except ValueError:
        return None


def dates_in(text: str) -> list[DateFound]:
    """Every unambiguous date in `text`, in the order they appear."""
    found: list[DateFound] = []
    for form in _FORMS:
        for match in form.finditer(text):
            groups = match.groupdict()
            month = int(groups["mnum"]) if groups.get("mnum") else _MONTHS[groups["month"].lower()]
            value = _iso(groups["year"], month, groups["day"])
            if value:
                found.append(DateFound(value, match.start()))
    return sorted(found, key=lambda d: d.position)


def date_in_url(url: str) -> str | None:
    """A date in a URL's path (/2020/02/26/ or /2020-02-26-...), as blogs and reports write it."""
    match = _URL_DATE.search(url)
    return _iso(match.group(1), int(match.group(2)), match.group(3)) if match else None


def machine_date(value: str | None) -> str | None:
    """The day of a date in metadata (a timestamp, or one of the written forms above), as written:
    a timestamp's own day, not converted to UTC, since that is the day its page shows."""
    if not value:
        return None
    match = _MACHINE_DATE.match(value)
    if match:
        return _iso(match.group(1), int(match.group(2)), match.group(3))
    found = dates_in(value)
    return str(found[0]) if found else None
