"""Who is on a draft (pipeline.claims) and who acts next (pipeline.review.next_turn): a claim ends when
its holder moves the draft on, however the move was made."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from helpers import complete_draft

from pipeline import claims, review
from pipeline.errors import ReviewError
from pipeline.models import DraftState, Review, utc_now
from pipeline.store import Store

LANGUAGES = ["en"]


def written_draft(case_json: dict[str, Any]) -> Any:
    """A complete draft, not yet signed: what a writer marks written."""
    draft = complete_draft(case_json, 1)
    return draft.model_copy(update={"state": DraftState.EXTRACTED, "review": Review()})


def test_a_claim_holds_through_the_holders_edits_and_ends_when_they_mark_the_draft_written(
    store: Store, case_json: dict[str, Any]
) -> None:
    draft = written_draft(case_json)
    store.write_draft(draft)
    claims.claim(store, draft.id, "ann")
    edited = review.edited(draft, draft.model_copy(update={"lessons": {"en": "Keep checkpoints off."}}), "ann")
    store.write_draft(edited)
    held = claims.claims(store)[draft.id]
    assert claims.holding(held, store.read_draft(draft.id)) == held, "an edit is no hand-over"
    with pytest.raises(ReviewError, match="ann is on this draft"):
        claims.claim(store, draft.id, "bob")

    store.write_draft(review.write(edited, "Ann", LANGUAGES))  # as `incidentlib write` makes it
    assert claims.handed_on(held, store.read_draft(draft.id))
    assert claims.holding(held, store.read_draft(draft.id)) is None
    assert claims.claim(store, draft.id, "bob").by == "bob", "the reviewer may take it"
    assert claims.holding(claims.claims(store)[draft.id], store.read_draft(draft.id)) is not None


def test_only_the_holders_own_move_ends_a_claim_and_then_anyone_may_clear_it(
    store: Store, case_json: dict[str, Any]
) -> None:
    draft = review.write(written_draft(case_json), "ann", LANGUAGES)
    store.write_draft(draft)
    claims.claim(store, draft.id, "ann")  # after her own move: she is on it again
    held = claims.claims(store)[draft.id]
    assert claims.holding(held, draft) == held
    with pytest.raises(ReviewError, match="only they can let go"):
        claims.unclaim(store, draft.id, "bob")

    rejected = review.reject(draft, "bob", "a duplicate")
    store.write_draft(rejected)
    assert claims.holding(held, rejected) == held, "someone else's move leaves her claim"
    reopened = review.reopen(rejected, "ann")
    store.write_draft(reopened)
    assert claims.holding(held, reopened) is None
    claims.unclaim(store, draft.id, "bob")  # hers ended: anyone may clear it
    assert claims.claims(store) == {}
    fresh = written_draft(case_json)
    assert claims.holding(claims.Claim("ann", utc_now()), fresh) is not None
    assert claims.holding(claims.Claim("ann", utc_now() - timedelta(days=3)), fresh) is None, "nor a stale one"


def test_the_page_says_who_acts_next_from_the_review_table(case_json: dict[str, Any]) -> None:
    draft = written_draft(case_json)
    assert review.next_turn(draft) == "a writer: mark it written"
    written = review.write(draft, "ann", LANGUAGES)
    assert review.next_turn(written) == "a reviewer other than ann: approve it or request changes"
    approved = review.approve(written, "bob", LANGUAGES)
    assert review.next_turn(approved) == "the pipeline: publish it (incidentlib promote)"
    rejected = review.reject(written, "bob", "a duplicate")
    assert review.next_turn(rejected) == "anyone: reopen it"
    changes = review.request_changes(written, "bob", "say when it started")
    assert review.next_turn(changes) == "a writer: mark it written"
    published = approved.model_copy(update={"state": DraftState.PUBLISHED})
    assert review.next_turn(published).startswith("nobody: it is published")
