"""FieldPath: one parser and one spelling of the paths fields are named by, and the value at one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import BaseModel

from pipeline.fieldpath import FieldPath

# (text, its parts, the one spelling it is written in)
PARSED = [
    ("trigger", ("trigger",), "trigger"),
    ("summary.en", ("summary", "en"), "summary.en"),
    ("timeline.detected_after", ("timeline", "detected_after"), "timeline.detected_after"),
    ("remediation.2", ("remediation", 2), "remediation.2"),
    ("remediation[2]", ("remediation", 2), "remediation.2"),
    ("remediation.2.text.en", ("remediation", 2, "text", "en"), "remediation.2.text.en"),
    ("remediation[2].text.en", ("remediation", 2, "text", "en"), "remediation.2.text.en"),
    ("action_items[10]", ("action_items", 10), "action_items.10"),
    ("a[1][2]", ("a", 1, 2), "a.1.2"),
    ("summary.zh-Hant", ("summary", "zh-Hant"), "summary.zh-Hant"),
]

REFUSED = ["", "a..b", "[2]", "a[x]", "a[-1]", "a.-1", ".a", "a.", "a[2", "a b", "2", "a.2b", "a[2]b"]


@pytest.mark.parametrize(("text", "parts", "written"), PARSED)
def test_both_spellings_parse_to_the_same_parts_and_are_written_dotted(
    text: str, parts: tuple[str | int, ...], written: str
) -> None:
    path = FieldPath.parse(text)
    assert path.parts == parts
    assert str(path) == written
    assert FieldPath.parse(str(path)) == path


@pytest.mark.parametrize("text", REFUSED)
def test_what_is_no_path_is_refused_in_one_line_naming_it(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        FieldPath.parse(text)
    said = str(caught.value)
    assert "\n" not in said and repr(text) in said


def test_parts_are_checked_when_built_directly() -> None:
    for parts in [(), (2,), ("a", -1), ("a", "b c"), ("a", True)]:
        with pytest.raises(ValueError):
            FieldPath(parts)


def test_root_within_and_child() -> None:
    path = FieldPath.parse("remediation[2].text.en")
    assert path.root == "remediation"
    assert path.within(FieldPath.parse("remediation"))
    assert path.within(FieldPath.parse("remediation.2"))
    assert path.within(path)
    assert not path.within(FieldPath.parse("remediation.0"))
    assert not FieldPath.parse("remediation").within(path)
    assert not FieldPath.parse("summary_text").within(FieldPath.parse("summary"))
    assert not FieldPath.parse("timeline.detected_after").within(FieldPath.parse("timeline.resolved_after"))
    assert FieldPath.parse("remediation").child(2, "text") == FieldPath.parse("remediation.2.text")
    assert sorted([FieldPath.parse("b"), FieldPath.parse("a.x"), FieldPath.parse("a")]) == [
        FieldPath.parse("a"),
        FieldPath.parse("a.x"),
        FieldPath.parse("b"),
    ]
    assert len({FieldPath.parse("a[1]"), FieldPath.parse("a.1")}) == 1


class Action(BaseModel):
    text: dict[str, str]


class Record(BaseModel):
    summary: dict[str, str] | None = None
    remediation: list[Action] = []


RECORD: dict[str, Any] = {
    "summary": {"en": "Storage stalled."},
    "impact": {"scope": "training jobs", "users": None},
    "remediation": [{"text": {"en": "Roll back."}}, {"text": {"en": "Add an alert.", "ko": "경보 추가."}}],
    "severity": None,
}

GOT = [
    ("summary.en", "Storage stalled."),
    ("summary.ko", None),
    ("impact.scope", "training jobs"),
    ("impact.users", None),
    ("remediation[1].text.ko", "경보 추가."),
    ("remediation.1.text.en", "Add an alert."),
    ("remediation.2.text.en", None),
    ("remediation.x", None),
    ("severity.en", None),
    ("nothing", None),
    ("summary.en.more", None),
]


@pytest.mark.parametrize(("text", "value"), GOT)
def test_get_reads_json(text: str, value: Any) -> None:
    assert FieldPath.parse(text).get(RECORD) == value


def test_get_reads_a_model() -> None:
    record = Record(summary={"en": "Storage stalled."}, remediation=[Action(text={"en": "Roll back."})])
    assert FieldPath.parse("remediation.0.text.en").get(record) == "Roll back."
    assert FieldPath.parse("remediation[0]").get(record) == Action(text={"en": "Roll back."})
    assert FieldPath.parse("summary.en").get(record) == "Storage stalled."
    assert FieldPath.parse("remediation.1.text").get(record) is None
    assert FieldPath.parse("model_config").get(record) is None  # a model's attribute is no field
    assert FieldPath.parse("nothing").get(record) is None


SET = [
    ("summary.ko", "스토리지.", lambda r: r["summary"] == {"en": "Storage stalled.", "ko": "스토리지."}),
    ("remediation[0].text.en", "Revert.", lambda r: r["remediation"][0] == {"text": {"en": "Revert."}}),
    ("severity.en", "x", lambda r: r["severity"] == {"en": "x"}),  # a part holding None becomes a dict
    ("impact", None, lambda r: r["impact"] is None),
    ("new", 1, lambda r: r["new"] == 1),
]


@pytest.mark.parametrize(("text", "value", "check"), SET)
def test_set_returns_a_copy_and_leaves_the_record_as_it_was(text: str, value: Any, check: Any) -> None:
    before = copy.deepcopy(RECORD)
    after = FieldPath.parse(text).set(RECORD, value)
    assert check(after)
    assert RECORD == before
    assert FieldPath.parse(text).get(after) == value


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("nothing.en", "no field nothing"),
        ("remediation.5.text", "no field remediation.5"),
        ("remediation.x.text", "no field remediation.x"),
        ("summary.en.x.y", "no field summary.en.x"),
        ("remediation.2", "cannot set remediation.2"),
        ("summary.en.more", "cannot set summary.en.more"),
        ("remediation.0.text.en.x", "cannot set remediation.0.text.en.x"),
    ],
)
def test_set_refuses_a_place_the_record_lacks(text: str, said: str) -> None:
    with pytest.raises(LookupError, match=f"^{said}$"):
        FieldPath.parse(text).set(RECORD, "x")
