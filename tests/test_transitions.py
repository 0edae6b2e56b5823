"""The review's table of moves: every move it lists is made, every other refused in one line; edits are moves too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import captured_source
from manual import section

from pipeline import review
from pipeline.errors import ReviewError
from pipeline.models import Draft, DraftState, Origin, Transition
from pipeline.publish import promote
from pipeline.review import TRANSITIONS, ReviewAction
from pipeline.settings import Settings
from pipeline.store import Store

MOVES = {(move.from_state, move.action): move for move in TRANSITIONS}
LANGUAGES = ["en"]


def draft_in(state: DraftState, case_json: dict[str, Any]) -> Draft:
    """A complete draft (every field filled, its source captured) in `state`: written by alice
    once it is past `extracted`, approved by bob once it is approved."""
    url = "https://example.org/postmortems/1"
    fields = {k: v for k, v in case_json.items() if k not in ("id", "url", "updated_at", "sources", "review")}
    written = state not in (DraftState.EXTRACTED,)
    approved = state in (DraftState.APPROVED, DraftState.PUBLISHED)
    return Draft.model_validate(
        {
            **fields,
            "id": "example-org-1-00000001",
            "state": state,
            "case_id": "IL-0001" if state == DraftState.PUBLISHED else None,
            "review": {
                "written_by": "alice" if written else None,
                "reviewed_by": "bob" if approved else None,
                "reviewed_at": "2026-11-20T10:00:00Z" if approved else None,
            },
            "origin": Origin(url=url, canonical_url=url).model_dump(mode="json"),
            "sources": [captured_source(url)],
        }
    )


def act(draft: Draft, action: ReviewAction, by: str) -> Draft:
    """The review function of `action`, with what it needs besides the draft."""
    if action == ReviewAction.EDIT:
        return review.edited(draft, draft.model_copy(update={"lessons": {"en": "Check the checkpoints."}}), by)
    if action == ReviewAction.WRITE:
        return review.write(draft, by, LANGUAGES)
    if action == ReviewAction.APPROVE:
        return review.approve(draft, by, LANGUAGES)
    if action == ReviewAction.REQUEST_CHANGES:
        return review.request_changes(draft, by, "Say which storage system.")
    if action == ReviewAction.REJECT:
        return review.reject(draft, by, "Not an incident.")
    if action == ReviewAction.REOPEN:
        return review.reopen(draft, by)
    if action == ReviewAction.MERGE:
        return review.merge(draft, "example-org-2-00000002", by)
    raise AssertionError(f"promotion is pipeline.publish's: {action}")


PERSON_MOVES = [(state, action) for state in DraftState for action in ReviewAction if action != ReviewAction.PROMOTE]


@pytest.mark.parametrize(("state", "action"), PERSON_MOVES, ids=[f"{s}-{a}" for s, a in PERSON_MOVES])
def test_a_move_is_made_exactly_when_the_table_lists_it(
    state: DraftState, action: ReviewAction, case_json: dict[str, Any]
) -> None:
    draft = draft_in(state, case_json)
    move = MOVES.get((state, action))
    if move is None:
        with pytest.raises(ReviewError) as refused:
            act(draft, action, "carol")
        message = str(refused.value)
        assert "\n" not in message and f"a draft that is {state.value} (only one that is " in message, message
        return
    after = act(draft, action, "carol")
    assert after.state == move.to_state
    last = after.history[-1]
    assert (last.by, last.from_state, last.to_state) == ("carol", state, move.to_state)
    assert after.review.reviewed_by == ("carol" if action == ReviewAction.APPROVE else None)


@pytest.mark.parametrize("state", list(DraftState))
def test_promotion_moves_exactly_what_the_table_lets_it(
    state: DraftState, case_json: dict[str, Any], store: Store, root: Path
) -> None:
    store.write_draft(draft_in(state, case_json))
    promote(store, Settings(root=root))
    after = store.read_draft("example-org-1-00000001")
    move = MOVES.get((state, ReviewAction.PROMOTE))
    assert after.state == (move.to_state if move else state)
    if move is None:
        with pytest.raises(ReviewError, match=r"\(only one that is approved\)$"):
            review.allowed(after, ReviewAction.PROMOTE, "incidentlib promote")


def test_only_the_pipeline_promotes(case_json: dict[str, Any]) -> None:
    with pytest.raises(ReviewError, match=r"only incidentlib promote may promote a draft, not carol$"):
        review.allowed(draft_in(DraftState.APPROVED, case_json), ReviewAction.PROMOTE, "carol")


REVIEWING = [ReviewAction.APPROVE, ReviewAction.REQUEST_CHANGES, ReviewAction.REJECT, ReviewAction.MERGE]


@pytest.mark.parametrize("action", REVIEWING)
def test_the_writer_cannot_review(action: ReviewAction, case_json: dict[str, Any]) -> None:
    with pytest.raises(ReviewError, match=r"^example-org-1-00000001: ALICE wrote or edited this draft and cannot"):
        act(draft_in(DraftState.WRITTEN, case_json), action, "ALICE")


EDITED_IN = [DraftState.EXTRACTED, DraftState.WRITTEN, DraftState.CHANGES_REQUESTED, DraftState.IN_REVIEW]


@pytest.mark.parametrize("edited_in", EDITED_IN)
@pytest.mark.parametrize("action", REVIEWING)
def test_whoever_edited_a_draft_in_any_state_cannot_review_it(
    edited_in: DraftState, action: ReviewAction, case_json: dict[str, Any]
) -> None:
    draft = act(draft_in(edited_in, case_json), ReviewAction.EDIT, "carol")
    if draft.state != DraftState.WRITTEN and draft.state != DraftState.IN_REVIEW:
        draft = review.write(draft, "alice", LANGUAGES)  # someone else signs it after carol's edit
    with pytest.raises(ReviewError, match="carol wrote or edited this draft and cannot"):
        act(draft, action, "carol")
    assert act(draft, action, "dave").state == MOVES[(draft.state, action)].to_state


@pytest.mark.parametrize("state", [s for s in DraftState if (s, ReviewAction.EDIT) in MOVES])
def test_an_edit_is_kept_in_the_history_with_the_fields_it_changed(
    state: DraftState, case_json: dict[str, Any]
) -> None:
    before = draft_in(state, case_json)
    after = before.model_copy(
        update={
            "summary": {**(before.summary or {}), "ko": "요약"},
            "impact": before.impact.model_copy(update={"scope": "Two runs."}),
            "components": [*before.components, "storage"],
        }
    )
    result = review.edited(before, after, "carol")
    last = result.history[-1]
    assert (last.by, last.from_state, last.to_state) == ("carol", state, MOVES[(state, ReviewAction.EDIT)].to_state)
    assert last.changed == ["summary.ko", "impact.scope", "components"]
    assert result.review.reviewed_by is None and result.review.reviewed_at is None


def test_an_edit_that_changes_nothing_is_no_move(case_json: dict[str, Any]) -> None:
    draft = draft_in(DraftState.APPROVED, case_json)
    assert review.edited(draft, draft.model_copy(deep=True), "carol") == draft


def test_a_rejected_draft_is_reopened_before_it_is_edited(case_json: dict[str, Any]) -> None:
    draft = draft_in(DraftState.REJECTED, case_json)
    with pytest.raises(ReviewError) as refused:
        act(draft, ReviewAction.EDIT, "carol")
    assert str(refused.value) == (
        "example-org-1-00000001: cannot edit a draft that is rejected (only one that is extracted, written, "
        "in_review, changes_requested, approved or published)"
    )


def test_a_history_written_before_edits_were_kept_still_loads_and_counts() -> None:
    old = Transition.model_validate(
        {"at": "2026-01-01T00:00:00Z", "by": "carol", "from_state": "in_review", "to_state": "in_review"}
    )
    assert old.changed == []


def manual_rows() -> list[str]:
    moves = section("review.md", "## The review's moves")
    return [line for line in moves.splitlines() if re.match(r"^\| `[a-z_]+` \| `[a-z-]+` \|", line)]


def test_the_manual_and_the_module_list_exactly_the_moves_of_the_table() -> None:
    rows = [move.row() for move in TRANSITIONS]
    assert manual_rows() == rows
    assert review.__doc__ is not None
    assert [line for line in review.__doc__.splitlines() if line.startswith("| `")] == rows


BY_NAME = [(state, action) for state in DraftState for action in review.MOVES]


@pytest.mark.parametrize(("state", "action"), BY_NAME, ids=[f"{s}-{a}" for s, a in BY_NAME])
def test_a_move_by_name_is_the_move_of_its_function(
    state: DraftState, action: ReviewAction, case_json: dict[str, Any]
) -> None:
    """review.move (the page's and the commands') makes each move as its function does, and
    refuses it in the same words."""
    draft = draft_in(state, case_json)
    comment = "Say which storage system."
    try:
        expected = act(draft, action, "carol")
    except ReviewError as exc:
        with pytest.raises(ReviewError) as refused:
            review.move(draft, action, "carol", LANGUAGES, comment)
        assert str(refused.value) == str(exc)
        return
    after = review.move(draft, action, "carol", LANGUAGES, comment)
    assert after.state == expected.state and after.review.reviewed_by == expected.review.reviewed_by
    last = after.history[-1]
    assert (last.by, last.from_state, last.to_state, last.comment) == ("carol", state, expected.state, comment)


def test_the_moves_by_name_are_every_move_of_the_table_but_an_edit_a_promotion_and_a_merge(
    case_json: dict[str, Any],
) -> None:
    """A merge needs its survivor and writes two drafts: `incidentlib merge` (pipeline.merge) makes it."""
    named = {move.action for move in TRANSITIONS} - {ReviewAction.EDIT, ReviewAction.PROMOTE, ReviewAction.MERGE}
    assert set(review.MOVES) == named and len(review.MOVES) == len(named)
    with pytest.raises(ValueError, match="not a move made by name"):
        review.move(draft_in(DraftState.APPROVED, case_json), ReviewAction.PROMOTE, "carol", LANGUAGES)


@pytest.mark.parametrize("action", [ReviewAction.REQUEST_CHANGES, ReviewAction.REJECT])
def test_a_move_by_name_that_needs_a_comment_says_so_without_one(
    action: ReviewAction, case_json: dict[str, Any]
) -> None:
    flag = "--comment" if action == ReviewAction.REQUEST_CHANGES else "--reason"
    with pytest.raises(ReviewError, match=rf"^example-org-1-00000001: say .* \({flag}\)$"):
        review.move(draft_in(DraftState.WRITTEN, case_json), action, "carol", LANGUAGES, "  ")
