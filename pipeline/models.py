"""The record format: the single source of truth for cases, drafts and source entries.

A **case** is what readers see, field for field the shape of the library's published
records (`../shared/reference/example-case.json`). A **draft** is a case still being
made: the same content fields, any of them empty, plus what only the pipeline and its
reviewers need (where the text came from, the extracted sections, the archive state of
each source, the review state and its history). A **source entry** is one line of the
crawl registry in `sources/*.yaml`.

The JSON Schema (`incidentlib schema`) is generated from these classes; the key order
of a written record is the field order declared here, so keep it a reading order. Every list
of fields the pipeline works with (the narrative texts, the form's, the ones the review keeps)
is read off these classes by `pipeline.fields`: mark a field `Kept` or `Published` here rather
than naming it in a list elsewhere.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from pipeline import gate
from pipeline.fieldpath import FieldPath
from pipeline.reasons import Reason
from pipeline.vocabulary import Kind, check_term, vocabulary

__all__ = [
    "SCHEMA_VERSION",
    "Action",
    "ArchiveState",
    "ArchiveStatus",
    "AssistFailure",
    "AssistRun",
    "Candidate",
    "CandidateState",
    "Case",
    "CaseContent",
    "Dismissal",
    "Draft",
    "DraftSource",
    "DraftState",
    "DroppedProposal",
    "Evidence",
    "Feed",
    "FeedEntry",
    "FeedKind",
    "FeedState",
    "FetchFailure",
    "Impact",
    "IncidentStart",
    "LinkState",
    "LinkStatus",
    "MachineTranslation",
    "Origin",
    "PossibleDuplicate",
    "Proposal",
    "Review",
    "RunRecord",
    "Section",
    "SectionField",
    "Source",
    "SourceEntry",
    "Timeline",
    "Transition",
    "intake",
    "json_schema",
    "utc_now",
]


# ---------------------------------------------------------------- field types


@dataclass(frozen=True)
class Kept:
    """Annotated metadata: a field the pipeline and the review commands keep, which no edit may change.

    `approved`: a reviewer approves it with the content (a draft's id, its origin); otherwise it is
    the review's own bookkeeping (the state, the history), which an approval does not cover and an
    edit's list of changes does not name. `pipeline.fields` lists the fields so marked."""

    approved: bool = False


@dataclass(frozen=True)
class Published:
    """Annotated metadata: a field of a case that publication writes itself (the case's id, its sources
    without their archive states, its page and its time) rather than copying it from the draft; and the
    withdrawal's fields, which `incidentlib withdraw` writes and a republication keeps."""


@dataclass(frozen=True)
class Withdrawing:
    """Annotated metadata: a field of a case's withdrawal (`incidentlib withdraw` writes it, a
    republication keeps it, no draft has it). `pipeline.fields.WITHDRAWAL` lists the fields so marked."""


@dataclass(frozen=True)
class Prose:
    """Annotated metadata: a plain text of a sentence or more (impact's scope), not a short phrase: the
    web form gives it a box of several lines. `pipeline.fields.PROSE` lists the fields so marked."""


@dataclass(frozen=True)
class Term:
    """Annotated metadata: a string that must be a term of one vocabulary; the schema lists the terms."""

    kind: Kind

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(partial(check_term, self.kind), handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string", "enum": vocabulary().names(self.kind)}


Domain = Annotated[str, Term("domains")]
Component = Annotated[str, Term("components")]
Symptom = Annotated[str, Term("symptoms")]
Contributing = Annotated[str, Term("contributing")]
RootCause = Annotated[str, Term("root_causes")]
Severity = Annotated[str, Term("severities")]
SourceKind = Annotated[str, Term("source_kinds")]
DateKind = Annotated[str, Term("date_kinds")]

CASE_ID_PATTERN = r"^[A-Z][A-Z0-9]*-[0-9]{4,}$"
SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
DRAFT_ID_PATTERN = SLUG_PATTERN
DRAFT_ID_MAX = 100
CaseId = Annotated[str, StringConstraints(pattern=CASE_ID_PATTERN)]
DraftId = Annotated[str, StringConstraints(pattern=DRAFT_ID_PATTERN, max_length=DRAFT_ID_MAX)]
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=80)]
Text = Annotated[str, StringConstraints(min_length=1)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def _check_language(value: str) -> str:
    if not _LANGUAGE.match(value):
        raise ValueError(f"not a language code such as en or ko: {value!r}")
    return value


LanguageCode = Annotated[
    str, AfterValidator(_check_language), WithJsonSchema({"type": "string", "pattern": _LANGUAGE.pattern})
]


def check_url(value: str) -> str:
    """`value` if it is a URL a record may cite (absolute http(s), a host, no white space, a numeric
    port); else ValueError naming it. The index's reader builds its own test on this one."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {value!r}")
    if any(ch.isspace() for ch in value):
        raise ValueError(f"URL contains white space: {value!r}")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise ValueError(f"URL has an invalid port: {value!r}") from None
    return value


# Kept as the exact string given (no normalisation), so a record round-trips unchanged.
Url = Annotated[str, AfterValidator(check_url), WithJsonSchema({"type": "string", "format": "uri"})]

_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def _check_date(value: str) -> str:
    # Postmortems often give only a month or a year, so a partial date is allowed.
    match = _DATE.match(value)
    if not match:
        raise ValueError(f"expected YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}")
    year, month, day = (int(g) if g else None for g in match.groups())
    try:
        date(year or 1, month or 1, day or 1)
    except ValueError as exc:
        raise ValueError(f"not a calendar date: {value!r} ({exc})") from None
    return value


def _date_to_text(value: object) -> object:
    # YAML reads an unquoted 2020-10-06 as a date and 2020 as a number; both mean the text.
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


PartialDate = Annotated[
    str,
    BeforeValidator(_date_to_text),
    AfterValidator(_check_date),
    WithJsonSchema({"type": "string", "pattern": _DATE.pattern}),
]


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


# Always stored in UTC, written as `2026-11-14T12:34:07.825740Z`.
Timestamp = Annotated[AwareDatetime, AfterValidator(_to_utc)]


def _sorted_texts(value: dict[str, str]) -> dict[str, str]:
    # One language order everywhere, so that a git diff shows only real changes.
    return dict(sorted(value.items()))


Texts = Annotated[
    dict[LanguageCode, Text],
    AfterValidator(_sorted_texts),
    Field(
        description="The same text in several languages, keyed by language code (en, ko, ...).",
        json_schema_extra={"additionalProperties": False},
    ),
]


def _scrubbed(value: object) -> object:
    return gate.clean(value).text if isinstance(value, str) else value


# A text the pipeline keeps as it was given, for its own bookkeeping: what a service answered (an error's
# message, a header), a person's note in the history. The gate cleans it silently, on the way in and on the
# way out (records.dump_record validates again), rather than refusing it: nobody reads it as the case.
Reported = Annotated[str, BeforeValidator(_scrubbed)]


# A failure reason of today's vocabulary; a record of an earlier version is read in it.
ReasonCode = Annotated[Reason, BeforeValidator(Reason.parse)]


def _dotted(value: str) -> str:
    return str(FieldPath.parse(value))


# A field of a case as a path (pipeline.fieldpath): `trigger`, `summary.en`, `timeline.detected_after`,
# `action_items.2`. Written dotted; a record written when the drafter put list items in brackets
# (`action_items[2]`) still loads, its paths read dotted, and is written back dotted: no migration.
FIELD_PATH_PATTERN = r"^[a-z_]+(\[[0-9]+\])?(\.[A-Za-z0-9_-]+(\[[0-9]+\])?)*$"
PathText = Annotated[str, StringConstraints(pattern=FIELD_PATH_PATTERN, max_length=200), AfterValidator(_dotted)]


def utc_now() -> datetime:
    return datetime.now(UTC)


R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """Strict: a misspelt key is a fault, not silently dropped data; and no text of it holds a character
    the gate (pipeline.gate) removes: a control character, a non-character, a bidirectional control.

    Validated with the context `{"gate": Removed()}` (`intake`), a record takes such text from outside
    and cleans it, counting what it removed; validated without (a file read, `validate`), it refuses the
    text with a fault that names the field and the character."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @model_validator(mode="before")
    @classmethod
    def _gate_in(cls, data: Any, info: ValidationInfo) -> Any:
        removed = info.context.get("gate") if isinstance(info.context, dict) else None
        if not isinstance(removed, gate.Removed) or not isinstance(data, dict):
            return data
        out = {}
        for key, value in data.items():
            out[key], found = gate.clean_tree(value)
            removed.add(found, str(key))
        return out

    @model_validator(mode="after")
    def _gate_held(self, info: ValidationInfo) -> Any:
        if isinstance(info.context, dict) and info.context.get(gate.SCANNED) is True:
            return self  # its file was scanned whole (`gate.document_clean`): no string of it holds one
        values = self.__dict__
        for name in _text_fields(type(self)):
            value = values[name]
            if gate.holds_forbidden(value):  # the fast scan; the slow walk names the place
                for where, text in _texts_in(value, name):
                    problem = gate.fault(text)
                    if problem:
                        raise gate.TextFault(where, problem)  # pipeline.records names the field by `where`
        return self


@functools.cache
def _text_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of a record whose values may hold strings of their own (a text, a list or dict of them),
    read off the annotations once: the gate's check looks at these alone, on every record read."""
    return tuple(name for name, info in model.model_fields.items() if _holds_str(info.annotation))


def _holds_str(annotation: Any) -> bool:
    if annotation is str:
        return True
    if isinstance(annotation, type):
        return False  # a record checks its own; a number, a date or an enum holds no free text
    return any(_holds_str(arg) for arg in get_args(annotation) if not isinstance(arg, (str, int, float)))


def _texts_in(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """The strings of a field's value (a text, a dict's keys and values, a list's items) with where each
    stands (`.en`, `[2]`), not those of a record inside it, which checks its own."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts_in(key, where)
            yield from _texts_in(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts_in(item, f"{where}[{index}]")


def intake(model: type[R], data: Any) -> tuple[R, gate.Removed]:
    """A record made from text from outside (a form, `set`, a model's answer): its texts cleaned by the gate
    on the way in, with what was removed, for the history to say. Raises ValidationError as validation does."""
    removed = gate.Removed()
    return model.model_validate(data, context={"gate": removed}), removed


# ---------------------------------------------------------------- case parts


class Impact(Record):
    scope: Annotated[str, Prose()] = "unknown"
    users: str = "unknown"
    region: str = "unknown"


class Review(Record):
    """Who wrote the case and who approved it. A new draft has all three empty."""

    written_by: Name | None = None
    reviewed_by: Name | None = None
    reviewed_at: Timestamp | None = None


class Source(Record):
    url: Url
    kind: SourceKind
    archived: Url | None = Field(
        default=None,
        description="A Wayback Machine capture: https://web.archive.org/web/<timestamp>/<url>.",
    )


class Action(Record):
    """One remediation step or action item."""

    text: Texts


class Timeline(Record):
    detected_after: timedelta | None = Field(default=None, description="ISO 8601 duration from start to detection.")
    resolved_after: timedelta | None = Field(default=None, description="ISO 8601 duration from start to resolution.")


class CaseContent(Record):
    """The fields a case and a draft share, in the order a reader meets them.

    Every field may be empty here; `Case` makes the ones a published case needs required.
    """

    id: Annotated[str, Kept(approved=True)]
    org: Name | None = None
    org_slug: Slug | None = None
    date: PartialDate | None = None
    date_kind: DateKind | None = None
    title: Texts | None = None
    domain: list[Domain] = []
    severity: Severity = "unknown"
    summary: Texts | None = None
    symptoms_text: Texts | None = None
    trigger: Texts | None = None
    impact: Impact = Impact()
    detection: Texts | None = None
    root_cause: RootCause = "unknown"
    lessons: Texts | None = None
    symptoms: list[Symptom] = []
    components: list[Component] = []
    contributing: list[Contributing] = []
    remediation: list[Action] = []
    action_items: list[Action] = []
    timeline: Timeline = Timeline()
    sources: list[Source] = []
    related: list[CaseId] = []
    recurrence_of: CaseId | None = None
    docs: list[Url] = Field(default=[], description="Links to documentation that helps a reader act on the case.")
    review: Annotated[Review, Kept()] = Review()
    updated_at: Annotated[Timestamp | None, Kept()] = None
    url: Url | None = Field(default=None, description="The case's public page.")


class Case(CaseContent):
    """A published case, exactly as the library stores and serves it."""

    id: Annotated[CaseId, Published()]
    org: Name
    org_slug: Slug
    date: PartialDate
    date_kind: DateKind
    title: Texts
    summary: Texts
    sources: Annotated[list[Source], Published()] = Field(min_length=1)
    updated_at: Annotated[Timestamp, Published()]
    url: Annotated[Url, Published()]
    # Withdrawal, OSV's way instead of deletion: the file stays in cases/, its id and its `url` keep
    # resolving, and the site says the case was withdrawn and, when merged, into which case. Declared on
    # the case alone (a draft has no such fields, so none can be approved or copied into a case), marked
    # `Published` because `incidentlib withdraw` writes them, not a reviewer; left out of the file while
    # unset, so a case never withdrawn is written byte for byte as before.
    withdrawn: Annotated[Timestamp | None, Published(), Withdrawing()] = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="When the case was withdrawn: it stays readable under its id, marked withdrawn. "
        "Unset while the case stands.",
    )
    # The reason is kept, not left to a commit message: a reader who follows an old link lands on the
    # withdrawn case's page, and that page owes them the why. Plain text in the words of whoever withdrew
    # it (an operator's note, not a narrative to translate).
    withdrawn_reason: Annotated[Text | None, Published(), Withdrawing()] = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Why the case was withdrawn (a duplicate, not an incident, a source retracted).",
    )
    withdrawn_by: Annotated[Name | None, Published(), Withdrawing()] = Field(
        default=None, exclude_if=lambda v: v is None, description="Who withdrew it."
    )
    merged_into: Annotated[CaseId | None, Published(), Withdrawing()] = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The case that survives a merge: this one is withdrawn and its readers are sent there. "
        "It names an existing case that is not withdrawn itself.",
    )

    @field_validator("withdrawn_reason", "withdrawn_by", "merged_into")
    @classmethod
    def _only_when_withdrawn(cls, value: str | None, info: ValidationInfo) -> str | None:
        # A field validator, not a model's, so that the fault names the field (cases/IL-0002.json: merged_into: ...).
        if value is not None and "withdrawn" in info.data and info.data["withdrawn"] is None:
            raise ValueError("only a withdrawn case has one: set `withdrawn` too (incidentlib withdraw does)")
        if info.field_name == "merged_into" and value is not None and value == info.data.get("id"):
            raise ValueError(f"a case cannot be merged into itself ({value})")
        return value

    machine_translations: Annotated[list[PathText], Published()] = Field(
        default=[],
        exclude_if=lambda v: not v,  # a case with none is written as it was before the field existed
        description="The texts a person accepted from the writer assist's model, by path (summary.ko, "
        "remediation.0.text.ko): the reader's site marks them machine-translated, beside the English.",
    )
    # When the case was first published: OSV's `published`, beside `updated_at` (its `modified`). Written by
    # the first promotion and kept by every later one; a case published before the field has none, since
    # nothing records when it was (its `updated_at` may be any later change).
    published: Annotated[Timestamp | None, Published()] = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="When the case was first published; unset for a case published before the field existed.",
    )
    # The ids merged into this case, OSV's `aliases`: a reader or a tool holding an old id finds its case.
    # Written by a merge (`incidentlib merge`, `incidentlib withdraw --into`) and kept by republication.
    aliases: Annotated[list[CaseId], Published()] = Field(
        default=[],
        exclude_if=lambda v: not v,  # a case nothing was merged into is written as before the field existed
        description="The cases merged into this one (each withdrawn, its `merged_into` naming this case), "
        "sorted: the ids this case is also known by.",
    )

    @field_validator("aliases")
    @classmethod
    def _aliases_in_order(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if value != sorted(set(value)):
            raise ValueError("sorted and each once: write them as incidentlib merge does")
        if info.data.get("id") in value:
            raise ValueError(f"a case is not an alias of itself ({info.data['id']})")
        return value


# ---------------------------------------------------------------- draft parts


class DraftState(StrEnum):
    EXTRACTED = "extracted"
    WRITTEN = "written"
    IN_REVIEW = "in_review"
    CHANGES_REQUESTED = "changes_requested"
    APPROVED = "approved"
    REJECTED = "rejected"
    PUBLISHED = "published"
    # Merged into another draft or case (`merged_into`), its sources moved there: the end of its way.
    MERGED = "merged"


class ArchiveStatus(StrEnum):
    PENDING = "pending"
    CAPTURED = "captured"
    FAILED = "failed"


class ArchiveState(Record):
    """Where archiving one source stands, so an interrupted run can carry on where it stopped."""

    status: ArchiveStatus = ArchiveStatus.PENDING
    reason: ReasonCode | None = Field(
        default=None, description="Why it is still pending (no-keys, throttled, ...) or why it failed (not-found, ...)."
    )
    detail: Reported | None = Field(
        default=None, description="What the archive said beyond the reason: an unknown code, an error page's status."
    )
    attempts: int = Field(default=0, ge=0)
    last_attempt_at: Timestamp | None = None
    captured_at: Timestamp | None = None
    job_id: Reported | None = Field(default=None, description="A submitted capture job not yet seen to its end.")
    job_submitted_at: Timestamp | None = None
    captured_url: Url | None = Field(default=None, description="The URL captured, when a redirect made it differ.")
    reused: bool = Field(default=False, description="An existing capture was reused instead of making one.")
    confirmed: bool = Field(default=False, description="The capture has been seen in the archive's index (CDX).")


class DraftSource(Source):
    archive: ArchiveState = ArchiveState()


class SectionField(StrEnum):
    SUMMARY = "summary"
    IMPACT = "impact"
    TRIGGER = "trigger"
    ROOT_CAUSE = "root_cause"
    CONTRIBUTING = "contributing"
    DETECTION = "detection"
    REMEDIATION = "remediation"
    ACTION_ITEMS = "action_items"
    LESSONS = "lessons"
    TIMELINE = "timeline"


class Section(Record):
    """One section of the source as extracted: its heading, the case field it fills, its text."""

    heading: str
    field: SectionField | None = None
    text: str
    # How sure the field is, when not the heading's own word: the section's sentences suggested it
    # (pipeline.extract.headings.guess_from_words). None: the heading (or its parent's) names it.
    confidence: float | None = Field(default=None, ge=0, le=1)
    quotes: list[str] = Field(
        default=[],
        exclude_if=lambda v: not v,  # a section without a blockquote is written as it was
        description="The section's paragraphs and items that stand in a blockquote, as its text has them: "
        "quoted words, which the drafting rules trust less than the narrative.",
    )


class FetchFailure(Record):
    """Why the last crawl of a source failed: a short code and the sentence behind it."""

    reason: ReasonCode = Field(
        description="http-404, robots, timeout, too-large, private-address, unsupported-type, ..."
    )
    message: Reported
    http_status: int | None = Field(default=None, description="The status the source answered with, if it answered.")


class Origin(Record):
    """Where a draft's text came from and how it was fetched."""

    url: Url
    canonical_url: Url
    final_url: Url | None = None
    fetched_at: Timestamp | None = Field(default=None, description="When the current text was fetched.")
    content_type: Reported | None = None
    etag: Reported | None = None
    last_modified: Reported | None = None
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$", description="Of the fetched bytes.")
    format: str | None = Field(default=None, description="How the bytes were read: html, markdown, text or pdf.")
    failure: FetchFailure | None = Field(default=None, description="Set while the source cannot be fetched.")


class FieldEdit(Record):
    """One field a person's edit changed: its path and its value before and after, as JSON."""

    path: str
    before: Any = None
    after: Any = None


# What a history entry is when it is not one of the review's plain moves (Transition.action).
HistoryNote = Literal["merge", "dismiss", "relate", "cleaned"]


class Transition(Record):
    """One step of a draft's review history; never rewritten, only appended.

    A person's edit is a step too (`changed` names what it changed), whatever the state,
    so whoever edited a draft is known and cannot also review it. Records written before
    `changed` existed load with it empty."""

    at: Timestamp
    by: Name
    from_state: DraftState | None = None
    to_state: DraftState
    comment: Reported | None = None
    changed: list[str] = Field(
        default=[],
        description="For an edit: the fields it changed, as dotted paths (summary.ko, impact.scope, components).",
    )
    edits: list[FieldEdit] = Field(
        default=[],
        description="For an edit: each changed field's value before and after, so a reviewer sees the change. "
        "Records written before it existed load with it empty.",
    )
    # Which of the moves that are not one of the review's own states this entry is (pipeline.merge): a
    # merge and a dismissal are a reviewer's notes, and make nobody a writer of the draft (review.writers).
    action: HistoryNote | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # every entry written before it existed is one of the review's moves
        description="merge: the draft was merged, or took a merged draft's sources; dismiss: a suggestion "
        "dismissed for good; relate: a suggestion accepted into related or recurrence_of (an edit); cleaned: the "
        "crawl removed control characters, non-characters or bidirectional controls from the fetched page.",
    )


class Evidence(Record):
    """The passage of the draft's `text` a drafted field came from, and the rule that chose it.

    `start` and `end` are offsets (Python string indices) into the draft's `text`, so that
    `text[start:end] == quote`; `pipeline.evidence.evidence_for` makes one and checks that.
    A quote lies within the text as extracted; when a re-crawl changes the text, the drafter
    writes the evidence again."""

    field: PathText = Field(
        description="The drafted field, as a path: trigger, summary.en, timeline.detected_after, action_items.2 "
        "(action_items[2] in a draft written before, read as action_items.2)."
    )
    quote: Text = Field(description="The passage, exactly as it stands in the draft's text.")
    start: int = Field(ge=0, description="Where the quote starts in the draft's text.")
    end: int = Field(ge=1, description="Where the quote ends in the draft's text (exclusive).")
    rule: Annotated[str, StringConstraints(pattern=r"^\S+$", max_length=100)] = Field(
        description="The drafting rule that chose the passage: heading, cue.detection, stated-duration, ..."
    )
    confidence: float | None = Field(
        default=None,
        ge=0,
        le=1,
        exclude_if=lambda v: v is None,  # evidence written before confidences existed reads as it was
        description="How sure the rule is that the passage belongs to the field, from 0 to 1: a heading that names "
        "the field gives 0.8 or more, a cue word less, lowered by modality, negation, quotation or a timeline "
        "order that contradicts the field. Below `draft_confidence_threshold` the passage is a suggestion.",
    )
    model: Annotated[str, StringConstraints(pattern=r"^[\w.@+-]+$", max_length=100)] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # a rule's passage names no model: written as it was
        description="The finder model that chose the passage (rule finder.<field>), by name: the packaged one "
        "(corpus-...) or one `incidentlib learn` trained on the library's reviews. None for a rule's passage.",
    )
    reasons: list[Annotated[str, StringConstraints(max_length=100)]] = Field(
        default=[],
        exclude_if=lambda v: not v,
        description="For a finder's passage: the features that weighed most for it (cue.detection, "
        "section.timeline, heading word \u201cimpact\u201d), for the writer to judge the choice.",
    )

    @model_validator(mode="after")
    def _offsets_fit_the_quote(self) -> Evidence:
        if self.end - self.start != len(self.quote):
            raise ValueError(
                f"offsets {self.start}-{self.end} span {self.end - self.start} characters, "
                f"the quote has {len(self.quote)}"
            )
        if FieldPath.parse(self.field).root not in CaseContent.model_fields:
            raise ValueError(f"{self.field!r} is not a field of a case")
        return self


RunState = Literal["completed", "failed", "cancelled"]


class RunRecord(Record):
    """How the last run of a flow went, as the flow keeps it in `.incidentlib/runs.json` and `status`
    reads it: when it started and ended, how it ended, the Prefect run's name, and its counts."""

    started_at: Timestamp
    finished_at: Timestamp | None = None
    state: RunState = Field(description="completed, failed (an error, kept in `error`) or cancelled (a signal).")
    flow_run: str | None = Field(default=None, description="The Prefect flow run's name, when Prefect ran it.")
    error: Reported | None = Field(default=None, description="Why it failed or was stopped: one line.")
    counts: dict[str, int] = Field(default={}, description="The run's report's counts (new, updated, ...).")


class IncidentStart(Record):
    """Where one of several incidents in a document starts: its heading, and the heading's offset in
    the draft's `text`."""

    heading: str = Field(min_length=1, description="The heading that starts the incident, as written.")
    start: int = Field(ge=0, description="Where the heading starts in the draft's text.")
    draft_id: DraftId | None = Field(
        default=None, description="The draft of this incident alone, which the crawl writes beside the document's."
    )


# A draft's or a case's id: what a possible duplicate, a dismissal or a merge names.
RecordId = DraftId | CaseId
SuggestionKind = Literal["duplicate", "related", "recurrence"]
RelationKind = Literal["related", "recurrence"]  # what a suggestion accepted becomes: `related`, `recurrence_of`


class PossibleDuplicate(Record):
    """Another draft or case that may tell the same incident as this draft, and why it was thought so:
    for a reviewer to merge the two or dismiss the suggestion (pipeline.merge)."""

    id: RecordId = Field(description="The other draft's or case's id.")
    score: float = Field(ge=0, le=1, description="How alike the two are, from 0 to 1.")
    reasons: list[str] = Field(default=[], description="Why, in words: the passage they share, the dates.")
    passage: str | None = Field(default=None, description="A passage both texts hold, when they share one.")


class Dismissal(Record):
    """A suggestion a reviewer dismissed for good: the same pair is never suggested again."""

    kind: SuggestionKind
    id: RecordId = Field(description="The draft or case the dismissed suggestion named.")
    by: Name
    at: Timestamp
    comment: Reported | None = None


class Draft(CaseContent):
    """A case being made: any content field may be empty."""

    id: Annotated[DraftId, Kept(approved=True)]
    state: Annotated[DraftState, Kept()] = DraftState.EXTRACTED
    case_id: Annotated[CaseId | None, Kept(approved=True)] = Field(
        default=None, description="The published case, once there is one."
    )
    # Narrower than a case's: each source carries its archive state. Declared here, not added
    # beside it, so that the field keeps its place in the key order of a written record.
    sources: list[DraftSource] = []  # type: ignore[assignment]
    origin: Annotated[Origin, Kept(approved=True)]
    text: str | None = Field(default=None, description="The full extracted text, for the writer and the reviewer.")
    sections: list[Section] = []
    history: Annotated[list[Transition], Kept()] = []
    extracted: Annotated[dict[str, str], Kept()] = Field(
        default={},
        description="For each field the extractor filled, a hash of the value it wrote: a field whose value "
        "no longer matches was edited by a person, and a re-crawl leaves it alone.",
    )
    # Review material, like `text` and `sections`: a published case carries none of it
    # (pipeline.publish copies only a case's fields). A case states what its sources say and
    # links the sources themselves; the passages and rules are how a reviewer checks a draft,
    # they go stale with the next edit, and the text their offsets point into is not published.
    evidence: Annotated[list[Evidence], Kept()] = Field(
        default=[],
        description="For each drafted field, the passage of `text` it came from and the rule that chose it. "
        "A field a person edits keeps none. Drafts written before evidence existed load with it empty.",
    )
    # Review material like `evidence`: passages a rule found for a field but trusts too little to write
    # into it (their confidence below `draft_confidence_threshold`), for a writer to take or leave.
    suggestions: Annotated[list[Evidence], Kept()] = Field(
        default=[],
        exclude_if=lambda v: not v,  # a draft without suggestions is written as it was
        description="Passages a rule found for a field but did not write into it, their confidence below the "
        "threshold: each with its field, quote, offsets, rule and confidence, for a writer to take into the field.",
    )
    incidents: list[IncidentStart] = Field(
        default=[],
        description="When the document tells several incidents (a logbook, a monthly report): where each "
        "starts, so a writer can split the draft. Empty for one incident, and in drafts written before it existed.",
    )
    part_of: DraftId | None = Field(
        default=None,
        description="For the draft of one incident of a document that tells several: the document's draft. Its "
        "`text` is the incident's part of the document.",
    )
    created_at: Annotated[Timestamp | None, Kept(approved=True)] = None
    # The writer assist's material (pipeline.assist), review material like `evidence`: none of it is published.
    proposals: Annotated[list[Proposal], Kept()] = Field(
        default=[],
        exclude_if=lambda v: not v,  # with the assist unset, a draft's file is as it was
        description="Fields a language model proposed, beside the fields, each waiting for a person to accept it.",
    )
    assist: Annotated[dict[str, AssistRun], Kept()] = Field(
        default={},
        exclude_if=lambda v: not v,
        description="The last request of each of the assist's prompts (propose, translate-ko), by prompt.",
    )
    machine_translated: Annotated[dict[PathText, MachineTranslation], Kept()] = Field(
        default={},
        exclude_if=lambda v: not v,
        description="Translated fields a person accepted from a model (summary.ko), with the English they translate: "
        "a translation whose English has changed since is stale.",
    )
    # The review's bookkeeping of duplicates (pipeline.merge), none of it content: no edit changes it, an
    # approval does not cover it, and a draft without any is written as it was before the fields existed.
    possible_duplicates: Annotated[list[PossibleDuplicate], Kept()] = Field(
        default=[],
        exclude_if=lambda v: not v,
        description="Drafts and cases that may tell the same incident, best first, for a reviewer to merge or "
        "dismiss. Written by the duplicate check; replaced whole each time, never by hand.",
    )
    dismissed: Annotated[list[Dismissal], Kept()] = Field(
        default=[],
        exclude_if=lambda v: not v,
        description="Suggestions (duplicate, related, recurrence) a reviewer dismissed: never suggested again.",
    )
    # Review material like `suggestions`: what a writer said no to is what the finder learns a wrong passage
    # from (`incidentlib learn`), and a re-crawl does not offer it again.
    dismissed_passages: Annotated[list[Evidence], Kept()] = Field(
        default=[],
        exclude_if=lambda v: not v,
        description="Suggested passages a writer dismissed (incidentlib dismiss-suggestion): not offered again "
        "while the text holds them, and counted as wrong for their field when the finder learns.",
    )
    merged_into: Annotated[RecordId | None, Kept()] = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The draft or case this one was merged into (state merged): its sources are there now, and "
        "the crawl never drafts them again here.",
    )


# ---------------------------------------------------------------- the writer assist (pipeline.assist)


class Proposal(Record):
    """One field a language model proposed for a draft. An English proposal rests on passages of the draft's
    text, each found there verbatim (white space aside) before it was kept; a translation names its English."""

    path: PathText = Field(
        description="The field: summary.en, impact.scope, root_cause, remediation (its actions, one a line), "
        "or a translation's path (summary.ko, remediation.0.text.ko)."
    )
    language: LanguageCode = "en"
    text: Text = Field(description="What the model proposes; for root_cause, why it chose the class.")
    term: str | None = Field(default=None, description="root_cause: the class proposed (a vocabulary term).")
    passages: list[Text] = Field(default=[], description="The draft text's passages it rests on, verbatim.")
    translated_from: str | None = Field(default=None, description="A translation: the English it translates.")
    model: str
    prompt: str = Field(description="The prompt's name and version (propose/1).")
    made_at: Timestamp
    text_sha: str = Field(pattern=r"^[0-9a-f]{64}$", description="Of what the model was given (the draft's text).")


class AssistFailure(Record):
    reason: ReasonCode
    message: Reported


class DroppedProposal(Record):
    """A proposal the pipeline refused: a passage not in the text, or a value the record format refuses."""

    path: Reported
    why: Reported


class AssistRun(Record):
    """The last request of one of the assist's prompts for a draft: what it cost and what came of it. An
    unchanged text is not asked again under the same prompt and model."""

    asked_at: Timestamp
    model: str
    prompt: str
    text_sha: str = Field(pattern=r"^[0-9a-f]{64}$")
    fields: list[str] = Field(default=[], description="The fields asked for.")
    hashes: dict[str, str] = Field(
        default={},
        description="translate-ko: each path answered, with the hash of the English it was asked about, so that "
        "accepting one translation does not ask again for the others.",
    )
    prompt_tokens: int = 0
    completion_tokens: int = 0
    proposed: int = Field(default=0, description="Proposals kept.")
    dropped: list[DroppedProposal] = []
    failure: AssistFailure | None = None


class MachineTranslation(Record):
    model: str
    prompt: str
    english: Text = Field(description="The English it translates, as it was when accepted.")
    accepted_by: Name
    accepted_at: Timestamp


# The assist's models are defined after the draft that holds them: resolved now, so that the draft's fields
# (and their markers, which pipeline.fields reads) are complete once this module is imported.
Draft.model_rebuild()


# ---------------------------------------------------------------- link health


class LinkStatus(StrEnum):
    OK = "ok"
    MOVED = "moved"  # redirects elsewhere: `moved_to`
    GONE = "gone"  # 404 or 410: the capture is all that is left
    BLOCKED = "blocked"  # 401/403: often a bot block, not a dead page
    ERROR = "error"  # could not be checked this time: `reason`


class LinkState(Record):
    """What the last refresh found for one source URL (kept in .incidentlib/links.json)."""

    url: Url
    checked_at: Timestamp
    status: LinkStatus
    http_status: int | None = None
    moved_to: Url | None = None
    reason: ReasonCode | None = None
    etag: Reported | None = None
    last_modified: Reported | None = None
    text_sha: str | None = Field(default=None, description="Of the live page's normalised text when last read.")
    archived: Url | None = Field(default=None, description="The newest good capture.")
    capture_text_sha: str | None = Field(default=None, description="Of the newest capture's normalised text.")


# ---------------------------------------------------------------- source registry


class FeedEntry(Record):
    """What the feed entry that proposed a source said of it: weaker than the page's own word
    (pipeline.precedence). Its date is when the entry was posted, not when the incident happened."""

    title: str | None = None
    date: PartialDate | None = None
    org: Name | None = Field(default=None, description="The org the entry names (a list's link text).")


class SourceEntry(Record):
    """One entry of the crawl registry (`sources/*.yaml`): a URL and optional hints.

    The hints (`org`, `kind`, `title`, `date`) are the operator's word and win over the page's;
    what a feed said of the page is kept apart in `feed_entry`, below the page (pipeline.precedence)."""

    url: Url
    org: Name | None = None
    kind: SourceKind | None = None
    title: str | None = None
    date: PartialDate | None = None
    tags: list[str] = []
    licence: str | None = Field(
        default=None,
        description="The licence of the page's text, when known (`CC BY 4.0`, `MIT`): the reader's site's "
        "sources page names it beside the source.",
    )
    discovered_from: Url | None = Field(
        default=None, description="The feed (sources/feeds.yaml) that proposed it, when `discover` found it."
    )
    feed_text: bool = Field(
        default=False,
        description="The draft's text is the feed's own (a status page's postmortem, a Google Cloud incident "
        "report), written by `discover`; the crawl does not fetch the page.",
    )
    feed_entry: FeedEntry = Field(
        default=FeedEntry(),
        description="What the feed that proposed it said of the page: its title, date and org, each used only "
        "where the page says nothing.",
    )


# ---------------------------------------------------------------- feeds and candidates (pipeline.discover)


class FeedKind(StrEnum):
    ATOM = "atom"
    RSS = "rss"
    STATUSPAGE = "statuspage"  # an Atlassian Statuspage: history.atom / history.rss / api/v2/incidents.json
    GCP_INCIDENTS = "gcp-incidents"  # Google Cloud's incidents.json: the whole history in one document
    MARKDOWN_LIST = "markdown-list"  # `[Company](url). Blurb` lines or list items
    HTML_LINKS = "html-links"  # the links a CSS selector picks out of a page


# A feed's own pace, where it differs from the discover flow's schedule: an interval (6h, 7d).
_PACE = re.compile(r"(\d+)([mhd])")


def _check_pattern(value: str) -> str:
    try:
        re.compile(value, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {value!r} ({exc})") from None
    return value


Pattern = Annotated[str, StringConstraints(min_length=1), AfterValidator(_check_pattern)]


class Feed(Record):
    """One entry of `sources/feeds.yaml`: a place that lists postmortems, read by `discover`."""

    url: Url
    kind: FeedKind
    name: Slug | None = Field(default=None, description="A short name for --feed; the URL serves as well.")
    selector: str | None = Field(default=None, description="html-links: the CSS selector of the links to take.")
    org: Name | None = Field(default=None, description="The org of every entry (a list's link text names its own).")
    source_kind: SourceKind | None = Field(default=None, description="The kind given to the sources it proposes.")
    include: list[Pattern] = Field(
        default=[], description="Regular expressions (any case), one of which the title or summary must match."
    )
    exclude: list[Pattern] = Field(default=[], description="Regular expressions that rule an entry out.")
    auto_accept: bool = Field(
        default=False, description="Register what it proposes directly (for feeds that carry only postmortems)."
    )
    schedule: str | None = Field(
        default=None, description="Its own pace, an interval (6h, 7d): read at most that often. None: every run."
    )

    @field_validator("schedule")
    @classmethod
    def _pace(cls, value: str | None) -> str | None:
        match = _PACE.fullmatch((value or "").strip())
        if value is not None and (not match or int(match.group(1)) == 0):
            raise ValueError(f"{value!r} is not an interval such as 30m, 6h or 7d")
        return value

    @model_validator(mode="after")
    def _kind_needs(self) -> Feed:
        if self.kind == FeedKind.HTML_LINKS and not self.selector:
            raise ValueError("an html-links feed needs a selector (the CSS selector of its links)")
        if self.kind != FeedKind.HTML_LINKS and self.selector:
            raise ValueError(f"a selector is for html-links feeds, not {self.kind}")
        return self

    @property
    def pace_seconds(self) -> int | None:
        """The least time between two reads, from `schedule`; None: every run of the flow."""
        match = _PACE.fullmatch((self.schedule or "").strip())
        return int(match.group(1)) * {"m": 60, "h": 3600, "d": 86400}[match.group(2)] if match else None

    @property
    def label(self) -> str:
        return self.name or self.url


class CandidateState(StrEnum):
    OPEN = "open"
    DISMISSED = "dismissed"  # never proposed again


CANDIDATE_ID_PATTERN = r"^c-[0-9a-f]{10}$"
CandidateId = Annotated[str, StringConstraints(pattern=CANDIDATE_ID_PATTERN)]


class Candidate(Record):
    """A page a feed proposed, waiting in `sources/candidates.yaml` for a person to accept or dismiss it."""

    id: CandidateId = Field(description="c- and ten hex digits of the hash of the page's URL.")
    url: Url
    feed: Url = Field(description="The feed that proposed it.")
    title: str | None = None
    date: PartialDate | None = None
    org: Name | None = None
    source_kind: SourceKind | None = None
    why: Reported = Field(description="Why it matched the feed's filters.")
    listed_as: Url | None = Field(
        default=None, description="The link as the feed gave it, where it differs (an archived copy unwrapped)."
    )
    feed_text: bool = Field(default=False, description="The feed carries its text (see SourceEntry.feed_text).")
    found_at: Timestamp
    updated_at: Timestamp | None = Field(default=None, description="When the feed last changed the entry.")
    state: CandidateState = CandidateState.OPEN
    dismissed_at: Timestamp | None = None
    reason: Reported | None = Field(default=None, description="Why it was dismissed.")


class FeedState(Record):
    """What `discover` knows of one feed between runs (kept in .incidentlib/feeds.json, not in git)."""

    url: Url
    checked_at: Timestamp | None = Field(default=None, description="When it was last asked for.")
    read_at: Timestamp | None = Field(default=None, description="When its entries were last read.")
    etag: Reported | None = None
    last_modified: Reported | None = None
    sha256: str | None = Field(default=None, description="Of the body last read whole and well.")
    failure: FetchFailure | None = None
    warnings: list[Reported] = []
    entries: dict[str, str] = Field(
        default={}, description="Each entry's key (its id or URL) and the fingerprint it had when last read."
    )


# ---------------------------------------------------------------- JSON Schema

# The record format's version, published with its schema (`api/v1/schema.json`, `incidentlib schema`) so a
# tool reading the library knows what it reads. Semantic: the major number changes when a record valid
# before may be refused now or a field changes its meaning, the minor when a field is added that older
# records simply lack, the patch for descriptions. 1.0.0 is the format before withdrawal; 1.1.0 adds a
# case's `withdrawn`, `withdrawn_reason`, `withdrawn_by` and `merged_into`; 1.2.0 a draft's
# `possible_duplicates`, `dismissed`, `merged_into` and state `merged`, and a history entry's `action`; 2.0.0
# refuses a text holding a character the gate removes (pipeline.gate: a control character, a non-character, a
# bidirectional control), which a record could hold before, and adds the history note `cleaned`; 2.1.0 adds
# an evidence's `model` and `reasons` (the finder's) and a draft's `dismissed_passages`, and writes field paths
# dotted (`remediation.2`; the bracketed `remediation[2]` is still read); 2.2.0 adds a case's `published` and
# `aliases` (the cases merged into it).
SCHEMA_VERSION = "2.2.0"

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "case": Case,
    "draft": Draft,
    "source": SourceEntry,
    "feed": Feed,
    "candidate": Candidate,
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one record kind (`case`, `draft`, `source`, `feed`, `candidate`), generated
    from the models, with the format's `schema_version` beside the standard keywords."""
    schema = SCHEMA_MODELS[name].model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "schema_version": SCHEMA_VERSION, **schema}
