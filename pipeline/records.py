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

from pipeline import gate
from pipeline.errors import Fault, InvalidRecord
from pipeline.gate import TextFault

__all__ = [
    "decode_utf8",
    "dump_json",
    "dump_record",
    "duplicate_json_key",
    "faults_from",
    "file_name_fault",
    "load_json",
    "load_record",
]

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


def decode_utf8(data: bytes, label: str) -> str:
    """A file's bytes as text; bytes that are not UTF-8 are one fault naming the file and the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start : exc.start + 1].hex()
        fault = Fault(f"{label}:{line}", "-", f"not UTF-8: byte 0x{byte} at offset {exc.start}; save the file as UTF-8")
        raise InvalidRecord([fault]) from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def duplicate_json_key(text: str | bytes) -> str | None:
    """The first key an object of this (valid) JSON holds twice, else None: a reader keeps one of the two
    values and another reader may keep the other (or both), so a record says each field once."""
    try:
        json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        return exc.key
    return None


def load_json(data: bytes, label: str) -> object:
    """A JSON file of the data root's own (a state file), with one fault for bytes that are not UTF-8,
    are not JSON, or hold a key twice."""
    text = decode_utf8(data, label)
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        raise InvalidRecord([Fault(label, exc.key, "duplicate key: this key appears twice in one object")]) from None
    except json.JSONDecodeError as exc:
        raise InvalidRecord([Fault(f"{label}:{exc.lineno}", "-", f"not valid JSON: {exc.msg}")]) from None


def _scanned(data: bytes | str) -> dict[str, bool] | None:
    """The validation context that spares a record the gate's check of each string, when its whole text
    passed `gate.document_clean` (its bytes UTF-8; else the parse names the fault)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return None
    return {gate.SCANNED: True} if gate.document_clean(text) else None


def load_record(model: type[M], data: bytes | str, label: str) -> M:
    """Parse and validate one record; raise InvalidRecord with every fault, named by `label`.

    Bytes that are not UTF-8 and a key written twice are faults too: pydantic would read the one and keep
    the last value of the other, while the file (the site's API copies it) still says both."""
    try:
        record = model.model_validate_json(data, context=_scanned(data))
    except ValidationError as exc:
        if isinstance(data, bytes) and any(error["type"] == "json_invalid" for error in exc.errors()):
            decode_utf8(data, label)  # raises the clearer fault when the bytes are not UTF-8
        raise InvalidRecord(faults_from(exc, label)) from None
    key = duplicate_json_key(data)
    if key is not None:
        raise InvalidRecord([Fault(label, key, "duplicate key: this field appears twice in one object")])
    return record
