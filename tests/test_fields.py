"""The field lists are read off the models: a variant of the format gets its own, and the lists the
pipeline uses are the models' fields, every one of them placed."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from pipeline import fields
from pipeline.assist.answers import ENGLISH_FIELDS
from pipeline.assist.propose import ASSIST_FIELDS, english_texts
from pipeline.models import Action, Case, CaseContent, Component, Draft, Kept, Prose, Published, Severity, Texts, Url
from pipeline.review import missing_for_publication, missing_languages
from pipeline.web.forms import apply_form, form_fields
from pipeline.web.proposals import TRANSLATED

ORIGIN = {"url": "https://example.org/postmortem", "canonical_url": "https://example.org/postmortem"}


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


def test_the_localized_texts_are_read_off_the_model_at_any_depth() -> None:
    assert fields.localized("workaround", Variant) and fields.localized("follow_ups.0.text", Variant)
    assert not fields.localized("workaround.en", Variant) and not fields.localized("ticket", Variant)
    assert [name for name in Variant.model_fields if fields.localized(name, Variant)] == list(fields.narrative(Variant))
    assert not fields.localized("follow_ups", Variant) and not fields.localized("follow_ups.x.text", Variant)
    assert not fields.localized("impact.scope") and not fields.localized("no.such.field")


class Outage(BaseModel):
    cause: Annotated[str, Prose()] = "unknown"
    where: str = "unknown"


class TwoSentences(BaseModel):
    before: Annotated[str, Prose()] = "unknown"
    after: Annotated[str, Prose()] = "unknown"


class PartsVariant(CaseContent):
    outage: Outage = Outage()
    sentences: TwoSentences = TwoSentences()


def test_a_passage_goes_into_the_one_prose_part_of_a_field_of_parts() -> None:
    assert fields.PASSAGE_PARTS == {"impact": "scope"}
    # A field of parts with two sentences has no one part a passage goes into.
    assert fields.passage_parts(PartsVariant) == {"impact": "scope", "outage": "cause"}
    assert ENGLISH_FIELDS["impact"] == "impact.scope"


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


def test_every_narrative_field_reaches_the_form_the_queues_lacks_and_the_assist(case_json: dict[str, Any]) -> None:
    case = Case.model_validate(case_json)
    draft = Draft.model_validate({**case.model_dump(mode="json"), "id": "acme-x-00000000", "origin": ORIGIN})
    shown = {f.path: f for f in form_fields(draft, ["en", "ko"])}
    for name in fields.NARRATIVE:
        assert shown[name].kind == "narrative" and shown[name].values["en"] == case_json[name]["en"]
        # The queue's lacks: a text without its Korean is said to lack it, one without English too.
        lacking = draft.model_copy(update={name: {"ko": "한국어"}})
        assert (name, ["en"]) in missing_languages(lacking, ["en", "ko"])
        assert f"{name}.en" in missing_for_publication(lacking, ["en", "ko"])
        assert name in ASSIST_FIELDS and name in TRANSLATED and name in english_texts(draft)
        after, problems = apply_form(draft, {f"{name}.en": "Rewritten.", f"{name}.ko": ""}, ["en", "ko"])
        assert problems == [] and after is not None and getattr(after, name) == {"en": "Rewritten."}
    for name in fields.ACTION_LISTS:
        assert shown[name].kind == "actions" and name in TRANSLATED
    # The assist proposes the English of every narrative text but the title, a deliberate subset.
    assert {n for n in ENGLISH_FIELDS if n in fields.NARRATIVE} == set(fields.NARRATIVE) - {"title"}
    assert all(
        path in fields.DEFAULTS or path.removesuffix(".en") in fields.NARRATIVE for path in ENGLISH_FIELDS.values()
    )


def test_the_form_offers_every_field_a_person_fills_with_its_default_for_an_empty_box(
    case_json: dict[str, Any],
) -> None:
    draft = Draft.model_validate({**case_json, "id": "acme-x-00000000", "origin": ORIGIN})
    shown = [f.path for f in form_fields(draft, ["en"])]
    assert shown[0] == "title" and sorted(shown) == sorted(path for path, _, _ in fields.FORM)
    emptied = {path: "" for path, kind, _ in fields.FORM if kind in ("text", "choice")}
    after, problems = apply_form(draft, emptied, ["en"])
    assert problems == [] and after is not None
    data = after.model_dump(mode="json")
    for path in emptied:
        name, _, part = path.partition(".")
        assert (data[name][part] if part else data[name]) == fields.DEFAULTS[path], path


def test_a_text_marked_prose_is_edited_in_a_box_of_lines(case_json: dict[str, Any]) -> None:
    class Wordy(CaseContent):
        why_it_mattered: Annotated[str, Prose()] = "unknown"

    assert fields.PROSE == ("impact.scope",)
    assert fields.prose(Wordy) == ("why_it_mattered", "impact.scope")
    draft = Draft.model_validate({**case_json, "id": "example-1", "origin": ORIGIN})
    boxes = {f.path: f.long for f in form_fields(draft, ["en"]) if f.kind == "text"}
    assert [path for path, long in boxes.items() if long] == ["impact.scope"]
