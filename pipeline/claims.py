"""Who is on which draft: a reviewer claims a draft so that two people do not work on it at once.

    claim(store, "acme-cache-1a2b3c4d", "ann")    # ann is on it; ClaimError if bob is
    unclaim(store, "acme-cache-1a2b3c4d", "ann")  # only the one who claimed it, or `force`
    claims(store)                                 # {draft id: Claim}
    holding(claim, draft)                         # the claim, while it still holds; else None

A claim is workflow state, not part of the record: it lives in the data root's state folder
(`.incidentlib/claims.json`, ignored by git) and goes with the draft's review, not its history.
A claim older than `STALE_AFTER` no longer holds anyone off: people forget to let go. Nor does a
claim whose holder has since moved the draft on (marked it written, approved it, requested changes,
...): a move hands the draft to whoever acts next (pipeline.review.next_turn), so the writer who
marks a draft written is no longer "on it" and a reviewer may claim it. An edit is no such move:
the holder is still working. The rule reads the draft's history, so it holds whichever way the move
was made (the web page or the command line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from pipeline.errors import ReviewError
from pipeline.models import Draft, DraftState, utc_now
from pipeline.store import Store

__all__ = ["STALE_AFTER", "UNCLAIMABLE", "Claim", "claim", "claimable", "claims", "handed_on", "holding", "unclaim"]

STALE_AFTER = timedelta(days=2)
# A claim is for a draft still on its way through review: a published or merged one is no one's to work
# on (an edit sends a published draft back to review, and anyone may make it).
UNCLAIMABLE = frozenset({DraftState.PUBLISHED.value, DraftState.MERGED.value})


def claimable(state: str) -> bool:
    """Whether a draft in `state` (its value: `written`) may be claimed: not published or merged, nor
    an unreadable file (the queue's `unreadable`, no draft state)."""
    return state in {s.value for s in DraftState} and state not in UNCLAIMABLE


@dataclass(frozen=True)
class Claim:
    by: str
    at: datetime

    @property
    def stale(self) -> bool:
        return utc_now() - self.at > STALE_AFTER


def handed_on(claim: Claim, draft: Draft) -> bool:
    """Whether the claim's holder has moved the draft on since claiming it: a step of its history in
    their name, at or after the claim, that is a review move (an edit names the fields it changed; a
    dismissal is a note, which leaves the draft where it was)."""
    holder = claim.by.casefold()
    return any(
        h.by.casefold() == holder and not h.changed and h.action != "dismiss" and h.at >= claim.at
        for h in draft.history
    )


def holding(claim: Claim | None, draft: Draft) -> Claim | None:
    """The claim while it holds others off: not stale, and its holder has not moved the draft on."""
    if claim is None or claim.stale or handed_on(claim, draft):
        return None
    return claim


_FILE = "claims.json"  # in the data root's state


def _path(store: Store) -> Path:
    return store.state.path(_FILE)


def claims(store: Store) -> dict[str, Claim]:
    """Every claim, by draft id; an unreadable file counts as none (claims are a courtesy, not a lock)."""
    try:
        data = json.loads(_path(store).read_text(encoding="utf-8"))
        return {k: Claim(v["by"], datetime.fromisoformat(v["at"])) for k, v in data.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _write(store: Store, found: dict[str, Claim]) -> None:
    data = {k: {"by": c.by, "at": c.at.isoformat()} for k, c in sorted(found.items())}
    store.state.write(_FILE, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def claim(store: Store, draft_id: str, by: str) -> Claim:
    """`by` is on the draft now. Refused while someone else's claim holds (`holding`), and for a draft
    that is not `claimable` (published or merged)."""
    draft = store.read_draft(draft_id)  # RecordNotFound for a draft that is not there
    if not claimable(draft.state.value):
        raise ReviewError(f"a {draft.state.value} draft is no one's to claim", draft_id=draft_id)
    with store.state.lock("claims"):
        found = claims(store)
        held = holding(found.get(draft_id), draft)
        if held is not None and held.by.casefold() != by.casefold():
            raise ReviewError(f"{held.by} is on this draft since {held.at:%Y-%m-%d %H:%M}", draft_id=draft_id)
        found[draft_id] = Claim(by, utc_now())
        _write(store, found)
        return found[draft_id]


def unclaim(store: Store, draft_id: str, by: str, *, force: bool = False) -> None:
    """`by` lets go of the draft. Someone else's claim is let go only with `force` or once it no
    longer holds (stale, or its holder moved the draft on)."""
    with store.state.lock("claims"):
        found = claims(store)
        held = found.get(draft_id)
        if held is None:
            return
        theirs = held.by.casefold() != by.casefold() and not force
        if theirs and holding(held, store.read_draft(draft_id)) is not None:
            raise ReviewError(f"{held.by} is on this draft; only they can let go of it", draft_id=draft_id)
        del found[draft_id]
        _write(store, found)
