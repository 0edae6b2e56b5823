"""The review of drafts, pure: states, the moves between them, and what a draft still lacks.

    extracted ──write──▶ written ──approve──▶ approved ──promote──▶ published
        ▲                  │ ▲                   │
        │   request-changes│ └──write── changes_requested
        │                  ▼
        └──reopen── rejected ◀──reject── (any state but published)

    (any state but merged) ──merge──▶ merged     its sources moved into another draft or case

Every move a draft can make is one row of TRANSITIONS; the functions below look their
move up there, and any other is refused in one line naming the rule. The manual has the
same table (docs/review.md; a test keeps the two in step with the code):

| from | action | to | who may |
| --- | --- | --- | --- |
| `extracted` | `edit` | `extracted` | anyone |
| `extracted` | `write` | `written` | anyone |
| `extracted` | `reject` | `rejected` | a reviewer (four eyes) |
| `extracted` | `merge` | `merged` | a reviewer (four eyes) |
| `written` | `edit` | `written` | anyone |
| `written` | `write` | `written` | anyone |
| `written` | `approve` | `approved` | a reviewer (four eyes) |
| `written` | `request-changes` | `changes_requested` | a reviewer (four eyes) |
| `written` | `reject` | `rejected` | a reviewer (four eyes) |
| `written` | `merge` | `merged` | a reviewer (four eyes) |
| `in_review` | `edit` | `in_review` | anyone |
| `in_review` | `approve` | `approved` | a reviewer (four eyes) |
| `in_review` | `request-changes` | `changes_requested` | a reviewer (four eyes) |
| `in_review` | `reject` | `rejected` | a reviewer (four eyes) |
| `in_review` | `merge` | `merged` | a reviewer (four eyes) |
| `changes_requested` | `edit` | `changes_requested` | anyone |
| `changes_requested` | `write` | `written` | anyone |
| `changes_requested` | `reject` | `rejected` | a reviewer (four eyes) |
| `changes_requested` | `merge` | `merged` | a reviewer (four eyes) |
| `approved` | `edit` | `in_review` | anyone |
| `approved` | `promote` | `published` | the pipeline (`incidentlib promote`) |
| `approved` | `reject` | `rejected` | a reviewer (four eyes) |
| `approved` | `merge` | `merged` | a reviewer (four eyes) |
| `published` | `edit` | `in_review` | anyone |
| `published` | `merge` | `merged` | a reviewer (four eyes) |
| `rejected` | `reopen` | `extracted` | anyone |
| `rejected` | `merge` | `merged` | a reviewer (four eyes) |

An **edit** is any change a person makes to the draft's content (`incidentlib edit`,
`incidentlib set`), in any state but rejected: it is a move like the others, kept in the
history with the fields it changed, and after an approval it sends the draft back to
`in_review`. An edit that changes nothing is no move. **A reviewer** (four eyes) is anyone
who is not in the draft's history as a writer or an editor and did not sign it
(`review.written_by`). `reviewed_by` and `reviewed_at` are set by an approval and cleared
by every other move. Every move is appended to the draft's history (who, when, from, to,
comment, fields changed) and never rewritten, so no decision is lost, rejections included.
Each function takes a draft and returns the new one, or raises ReviewError saying why not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from pipeline import gate
from pipeline.errors import ReviewError
from pipeline.evidence import without_evidence
from pipeline.fieldpath import FieldPath
from pipeline.fields import (
    ACTION_LISTS,
    BOOKKEEPING,
    KEPT,
    NARRATIVE,
    OPTIONAL_NARRATIVE,
    REQUIRED,
    REQUIRED_NARRATIVE,
    localized,
)
from pipeline.models import (
    ArchiveState,
    ArchiveStatus,
    Case,
    Dismissal,
    Draft,
    DraftSource,
    DraftState,
    FieldEdit,
    HistoryNote,
    RelationKind,
    Review,
    SuggestionKind,
    Transition,
    utc_now,
)
from pipeline.records import load_record

__all__ = [
    "MOVES",
    "OPTIONAL_NARRATIVE",
    "PIPELINE_FIELDS",
    "REQUIRED_NARRATIVE",
    "TRANSITIONS",
    "Move",
    "ReviewAction",
    "Who",
    "allowed",
    "apply_edit",
    "approve",
    "changed_fields",
    "dismiss",
    "edited",
    "merge",
    "missing_for_publication",
    "missing_languages",
    "move",
    "next_turn",
    "reject",
    "relate",
    "reopen",
    "request_changes",
    "set_field",
    "set_value",
    "take_sources",
    "took_sources_of",
    "value_at",
    "without_notes",
    "write",
    "writers",
]

# Narrative fields every published case has, in every required language (REQUIRED_NARRATIVE), and the
# others (OPTIONAL_NARRATIVE): both read off the models by pipeline.fields.


def missing_languages(record: Case | Draft, languages: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each narrative text present (fields, then remediation and action items) with the required
    languages it lacks; texts that lack none are left out. Empty fields are not checked here."""
    texts = [(name, getattr(record, name)) for name in (*REQUIRED_NARRATIVE, *OPTIONAL_NARRATIVE)]
    for list_name in ACTION_LISTS:
        texts += [(f"{list_name}.{i}.text", action.text) for i, action in enumerate(getattr(record, list_name))]
    gaps = [(name, [lang for lang in languages if lang not in text]) for name, text in texts if text]
    return [(name, langs) for name, langs in gaps if langs]


def missing_for_publication(draft: Draft, languages: Sequence[str]) -> list[str]:
    """Everything the draft lacks before it can be published, one short phrase each."""
    gaps = dict(missing_languages(draft, languages))
    missing: list[str] = []
    for name in (*REQUIRED_NARRATIVE, *OPTIONAL_NARRATIVE):
        if name in REQUIRED_NARRATIVE and not getattr(draft, name):
            missing.append(name)
        missing += [f"{name}.{lang}" for lang in gaps.pop(name, [])]
    missing += [f"{path}.{lang}" for path, langs in gaps.items() for lang in langs]
    for name in REQUIRED:  # the narrative ones are above, with their languages
        if name not in NARRATIVE and not getattr(draft, name):
            missing.append(name)
    if not draft.sources:
        missing.append("sources")
    for index, source in enumerate(draft.sources):
        if not source.archived or source.archive.status != ArchiveStatus.CAPTURED:
            why = source.archive.reason or source.archive.status
            missing.append(f"sources.{index}.archived ({why})")
    return missing


class ReviewAction(StrEnum):
    """What a person (or the pipeline) does to a draft; each is a command of the same name."""

    EDIT = "edit"  # any change to the draft's content: `incidentlib edit` or `incidentlib set`
    WRITE = "write"
    APPROVE = "approve"
    REQUEST_CHANGES = "request-changes"
    REJECT = "reject"
    REOPEN = "reopen"
    PROMOTE = "promote"
    MERGE = "merge"  # `incidentlib merge DRAFT --into ID` (pipeline.merge): its sources go to the survivor


class Who(StrEnum):
    """Who may make a move."""

    ANYONE = "anyone"
    REVIEWER = "a reviewer"  # four eyes: not in the history as a writer or editor, not its signer
    PIPELINE = "incidentlib promote"


@dataclass(frozen=True)
class Move:
    """One allowed move: from a state, by an action, to a state, by whom."""

    from_state: DraftState
    action: ReviewAction
    to_state: DraftState
    who: Who

    def row(self) -> str:
        """The move as a row of the Markdown table in this module's docstring and docs/review.md."""
        who = _WHO[self.who]
        return f"| `{self.from_state.value}` | `{self.action.value}` | `{self.to_state.value}` | {who} |"


_WHO = {
    Who.ANYONE: "anyone",
    Who.REVIEWER: "a reviewer (four eyes)",
    Who.PIPELINE: "the pipeline (`incidentlib promote`)",
}


_E, _W, _R, _C = DraftState.EXTRACTED, DraftState.WRITTEN, DraftState.IN_REVIEW, DraftState.CHANGES_REQUESTED
_A, _P, _X, _M = DraftState.APPROVED, DraftState.PUBLISHED, DraftState.REJECTED, DraftState.MERGED
_ED, _WR, _AP = ReviewAction.EDIT, ReviewAction.WRITE, ReviewAction.APPROVE
_RC, _RJ, _RO, _PR = ReviewAction.REQUEST_CHANGES, ReviewAction.REJECT, ReviewAction.REOPEN, ReviewAction.PROMOTE
_MG = ReviewAction.MERGE
_ANY, _REV, _PIPE = Who.ANYONE, Who.REVIEWER, Who.PIPELINE

# Every move a draft can make; anything else is refused. Rows in the order of the docstring's table.
TRANSITIONS: tuple[Move, ...] = (
    Move(_E, _ED, _E, _ANY),
    Move(_E, _WR, _W, _ANY),
    Move(_E, _RJ, _X, _REV),
    Move(_E, _MG, _M, _REV),
    Move(_W, _ED, _W, _ANY),
    Move(_W, _WR, _W, _ANY),
    Move(_W, _AP, _A, _REV),
    Move(_W, _RC, _C, _REV),
    Move(_W, _RJ, _X, _REV),
    Move(_W, _MG, _M, _REV),
    Move(_R, _ED, _R, _ANY),
    Move(_R, _AP, _A, _REV),
    Move(_R, _RC, _C, _REV),
    Move(_R, _RJ, _X, _REV),
    Move(_R, _MG, _M, _REV),
    Move(_C, _ED, _C, _ANY),
    Move(_C, _WR, _W, _ANY),
    Move(_C, _RJ, _X, _REV),
    Move(_C, _MG, _M, _REV),
    Move(_A, _ED, _R, _ANY),
    Move(_A, _PR, _P, _PIPE),
    Move(_A, _RJ, _X, _REV),
    Move(_A, _MG, _M, _REV),
    Move(_P, _ED, _R, _ANY),
    Move(_P, _MG, _M, _REV),
    Move(_X, _RO, _E, _ANY),
    Move(_X, _MG, _M, _REV),
)
_MOVES = {(move.from_state, move.action): move for move in TRANSITIONS}
_VERBS = {ReviewAction.REQUEST_CHANGES: "request changes on", ReviewAction.WRITE: "mark as written"}


# History entries that are notes, not writing: a reviewer's merge and dismissal, and the crawl's note of what
# the gate removed from a fetched page. Their author stays free to review the draft, but for what a note
# changed: a survivor's sources taken in are content, and who merged them in does not approve them too.
_NOTES = frozenset({"merge", "dismiss", "cleaned"})


def _wrote(entry: Transition) -> bool:
    """Whether a history entry makes its author a writer of the draft: one that changed a field, or an
    entry to `written` or `in_review` (only an edit moves a draft there, and that is how a record written
    before `changed` existed kept an edit) that is not one of a reviewer's notes (a merge, a dismissal)."""
    return bool(entry.changed) or (entry.action not in _NOTES and entry.to_state in (_W, _R))


def writers(draft: Draft) -> set[str]:
    """Everyone, case-folded, who signed the draft as written or edited its content, now or earlier."""
    names = {h.by.casefold() for h in draft.history if _wrote(h)}
    if draft.review.written_by:
        names.add(draft.review.written_by.casefold())
    return names


def allowed(draft: Draft, action: ReviewAction, by: str) -> Move:
    """The move `action` makes from the draft's state when `by` may make it; else ReviewError naming the rule."""
    verb = _VERBS.get(action, action.value)
    move = _MOVES.get((draft.state, action))
    if move is None:
        states = [m.from_state.value for m in TRANSITIONS if m.action == action]
        listed = ", ".join(states[:-1]) + " or " + states[-1] if len(states) > 1 else states[0]
        raise ReviewError(
            f"cannot {verb} a draft that is {draft.state.value} (only one that is {listed})", draft_id=draft.id
        )
    if move.who == Who.REVIEWER and by.casefold() in writers(draft):
        raise ReviewError(
            f"{by} wrote or edited this draft and cannot {verb} it; another reviewer must", draft_id=draft.id
        )
    if move.who == Who.PIPELINE and by != Who.PIPELINE.value:
        raise ReviewError(f"only {Who.PIPELINE.value} may {verb} a draft, not {by}", draft_id=draft.id)
    return move


def _step(
    draft: Draft,
    move: Move,
    by: str,
    comment: str | None,
    changed: Sequence[str] = (),
    edits: Sequence[FieldEdit] = (),
    action: HistoryNote | None = None,
    **changes: Any,
) -> Draft:
    entry = Transition(
        at=utc_now(),
        by=by,
        from_state=draft.state,
        to_state=move.to_state,
        comment=comment,
        changed=list(changed),
        edits=list(edits),
        action=action,
    )
    return draft.model_copy(update={"state": move.to_state, "history": [*draft.history, entry], **changes})


def _unapproved(draft: Draft) -> Review:
    return draft.review.model_copy(update={"reviewed_by": None, "reviewed_at": None})


def write(draft: Draft, by: str, languages: Sequence[str], comment: str | None = None) -> Draft:
    """The writer has filled the narrative fields: sign the draft and hand it to review."""
    move = allowed(draft, ReviewAction.WRITE, by)
    # Each of `missing` is a phrase (`sources.0.archived (pending)`), not a path: its first word names the field.
    narrative = [m for m in missing_for_publication(draft, languages) if m.split(".")[0] in REQUIRED_NARRATIVE]
    if narrative:
        raise ReviewError(f"not written yet, still missing {', '.join(narrative)}", draft_id=draft.id)
    return _step(draft, move, by, comment, review=Review(written_by=by))


def approve(draft: Draft, by: str, languages: Sequence[str], comment: str | None = None) -> Draft:
    """A reviewer who neither wrote nor edited the draft approves it, complete."""
    move = allowed(draft, ReviewAction.APPROVE, by)
    missing = missing_for_publication(draft, languages)
    if missing:
        raise ReviewError(f"incomplete, cannot approve; missing {', '.join(missing)}", draft_id=draft.id)
    review = draft.review.model_copy(update={"reviewed_by": by, "reviewed_at": utc_now()})
    return _step(draft, move, by, comment, review=review)


def request_changes(draft: Draft, by: str, comment: str) -> Draft:
    """Back to the writer with the reviewer's comments."""
    move = allowed(draft, ReviewAction.REQUEST_CHANGES, by)
    if not comment or not comment.strip():
        raise ReviewError("say what should change (--comment)", draft_id=draft.id)
    return _step(draft, move, by, comment.strip(), review=_unapproved(draft))


def reject(draft: Draft, by: str, reason: str) -> Draft:
    """Rejected, with a reason: the draft is kept, and its source is not drafted again."""
    move = allowed(draft, ReviewAction.REJECT, by)
    if not reason or not reason.strip():
        raise ReviewError("say why it is rejected (--reason)", draft_id=draft.id)
    return _step(draft, move, by, reason.strip(), review=_unapproved(draft))


def reopen(draft: Draft, by: str, comment: str | None = None) -> Draft:
    """A rejected draft goes back to the start; its source is crawled again."""
    move = allowed(draft, ReviewAction.REOPEN, by)
    return _step(draft, move, by, comment, review=Review(written_by=draft.review.written_by))


def _note(draft: Draft, by: str, comment: str, action: HistoryNote, **changes: Any) -> Draft:
    """A history entry that leaves the draft in its state (a dismissal; a merge that brought nothing new)."""
    entry = Transition(
        at=utc_now(), by=by, from_state=draft.state, to_state=draft.state, comment=comment, action=action
    )
    return draft.model_copy(update={"history": [*draft.history, entry], **changes})


def note(draft: Draft, by: str, said: str, comment: str | None, action: HistoryNote, **changes: Any) -> Draft:
    """A note in the draft's history (`said`, then the person's comment), the state left as it was."""
    return _note(draft, by, _with(said, comment), action, **changes)


def _with(said: str, comment: str | None) -> str:
    return f"{said}: {comment.strip()}" if comment and comment.strip() else said


def merge(draft: Draft, into: str, by: str, comment: str | None = None) -> Draft:
    """The draft merged into `into` (a draft's or a case's id) by a reviewer who neither wrote nor edited it:
    its sources leave it for the survivor (`take_sources`), its suggested duplicates go, and it ends `merged`,
    naming the survivor. Its history says where each source went."""
    move = allowed(draft, ReviewAction.MERGE, by)
    urls = ", ".join(source.url for source in draft.sources) or "none"
    said = _with(f"merged into {into}; its sources moved there: {urls}", comment)
    return _step(
        draft,
        move,
        by,
        said,
        action="merge",
        merged_into=into,
        sources=[],
        possible_duplicates=[],
        review=_unapproved(draft),
    )


def take_sources(survivor: Draft, merged: Draft, by: str, comment: str | None = None) -> Draft:
    """The survivor of a merge with the merged draft's sources added, each as it was there: its capture
    (`archived`) and its archive state. A URL the survivor cites already keeps the survivor's entry,
    unless only the merged draft's is captured. Taking new sources is an edit of the survivor's content,
    so an approved or published survivor goes back to `in_review` for a reviewer to approve it again
    (then `promote` gives its case the sources); the entry, a merge note that changed the sources, makes
    its author an editor of the survivor, who does not approve it too. The survivor forgets the merged
    draft as a possible duplicate."""
    sources = list(survivor.sources)
    for source in merged.sources:
        at = next((i for i, mine in enumerate(sources) if mine.url == source.url), None)
        if at is None:
            sources.append(source.model_copy(deep=True))
        elif not _captured(sources[at]) and _captured(source):
            sources[at] = source.model_copy(deep=True)
    duplicates = [p for p in survivor.possible_duplicates if p.id not in (merged.id, merged.case_id)]
    if sources == survivor.sources:
        said = _with(f"took in {merged.id} (merged into it), whose sources it cites already", comment)
        return _note(survivor, by, said, "merge", possible_duplicates=duplicates)
    move = allowed(survivor, ReviewAction.EDIT, by)
    taken = ", ".join(s.url for s in sources if s not in survivor.sources)
    said = _with(f"took the sources of {merged.id} (merged into it): {taken}", comment)
    return _step(
        survivor,
        move,
        by,
        said,
        changed=["sources"],
        action="merge",
        sources=sources,
        possible_duplicates=duplicates,
        review=_unapproved(survivor),
    )


# The survivor's note of `take_sources`, read back by `took_sources_of`.
_TOOK = re.compile(r"took (?:the sources of|in) (\S+) \(merged into it\)")


def took_sources_of(entry: Transition) -> str | None:
    """The draft whose sources this history entry of a survivor took in (`take_sources`), else None."""
    found = _TOOK.match(entry.comment or "") if entry.action == "merge" else None
    return found.group(1) if found else None


def _captured(source: DraftSource) -> bool:
    return bool(source.archived) and source.archive.status == ArchiveStatus.CAPTURED


def dismiss(draft: Draft, kind: SuggestionKind, other: str, by: str, comment: str | None = None) -> Draft:
    """The draft with the suggestion `kind` `other` dismissed for good, in a reviewer's note: it is kept
    in `dismissed` (so that it is never suggested again) and, for a duplicate, leaves the draft's possible
    duplicates. A note leaves the state and the approval as they were, and makes its author no writer.
    A suggestion dismissed already is not dismissed twice (the draft comes back as it was)."""
    if draft.state == DraftState.MERGED:
        raise ReviewError(f"it was merged into {draft.merged_into}: dismiss the suggestion there", draft_id=draft.id)
    if other in (draft.id, draft.case_id):
        raise ReviewError(f"{other} is this draft itself: there is nothing to dismiss", draft_id=draft.id)
    if any(d.kind == kind and d.id == other for d in draft.dismissed):
        return draft
    dismissal = Dismissal(kind=kind, id=other, by=by, at=utc_now(), comment=(comment or "").strip() or None)
    kept = [p for p in draft.possible_duplicates if kind != "duplicate" or p.id != other]
    said = _with(f"dismissed the suggestion: {kind} {other}", comment)
    return _note(draft, by, said, "dismiss", dismissed=[*draft.dismissed, dismissal], possible_duplicates=kept)


def relate(draft: Draft, kind: RelationKind, case_id: str, by: str, comment: str | None = None) -> Draft:
    """The draft with a suggestion accepted: `case_id` added to `related`, or made its `recurrence_of`
    (the case it is a recurrence of). An edit like any other (`edited`): in the history with the field it
    changed, its author an editor, an approved or published draft back in review. A relation the draft has
    already is no move."""
    if case_id == draft.case_id:
        raise ReviewError(f"{case_id} is this draft's own case: a case is not related to itself", draft_id=draft.id)
    value: list[str] | str = case_id
    if kind == "related":
        value = draft.related if case_id in draft.related else [*draft.related, case_id]
    said = _with(f"accepted the suggestion: {kind} {case_id}", comment)
    after = edited(
        draft, set_field(draft, "related" if kind == "related" else "recurrence_of", value), by, comment=said
    )
    if len(after.history) == len(draft.history):
        return after
    marked = after.history[-1].model_copy(update={"action": "relate"})
    return after.model_copy(update={"history": [*after.history[:-1], marked]})


# Kept by the pipeline and the review commands (marked `Kept` in the models); an edit may not touch them.
PIPELINE_FIELDS = KEPT


def edited(before: Draft, after: Draft, by: str, *, comment: str | None = None) -> Draft:
    """A person's edit, in any state: recorded in the history with the fields it changed.

    An edit is a move of TRANSITIONS like any other: after an approval (or a publication)
    it sends the draft back to `in_review` and clears the approval; a rejected draft is
    reopened before it is edited. The review's own fields (state, review, history, case id,
    archive states) are refused: an edit cannot approve a draft, take another case's id or
    fake a capture. An edit that changes nothing is no move. A field the edit changed keeps
    no machine evidence (pipeline.evidence.without_evidence): it is the person's now.
    """
    for name in PIPELINE_FIELDS:
        if getattr(before, name) != getattr(after, name):
            raise ReviewError(
                f"{name} is kept by the pipeline and the review commands, not edited by hand", draft_id=before.id
            )
    if _archive_states(before) != _archive_states(after):
        raise ReviewError(
            "sources' archive states and links are kept by the archive run, not edited by hand", draft_id=before.id
        )
    changed = changed_fields(before, after)
    if not changed:
        return after
    move = allowed(before, ReviewAction.EDIT, by)
    said = "edited after approval" if move.to_state != before.state else "edited"
    old, new = _content(before), _content(after)
    paths = [FieldPath.parse(path) for path in changed]
    edits = [FieldEdit(path=str(path), before=path.get(old), after=path.get(new)) for path in paths]
    # A translation a person changes is theirs, no longer the machine's (pipeline.assist).
    machine = {
        path: made
        for path, made in after.machine_translated.items()
        if not any(FieldPath.parse(path).within(c) for c in paths)  # a list named whole: its marks too
    }
    return _step(
        without_evidence(after, changed).model_copy(update={"machine_translated": machine}),
        move,
        by,
        f"{said}: {comment}" if comment else said,
        changed=changed,
        edits=edits,
        review=_unapproved(after),
    )


def apply_edit(before: Draft, data: bytes, by: str, label: str) -> Draft:
    """A person's edit of the draft's whole file (`incidentlib edit`): parsed, checked, recorded.

    Lines whose first character (after spaces) is `#` are dropped first: JSON has no such
    line, so they are notes, such as the reason a previous attempt was refused. Raises
    InvalidRecord or ReviewError, each naming `label`, when the edit cannot be saved.
    """
    return edited(before, read_edit(before, data, label), by)


def read_edit(before: Draft, data: bytes, label: str) -> Draft:
    """The draft a person's edit of its whole file gives, not yet recorded as their edit (`apply_edit`):
    its note lines dropped, parsed and checked (InvalidRecord or ReviewError, each naming `label`)."""
    after = load_record(Draft, without_notes(data), label)
    if after.id != before.id:
        raise ReviewError(f"{label}: id: the id is the file name; it cannot be edited")
    return after


def without_notes(data: bytes) -> bytes:
    """The text without its note lines: those whose first character (after spaces) is `#`."""
    return b"".join(line for line in data.splitlines(keepends=True) if not line.lstrip().startswith(b"#"))


def changed_fields(before: Draft, after: Draft) -> list[str]:
    """The content fields that differ, as dotted paths (`summary.ko`, `impact.scope`, `remediation.0.text.en`);
    a list that changed length is named whole (`components`)."""
    return _differences(_content(before), _content(after), "")


def _differences(old: Any, new: Any, path: str) -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [*old, *(key for key in new if key not in old)]
        return [d for key in keys for d in _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in _differences(a, b, f"{path}.{i}")]
    return [path]


def _archive_states(draft: Draft) -> list[tuple[str, str | None, ArchiveState]]:
    return [(s.url, s.archived, s.archive) for s in draft.sources]


def _content(draft: Draft) -> dict[str, Any]:
    """What a reviewer approves: the case fields, not the review's own bookkeeping."""
    return draft.model_dump(mode="json", exclude=set(BOOKKEEPING))


def set_value(draft: Draft, path: str, value: Any, by: str, comment: str | None = None) -> Draft:
    """A person's edit of one field (`incidentlib set`): `value` from outside, through the gate (pipeline.gate),
    set at `path` and recorded as an edit; the history says what the gate removed from it, if anything."""
    removed = gate.Removed()
    after = set_field(draft, path, value, removed)
    said = "; ".join(part for part in (comment, removed.note() if removed else None) if part)
    return edited(draft, after, by, comment=said or None)


def set_field(draft: Draft, path: str, value: Any, removed: gate.Removed | None = None) -> Draft:
    """The draft with one field (a dotted path: `summary.ko`, `impact.scope`) set to `value`, which the gate
    cleans (what it removed added to `removed`)."""
    try:
        at = FieldPath.parse(path)
    except ValueError as exc:
        raise ReviewError(str(exc), draft_id=draft.id) from None
    if at.root in PIPELINE_FIELDS:
        raise ReviewError(
            f"{at.root} is kept by the pipeline and the review commands, not set by hand", draft_id=draft.id
        )
    if value is not None and not isinstance(value, dict) and localized(str(at)):
        raise ReviewError(
            f"{at} holds a text for each language: set one of them, as {at}.en (or {at}.ko, ...), "
            f'or give them all as JSON, {{"en": "..."}}',
            draft_id=draft.id,
        )
    data = draft.model_dump(mode="json")
    if len(at.parts) == 1 and at.root not in data:
        raise ReviewError(f"no field {at}", draft_id=draft.id)
    try:
        data = at.set(data, value)
    except LookupError as exc:
        raise ReviewError(str(exc), draft_id=draft.id) from None
    try:
        return Draft.model_validate(data, context={"gate": gate.Removed() if removed is None else removed})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ReviewError(f"{where}: {error['msg'].removeprefix('Value error, ')}", draft_id=draft.id) from None


def value_at(draft: Draft, path: str) -> Any:
    """The value of a content field at a dotted path (`summary.en`, `remediation.0.text.en`), or None."""
    return FieldPath.parse(path).get(_content(draft))


# The moves a person makes by name, each a command of its own and a button of the web page: every
# action of TRANSITIONS but an edit (made by changing the content) and a promotion (the pipeline's).
# A merge is made by `incidentlib merge` alone (pipeline.merge: it needs the survivor and writes two drafts).
MOVES: tuple[ReviewAction, ...] = tuple(
    action
    for action in ReviewAction
    if action not in (ReviewAction.EDIT, ReviewAction.PROMOTE, ReviewAction.MERGE)
    and any(m.action == action for m in TRANSITIONS)
)


def move(draft: Draft, action: ReviewAction, by: str, languages: Sequence[str], comment: str | None = None) -> Draft:
    """The move `action` (one of MOVES) by `by`, with its comment: the reason of a rejection, what
    should change for a request of changes, a note kept in the history for the others (an empty
    one is none). The command line and the web page both move a draft by this."""
    match action:
        case ReviewAction.WRITE:
            return write(draft, by, languages, comment or None)
        case ReviewAction.APPROVE:
            return approve(draft, by, languages, comment or None)
        case ReviewAction.REQUEST_CHANGES:
            return request_changes(draft, by, comment or "")
        case ReviewAction.REJECT:
            return reject(draft, by, comment or "")
        case ReviewAction.REOPEN:
            return reopen(draft, by, comment or None)
    raise ValueError(f"{action} is not a move made by name; those are {', '.join(MOVES)}")


# How next_turn says each move a person (or the pipeline) makes next.
_NEXT = {
    ReviewAction.WRITE: "mark it written",
    ReviewAction.APPROVE: "approve it or request changes",
    ReviewAction.REQUEST_CHANGES: "approve it or request changes",
    ReviewAction.REOPEN: "reopen it",
    ReviewAction.PROMOTE: "publish it (incidentlib promote)",
}


def _names(draft: Draft) -> list[str]:
    """The writers and editors of the draft as their names are spelt, first seen first (`writers`)."""
    spelt = [h.by for h in draft.history if _wrote(h)]
    if draft.review.written_by:
        spelt.append(draft.review.written_by)
    seen: dict[str, str] = {}
    for name in spelt:
        seen.setdefault(name.casefold(), name)
    return list(seen.values())


def next_turn(draft: Draft) -> str:
    """Who acts next on the draft and by which move, in a few words, read off TRANSITIONS: the moves
    that take it from its state elsewhere, but a rejection (which any state but published allows) and
    an edit, e.g. "a reviewer other than ann: approve it or request changes"; "nobody" for a
    published one."""
    if draft.state == DraftState.MERGED:
        return f"nobody: it was merged into {draft.merged_into}"
    turns: dict[str, list[str]] = {}
    for step in TRANSITIONS:
        if step.from_state != draft.state or step.to_state == step.from_state:
            continue
        if step.action in (ReviewAction.EDIT, ReviewAction.REJECT, ReviewAction.MERGE):
            continue
        if step.who == Who.REVIEWER:
            names = _names(draft)
            who = f"a reviewer other than {', '.join(names)}" if names else "a reviewer"
        elif step.who == Who.PIPELINE:
            who = "the pipeline"
        else:
            who = "a writer" if step.action == ReviewAction.WRITE else "anyone"
        said = turns.setdefault(who, [])
        if _NEXT[step.action] not in said:
            said.append(_NEXT[step.action])
    if not turns:
        return f"nobody: it is {draft.state.value} (an edit sends it back to review)"
    return "; ".join(f"{who}: {' or '.join(moves)}" for who, moves in turns.items())
