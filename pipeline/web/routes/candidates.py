"""The candidates the feeds proposed (pipeline.candidates): the list (`/candidates`, by feed, the
dismissed ones too on asking), and registering (`/candidates/accept`) or dismissing
(`/candidates/dismiss`) some of them. See docs/discovery.md."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipeline import candidates as candidating
from pipeline.discover import DISCOVERED_FILE
from pipeline.errors import IncidentlibError
from pipeline.models import Candidate
from pipeline.web.pages import page
from pipeline.web.state import Web, WebState

__all__ = ["CandidatesDone", "router"]

router = APIRouter()


@dataclass
class CandidatesDone:
    """What an accept or a dismiss did, for the page to say."""

    accepted: candidating.AcceptReport | None = None
    dismissed: list[Candidate] = field(default_factory=list)


def _view(
    request: Request,
    web: WebState,
    feed: str,
    dismissed: bool,
    status: int = 200,
    *,
    done: CandidatesDone | None = None,
    problem: str | None = None,
) -> HTMLResponse:
    registered_feeds, _ = web.store.read_feeds()
    labels = {f.feed.url: f.feed.label for f in registered_feeds}
    try:
        shown = candidating.candidates(web.store, feed or None, dismissed=dismissed)
    except IncidentlibError as exc:
        shown, problem = [], problem or str(exc)
    return page(
        request,
        "candidates.html",
        status,
        candidates=shown,
        feeds=[f.feed.label for f in registered_feeds],
        labels=labels,
        feed=feed,
        dismissed=dismissed,
        done=done,
        problem=problem,
        discovered_file=DISCOVERED_FILE,
    )


@router.get("/candidates", response_class=HTMLResponse)
async def candidates_page(request: Request, web: Web, feed: str = "", dismissed: bool = False) -> HTMLResponse:
    return await asyncio.to_thread(_view, request, web, feed, dismissed)


@router.post("/candidates/accept", response_class=HTMLResponse)
async def accept_candidates(request: Request, web: Web) -> HTMLResponse:
    """Register the candidates named (or every open one of `all_from`): the list again, saying
    what was registered and which drafts were written from their feed's text."""
    form = await request.form()
    ids = [str(v) for v in form.getlist("id") if str(v).strip()]
    all_from = str(form.get("all_from") or "").strip() or None
    feed = str(form.get("feed") or "")
    if not ids and not all_from:
        return await asyncio.to_thread(_view, request, web, feed, False, 422, problem="accept: name a candidate")

    def run() -> HTMLResponse:
        try:
            report = candidating.accept(web.store, web.settings, ids, all_from=all_from)
        except IncidentlibError as exc:
            return _view(request, web, feed, False, 409, problem=f"accept: {exc}")
        return _view(request, web, feed, False, done=CandidatesDone(accepted=report))

    return await asyncio.to_thread(run)


@router.post("/candidates/dismiss", response_class=HTMLResponse)
async def dismiss_candidates(request: Request, web: Web) -> HTMLResponse:
    """Dismiss the candidates named, for good, with the reason given (if any)."""
    form = await request.form()
    ids = [str(v) for v in form.getlist("id") if str(v).strip()]
    reason = str(form.get("reason") or "").strip() or None
    feed = str(form.get("feed") or "")
    if not ids:
        return await asyncio.to_thread(_view, request, web, feed, False, 422, problem="dismiss: name a candidate")

    def run() -> HTMLResponse:
        try:
            gone = candidating.dismiss(web.store, ids, reason=reason)
        except IncidentlibError as exc:
            return _view(request, web, feed, False, 409, problem=f"dismiss: {exc}")
        return _view(request, web, feed, False, done=CandidatesDone(dismissed=gone))

    return await asyncio.to_thread(run)
