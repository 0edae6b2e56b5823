"""What a document's front matter states of its incident: severity, start, resolution, the
affected components. Pure.

    facts = front_matter_facts(front, raw)

`front` is the front matter as read (a mapping, pipeline.extract.markdown), `raw` its text as
written. Which keys count and how a status page's own severity words map to the vocabulary's
terms is data (`pipeline/front_matter.yaml`). Each fact keeps the line it was read from, so a
draft's evidence can quote it: the lines are set before the document's text
(`FrontMatter.lead`), rule `front-matter.<key>`.

A resolution time is given as a duration only when both ends state their zone (an offset or
`Z`): two times without one may be in any zones, and a wrong duration costs more than none.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from importlib import resources
from typing import Any

import yaml

from pipeline.extract.severity import severity_in
from pipeline.vocabulary import vocabulary

__all__ = ["FrontFact", "FrontMatter", "front_matter_facts"]


@dataclass(frozen=True)
class FrontFact:
    key: str  # as the front matter writes it: "resolvedWhen"
    value: Any  # as read: a term, a datetime, a list of words
    line: str  # the front matter's line(s) it was read from, as written


@dataclass(frozen=True)
class FrontMatter:
    severity: FrontFact | None = None  # value: a severity term
    started: FrontFact | None = None  # value: a date or datetime
    resolved: FrontFact | None = None  # value: a datetime
    components: FrontFact | None = None  # value: component terms the vocabulary knows
    affected: list[str] = field(default_factory=list)  # the affected things it does not know, as written
    affected_line: str | None = None  # the line those stand on

    @property
    def resolved_after(self) -> timedelta | None:
        """From start to resolution, when both ends are times in a stated zone and in order."""
        if self.started is None or self.resolved is None:
            return None
        start, end = self.started.value, self.resolved.value
        if not (isinstance(start, datetime) and isinstance(end, datetime)):
            return None
        if start.tzinfo is None or end.tzinfo is None or end <= start:
            return None
        return end - start

    @property
    def lead(self) -> str:
        """The lines of the facts a draft is given, for the text's head (a blog post's `date` alone
        adds nothing: the page's date is read from the front matter already)."""
        ends = (self.started, self.resolved) if self.resolved_after is not None else ()  # a duration's only
        facts = [f for f in (self.severity, *ends, self.components) if f is not None]
        lines = [f.line for f in facts] + ([self.affected_line] if self.affected_line else [])
        return "\n".join(dict.fromkeys(lines))


@dataclass(frozen=True)
class _Table:
    keys: dict[str, tuple[str, ...]]
    severities: dict[str, str]  # a status page's word -> a severity term


def _key(name: str) -> str:
    return re.sub(r"[\s_-]", "", name).lower()


@functools.cache
def _table() -> _Table:
    data: dict[str, Any] = yaml.safe_load(
        resources.files("pipeline").joinpath("front_matter.yaml").read_text(encoding="utf-8")
    )
    severities = vocabulary().terms["severities"]
    words: dict[str, str] = {}
    for term, spellings in data["severities"].items():
        if term not in severities:
            raise ValueError(f"pipeline/front_matter.yaml: severities.{term}: not a severity term")
        words |= {_key(str(w)): term for w in spellings}
    return _Table({name: tuple(_key(k) for k in keys) for name, keys in data["keys"].items()}, words)


def _line(raw: str, key: str) -> str | None:
    """The line that sets `key`, with the lines of a block list below it."""
    match = re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*[:=].*(?:\n[ \t]+\S.*|\n[ \t]*- .*)*", raw, re.M)
    return match.group(0).rstrip() if match else None


def _find(front: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    by_key = {_key(str(k)): k for k in front}
    for name in names:
        if name in by_key and front[by_key[name]] not in (None, "", [], {}):
            return by_key[name], front[by_key[name]]
    return None


def _time(value: Any) -> date | datetime | None:
    if isinstance(value, (datetime, date)):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip().replace(" UTC", "+00:00"))
        except ValueError:
            return None
    return None


def _severity(value: Any, table: _Table) -> str | None:
    if not isinstance(value, str):
        return None
    term = table.severities.get(_key(value))
    if term is None:
        stated = severity_in(f"severity: {value}")
        term = stated.term if stated and stated.term != "unknown" else None
    return term


def _names(value: Any) -> list[str]:
    """The things a components entry names: strings, or each mapping's name."""
    items = value if isinstance(value, list) else re.split(r"\s*,\s*", value) if isinstance(value, str) else [value]
    names = [str(i.get("name") or "") if isinstance(i, dict) else str(i) for i in items]
    return [n.strip() for n in names if n and n.strip()]


def _component_terms(names: list[str]) -> tuple[list[str], list[str]]:
    """The component terms the names are (by term, label or word), and the names that are none."""
    terms = vocabulary().terms["components"]
    known: list[str] = []
    unknown: list[str] = []
    for name in names:
        lowered = name.lower()
        term = next(
            (t.name for t in terms.values() if lowered in (t.name, t.label.lower()) or lowered in t.words), None
        )
        if term is None:
            unknown.append(name)
        elif term not in known:
            known.append(term)
    return known, unknown


def front_matter_facts(front: dict[str, Any], raw: str) -> FrontMatter:
    """What the front matter states, each with its line; nothing for what it does not state."""
    table = _table()
    facts: dict[str, Any] = {}
    for name in ("severity", "started", "resolved"):
        found = _find(front, table.keys[name])
        line = _line(raw, found[0]) if found else None
        if found is None or line is None:
            continue
        value = _severity(found[1], table) if name == "severity" else _time(found[1])
        if value is not None:
            facts[name] = FrontFact(found[0], value, line)
    found = _find(front, table.keys["components"])
    line = _line(raw, found[0]) if found else None
    if found is not None and line is not None:
        known, unknown = _component_terms(_names(found[1]))
        if known:
            facts["components"] = FrontFact(found[0], known, line)
        if unknown:
            facts["affected"] = unknown
            facts["affected_line"] = line
    return FrontMatter(**facts)
