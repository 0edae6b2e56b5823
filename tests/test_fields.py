"""The field lists are read off the models: a variant of the format gets its own, and the lists the
pipeline uses are the models' fields, every one of them placed."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from pipeline import fields
from pipeline.models import Action, Case, CaseContent, Component, Draft, Kept, Published, Severity, Texts, Url


class Variant(CaseContent):
    """The format with one more field of each kind, declared the way CaseContent declares its own."""

    workaround: Texts | None = None
    owners: list[Component] = Field(default=[])
    risk: Severity = "unknown"
    follow_ups: list[Action] = Field(default=[])
    runbooks: list[Url] = Field(default=[])
    ticket: str | None = None


class PublishedVariant(Variant):
    id: Annotated[str, Published()]
    workaround: Texts
    ticket: Annotated[str, Published()]


class DraftVariant(Draft):
    checked_by: Annotated[str | None, Kept()] = None
    checked_from: Annotated[str | None, Kept(approved=True)] = None


def test_a_field_added_to_the_model_lands_in_every_list_of_its_kind() -> None:
    assert fields.narrative(Variant) == (*fields.NARRATIVE, "workaround")
    assert fields.term_lists(Variant) == {**fields.TERM_LISTS, "owners": "components"}
    assert fields.choices(Variant) == {**fields.CHOICES, "risk": "severities"}
    assert fields.action_lists(Variant) == (*fields.ACTION_LISTS, "follow_ups")
    assert fields.line_lists(Variant) == (*fields.LINE_LISTS, "runbooks")
    assert fields.defaults(Variant) == {
        **fields.DEFAULTS,
        "workaround": None,
        "owners": [],
        "risk": "unknown",
        "follow_ups": [],
        "runbooks": [],
        "ticket": None,
    }
    added = [
        ("workaround", "narrative", None),
        ("owners", "multiple", "components"),
        ("risk", "choice", "severities"),
        ("follow_ups", "actions", None),
        ("runbooks", "lines", None),
        ("ticket", "text", None),
    ]
    assert fields.form(Variant, Case) == (*fields.FORM, *added)
    # What publication writes itself is not the person's to fill, nor something a draft lacks.
    paths = [path for path, _, _ in fields.form(Variant, PublishedVariant)]
    assert "ticket" not in paths and "workaround" in paths
    assert fields.required(PublishedVariant, Variant) == ("workaround",)


def test_a_field_marked_kept_is_the_pipelines() -> None:
    assert fields.kept(DraftVariant) == (*fields.KEPT[:-3], "checked_by", "checked_from", *fields.KEPT[-3:])
    assert fields.bookkeeping(DraftVariant) == {*fields.BOOKKEEPING, "checked_by"}


def test_every_content_field_is_of_one_kind_and_the_form_holds_each_a_person_fills() -> None:
    every = CaseContent.model_fields
    assert set(fields.NARRATIVE) == {n for n, f in every.items() if f.annotation == Texts | None}
    on_form = {path.split(".")[0] for path, _, _ in fields.FORM}
    left_out = set(fields.KEPT) | set(fields.PUBLISHED)
    assert on_form == set(every) - left_out
    assert {*fields.NARRATIVE, *fields.CHOICES, *fields.TERM_LISTS, *fields.ACTION_LISTS, *fields.LINE_LISTS} <= on_form
    assert fields.PARTS == {
        "impact": ("scope", "users", "region"),
        **{n: fields.PARTS[n] for n in ("timeline", "review")},
    }
    assert fields.DEFAULTS["impact.scope"] == fields.DEFAULTS["severity"] == fields.DEFAULTS["root_cause"] == "unknown"


def test_the_publication_lists_follow_the_case() -> None:
    newly_required = {n for n, f in Case.model_fields.items() if f.is_required()} - {
        n for n, f in CaseContent.model_fields.items() if f.is_required()
    }
    assert set(fields.REQUIRED) == newly_required - set(fields.PUBLISHED)
    assert fields.REQUIRED_NARRATIVE == ("title", "summary")
    assert fields.REQUIRED_NARRATIVE + fields.OPTIONAL_NARRATIVE == fields.NARRATIVE
    assert set(fields.PUBLISHED) <= set(Case.model_fields)
    assert set(fields.BOOKKEEPING) < set(fields.KEPT) <= set(Draft.model_fields)
