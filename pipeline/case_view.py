"""A published case as its page shows it, pure: every field of the record, labelled, in the record's order.

    rows = case_rows(case)      # one Row a field, a field of parts (impact, timeline, review) part by part

The fields are read off the model (`Case.model_fields`, and how each is held: pipeline.fields.kind_of),
never listed here: a field added to the record format is on the page with no change to this module.
Each value is shown as a person reads it: a text in each of its languages, a vocabulary term by its
label (and the term), a list item by item, an action by its text, a link as a link (a case's id as a
link to that case), a time or a duration in words with the record's own value in `datetime`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, StringConstraints
from pydantic.fields import FieldInfo

from pipeline.fieldpath import FieldPath
from pipeline.fields import FieldKind, kind_of
from pipeline.models import CASE_ID_PATTERN, Case
from pipeline.vocabulary import Kind, vocabulary

__all__ = ["Row", "Value", "case_rows", "label_of"]


@dataclass(frozen=True)
class Value:
    """One value as shown: its text, and where it leads, its language, or the record's own spelling."""

    text: str
    href: str | None = None  # a link: the URL, or a case's page
    lang: str | None = None  # a text in one language
    machine: str | None = None  # the record's own value of a time or a duration (`<time datetime>`)
    term: str | None = None  # a vocabulary term shown by its label


@dataclass
class Row:
    """One field of the case: its path, its label, and its values (an item of a list or of an action each)."""

    path: str
    label: str
    kind: FieldKind
    items: list[list[Value]] = field(default_factory=list)  # one a list item (one for a single value)


@functools.lru_cache(maxsize=4096)  # a field's path: forty a case page, the same forty on every one
def label_of(path: str) -> str:
    """A field's label from its name: `symptoms_text` "Symptoms text", `impact.scope` "Impact: scope"."""
    parts = [str(part).replace("_", " ") for part in FieldPath.parse(path).parts]
    head = parts[0][:1].upper() + parts[0][1:]
    return ": ".join([head, *parts[1:]])


def _annotations(annotation: Any) -> list[Any]:
    """Every type and marker in an annotation, `Annotated` and unions opened."""
    found = [annotation]
    if get_origin(annotation) is Annotated:
        found += [*annotation.__metadata__, *_annotations(annotation.__origin__)]
    for arg in get_args(annotation) if get_origin(annotation) is not Annotated else ():
        found += _annotations(arg)
    return found


@functools.lru_cache(maxsize=4096)  # read off the model's fields, made once
def _names_a_case(info: FieldInfo) -> bool:
    """The field holds case ids (`related`, `recurrence_of`): each shown as a link to its case."""
    return any(
        isinstance(m, StringConstraints) and m.pattern == CASE_ID_PATTERN
        for m in [*_annotations(info.annotation), *info.metadata]
    )


def _duration(value: timedelta) -> str:
    minutes, seconds = divmod(int(value.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    said = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in ((days, "day"), (hours, "hour"), (minutes, "minute"))]
    return " ".join(part for part in said if not part.startswith("0 ")) or f"{seconds} seconds"


def _plain(value: Any, json_value: Any, links_cases: bool, own_id: str = "") -> Value:
    """A value of one piece (a text, a date, a link, a time, a duration); a case's id links its case
    (but the case's own)."""
    if isinstance(value, datetime):
        return Value(f"{value:%Y-%m-%d %H:%M} UTC", machine=str(json_value))
    if isinstance(value, timedelta):
        return Value(_duration(value), machine=str(json_value))
    text = "" if json_value is None else str(json_value)
    if links_cases and re.match(CASE_ID_PATTERN, text) and text != own_id:
        return Value(text, href=f"/cases/{text}")
    if re.match(r"^https?://", text):
        return Value(text, href=text)
    return Value(text)


def _term(terms: Kind | None, name: str) -> Value:
    known = vocabulary().terms[terms].get(name) if terms else None
    return Value(known.label if known else name, term=name)


def _texts(value: dict[str, str] | None) -> list[Value]:
    return [Value(text, lang=lang) for lang, text in (value or {}).items()]


def _record(model: type[BaseModel], item: BaseModel, json_item: dict[str, Any]) -> list[Value]:
    """One record of a list of them (a source): each of its fields, shown as it is held."""
    out: list[Value] = []
    for name, info in model.model_fields.items():
        value = getattr(item, name)
        if value is None:
            continue
        how, terms = kind_of(info)
        out.append(_term(terms, value) if how == "choice" else _plain(value, json_item[name], _names_a_case(info)))
    return out


def _items(info: FieldInfo, value: Any, json_value: Any, own_id: str) -> list[list[Value]]:
    """The field's values as the page lists them: one list item each (a single value is one item)."""
    how, terms = kind_of(info)
    cases = _names_a_case(info)
    if how == "narrative":
        return [_texts(value)] if value else []
    if how == "choice":
        return [[_term(terms, value)]] if value else []
    if how == "multiple":
        return [[_term(terms, term)] for term in value]
    if how == "actions":
        return [_texts(action.text) for action in value]
    if how == "records":
        return [_record(type(item), item, json_item) for item, json_item in zip(value, json_value, strict=True)]
    if how == "lines":
        return [[_plain(item, json_item, cases, own_id)] for item, json_item in zip(value, json_value, strict=True)]
    return [] if value is None else [[_plain(value, json_value, cases, own_id)]]


def case_rows(case: Case, paths: Collection[str] | None = None) -> list[Row]:
    """Every field of the case, labelled, in the record's order; a field of parts part by part. `paths`:
    those fields and parts only ("impact.users"), the others not worked out (a case page shows a few)."""
    names = None if paths is None else {path.partition(".")[0] for path in paths}
    data = case.model_dump(mode="json", include=names)
    rows: list[Row] = []
    for name, info in type(case).model_fields.items():
        if names is not None and name not in names:
            continue
        how, _ = kind_of(info)
        value = getattr(case, name)
        if how == "parts":
            for part, part_info in type(value).model_fields.items():
                path = f"{name}.{part}"
                if paths is not None and path not in paths:
                    continue
                part_how, _ = kind_of(part_info)
                items = _items(part_info, getattr(value, part), data[name][part], case.id)
                rows.append(Row(path, label_of(path), part_how, items))
        else:
            # A field left out of the record when empty (`exclude_if`: machine_translations) is empty here.
            json_value = data.get(name, [] if isinstance(value, list) else None)
            rows.append(Row(name, label_of(name), how, _items(info, value, json_value, case.id)))
    return rows
