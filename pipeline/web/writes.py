"""How a page changes a draft (a save, a taken suggestion, a review move, a reviewer's decision): one
library call (pipeline.changes, pipeline.merge) that compares the version the page showed with the one
stored and writes only if they agree, and the page's answer to what came of it.

    return await answered(web.store, draft_id, lambda: changes.move(...), Answers(done, changed, refused))

A draft changed since the page showed it (ConflictError) is read again and shown as it is now
(`changed`); a change the review or the library refuses is shown with why (`refused`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from fastapi.responses import Response

from pipeline.errors import ConflictError, IncidentlibError, ReviewError
from pipeline.models import Draft
from pipeline.store import Store

__all__ = ["Answers", "answered"]

T = TypeVar("T")


@dataclass(frozen=True)
class Answers(Generic[T]):
    """A page's answers to a change: done (what the call returned), the draft changed since the page
    showed it (the draft and its version now), refused (the draft, its version, and why) for the errors
    of `refuses` (the review's refusal; any other propagates to the app's error pages)."""

    done: Callable[[T], Response]
    changed: Callable[[Draft, str], Response]
    refused: Callable[[Draft, str, IncidentlibError], Response]
    refuses: tuple[type[IncidentlibError], ...] = (ReviewError,)


async def answered(store: Store, draft_id: str, call: Callable[[], T], answers: Answers[T]) -> Response:
    """Make the change (`call`, in a worker thread: it reads and writes files) and answer as it went."""
    try:
        result = await asyncio.to_thread(call)
    except ConflictError:
        now, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
        return answers.changed(now, version)
    except answers.refuses as exc:
        now, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
        return answers.refused(now, version, exc)
    return answers.done(result)
