"""Each change a person makes to one draft, as the one library call the command line and the review page both make.

    done = changes.move(store, "acme-db-1a2b3c4d", ReviewAction.APPROVE, Act("bob", seen=version), languages)

Every call reads the draft under its lock, compares the version read with `act.seen` (the version the
page showed; the command line passes none: the draft it changes is the one read now), applies the pure
change (pipeline.review, pipeline.suggestions, pipeline.assist), and writes it before letting go of the
lock. A draft changed since the page showed it raises ConflictError and nothing is written; a change
the review refuses raises ReviewError naming the rule. The shells only parse what they were given and
show what came back (pipeline.cli.review, pipeline.web.routes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline import review, suggestions
from pipeline.models import Draft
from pipeline.review import ReviewAction
from pipeline.store import Store

__all__ = [
    "Act",
    "Taken",
    "accept_proposal",
    "change",
    "dismiss_suggestion",
    "edit",
    "move",
    "set_value",
    "take_suggestion",
]


@dataclass(frozen=True)
class Act:
    """Who makes a change, the note they give with it, and the version of the draft they saw (None: the
    one read now, as on the command line)."""

    by: str
    comment: str | None = None
    seen: str | None = None


@dataclass(frozen=True)
class Taken:
    """A suggestion taken into its field: the draft as written, the field path it went into, its passage."""

    draft: Draft
    path: str
    quote: str


def change(store: Store, draft_id: str, step: Callable[[Draft], Draft], seen: str | None = None) -> Draft:
    """`step(draft)` written, if the draft is still the version `seen` (any version when None)."""
    return store.update_draft(draft_id, step, expected_version=seen)


def move(store: Store, draft_id: str, action: ReviewAction, act: Act, languages: Sequence[str]) -> Draft:
    """The review move `action` (write, approve, request-changes, reject, reopen: pipeline.review.move)."""
    return change(store, draft_id, lambda d: review.move(d, action, act.by, languages, act.comment), act.seen)


def set_value(store: Store, draft_id: str, path: str, value: Any, act: Act) -> Draft:
    """One field (a dotted path: `summary.en`, `impact.scope`) set, as the person's edit."""
    return change(store, draft_id, lambda d: review.set_value(d, path, value, act.by, act.comment), act.seen)


def edit(store: Store, draft_id: str, typed: Draft, act: Act) -> Draft:
    """The draft as the person typed it (a form, an editor's file), as their edit of the version they saw."""
    return change(store, draft_id, lambda d: review.edited(d, typed, act.by, comment=act.comment), act.seen)


def take_suggestion(store: Store, draft_id: str, index: int, act: Act) -> Taken:
    """Suggestion `index` taken into its field (pipeline.suggestions.take_suggestion), and where it went."""
    written = change(store, draft_id, lambda d: suggestions.take_suggestion(d, index, act.by), act.seen)
    entry = written.evidence[-1]  # the suggestion, as the evidence of the field it went into
    return Taken(written, entry.field, " ".join(entry.quote.split()))


def dismiss_suggestion(store: Store, draft_id: str, index: int, act: Act) -> Draft:
    """Suggestion `index` dismissed as wrong for its field (pipeline.suggestions.dismiss_suggestion)."""
    return change(store, draft_id, lambda d: suggestions.dismiss_suggestion(d, index, act.by, act.comment), act.seen)


def accept_proposal(store: Store, draft_id: str, path: str, act: Act) -> Draft:
    """The writer assist's proposal for `path` taken as the person's edit (pipeline.assist.propose)."""
    # Imported here: the assist brings its network client (httpx), which every `import pipeline` (a site
    # build's worker, the command line's start) would otherwise load for this one call.
    from pipeline.assist.propose import accept_proposal as accepted_proposal

    return change(store, draft_id, lambda d: accepted_proposal(d, path, act.by), act.seen)
