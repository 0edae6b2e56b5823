"""Records to bytes and back, pure: the canonical layout and one-line faults.

The canonical layout is what makes a git diff of a reviewed change show only what
changed: pretty JSON, two-space indent, keys in the models' declared order (texts in
language order), UTF-8 unescaped, one trailing newline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from pipeline.errors import Fault, InvalidRecord
from pipeline.gate import TextFault

__all__ = ["dump_json", "dump_record", "faults_from", "file_name_fault", "load_record"]

M = TypeVar("M", bound=BaseModel)


def dump_json(data: object) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def dump_record(record: BaseModel, label: str = "record") -> bytes:
    """The canonical bytes of a record, validated again on the way out.

    A model changed with `model_copy(update=...)` or by mutating one of its lists
    skips pydantic's checks; validating here means nothing invalid reaches disk.
    Raises InvalidRecord, with faults named by `label`.
    """
    try:
        checked = type(record).model_validate(record.model_dump(mode="json"))
    except ValidationError as exc:
        raise InvalidRecord(faults_from(exc, label)) from None
    return dump_json(checked.model_dump(mode="json"))


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "-"


def _problem(error: ErrorDetails) -> str:
    message: str = error["msg"]
    # pydantic prefixes our own validators' messages; the reader only needs the message.
    message = message.removeprefix("Value error, ")
    if error["type"] in ("missing", "extra_forbidden"):
        return message.lower().replace("field required", "required field is missing")
    if error["type"] == "json_invalid":
        return "not valid JSON: " + str(error.get("ctx", {}).get("error", message))
    return message


def faults_from(exc: ValidationError, label: str) -> list[Fault]:
    return [_fault(error, label) for error in exc.errors(include_url=False)]


def _fault(error: ErrorDetails, label: str) -> Fault:
    found = error.get("ctx", {}).get("error")
    if isinstance(found, TextFault):  # raised by a record for one of its fields, which it names
        return Fault(label, _field((*error["loc"], found.where)), found.problem)
    return Fault(label, _field(error["loc"]), _problem(error))


def file_name_fault(record: BaseModel, path: Path, label: str) -> Fault | None:
    """A record's id must be its file's name: ids are how records, links and URLs find it."""
    record_id = getattr(record, "id", None)
    if record_id == path.stem:
        return None
    return Fault(label, "id", f"{record_id!r} does not match the file name {path.name!r}")


def load_record(model: type[M], data: bytes | str, label: str) -> M:
    """Parse and validate one record; raise InvalidRecord with every fault, named by `label`."""
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise InvalidRecord(faults_from(exc, label)) from None
