"""How long until an incident was detected and resolved, from what its document states. Pure.

    durations_in(sections) -> Durations

Order of trust, because a wrong number is worse than none:

1. a stats line: "Time to detection: 54 minutes", "TTR = 2h". A value of "?", "n/a" or
   "unknown" means the author does not know, and then nothing is drafted for that field
   from anywhere else;
2. a stated sentence: "the site was down for about 13 minutes", "resolved after 3 hours";
3. two stated ends: "between 12:20 and 14:40 UTC" in a sentence about the incident;
4. the timeline's times: from the entry where the problem began to the first alert,
   page or report (detection) and to the first "resolved / mitigated / restored"
   (resolution), across midnight and dates. Both ends must be in a stated time zone:
   a difference between two times of no known zone is not drafted. When the prose
   says when the problem began ("the errors started at 13:40 UTC"), that is the start,
   and an alert of the timeline at 14:02 is the detection, not the start.

Each duration keeps its basis: the stated line or sentence, or the two ends it was
measured between. A sentence that plans, supposes or negates ("we will be down for two
hours", "would have lasted", "ten days without an incident") states no duration.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from pipeline.extract.dates import dates_in
from pipeline.extract.lexicon import (
    RESOLVE as _RESOLVE,
)
from pipeline.models import Section, SectionField

__all__ = [
    "Durations",
    "TimelineEntry",
    "durations_in",
    "parse_duration",
    "reports_problem",
    "starts_problem",
    "timeline_entries",
]

# ---------------------------------------------------------------- a duration written out

# Hand-written: pytimeparse reads neither "1 hour and 31 minutes" nor "about 13 minutes".
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
}
_NUM = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?:seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)"
_DURATION = (
    rf"(?<![\w.:])(?:(?P<compact>\d+h\s*\d+m(?:in)?)|(?P<n1>{_NUM})\s*(?P<u1>{_UNIT})\b"
    rf"(?:,?\s*(?:and\s+)?(?P<n2>\d+)\s*(?P<u2>{_UNIT})\b)?)"
)
_DURATION_RE = re.compile(_DURATION, re.IGNORECASE)
_COMPACT = re.compile(r"(\d+)h\s*(\d+)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _number(text: str) -> float:
    return float(text) if text[0].isdigit() else float(_NUMBER_WORDS[text.lower()])


def _unit_seconds(unit: str) -> int:
    unit = unit.lower()
    return _UNIT_SECONDS["m" if unit.startswith("mi") else unit[0]]


def parse_duration(text: str) -> timedelta | None:
    """The first duration written in `text`: "13 minutes", "1h50m", "1 hour and 31 minutes", "an hour"."""
    match = _DURATION_RE.search(text)
    if not match:
        return None
    if match.group("compact"):
        compact = _COMPACT.match(match.group("compact"))
        assert compact is not None  # the alternative matched this very form
        return timedelta(hours=int(compact.group(1)), minutes=int(compact.group(2)))
    seconds = _number(match.group("n1")) * _unit_seconds(match.group("u1"))
    if match.group("n2"):
        seconds += int(match.group("n2")) * _unit_seconds(match.group("u2"))
    return timedelta(seconds=seconds)


# ---------------------------------------------------------------- what the text states

_STATS = re.compile(
    r"^(?:[-*]\s*)?\**(?P<what>time to (?:detection|detect|discovery)|mttd|ttd"
    r"|time to (?:recovery|recover|resolution|resolve|restore|mitigation|mitigate|repair)|mttr|ttr|ttm)\**"
    r"\s*[:=]\**\s*(?P<value>.*)$",
    re.IGNORECASE,
)
_UNKNOWN_VALUE = re.compile(r"^(?:\?+|n/?a|unknown|tbd|-+|—)?\s*$", re.IGNORECASE)
# A stated total must be about the incident, a stated detection about noticing it: "the
# rollback took about one minute" is neither.
_INCIDENT_WORDS = re.compile(
    r"\b(incident|outage|downtime|unusable|down|unavailable|broken|experienced|affected|disrupt\w*|impact\w*)\b",
    re.IGNORECASE,
)
# Plans, suppositions and negations state no duration of what happened.
_NOT_WHAT_HAPPENED = re.compile(
    r"\b(will|would|should|could|might|may(?!\s+\d)|expect\w*|plan\w*|scheduled|maintenance window|in the future"
    r"|without (?:an?y? )?(?:incident|outage|downtime|issues?)|no (?:incident|outage|downtime)s?)\b",
    re.IGNORECASE,
)
_DETECT_WORDS = re.compile(r"\b(notified|reported|alerted|paged|noticed|detected|pinged)\b", re.IGNORECASE)
_ABOUT = r"(?:about|around|approximately|roughly|nearly|almost|~)?\s*"
# A heading may state a length only as an aside: "June 1 09:40 UTC (lasting 48 minutes)".
_HEADING_LASTING = re.compile(rf"\(\s*(?:lasting|lasted|duration:?)\s+{_ABOUT}(?P<d>{_DURATION})\s*\)", re.I)
_SENTENCE_RESOLVED = [
    re.compile(rf"\b(?:lasted|lasting|for|an outage of)\s+{_ABOUT}(?P<d>{_DURATION})", re.I),
    # "took" only of the incident itself: "the fix took 40 minutes to roll out" is an action's length.
    re.compile(
        rf"\b(?:incident|outage|downtime|recovery|resolution)\s+(?:\w+\s+){{0,3}}took\s+{_ABOUT}(?P<d>{_DURATION})",
        re.I,
    ),
    re.compile(rf"\bIt took\s+(?P<d>{_DURATION})\s+from the start of the (?:incident|outage)", re.I),
    re.compile(rf"\b(?:resolved|restored|mitigated|recovered)\s+(?:after|within)\s+{_ABOUT}(?P<d>{_DURATION})", re.I),
]
_SENTENCE_DETECTED = [
    re.compile(
        rf"\b{_ABOUT}(?P<d>{_DURATION})\s+after\s+(?:the\s+)?"
        r"(?:deployment|deploy|change|release|start|incident began|problem began)",
        re.I,
    ),
    re.compile(rf"\b(?:detected|noticed|alerted)\s+(?:after|within)\s+{_ABOUT}(?P<d>{_DURATION})", re.I),
]
# Sentence ends: after . ! ? before a capital or a digit, but not after an abbreviation or
# an ordinal day before its month ("On 17. November").
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(`\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|v|cf|approx|incl|no|fig|mr|mrs|dr|st)\.$", re.IGNORECASE)
_ORDINAL_DAY = re.compile(r"\b\d{1,2}\.$")
_MONTH_START = re.compile(r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.IGNORECASE)


def _sentences(text: str) -> Iterator[str]:
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rstrip("\"')]")
        if _ABBREVIATION.search(before) or (_ORDINAL_DAY.search(before) and _MONTH_START.match(text[match.end() :])):
            continue
        yield text[start : match.start()]
        start = match.end()
    if text[start:].strip():
        yield text[start:].rstrip()


@dataclass(frozen=True)
class _Block:
    """A heading or one body block of a section, as the section's text renders it."""

    text: str
    heading: bool
    kind: str  # "para", "item", "row"
    field: SectionField | None


def _blocks(sections: Sequence[Section]) -> Iterator[_Block]:
    """The blocks back from the sections: list items and table rows line by line, paragraphs apart."""
    for section in sections:
        if section.heading:
            yield _Block(section.heading, True, "para", section.field)
        for chunk in re.split(r"\n\s*\n", section.text):
            lines = [line for line in chunk.splitlines() if line.strip()]
            if lines and all(line.startswith("- ") for line in lines):
                yield from (_Block(line[2:], False, "item", section.field) for line in lines)
            elif len(lines) > 1 and all(" | " in line for line in lines):
                yield from (_Block(line, False, "row", section.field) for line in lines)
            elif chunk.strip():
                yield _Block(chunk.strip(), False, "para", section.field)


@dataclass
class _Stated:
    values: dict[str, timedelta] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)
    basis: dict[str, str] = field(default_factory=dict)


def _stated_lines(blocks: list[_Block], out: _Stated) -> None:
    """Stats lines: "Time to detection: 54 minutes"; "?" marks the value unknown."""
    for block in blocks:
        for line in block.text.splitlines():
            match = _STATS.match(line.strip())
            if not match:
                continue
            what = match.group("what").lower()
            name = "detected" if ("detect" in what or "discovery" in what or what in ("ttd", "mttd")) else "resolved"
            value = match.group("value").strip().strip("*").strip()
            if _UNKNOWN_VALUE.match(value):
                out.unknown.add(name)
            elif name not in out.values and (duration := parse_duration(value)) is not None:
                out.values[name] = duration
                out.basis[name] = line.strip()


def _sentence_says(name: str, sentence: str) -> timedelta | None:
    """The duration a sentence states for `name` ("detected" or "resolved"), if it states one of
    what happened: about the incident (or its noticing), neither planned, supposed nor negated."""
    if _NOT_WHAT_HAPPENED.search(sentence):
        return None
    cue, patterns = (_INCIDENT_WORDS, _SENTENCE_RESOLVED) if name == "resolved" else (_DETECT_WORDS, _SENTENCE_DETECTED)
    if cue.search(sentence):
        for pattern in patterns:
            if (m := pattern.search(sentence)) and (duration := parse_duration(m.group("d"))) is not None:
                return duration
    if name == "resolved" and (_INCIDENT_WORDS.search(sentence) or _START.search(sentence)):
        return _between(sentence)  # the problem's two ends: "between 12:20 and 14:40 UTC, requests failed"
    return None


def _stated(blocks: list[_Block]) -> _Stated:
    out = _Stated()
    _stated_lines(blocks, out)
    for block in blocks:
        if block.kind == "row":
            continue
        if block.heading:
            lasting = _HEADING_LASTING.search(block.text)
            if lasting and "resolved" not in out.values and "resolved" not in out.unknown:
                if (duration := parse_duration(lasting.group("d"))) is not None:
                    out.values["resolved"] = duration
                    out.basis["resolved"] = block.text.strip()
            continue
        for sentence in _sentences(block.text):
            for name in ("resolved", "detected"):
                if name in out.values or name in out.unknown:
                    continue
                if (duration := _sentence_says(name, sentence)) is not None:
                    out.values[name] = duration
                    out.basis[name] = sentence.strip()
    return out


# ---------------------------------------------------------------- timelines

# Minutes east of UTC. Abbreviations only where they are unambiguous (not IST, not CST).
_ZONES = {
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "cet": 60,
    "cest": 120,
    "bst": 60,
    "eet": 120,
    "eest": 180,
    "pst": -480,
    "pdt": -420,
    "mst": -420,
    "mdt": -360,
    "est": -300,
    "edt": -240,
    "jst": 540,
    "kst": 540,
}
_ZONE = r"(?:" + "|".join(_ZONES) + r")"
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\.?\s+{_MONTHS},?\s+\d{{4}})"
)
# An entry's stamp: an optional date, H:MM, am/pm, a zone, a range's end, then a separator.
_STAMP = re.compile(
    rf"^\W{{0,3}}(?:(?P<date>{_DATE})[\sT,]*)?(?P<h>[0-2]?\d):(?P<m>[0-5]\d)(?::\d\d)?\s*(?P<ampm>am|pm)?~?\s*"
    rf"(?P<tz>{_ZONE})?\b\s*(?:[-–]\s*[0-2]?\d:[0-5]\d\s*)?(?:[-–—:|]\s*)?(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# Two stated ends in one zone: "between 12:20 and 14:40 UTC", "from 09:05 to 10:15 CET".
_CLOCK = r"[0-2]?\d:[0-5]\d\s*(?:am|pm)?"
_BETWEEN = re.compile(
    rf"\b(?:between|from)\s+(?P<a>{_CLOCK})\s*(?P<tza>{_ZONE})?\s+(?:and|to|until|till)\s+(?P<b>{_CLOCK})\s*"
    rf"(?P<tz>{_ZONE})\b",
    re.IGNORECASE,
)
# The prose saying when the problem began: "the errors started at 13:40 UTC", "beginning at 9:05 CET".
_BEGAN_AT = re.compile(
    rf"\b(?:began|begun|started|starting|beginning|commenced)\s+(?:at|around|about|approximately|on\b[^.]*?\bat)\s+"
    rf"(?P<at>{_CLOCK})\s*(?P<tz>{_ZONE})\b",
    re.IGNORECASE,
)


def _minutes(clock: str) -> int | None:
    """Minutes past midnight of "14:40" or "2:40 pm"; None for an hour past 23."""
    m = re.match(r"([0-2]?\d):([0-5]\d)\s*(am|pm)?", clock.strip(), re.IGNORECASE)
    if not m:
        return None
    hour, minute = int(m.group(1)), int(m.group(2))
    if m.group(3) and m.group(3).lower() == "pm" and hour < 12:
        hour += 12
    if m.group(3) and m.group(3).lower() == "am" and hour == 12:
        hour = 0
    return None if hour > 23 else hour * 60 + minute


def _between(sentence: str) -> timedelta | None:
    """The length between two stated ends of one day in one zone (a second zone, if written,
    must be the same); None when the end is not after the start (a day crossed unsaid)."""
    m = _BETWEEN.search(sentence)
    if not m or (m.group("tza") and m.group("tza").lower() != m.group("tz").lower()):
        return None
    start, end = _minutes(m.group("a")), _minutes(m.group("b"))
    if start is None or end is None or end <= start:
        return None
    return timedelta(minutes=end - start)


_DATE_ONLY = re.compile(rf"^\W{{0,3}}(?P<date>{_DATE})\W*$", re.IGNORECASE)
# "All times are in UTC", or a table header "Date and time in CET |".
_ZONE_NOTE = re.compile(
    rf"\b(?:times?|time zone|timezone)\b[^.]*?\b(?:in|are in|is)\s+(?P<tz>{_ZONE})\b"
    rf"|\bin (?P<tz2>{_ZONE})\b\s*(?:\||$)",
    re.IGNORECASE,
)
_DEFAULT_DATE = re.compile(
    rf"unless otherwise noted,? all events (?:happened|occurred|are) on (?P<date>{_DATE})", re.IGNORECASE
)
# The problem beginning. Not "reverted" or "removed": those are fixes.
_START = re.compile(
    r"\b(fail(?:ed|ing|s|ure)?|broke(?:n)?|breaking|down\b|outage|crash\w*|expire[sd]?|errors?|unable|could not|"
    r"cannot|deleted|unschedulable|unexpected(?:ly)?|accidental(?:ly)?|unintentional(?:ly)?|ran out|runs out|run out|"
    r"out of memory|oom\w*|degrad\w*|5\d\d\b|5xx|time[ds]? ?out|unavailable|not available|forbidden)",
    re.IGNORECASE,
)
_NOT_PRODUCTION = re.compile(r"\b(staging|sandbox|test cluster|dev environment)\b", re.IGNORECASE)
_DETECT = re.compile(
    r"\b(alerts?|alerted|paged|pinged|notif(?:ied|ies|ication)|reports?|reported|reporting|notic(?:e|ed|es|ing)|"
    r"detected|warning|spotted|discovered|witnessed|flagged)\b",
    re.IGNORECASE,
)
# Words of someone already on the problem: an entry with them is not where it began.
_RESPONDS = re.compile(
    _DETECT.pattern + r"|\b(investigat\w*|observed|saw|received|escalat\w*|on-?call|monitoring (?:showed|shows))\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(appears?|seems?|not yet|still)\b", re.IGNORECASE)


def _resolves(text: str) -> bool:
    """A resolution in a sentence that does not hedge it ("Service appears to be restored" does)."""
    return any(_RESOLVE.search(s) and not _HEDGE.search(s) for s in re.split(r"(?<=[.!?])\s+", text))


@dataclass
class _Entry:
    at: datetime  # in UTC when a zone is known
    zone: str | None
    text: str
    stamp: str  # the entry as written, for its basis
    timed: bool = True  # False: a dated heading without a time


def _day(text: str) -> date | None:
    found = dates_in(text)
    return date.fromisoformat(found[0]) if found else None


def _clock(stamp: re.Match[str]) -> tuple[int, int] | None:
    """A stamp's hour and minute on the 24-hour clock; None for an hour past 23."""
    hour, minute = int(stamp.group("h")), int(stamp.group("m"))
    if stamp.group("ampm") and stamp.group("ampm").lower() == "pm" and hour < 12:
        hour += 12
    return None if hour > 23 else (hour, minute)


def _carried_day(current: date, previous: datetime | None, clock: tuple[int, int]) -> date:
    """The day of a stamp without a date: the day carried over, or the next one when the clock
    went back past midnight since the previous entry of that day."""
    if previous is not None and clock < (previous.hour, previous.minute) and previous.date() == current:
        return current + timedelta(days=1)
    return current


def _continued(pending: _Entry | None, block: _Block) -> _Entry | None:
    """A block without a stamp: more of the body of the heading entry before it, if any, which
    it extends; a heading of its own ends that entry."""
    if block.heading:
        return None
    if pending is not None:
        pending.text += "\n\n" + block.text
        pending.stamp += "\n\n" + block.text
    return pending


def _document_zone(blocks: list[_Block]) -> str | None:
    """A zone the prose outside the timeline states for the document's times ("All times are in UTC")."""
    for block in blocks:
        if block.field != SectionField.TIMELINE and (m := _ZONE_NOTE.search(block.text)) and m.group("tz"):
            return m.group("tz").lower()
    return None


def _entries(blocks: list[_Block], zone: str | None = None) -> list[_Entry]:
    """The timeline's entries with a time, in order: dates carried over, a default date honoured,
    midnight crossed, a zone stated once (or `zone`, the document's) holding for the entries after it."""
    entries: list[_Entry] = []
    default: date | None = None
    current: date | None = None
    previous: datetime | None = None
    pending: _Entry | None = None  # a heading entry whose body follows
    for block in blocks:
        if block.field != SectionField.TIMELINE:
            continue
        text = block.text
        if (m := _DEFAULT_DATE.search(text)) is not None:
            default = _day(m.group("date"))
        if (m := _ZONE_NOTE.search(text)) is not None and not _STAMP.match(text):
            zone = (m.group("tz") or m.group("tz2")).lower()
        if block.heading and _DATE_ONLY.match(text):
            current = _day(text)
            pending = None
            if current is not None:
                pending = _Entry(datetime(current.year, current.month, current.day), None, "", text, timed=False)
                entries.append(pending)
            continue
        m = _STAMP.match(text)
        if not m:
            pending = _continued(pending, block)
            continue
        clock = _clock(m)
        if clock is None:
            continue
        hour, minute = clock
        day = _day(m.group("date")) if m.group("date") else None
        if day is not None:
            current = day
        elif default is not None:
            day = default
        elif current is not None:
            current = _carried_day(current, previous, clock)  # the entries after it are on that day too
            day = current
        if day is None:
            continue  # a time with no day to put it on
        if m.group("tz"):
            zone = m.group("tz").lower()
        local = datetime(day.year, day.month, day.day, hour, minute)
        at = local - timedelta(minutes=_ZONES[zone]) if zone in _ZONES else local
        entry = _Entry(at, zone, m.group("rest").strip(), text)
        entries.append(entry)
        previous = local
        pending = entry if block.heading else None
    return entries


def _zoned(entries: list[_Entry]) -> list[_Entry]:
    """The entries with their zone: one zone stated in the timeline holds for the entries before
    it too; no zone, or several with some entries unknown, leaves no basis (LookupError)."""
    zones = {e.zone for e in entries if e.zone}
    if not zones:
        raise LookupError("no time zone stated")
    if len(zones) > 1 and any(e.zone is None for e in entries):
        raise LookupError("mixed time zones, some unknown")
    (zone,) = zones if len(zones) == 1 else (None,)
    out = []
    for e in entries:
        if e.zone is None and zone is not None:
            e = _Entry(e.at - timedelta(minutes=_ZONES[zone]), zone, e.text, e.stamp, e.timed)
        out.append(e)
    return out


@dataclass(frozen=True)
class _StatedStart:
    minutes: int  # past midnight, in `zone`
    zone: str
    sentence: str


def _stated_start(blocks: list[_Block]) -> _StatedStart | None:
    """Where the prose outside the timeline says the problem began, at a time in a zone."""
    for block in blocks:
        if block.heading or block.field == SectionField.TIMELINE:
            continue
        for sentence in _sentences(block.text):
            m = _BEGAN_AT.search(sentence)
            if not m or _NOT_WHAT_HAPPENED.search(sentence) or _NOT_PRODUCTION.search(sentence):
                continue
            if not (_START.search(sentence) or _INCIDENT_WORDS.search(sentence)):
                continue
            minutes = _minutes(m.group("at"))
            if minutes is not None:
                return _StatedStart(minutes, m.group("tz").lower(), sentence.strip())
    return None


def _place(stated: _StatedStart, timed: list[_Entry]) -> _Entry | None:
    """The stated start put on the day of the first timeline entry it comes before (within a day)."""
    offset = timedelta(minutes=_ZONES[stated.zone])
    for e in timed:
        day = (e.at + offset).date()  # the entry's day in the stated start's zone
        at = datetime(day.year, day.month, day.day) + timedelta(minutes=stated.minutes) - offset
        if at <= e.at < at + timedelta(days=1):
            return _Entry(at, stated.zone, stated.sentence, stated.sentence)
    return None


def _timeline(
    entries: list[_Entry], stated_total: timedelta | None, stated_start: _StatedStart | None = None
) -> tuple[_Entry, _Entry | None, _Entry | None]:
    """(start, detection, resolution) entries, or an error when the start is unknown."""
    entries = _zoned(entries)
    timed = [e for e in entries if e.timed]
    start: _Entry | None = _place(stated_start, timed) if stated_start is not None else None
    if start is None and stated_total is not None:
        # The entry a stated total leads back to from a resolution is the start, cue or not.
        ends = {r.at for r in timed if _resolves(r.text)}  # a set: a long logbook stays linear
        start = next((s for s in timed if s.at + stated_total in ends), None)
    if start is None:
        first = next((e for e in entries if _START.search(e.text)), None)
        # Without a time, on staging, or already a report or a response: the problem began
        # earlier, when is unknown.
        if first is None or not first.timed or _NOT_PRODUCTION.search(first.text) or _RESPONDS.search(first.text):
            raise LookupError("no start")
        start = first
    detection = next((e for e in timed if e.at > start.at and reports_problem(e.text)), None)
    resolution = next((e for e in timed if e.at > start.at and _resolves(e.text)), None)
    return start, detection, resolution


@dataclass(frozen=True)
class TimelineEntry:
    """One timed entry of a document's timeline: when (UTC when a zone is known) and what it says."""

    at: datetime
    text: str


def timeline_entries(sections: Sequence[Section]) -> list[TimelineEntry]:
    """The timeline's entries that have a time, in the order written (for the prose fields)."""
    timeline = [s for s in sections if s.field == SectionField.TIMELINE]  # the only blocks `_entries` reads
    return [TimelineEntry(e.at, e.text) for e in _entries(list(_blocks(timeline))) if e.timed and e.text.strip()]


def reports_problem(text: str) -> bool:
    """An entry's words report the problem (an alert, a page, a user's report), not its end: the
    detection, for the time to detection and for the detection's passage alike."""
    return bool(_DETECT.search(text)) and not _resolves(text)


def starts_problem(text: str) -> bool:
    """An entry's words say a problem began (a failure, an error, an outage), not a report of one."""
    return bool(_START.search(text)) and not _DETECT.search(text) and not _NOT_PRODUCTION.search(text)


# ---------------------------------------------------------------- the durations


@dataclass(frozen=True)
class Durations:
    detected_after: timedelta | None = None
    resolved_after: timedelta | None = None
    # Per field ("detected_after", "resolved_after"): the rule that gave it and the quotes it came
    # from (a stated line or sentence; or the start entry and the detection or resolution entry).
    rule: dict[str, str] = field(default_factory=dict)
    basis: dict[str, tuple[str, ...]] = field(default_factory=dict)


def durations_in(sections: Sequence[Section]) -> Durations:
    """Time to detection and to resolution, where the document gives a basis for them."""
    blocks = list(_blocks(sections))
    said = _stated(blocks)
    values = dict(said.values)
    rule = {name: "stated" for name in values}
    basis: dict[str, tuple[str, ...]] = {name: (quote,) for name, quote in said.basis.items()}
    open_fields = [n for n in ("detected", "resolved") if n not in values and n not in said.unknown]
    if open_fields:
        try:
            start, detection, resolution = _timeline(
                _entries(blocks, _document_zone(blocks)), values.get("resolved"), _stated_start(blocks)
            )
        except LookupError:
            pass
        else:
            for name, end in (("detected", detection), ("resolved", resolution)):
                if name in open_fields and end is not None:
                    values[name] = end.at - start.at
                    rule[name] = "timeline"
                    basis[name] = (start.stamp, end.stamp)
    if "detected" in values and "resolved" in values and values["detected"] > values["resolved"]:
        # An inconsistent pair: the resolution is the better-founded one.
        del values["detected"], rule["detected"], basis["detected"]
    return Durations(
        detected_after=values.get("detected"),
        resolved_after=values.get("resolved"),
        rule={f"{name}_after": how for name, how in rule.items()},
        basis={f"{name}_after": quotes for name, quotes in basis.items()},
    )
