"""The queue (`/`): every draft with what it lacks, filtered, sorted and in pages; and claiming a
draft from it (`/drafts/{id}/claim`, `/unclaim`), answered with the claim's cell for htmx."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipeline import claims as claiming
from pipeline import queue as review_queue
from pipeline.errors import IncidentlibError, ReviewError
from pipeline.models import Draft, DraftState
from pipeline.store import Store
from pipeline.web.pages import page
from pipeline.web.state import Web

PAGE_SIZE = 50

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def queue_page(request: Request, web: Web, page_number: int = 1) -> HTMLResponse:
    cache = web.cache
    drafts, unreadable = await asyncio.to_thread(cache.all)
    given = request.query_params
    problem = None
    try:
        filters = review_queue.QueueFilter.from_query(given, sort="state")
        entries = review_queue.queue_of(
            drafts, unreadable, web.languages, filters, entry_of=cache.entry, text_of=cache.text
        )
    except (ReviewError, ValueError) as exc:  # said on the page, whose form keeps what was typed
        filters, entries, problem = review_queue.QueueFilter(sort="state"), [], str(exc)
    counts: dict[str, int] = defaultdict(int)
    for draft in drafts:
        counts[draft.state.value] += 1
    if unreadable:
        counts[review_queue.UNREADABLE] = len(unreadable)
    pages = max(1, -(-len(entries) // PAGE_SIZE))
    page_number = min(max(1, page_number), pages)
    shown = entries[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
    return page(
        request,
        "queue.html",
        entries=shown,
        total=len(entries),
        counts=dict(counts),
        states=[s.value for s in DraftState] + [review_queue.UNREADABLE],
        filters=dict(given) if problem else filters.to_query(),
        page_number=page_number,
        pages=pages,
        query=filters.query_string,
        claims=_holding(web.store, drafts),
        problem=problem,
    )


def _holding(store: Store, drafts: list[Draft]) -> dict[str, claiming.Claim]:
    """The claims that still hold, by draft (not stale, their holder has not moved the draft on)."""
    found = claiming.claims(store)
    return {d.id: held for d in drafts if (held := claiming.holding(found.get(d.id), d)) is not None}


def _claim_route(act: Callable[[Store, str, str], object]) -> Callable[..., Awaitable[HTMLResponse]]:
    async def claim(request: Request, draft_id: str, web: Web) -> HTMLResponse:
        """Claim the draft, or let go of it: the claim's cell, for htmx to swap in."""
        problem = None
        try:
            await asyncio.to_thread(act, web.store, draft_id, request.state.session.name)
        except IncidentlibError as exc:
            problem = str(exc)
        claim = claiming.claims(web.store).get(draft_id)
        return page(request, "_claim.html", draft_id=draft_id, claim=claim, problem=problem)

    return claim


for _verb, _act in (("claim", claiming.claim), ("unclaim", claiming.unclaim)):
    router.add_api_route(
        f"/drafts/{{draft_id}}/{_verb}",
        _claim_route(_act),
        methods=["POST"],
        response_class=HTMLResponse,
        name=_verb,
    )
