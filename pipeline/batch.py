"""Work done item by item (sources, links), where one item's bug costs only that item.

    errors = await each(items, work, failed, on_result)
    raise_unexpected(errors, "sources")

The crawl, the archive run and the link refresh all go through a list of items
concurrently. An expected failure (a 404, a refused capture) is part of an item's
result. An unexpected one is a bug: the item gets its `failed` result (reason
`internal-error`), the others go on, and once every item has had its turn the bugs are
raised together as one ExceptionGroup, so Prefect shows the run failed, with tracebacks.

A report's counts are tallied from the Literal (or the StrEnum) of its outcomes, so that
every outcome has its line, zero or not, in the order the Literal or the enum gives. Every
report of a run is a `Report`: its counts and its JSON form (`to_dict`) come from one place.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from enum import EnumType
from typing import Any, ClassVar, TypeVar, get_args

from pipeline.errors import Fault

__all__ = ["Report", "each", "plain", "raise_unexpected", "tally", "tally_reasons"]

T = TypeVar("T")
R = TypeVar("R")
_log = logging.getLogger("incidentlib")


async def each(
    items: Iterable[T],
    work: Callable[[T], Awaitable[R]],
    failed: Callable[[T, Exception], R],
    on_result: Callable[[R], None] | None = None,
    *,
    label: Callable[[T], str] = str,
) -> tuple[list[R], list[Exception]]:
    """Run `work` on every item at once; the results in the order they ended, and the bugs met.

    `failed(item, exc)` makes the result of an item whose work raised; `on_result` hears each
    result as it comes; `label(item)` names the item in the log (its URL).
    """
    results: list[R] = []
    errors: list[Exception] = []

    async def one(item: T) -> None:
        try:
            result = await work(item)
        except Exception as exc:  # a bug: this item's result says so, the others go on
            _log.error("%s: unexpected error", label(item), exc_info=exc)
            errors.append(exc)
            result = failed(item, exc)
        results.append(result)
        if on_result is not None:
            on_result(result)

    await asyncio.gather(*(one(item) for item in items))
    return results, errors


def raise_unexpected(errors: list[Exception], what: str) -> None:
    """Raise the bugs `each` met, all of them, once the run's results are safe."""
    if errors:
        raise ExceptionGroup(f"{len(errors)} {what} failed unexpectedly", errors)


def tally(outcomes: Iterable[str], literal: Any) -> dict[str, int]:
    """How many of each outcome of `literal` (a typing.Literal, or a StrEnum), every one of them listed."""
    counted = Counter(outcomes)
    names = list(map(str, literal)) if isinstance(literal, EnumType) else get_args(literal)
    return {name: counted.get(name, 0) for name in names}


def tally_reasons(pairs: Iterable[tuple[str, str | None]], outcome: str) -> dict[str, int]:
    """How many items ended as `outcome`, by reason (most first); `pairs` are (outcome, reason)."""
    return dict(Counter(reason or "unknown" for what, reason in pairs if what == outcome).most_common())


class Report:
    """What a run did, as every report of the pipeline's says it (a base for dataclasses).

    `counts()` (what a flow keeps in the runs file and a command prints) is the tally of the `outcome` of
    each item in the field `ITEMS`, over `OUTCOMES` (a Literal or a StrEnum: every outcome listed); a
    report whose counts are otherwise says so by its own `counts`. `to_dict()` (its JSON form) holds the
    names of `SHOWN`, in that order: fields, properties, or methods taking no argument, each made `plain`.
    """

    ITEMS: ClassVar[str] = ""
    OUTCOMES: ClassVar[Any] = None
    SHOWN: ClassVar[tuple[str, ...]] = ()

    def counts(self) -> dict[str, int]:
        return tally((item.outcome for item in getattr(self, self.ITEMS)), self.OUTCOMES)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name in self.SHOWN:
            value = getattr(self, name)
            found[name] = plain(value() if callable(value) else value)
        return found


def plain(value: Any) -> Any:
    """`value` as JSON can hold it: a report by its `to_dict`, a dataclass by its fields, a fault or an error
    as its line or traceback, a time in ISO 8601, a float to the millisecond (durations)."""
    if isinstance(value, Report):
        return value.to_dict()
    if isinstance(value, Fault):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Exception):
        return "".join(traceback.format_exception(value))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value
