"""A field of a record as a path, pure: the one parser of the paths every module names fields by.

    path = FieldPath.parse("remediation[2].text.en")   # or "remediation.2.text.en": the same path
    str(path)                                           # "remediation.2.text.en": the one spelling written
    path.root                                           # "remediation"
    path.within(FieldPath.parse("remediation"))         # True: an item of the list
    path.get(draft)                                     # the value there (a model, or its JSON), or None
    data = path.set(data, "Roll back")                  # a copy of the JSON with the value set there

A path is a case field's name, then its parts: the name of a part (`impact.scope`, `summary.en`) or
the place of a list's item (`remediation.2`). The drafter once wrote list items in brackets
(`action_items[2]`); a stored record that still does is read the same, and written dotted.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

__all__ = ["FieldPath"]

# A name of a field or part (a language code too: `en`, `zh-Hant`), or an item's place, dotted or in brackets.
_NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
_STEP = re.compile(rf"\.({_NAME})|\.(\d+)|\[(\d+)\]")
_HEAD = re.compile(_NAME)


@dataclass(frozen=True, order=True)
class FieldPath:
    """A field path as its parts: names (str) and the places of list items (int), the first a name."""

    parts: tuple[str | int, ...]

    def __post_init__(self) -> None:
        if not self.parts or not isinstance(self.parts[0], str):
            raise ValueError(f"a field path starts with a field's name, not {self.parts!r}")
        for part in self.parts:
            if isinstance(part, bool) or not (
                (isinstance(part, int) and part >= 0) or (isinstance(part, str) and _HEAD.fullmatch(part))
            ):
                raise ValueError(f"{part!r} is neither a field's name nor an item's place (0, 1, ...)")

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        """`text` as a path, in either spelling (`a[2].b`, `a.2.b`); ValueError naming it when it is none."""
        return _parse(text)

    @staticmethod
    def _parse(text: str) -> FieldPath:
        head = _HEAD.match(text)
        if head is None:
            raise ValueError(f"{text[:80]!r} is no field path: it starts with a field's name, as remediation.2.text")
        parts: list[str | int] = [head.group()]
        at = head.end()
        while at < len(text):
            step = _STEP.match(text, at)
            if step is None:
                raise ValueError(
                    f"{text[:80]!r} is no field path at {text[at : at + 10]!r}: names and item places (0, 1, ...) "
                    "after dots, as remediation.2.text"
                )
            name, index, bracketed = step.groups()
            parts.append(name if name is not None else int(index if index is not None else bracketed))
            at = step.end()
        return FieldPath(tuple(parts))

    def __str__(self) -> str:
        return ".".join(str(part) for part in self.parts)

    @property
    def root(self) -> str:
        """The case field the path lies in: `remediation` of `remediation.2.text.en`."""
        return str(self.parts[0])

    def within(self, other: FieldPath) -> bool:
        """This path is `other` or lies under it: `summary.en` within `summary`, not `summary_text`."""
        return self.parts[: len(other.parts)] == other.parts

    def child(self, *parts: str | int) -> FieldPath:
        """The path with `parts` after it: `remediation` .child(2, "text") is `remediation.2.text`."""
        return FieldPath((*self.parts, *parts))

    def get(self, record: Any) -> Any:
        """The value at this path of `record` (a model, or JSON of dicts and lists), or None when it has none."""
        node = record
        for part in self.parts:
            if isinstance(node, BaseModel):
                node = getattr(node, part, None) if isinstance(part, str) and part in type(node).model_fields else None
            elif isinstance(node, dict):
                node = node.get(str(part))
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return None
        return node

    def set(self, record: dict[str, Any], value: Any) -> dict[str, Any]:
        """A copy of `record` (JSON of dicts and lists) with `value` at this path; `record` is left as it was.

        Only the dicts and lists on the path are copied: the rest is shared with `record`. A part that
        holds None on the way becomes a dict (`summary.ko` of a draft without a summary). LookupError
        (one line, naming the path) when a part on the way is missing, or the last cannot be set: an
        item past a list's end, a part of a text.
        """
        return self._set(record, 0, value)

    def _set(self, node: Any, at: int, value: Any) -> Any:
        part = self.parts[at]
        if isinstance(node, dict):
            key: str | int = str(part)
            node = dict(node)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            key, node = part, list(node)
        elif at == len(self.parts) - 1:
            raise LookupError(f"cannot set {self}")
        else:
            raise LookupError(f"no field {FieldPath(self.parts[: at + 1])}")
        if at == len(self.parts) - 1:
            node[key] = value
            return node
        if isinstance(node, dict) and key not in node:
            raise LookupError(f"no field {FieldPath(self.parts[: at + 1])}")
        child = node[key]
        node[key] = self._set({} if child is None else child, at + 1, value)
        return node


# The same few paths are read again and again (a column of every case, a field of every draft): each parsed once.
_parse = functools.lru_cache(maxsize=4096)(FieldPath._parse)
