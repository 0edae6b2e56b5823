"""How a page changes a draft (a save, an accepted proposal, a review move): of the version the
page showed, and only if it is still the one stored (`compare_and_write`).

    answer = await compare_and_write(store, current, version, seen, change,
                                     done=..., mismatch=..., conflict=..., refused=...)

The version the form carried is compared with the one just read; the change is written with
`expected_version`, so a write between the read and the write is refused by the store
(ConflictError), and the draft is then read again to show what is there now. Each caller says
what its answer is in each case.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fastapi.responses import Response

from pipeline.errors import ConflictError, ReviewError
from pipeline.models import Draft
from pipeline.store import Store

__all__ = ["compare_and_write"]


async def compare_and_write(
    store: Store,
    current: Draft,
    version: str,
    seen: str,
    change: Callable[[Draft], Draft],
    *,
    done: Callable[[Draft], Response],
    mismatch: Callable[[Draft, str], Response],
    conflict: Callable[[Draft, str, ConflictError], Response],
    refused: Callable[[Draft, str, ReviewError], Response],
) -> Response:
    """Write `change(current)` if `seen` (the version the page showed) is `version` (the one read).

    The answer is `done(written)`; else `mismatch(current, version)` when the page showed another
    version, `refused(current, version, error)` when the review refuses the change, and
    `conflict(draft, version, error)` with the draft read again when someone wrote it meanwhile.
    """
    if seen != version:
        return mismatch(current, version)
    try:
        changed = change(current)
        await asyncio.to_thread(store.write_draft, changed, expected_version=version)
    except ConflictError as exc:
        fresh, fresh_version = await asyncio.to_thread(store.read_draft_versioned, current.id)
        return conflict(fresh, fresh_version, exc)
    except ReviewError as exc:
        return refused(current, version, exc)
    return done(changed)
