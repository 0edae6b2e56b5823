"""The library for tools: a static JSON API under `api/v1/`, the way OSV and Go's vulndb serve theirs.

    files = render(ctx)     # {"api/v1/index.json": b"...", "api/v1/cases/IL-0001.json": b"...", ...}

    api/v1/index.json         every case, withdrawn ones too: id, published, modified, title, org, date,
                              withdrawn, aliases, merged_into
    api/v1/cases/{id}.json    the case exactly as cases/ holds it (the store's own serialisation, byte for byte)
    api/v1/all.zip            every case's file, as `{id}.json`
    api/v1/modified_id.csv    `modified,id` a line, newest first, no header: what changed since a sync
    api/v1/schema.json        the published case's JSON Schema, with its `schema_version`
    api/v1/cases.csv          one row a case, its columns named as the pages name the fields

Pure: the bytes depend on the cases alone (no clock, no base URL), so an unchanged library gives the same
bytes and the build rewrites nothing. The field lists are read off the model (`Case.model_fields`, how
each is held: `pipeline.fields.kind_of`), so a field added to the format reaches cases.csv with no change
here; a test keeps the labels in step.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from pipeline.fieldpath import FieldPath
from pipeline.fields import kind_of, parts
from pipeline.models import Case, json_schema
from pipeline.records import dump_json
from pipeline.site.assemble import Assembled, Previous, Span, assemble, zip_directory, zip_member
from pipeline.site.context import Card, Planned, SiteContext, case_group, everything
from pipeline.site.labels import field_label

__all__ = [
    "API",
    "ASSEMBLED",
    "CSV_TRANSLATED",
    "assembled",
    "case_columns",
    "case_row",
    "defused",
    "groups",
    "plan",
    "render",
]

API = "api/v1"
# A localized text's English stands in its field's column, its Korean in a column of its own, "Title (ko)".
CSV_TRANSLATED = "ko"


# A case as JSON (`model_dump(mode="json")`): every file is made from it, so each case is dumped once.
Record = dict[str, Any]


# ---------------------------------------------------------------- cases.csv


def case_columns() -> list[tuple[str, str | None]]:
    """cases.csv's columns, in the record's order: (field path, language); a field of parts part by part,
    a localized text (or list of actions) as its English and then its Korean."""
    columns: list[tuple[str, str | None]] = []
    parted = parts(Case)
    for name, info in Case.model_fields.items():
        how, _ = kind_of(info)
        if how == "parts":
            columns += [(f"{name}.{part}", None) for part in parted[name]]
        elif how in ("narrative", "actions"):
            columns += [(name, "en"), (name, CSV_TRANSLATED)]
        else:
            columns.append((name, None))
    return columns


def _header(path: str, lang: str | None) -> str:
    label = field_label(path, "en")
    return f"{label} ({lang})" if lang == CSV_TRANSLATED else label


def _cell(value: Any, lang: str | None) -> str:
    """A value of the case's JSON as one cell: a list joined with "; ", a text in its language."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(cell for cell in (_cell(item, lang) for item in value) if cell)
    if isinstance(value, dict):
        if "text" in value:  # an action
            return _cell(value["text"], lang)
        if "url" in value:  # a source: its URL (the JSON has its kind and archived copy)
            return str(value["url"])
        return str(value.get(lang or "en", ""))  # a localized text
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def case_row(data: Record, columns: list[tuple[str, str | None]]) -> list[str]:
    """One case's row of cases.csv, from the case as JSON."""
    row = []
    for path, lang in columns:
        row.append(_cell(FieldPath.parse(path).get(data), lang))
    return row


# ---------------------------------------------------------------- the whole API


# What makes a spreadsheet read a cell as a formula (OWASP's "CSV injection"): such a cell is opened as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def defused(cell: str) -> str:
    """A cell a spreadsheet shows as text: one that begins as a formula would (`=`, `+`, `-`, `@`, a tab, a
    carriage return) gets a `'` before it, OWASP's rule; a spreadsheet hides the quote, a program sees it."""
    return f"'{cell}" if cell.startswith(_FORMULA_START) else cell


def _csv_line(row: list[str]) -> bytes:
    out = io.StringIO()
    # RFC 4180's line ends, what spreadsheets expect; quoting as the csv module does.
    csv.writer(out, lineterminator="\r\n").writerow([defused(cell) for cell in row])
    return out.getvalue().encode("utf-8")


def _cases_csv_file(ctx: SiteContext, previous: Previous | None) -> Assembled:
    columns = case_columns()
    head = _csv_line([_header(path, lang) for path, lang in columns])

    def row(case_id: str) -> bytes:
        return _csv_line(case_row(ctx.case(case_id).model_dump(mode="json"), columns))

    return assemble(head, ctx.cases, row, lambda spans: b"", previous)


def _zip_file(ctx: SiteContext, previous: Previous | None) -> Assembled:
    """all.zip: every case's file as `{id}.json`, by id; a member of the last build's zip whose case is the
    same is copied from it as it is (compressed once)."""
    ordered = sorted(ctx.cases, key=lambda card: card.id)
    cards = {card.id: card for card in ordered}

    def member(case_id: str) -> bytes:
        return zip_member(f"{case_id}.json", ctx.raw(case_id))

    def directory(spans: dict[str, Span]) -> bytes:
        entries = [(f"{i}.json", cards[i].crc, cards[i].size, spans[i][1], spans[i][2]) for i in spans]
        return zip_directory(entries)

    return assemble(b"", ordered, member, directory, previous)


# The files made of one piece a case, each rebuilt from the last build's where its cases did not change.
ASSEMBLED: dict[str, Callable[[SiteContext, Previous | None], Assembled]] = {
    f"{API}/cases.csv": _cases_csv_file,
    f"{API}/all.zip": _zip_file,
}


def assembled(ctx: SiteContext, previous: Callable[[str], Previous | None]) -> dict[str, Assembled]:
    """The API's files made of one piece a case (`ASSEMBLED`), each from `previous(path)` where it helps."""
    return {path: make(ctx, previous(path)) for path, make in ASSEMBLED.items()}


def _index_of(ctx: SiteContext) -> bytes:
    # Each card's entry as it cached it (Card.index_entry), joined: compact JSON, one line.
    return f"[{','.join(card.index_entry for card in ctx.cases)}]\n".encode()


def _modified_of(ctx: SiteContext) -> bytes:
    """OSV's `modified_id.csv`: newest change first (then by id), the record's own spelling of the time."""
    ordered = sorted(ctx.cases, key=lambda card: card.id)
    ordered.sort(key=lambda card: card.updated_at, reverse=True)
    return "".join(f"{card.modified},{card.id}\n" for card in ordered).encode("utf-8")


def plan(ctx: SiteContext, wanted: Callable[[str], bool] = everything) -> dict[str, Planned]:
    """The API's files but the assembled ones: each case's file (its inputs: the file's digest; those of
    the groups `wanted`), the index, modified_id.csv and the schema (made each time: from the cards, in
    milliseconds)."""
    planned: dict[str, Planned] = {
        f"{API}/cases/{card.id}.json": Planned(card.digest, partial(ctx.raw, card.id), group)
        for card in ctx.cases
        if wanted(group := case_group(card.id))
    }
    planned[f"{API}/index.json"] = Planned(None, partial(_index_of, ctx))
    planned[f"{API}/modified_id.csv"] = Planned(None, partial(_modified_of, ctx))
    planned[f"{API}/schema.json"] = Planned(None, partial(dump_json, json_schema("case")))
    return planned


def groups(ctx: SiteContext, cards: Iterable[Card]) -> set[str]:
    """The groups of the API's files that show any of `cards`: their records."""
    return {case_group(card.id) for card in cards}


def render(ctx: SiteContext) -> dict[str, bytes]:
    """Every file of the API, by its site-relative path."""
    files = {path: planned.make() for path, planned in plan(ctx).items()}
    files.update({path: made.data for path, made in assembled(ctx, lambda path: None).items()})
    return files
