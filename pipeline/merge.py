"""Duplicates and relations, a reviewer's decisions: merge a draft into another, relate two records,
dismiss a suggestion for good; and the possible duplicates a draft is shown.

    merge(store, "acme-db-outage-1a2b3c4d", "IL-0003", Act("bob"))
    relate(store, "IL-0007", "IL-0003", "recurrence", Act("bob"))
    dismiss(store, "acme-db-outage-1a2b3c4d", "IL-0003", "duplicate", Act("bob", comment="two outages"))
    record_duplicates(store, draft_id, found)       # the duplicate check's findings, kept on the draft

A **merge** moves a draft's sources, each with its capture and archive state, into the survivor (a draft,
or a case: then the case's draft) and ends the merged draft `merged`, naming the survivor in
`merged_into`: the crawl never drafts its sources again, and discovery, which finds them registered, never
proposes them. It is a move of the review's table (`merge`, four eyes: whoever wrote or edited the merged
draft cannot merge it), recorded in both histories. The survivor's new sources are an edit of its
content: an approved or published survivor goes back to `in_review`, and its case gets them only when a
reviewer has approved it again and `promote` has run. A merged draft that was published has its case
withdrawn into the survivor's (pipeline.withdraw), so that the old case id keeps resolving there
(`resolve`); a published draft can therefore be merged only into a published one.

Refused, in one line naming the ids: a draft merged into itself, an unknown id, a survivor merged or
withdrawn itself (the final survivor is named), a case with no draft, a rejected survivor. Merges hold one
lock for the whole data root, so that two of them never cross (A into B while B goes into A). Each record
is written atomically under its own lock, survivor first: a merge cut short is finished by running it
again (the survivor does not take the same source twice, and a merged draft whose case was not withdrawn
yet has it withdrawn).

Nothing here, and nothing anywhere else, writes `related` or `recurrence_of` but `relate`, a person's
edit. A dismissal and a merge are a reviewer's notes in the history, but for the sources a merge takes into
the survivor: those are content, and whoever merged does not approve the survivor too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline import review
from pipeline.changes import Act
from pipeline.errors import ConflictError, RecordError, ReviewError
from pipeline.ids import is_case_id
from pipeline.models import Case, Draft, DraftState, PossibleDuplicate, RelationKind, SuggestionKind
from pipeline.review import ReviewAction
from pipeline.store import Store
from pipeline.withdraw import withdraw

__all__ = [
    "Merged",
    "dismiss",
    "dismissed",
    "draft_of",
    "draft_of_case",
    "merge",
    "record_duplicates",
    "relate",
    "resolve",
    "unfinished_merges",
]


@dataclass
class Merged:
    """What `merge` did: the merged draft and the survivor's as written, the URLs of the sources moved,
    and the merged draft's case when it was withdrawn into the survivor's."""

    draft: Draft
    survivor: Draft
    sources: list[str] = field(default_factory=list)
    withdrawn: str | None = None


def _exists(store: Store, record_id: str) -> bool:
    try:
        return store.exists("case" if is_case_id(record_id) else "draft", record_id)
    except RecordError:  # an id of neither kind
        return False


def _onward(store: Store, record_id: str) -> str | None:
    """Where a record was merged: a draft's or a withdrawn case's `merged_into`; None when it stands."""
    if is_case_id(record_id):
        return store.read_case(record_id).merged_into
    return store.read_draft(record_id).merged_into


def resolve(store: Store, record_id: str) -> str:
    """The record `record_id` resolves to: itself, or the survivor its merges lead to, followed to the
    end (a draft merged into a case merged into another: that other). RecordError for an unknown id."""
    if not _exists(store, record_id):
        raise RecordError(f"{record_id} is neither a draft in drafts/ nor a case in cases/")
    seen = [record_id]
    while (onward := _onward(store, seen[-1])) is not None:
        if onward in seen:
            raise RecordError(f"{record_id}: its merges go round in a circle ({' -> '.join([*seen, onward])})")
        if not _exists(store, onward):
            raise RecordError(f"{seen[-1]} was merged into {onward}, which is neither a draft nor a case")
        seen.append(onward)
    return seen[-1]


def draft_of_case(store: Store, case_id: str) -> Draft | None:
    """The draft a case was published from (its `case_id`), the one that stands when a merged draft
    named the case too; None for a case made by hand."""
    found = store.drafts_of_case(case_id)
    return next((d for d in found if d.state != DraftState.MERGED), next(iter(found), None))


def draft_of(store: Store, record_id: str) -> Draft | None:
    """The draft `record_id` names: the draft itself, or a case's draft (None for a case made by hand)."""
    return draft_of_case(store, record_id) if is_case_id(record_id) else store.read_draft(record_id)


def _record_draft(store: Store, record_id: str, doing: str) -> Draft:
    """The draft a command about `record_id` acts on: the draft itself, or a case's draft; refused when it
    is unknown, merged (naming the survivor), or a case with no draft."""
    if not _exists(store, record_id):
        raise RecordError(f"{record_id} is neither a draft in drafts/ nor a case in cases/")
    survivor = resolve(store, record_id)
    if survivor != record_id:
        raise RecordError(f"{record_id} was merged into {survivor}: {doing} {survivor} instead")
    draft = draft_of(store, record_id)
    if draft is None:
        raise RecordError(f"{record_id} has no draft in drafts/ (a case made by hand): {doing} it by editing its file")
    return draft


def _standing_case(store: Store, case_id: str) -> Case:
    """A case that stands: known, not withdrawn (a merged one names its final survivor)."""
    if not _exists(store, case_id):
        raise RecordError(f"{case_id} is not a case in cases/")
    case = store.read_case(case_id)
    if case.withdrawn is not None:
        onward = f"; it was merged into {resolve(store, case_id)}, name that one" if case.merged_into else ""
        raise RecordError(f"{case_id} is withdrawn{onward}")
    return case


# ---------------------------------------------------------------- merge


def merge(store: Store, draft_id: str, into: str, act: Act) -> Merged:
    """Merge the draft `draft_id` (or a case's draft) into `into`, a draft or a case, by `act.by`, of the version
    `act.seen` when given (ConflictError when it changed since); see the module's docstring."""
    by, comment = act.by, act.comment
    with store.state.lock("merges"):
        if act.seen is not None and store.read_draft_versioned(draft_id)[1] != act.seen:
            label = store.label(store.path("draft", draft_id))
            raise ConflictError(f"{label}: changed by someone else since it was read; re-read it", path=label)
        draft = _merged_draft(store, draft_id, into)
        survivor = _survivor(store, draft, into)
        if draft.state == DraftState.MERGED:  # a merge cut short after the draft: its case is left
            withdrawn = _withdraw_case(store, draft, survivor, by, comment)
            if withdrawn is None:
                raise RecordError(f"{draft_id} was merged into {draft.merged_into} already")
            return Merged(draft, survivor, [], withdrawn)
        review.allowed(draft, ReviewAction.MERGE, by)  # four eyes, before the survivor is written
        if draft.case_id and not survivor.case_id:
            raise RecordError(
                f"{draft.id} is published as {draft.case_id} and {survivor.id} is not published: merge it into a "
                f"published case, so that {draft.case_id} keeps resolving (or merge {survivor.id} into {draft.id})"
            )
        if draft.case_id and survivor.case_id:
            # Its case is withdrawn into the survivor's after the drafts are written: that case must stand
            # now, or the merge would stop half done with nothing to finish it.
            _standing_case(store, survivor.case_id)
        moved = [source.url for source in draft.sources]
        survivor = store.update_draft(survivor.id, lambda s: review.take_sources(s, draft, by, comment))
        draft = store.update_draft(draft.id, lambda d: review.merge(d, into, by, comment))
        return Merged(draft, survivor, moved, _withdraw_case(store, draft, survivor, by, comment))


@dataclass(frozen=True)
class Unfinished:
    """A merge cut short between its writes: `draft` goes into `into`; `state` says what is left."""

    draft: str
    into: str
    state: str

    @property
    def command(self) -> str:
        return f"incidentlib merge {self.draft} --into {self.into}"


def unfinished_merges(drafts: dict[str, Draft], cases: dict[str, Case]) -> list[Unfinished]:
    """The merges a crash stopped between two of their writes (survivor, merged draft, its case's
    withdrawal): each is finished by running the same merge again (`merge`)."""
    found: list[Unfinished] = []
    for survivor in drafts.values():
        for entry in survivor.history:
            taken = review.took_sources_of(entry)
            other = drafts.get(taken) if taken else None
            if other is not None and other.state != DraftState.MERGED:
                left = Unfinished(other.id, survivor.id, f"{survivor.id} took its sources, but it is not merged")
                if left not in found:
                    found.append(left)
    for draft in drafts.values():
        if draft.state != DraftState.MERGED or not draft.case_id or not draft.merged_into:
            continue
        case = cases.get(draft.case_id)
        if case is not None and case.withdrawn is None:
            found.append(Unfinished(draft.id, draft.merged_into, f"merged, but its case {case.id} is not withdrawn"))
        elif case is not None and case.merged_into in cases and case.id not in cases[case.merged_into].aliases:
            found.append(
                Unfinished(draft.id, draft.merged_into, f"merged, but {case.merged_into} does not list {case.id}")
            )
    return found


def _merged_draft(store: Store, draft_id: str, into: str) -> Draft:
    """The draft to merge, checked: known, not merged already (but into this very survivor, by a merge cut
    short), not the survivor itself."""
    if not _exists(store, draft_id):
        raise RecordError(f"{draft_id} is neither a draft in drafts/ nor a case in cases/")
    draft = draft_of(store, draft_id)
    if draft is None:
        raise RecordError(f"{draft_id} has no draft in drafts/ (a case made by hand): withdraw it --into {into}")
    if into in (draft.id, draft.case_id, draft_id):
        raise RecordError(f"{draft_id} cannot be merged into itself")
    if draft.state == DraftState.MERGED and draft.merged_into != into:
        raise RecordError(f"{draft_id} was merged into {draft.merged_into} already")
    return draft


def _survivor(store: Store, draft: Draft, into: str) -> Draft:
    """The draft that takes the sources: `into` itself, or the draft of the case `into`; refused when it is
    unknown, merged or withdrawn (naming the final survivor), rejected, a case with no draft, or the draft."""
    if not _exists(store, into):
        raise RecordError(f"{into} is neither a draft in drafts/ nor a case in cases/: name the survivor")
    final = resolve(store, into)
    if final != into and draft.merged_into != into:
        raise RecordError(f"{into} was merged into {final}: merge {draft.id} into {final}")
    if is_case_id(into):
        if draft.merged_into != into:
            _standing_case(store, into)
        survivor = draft_of_case(store, into)
        if survivor is None:
            raise RecordError(
                f"{into} has no draft in drafts/ (a case made by hand): its sources cannot be reviewed again; "
                f"withdraw {draft.case_id or draft.id} --into {into} instead"
                if draft.case_id
                else f"{into} has no draft in drafts/ (a case made by hand): {draft.id}'s sources have nowhere to go"
            )
    else:
        survivor = store.read_draft(into)
    if survivor.id == draft.id:
        raise RecordError(f"{draft.id} cannot be merged into itself ({into} is its own case)")
    if survivor.state == DraftState.REJECTED:
        raise RecordError(f"{into} is rejected: reopen it first, or merge it into {draft.id} instead")
    return survivor


def _withdraw_case(store: Store, draft: Draft, survivor: Draft, by: str, comment: str | None) -> str | None:
    """The merged draft's case, withdrawn into the survivor's (which lists it among its aliases), unless it had
    none or is withdrawn already; a withdrawal cut short before the survivor named it is finished."""
    if not draft.case_id or not survivor.case_id or not _exists(store, draft.case_id):
        return None
    case = store.read_case(draft.case_id)
    if case.withdrawn is not None and not (
        case.merged_into == survivor.case_id and draft.case_id not in store.read_case(survivor.case_id).aliases
    ):
        return None  # withdrawn already, and named in its survivor's aliases when it was merged into it
    why = f"a duplicate of {survivor.case_id}: its draft {draft.id} was merged into {survivor.id}"
    withdraw(
        store,
        draft.case_id,
        why=f"{why}; {comment.strip()}" if comment and comment.strip() else why,
        by=by,
        into=survivor.case_id,
    )
    return draft.case_id


# ---------------------------------------------------------------- relations and dismissals


def relate(store: Store, record_id: str, other: str, kind: RelationKind, act: Act) -> Draft:
    """Accept a suggestion: the case `other` into the `related` cases of `record_id` (a draft, or a case's
    draft), or as the case it is a recurrence of (`recurrence_of`). An edit of the draft, by `by`: in its
    history, and, for a published draft, back to review, so that a second person approves it before its
    case says so. `other` must be a case that stands (related and recurrence_of name cases)."""
    if not is_case_id(other):
        raise RecordError(f"{other} is not a case id: {kind} names a published case (IL-0003); publish it first")
    _standing_case(store, other)
    draft = _record_draft(store, record_id, "relate")

    def step(current: Draft) -> Draft:
        return review.relate(current, kind, other, act.by, act.comment)

    return store.update_draft(draft.id, step, expected_version=act.seen)


def dismiss(store: Store, record_id: str, other: str, kind: SuggestionKind, act: Act) -> Draft:
    """Dismiss a suggestion (that `other` is a duplicate of `record_id`, related to it or what it recurs)
    for good: kept on the draft (of a case: its draft), never suggested again, and noted in its history.
    A suggestion dismissed already is left as it was (nothing written)."""
    if not _exists(store, other):
        raise RecordError(f"{other} is neither a draft in drafts/ nor a case in cases/")
    draft = _record_draft(store, record_id, "dismiss on")
    by = act.by

    def change(current: Draft) -> Draft | None:
        if kind == "duplicate" and by.casefold() in review.writers(current):
            # Four eyes, as for the merge it forgoes: a writer's "not a duplicate" would hide the pair for good.
            raise ReviewError(
                f"{by} wrote or edited {current.id} and cannot dismiss its possible duplicate {other}: "
                "a reviewer decides (four eyes)"
            )
        after = review.dismiss(current, kind, other, by, act.comment)
        return None if after == current else after

    done = store.update_draft(draft.id, change, expected_version=act.seen)
    if kind == "duplicate":  # dismissed on either side is dismissed on both: the other side forgets it too
        _forget_duplicate(store, other, draft)
    return done


def _forget_duplicate(store: Store, other: str, draft: Draft) -> None:
    """The other draft of a dismissed pair (of a case: its draft) no longer lists this one, nor its case."""
    try:
        found = draft_of(store, other)
    except RecordError:
        return
    names = {draft.id, draft.case_id} - {None}

    def change(current: Draft) -> Draft | None:
        kept = [m for m in current.possible_duplicates if m.id not in names]
        return None if kept == current.possible_duplicates else current.model_copy(update={"possible_duplicates": kept})

    if found is not None:
        store.update_draft(found.id, change)


def dismissed(draft: Draft) -> set[tuple[str, str]]:
    """The suggestions dismissed on the draft, as (kind, id) pairs: `("duplicate", "IL-0003")`. Whatever
    suggests (the duplicate check, `similar`) leaves these out."""
    return {(d.kind, d.id) for d in draft.dismissed}


# ---------------------------------------------------------------- possible duplicates


def record_duplicates(store: Store, draft_id: str, found: Sequence[PossibleDuplicate]) -> bool:
    """Keep what the duplicate check found as the draft's possible duplicates, under its lock, in place of
    the earlier list; True when the draft was written (nothing is written when the list is the same).

    Left out: the draft itself, a suggestion the draft's dismissals name, a record that is gone or was
    withdrawn without a survivor. A record merged since is replaced by its survivor (said in its reasons).
    The best score first, each record once. A merged draft keeps none. The list is the review's
    bookkeeping, not content: no history entry, no edit, the approval untouched."""
    resolved = [kept for match in found if (kept := _resolved(store, match)) is not None]
    written: list[bool] = []

    def change(draft: Draft) -> Draft | None:
        wanted = [] if draft.state == DraftState.MERGED else _kept(draft, resolved)
        written.append(wanted != draft.possible_duplicates)
        return draft.model_copy(update={"possible_duplicates": wanted}) if written[-1] else None

    store.update_draft(draft_id, change)
    return written[-1]


def _resolved(store: Store, match: PossibleDuplicate) -> PossibleDuplicate | None:
    """The match named by the record it resolves to (its survivor, when merged); None when it is gone or
    withdrawn with no survivor."""
    try:
        final = resolve(store, match.id)
        if is_case_id(final) and store.read_case(final).withdrawn is not None:
            return None
    except RecordError:
        return None
    if final == match.id:
        return match
    return match.model_copy(update={"id": final, "reasons": [*match.reasons, f"{match.id} was merged into {final}"]})


def _kept(draft: Draft, found: Sequence[PossibleDuplicate]) -> list[PossibleDuplicate]:
    """The matches the draft is shown, pure: best first, each record once, itself and what it dismissed left out."""
    gone = {other for kind, other in dismissed(draft) if kind == "duplicate"} | {draft.id, draft.case_id}
    kept: dict[str, PossibleDuplicate] = {}
    for match in sorted(found, key=lambda m: -m.score):
        if match.id not in gone:
            kept.setdefault(match.id, match)
    return list(kept.values())
