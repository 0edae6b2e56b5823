"""The writer assist on a draft's page, only with a model configured (pipeline.assist): asking the
model for a field or for all the draft lacks (`/drafts/{id}/ask`), and taking one of its proposals
as the signed-in person's edit (`/drafts/{id}/accept`). See docs/assist.md."""

from __future__ import annotations

import asyncio
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from pipeline import assist as assisting
from pipeline import changes
from pipeline.assist import Ask
from pipeline.assist.answers import ENGLISH_FIELDS
from pipeline.changes import Act
from pipeline.errors import IncidentlibError, RecordError, ReviewError
from pipeline.web.pages import draft_page, not_written
from pipeline.web.proposals import form_path, parse_ask
from pipeline.web.state import Web, WebState
from pipeline.web.writes import Answers, answered

router = APIRouter()


def _problem(request: Request, web: WebState, draft_id: str, status: int, problem: str) -> HTMLResponse:
    """The draft page saying what went wrong in one line. To htmx a 200, as it swaps no error
    answer into the page (and the person would see nothing happen)."""
    draft, version = web.store.read_draft_versioned(draft_id)
    status = 200 if request.headers.get("hx-request") else status
    return draft_page(request, draft, version, status, problem=problem)


@router.post("/drafts/{draft_id}/ask", response_class=HTMLResponse)
async def ask(request: Request, draft_id: str, web: Web) -> Response:
    """Ask the model for one field (`summary:en`, `summary:ko`) or all the draft lacks; the page
    again, its proposals beside the fields. The request waits for the answer, off the event loop."""
    form = await request.form()
    value = str(form.get("ask") or "")
    try:
        fields, asked_languages, again = parse_ask(value)
    except ReviewError as exc:
        return await asyncio.to_thread(_problem, request, web, draft_id, 422, f"ask: {exc}")
    if draft_id in web.asking:
        problem = "ask: the model is being asked about this draft already; its answer shows here when it comes"
        return await asyncio.to_thread(_problem, request, web, draft_id, 409, problem)
    web.asking.add(draft_id)
    try:
        async with web.model_slots:
            done = await asyncio.to_thread(
                assisting.assist,
                web.store,
                web.settings,
                draft_id,
                Ask(fields, asked_languages, again),
            )
    except RecordError:
        raise  # no such draft, or a broken file: the one-line page of the app's record_error
    except IncidentlibError as exc:  # SettingsError, ReviewError, AssistError, a lock or the disk
        return await asyncio.to_thread(_problem, request, web, draft_id, 409, f"ask: {exc}")
    finally:
        web.asking.discard(draft_id)
    said = {"asked": done.outcome, "ask": value, "n": len(done.proposed), "dropped": done.dropped}
    where = f"#field-{form_path(ENGLISH_FIELDS.get(fields[0], fields[0]))}" if fields else "#assist"
    return RedirectResponse(f"/drafts/{quote(draft_id)}?{urlencode(said)}{where}", status_code=303)


@router.post("/drafts/{draft_id}/accept", response_class=HTMLResponse)
async def accept(request: Request, draft_id: str, web: Web) -> Response:
    """Take one proposal as the signed-in person's edit, of the version the page showed."""
    form = await request.form()
    path = str(form.get("path") or "")
    act = Act(request.state.session.name, seen=str(form.get("version") or ""))
    status = 200 if request.headers.get("hx-request") else 409
    field = ENGLISH_FIELDS.get(path, path)  # a field's name (summary) stands for its English
    target = f"/drafts/{quote(draft_id)}?{urlencode({'accepted': field})}#field-{form_path(field)}"

    changed, refused = not_written(
        request,
        "accept",
        status,
        "the draft changed after you opened it (an edit, or the model's answer); read it again, then accept",
        theirs=False,
    )
    return await answered(
        web.store,
        draft_id,
        lambda: changes.accept_proposal(web.store, draft_id, path, act),
        Answers(lambda _: RedirectResponse(target, status_code=303), changed, refused),
    )
