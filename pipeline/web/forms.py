"""A draft as the web page's form, and the form back into a draft, pure.

    fields = form_fields(draft, languages)          # what the page shows, field by field
    after, problems = apply_form(draft, form, languages)   # a Draft, or what the form got wrong

The form's names are the draft's dotted paths (`summary.ko`, `impact.scope`), so an error names
the field the person typed into, and the edit recorded in the history names the same paths.
Narrative fields have one box per language; lists of actions one line per item and language;
vocabulary fields offer their terms with their labels. What the page does not show (sources,
the review, the text) is left as it was: the review's rules refuse an edit of those anyway.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pipeline.models import Draft, Evidence
from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "FormField",
    "Segment",
    "apply_form",
    "form_fields",
    "languages_for",
    "marked_text",
    "word_diff",
]

NARRATIVE = ("title", "summary", "symptoms_text", "trigger", "detection", "lessons")
TEXTS = ("org", "org_slug", "date", "impact.scope", "impact.users", "impact.region")
DURATIONS = ("timeline.detected_after", "timeline.resolved_after")
CHOICES: dict[str, Kind] = {"date_kind": "date_kinds", "severity": "severities", "root_cause": "root_causes"}
MULTIPLE: dict[str, Kind] = {
    "domain": "domains",
    "symptoms": "symptoms",
    "components": "components",
    "contributing": "contributing",
}
ACTIONS = ("remediation", "action_items")
LINES = ("related", "docs")


@dataclass
class FormField:
    """One field of the form: its path, how it is edited, its value(s) and what backs it."""

    path: str
    kind: str  # "narrative", "text", "choice", "multiple", "actions", "lines"
    values: dict[str, str] = field(default_factory=dict)  # per language for narrative/actions; "" otherwise
    chosen: list[str] = field(default_factory=list)  # choice / multiple
    options: list[tuple[str, str]] = field(default_factory=list)  # (term, label)
    evidence: list[tuple[int, Evidence]] = field(default_factory=list)  # (mark number, entry)


def languages_for(draft: Draft, required: Sequence[str]) -> list[str]:
    """The languages the form offers: the required ones, English and Korean, and any the draft holds."""
    found = list(dict.fromkeys([*required, "en", "ko"]))
    for name in NARRATIVE:
        for lang in getattr(draft, name) or {}:
            if lang not in found:
                found.append(lang)
    return found


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _duration(value: Any) -> str:
    return "" if value is None else str(value)


def form_fields(draft: Draft, languages: Sequence[str], marks: Mapping[int, Evidence] | None = None) -> list[FormField]:
    """Every editable field of the draft, in the order a reader meets them, with its evidence."""
    data = draft.model_dump(mode="json")
    terms = vocabulary().terms
    out: list[FormField] = []
    for path in ("title", "org", "org_slug", "date", "date_kind", "domain", "severity", "summary",
                 "symptoms_text", "trigger", "impact.scope", "impact.users", "impact.region", "detection",
                 "root_cause", "lessons", "symptoms", "components", "contributing", "remediation",
                 "action_items", "timeline.detected_after", "timeline.resolved_after", "related", "docs"):  # fmt: skip
        value = _get(data, path)
        if path in NARRATIVE:
            item = FormField(path, "narrative", {lang: (value or {}).get(lang, "") for lang in languages})
        elif path in CHOICES:
            options = [(t.name, t.label) for t in terms[CHOICES[path]].values()]
            item = FormField(path, "choice", chosen=[value] if value else [], options=options)
        elif path in MULTIPLE:
            options = [(t.name, t.label) for t in terms[MULTIPLE[path]].values()]
            item = FormField(path, "multiple", chosen=list(value or []), options=options)
        elif path in ACTIONS:
            lines = {lang: "\n".join((a["text"] or {}).get(lang, "") for a in value or []) for lang in languages}
            item = FormField(path, "actions", lines)
        elif path in LINES:
            item = FormField(path, "lines", {"": "\n".join(value or [])})
        elif path in DURATIONS:
            item = FormField(path, "text", {"": _duration(value)})
        else:
            item = FormField(path, "text", {"": "" if value is None else str(value)})
        item.evidence = [(n, e) for n, e in (marks or {}).items() if _covers(path, e.field)]
        out.append(item)
    return out


def _covers(path: str, evidence_field: str) -> bool:
    """The evidence's field is this form field or lies within it (`summary.en`, `action_items[2]`)."""
    base = re.split(r"[.\[]", evidence_field, maxsplit=1)[0]
    if "." in path:  # impact.scope, timeline.detected_after: the exact part
        return evidence_field == path or evidence_field.startswith(path + ".")
    return base == path


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


def apply_form(
    draft: Draft, form: Mapping[str, Any], languages: Sequence[str]
) -> tuple[Draft | None, list[tuple[str, str]]]:
    """The draft with the form's values, or None and each problem as (field path, one line).

    `form` maps a path to its value: a string, or a list of strings for a field of several
    choices (`form.getlist`). A path the form does not hold is left as it was.
    """
    data = draft.model_dump(mode="json")
    problems: list[tuple[str, str]] = []

    def put(path: str, value: Any) -> None:
        node = data
        *parents, last = path.split(".")
        for part in parents:
            node = node[part]
        node[last] = value

    def text(name: str) -> str | None:
        value = form.get(name)
        return None if value is None else str(value).replace("\r\n", "\n").strip()

    for name in NARRATIVE:
        given = {lang: text(f"{name}.{lang}") for lang in languages}
        if all(v is None for v in given.values()):
            continue
        kept = {k: v for k, v in (data[name] or {}).items() if k not in languages}
        kept.update({lang: v for lang, v in given.items() if v})
        put(name, kept or None)
    for name in (*TEXTS, *DURATIONS):
        value = text(name)
        if value is None:
            continue
        if name.startswith("impact."):
            put(name, value or "unknown")
        else:
            put(name, value or None)
    for name in CHOICES:
        value = text(name)
        if value is not None:
            put(name, value or ("unknown" if name in ("severity", "root_cause") else None))
    for name in MULTIPLE:
        if f"{name}.present" in form:  # the field was on the page: no box ticked means none
            chosen = form.get(name)
            values = [str(v) for v in (chosen if isinstance(chosen, list) else ([chosen] if chosen else []))]
            # Boxes come back in the vocabulary's order: terms kept keep their place (the drafter's
            # ranking, or the person's), new ones follow.
            staying = [term for term in data[name] if term in values]
            put(name, list(dict.fromkeys([*staying, *values])))
    for name in ACTIONS:
        given = {lang: text(f"{name}.{lang}") for lang in languages}
        if all(v is None for v in given.values()):
            continue
        per_lang = {lang: _lines(v or "") for lang, v in given.items()}
        count = max((len(v) for v in per_lang.values()), default=0)
        old = data[name] or []
        items = []
        for index in range(count):
            texts = {k: v for k, v in ((old[index]["text"] if index < len(old) else {}) or {}).items()}
            for lang, lines in per_lang.items():
                if index < len(lines):
                    texts[lang] = lines[index]
                else:
                    texts.pop(lang, None)
            if texts:
                items.append({"text": texts})
        put(name, items)
    for name in LINES:
        value = text(name)
        if value is not None:
            put(name, _lines(value))
    try:
        return Draft.model_validate(data), []
    except ValidationError as exc:
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"])
            problems.append((path, error["msg"]))
        return None, problems


@dataclass(frozen=True)
class Segment:
    """A piece of the draft's text: plain, or marked as evidence number `mark`."""

    text: str
    mark: int | None = None


def marked_text(text: str, evidence: Sequence[Evidence]) -> tuple[list[Segment], dict[int, Evidence]]:
    """The text cut into segments, each evidence passage that stands in it marked once (an entry
    overlapping one marked before it is listed with its field but not marked again), and the
    marks by number. Segments are plain strings: the template escapes them."""
    marks: dict[int, Evidence] = {}
    segments: list[Segment] = []
    at = 0
    holding = sorted(
        (e for e in evidence if text[e.start : e.end] == e.quote), key=lambda e: (e.start, -(e.end - e.start))
    )
    for number, entry in enumerate(holding, start=1):
        marks[number] = entry
        if entry.start < at:
            continue
        if entry.start > at:
            segments.append(Segment(text[at : entry.start]))
        segments.append(Segment(entry.quote, number))
        at = entry.end
    if at < len(text):
        segments.append(Segment(text[at:]))
    return segments, marks


def word_diff(before: Any, after: Any) -> list[tuple[str, str]]:
    """What an edit changed, word by word: ("same" | "del" | "ins", words)."""
    old, new = _shown(before), _shown(after)
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("ins", "".join(b[j1:j2])))
    return out


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
