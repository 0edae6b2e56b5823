"""The one base of the pipeline's reports: counts over every outcome, and the JSON form in a stated order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pipeline.batch import Report, plain
from pipeline.errors import Fault

Outcome = Literal["done", "skipped", "failed"]


@dataclass
class Item:
    name: str
    outcome: Outcome


@dataclass
class Inner(Report):
    SHOWN = ("seconds",)

    seconds: float = 0.0


@dataclass
class Run(Report):
    ITEMS, OUTCOMES = "items", Outcome
    SHOWN = ("counts", "at", "items", "inner", "faults", "errors", "seconds")

    items: list[Item] = field(default_factory=list)
    at: datetime = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
    inner: Inner = field(default_factory=Inner)
    faults: list[Fault] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)
    seconds: float = 0.0


def test_a_report_counts_every_outcome_and_says_itself_as_json_in_its_order() -> None:
    try:
        raise ValueError("a bug")
    except ValueError as exc:
        bug = exc
    run = Run(
        [Item("a", "done"), Item("b", "failed"), Item("c", "done")],
        inner=Inner(1.23456),
        faults=[Fault("drafts/x.json", "title", "missing")],
        errors=[bug],
        seconds=2.0004,
    )
    assert run.counts() == {"done": 2, "skipped": 0, "failed": 1}, "every outcome, zero or not, in its order"
    found = run.to_dict()
    assert list(found) == list(Run.SHOWN)
    assert found["items"] == [
        {"name": "a", "outcome": "done"},
        {"name": "b", "outcome": "failed"},
        {"name": "c", "outcome": "done"},
    ]
    assert found["at"] == "2026-12-05T09:30:00+00:00" and found["inner"] == {"seconds": 1.235}
    assert found["faults"] == ["drafts/x.json: title: missing"] and found["seconds"] == 2.0
    assert found["errors"][0].startswith("Traceback") and "ValueError: a bug" in found["errors"][0]
    assert json.loads(json.dumps(found)) == found


def test_plain_leaves_what_json_holds_as_it_is() -> None:
    assert plain({"a": [1, "two", None, True]}) == {"a": [1, "two", None, True]}
