"""The library for tools: a static JSON API under `api/v1/`, the way OSV and Go's vulndb serve theirs.

    files = render(ctx)     # {"api/v1/index.json": b"...", "api/v1/cases/IL-0001.json": b"...", ...}

    api/v1/index.json         every case, withdrawn ones too: id, modified, title, org, date, withdrawn
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
import json
import zipfile
from datetime import datetime
from typing import Any

from pipeline.fields import kind_of, parts
from pipeline.models import Case, json_schema
from pipeline.records import dump_json
from pipeline.site.context import SiteContext
from pipeline.site.labels import field_label

__all__ = ["API", "CSV_TRANSLATED", "case_columns", "case_row", "render"]

API = "api/v1"
# A localized text's English stands in its field's column, its Korean in a column of its own, "Title (ko)".
CSV_TRANSLATED = "ko"
# Every entry of the zip gets this time, so that the same cases give the same bytes (zip's epoch).
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _compact(data: object) -> bytes:
    """JSON for tools: no white space, UTF-8 as it is (an index of 10,000 cases stays small)."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


# A case as JSON (`model_dump(mode="json")`): every file is made from it, so each case is dumped once.
Record = dict[str, Any]


def _index(records: list[Record]) -> bytes:
    keys = {"id": "id", "modified": "updated_at", "title": "title", "org": "org", "date": "date"}
    return _compact(
        [{**{key: data[name] for key, name in keys.items()}, "withdrawn": data.get("withdrawn")} for data in records]
    )


def _modified_ids(records: list[Record]) -> bytes:
    """OSV's `modified_id.csv`: newest change first (then by id), the record's own spelling of the time."""
    ordered = sorted(records, key=lambda data: data["id"])
    ordered.sort(key=lambda data: datetime.fromisoformat(data["updated_at"]), reverse=True)
    return "".join(f"{data['updated_at']},{data['id']}\n" for data in ordered).encode("utf-8")


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    return buffer.getvalue()


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
        value: Any = data
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        row.append(_cell(value, lang))
    return row


def _cases_csv(records: list[Record]) -> bytes:
    columns = case_columns()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180's line ends, what spreadsheets expect
    writer.writerow([_header(path, lang) for path, lang in columns])
    writer.writerows(case_row(data, columns) for data in records)
    return out.getvalue().encode("utf-8")


# ---------------------------------------------------------------- the whole API


def render(ctx: SiteContext) -> dict[str, bytes]:
    """Every file of the API, by its site-relative path."""
    records = [case.model_dump(mode="json") for case in ctx.cases]
    # The store's own serialisation (records.dump_record is this, after validating again what the store read
    # and validated already): the same bytes as the case's file, a test holds them equal.
    case_files = {f"{data['id']}.json": dump_json(data) for data in records}
    files = {f"{API}/cases/{name}": data for name, data in case_files.items()}
    files[f"{API}/index.json"] = _index(records)
    files[f"{API}/all.zip"] = _zip(case_files)
    files[f"{API}/modified_id.csv"] = _modified_ids(records)
    files[f"{API}/schema.json"] = dump_json(json_schema("case"))
    files[f"{API}/cases.csv"] = _cases_csv(records)
    return files
