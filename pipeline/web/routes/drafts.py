"""One draft: its page (`/drafts/{id}`), what it would lack as typed (`/lacks`), saving the form
(`/save`), taking a suggestion into its field (`/take`), and one route per review move (`/write`,
`/approve`, `/request-changes`, `/reject`, `/reopen`: pipeline.review.MOVES), each made by
pipeline.review.move in the signed-in person's name. Every change is of the version the page showed
(pipeline.web.writes)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from pipeline import review, suggestions
from pipeline.errors import RecordError, RecordNotFound
from pipeline.fields import TERM_LISTS
from pipeline.review import ReviewAction
from pipeline.web.forms import apply_form, languages_for
from pipeline.web.pages import conflict, draft_page, not_written, page
from pipeline.web.state import Web
from pipeline.web.writes import compare_and_write

router = APIRouter()


@router.get("/drafts/{draft_id}", response_class=HTMLResponse)
async def show_draft(request: Request, draft_id: str, web: Web) -> Response:
    try:
        draft, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
    except RecordNotFound:
        return page(request, "missing.html", 404, what=f"draft {draft_id}")
    except RecordError as exc:
        return page(request, "missing.html", 422, message=str(exc))
    return draft_page(request, draft, version)


@router.post("/drafts/{draft_id}/lacks", response_class=HTMLResponse)
async def lacks(request: Request, draft_id: str, web: Web) -> HTMLResponse:
    """What the draft would still lack with the form as typed (not saved)."""
    draft = await asyncio.to_thread(web.store.read_draft, draft_id)
    form = await request.form()
    typed, problems = apply_form(draft, form_values(form), languages_for(draft, web.languages))
    missing = review.missing_for_publication(typed, web.languages) if typed else []
    return page(request, "_lacks.html", lacks=missing, problems=problems)


@router.post("/drafts/{draft_id}/save", response_class=HTMLResponse)
async def save(request: Request, draft_id: str, web: Web) -> Response:
    """The form as the signed-in person's edit, of the version the page showed."""
    name = request.state.session.name
    form = await request.form()
    loaded_version = str(form.get("version") or "")
    current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
    typed, problems = apply_form(current, form_values(form), languages_for(current, web.languages))
    if typed is None:
        return draft_page(request, current, version, 422, problems=problems, problem="not saved: fix the fields named")
    as_typed = typed
    return await compare_and_write(
        web.store,
        current,
        version,
        loaded_version,
        lambda draft: review.edited(draft, as_typed, name),
        done=lambda _: RedirectResponse(f"/drafts/{quote(draft_id)}?saved=1", status_code=303),
        mismatch=lambda draft, now: conflict(request, draft, now, as_typed),
        conflict=lambda draft, now, _: conflict(request, draft, now, as_typed),
        refused=lambda draft, now, exc: draft_page(
            request, draft, now, 409, typed=as_typed, problem=f"not saved: {exc}"
        ),
    )


@router.post("/drafts/{draft_id}/take", response_class=HTMLResponse)
async def take(request: Request, draft_id: str, web: Web) -> Response:
    """Take one suggestion (`index`, its place in the draft's suggestions) into its field as the
    signed-in person's edit (pipeline.suggestions), of the version the page showed."""
    name = request.state.session.name
    form = await request.form()
    seen = str(form.get("version") or "")
    raw = str(form.get("index") or "")
    current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
    if not raw.isdigit():
        return draft_page(request, current, version, 422, problem=f"take: index: {raw!r} is no suggestion's number")
    index = int(raw)
    entry = current.suggestions[index] if index < len(current.suggestions) else None
    field = suggestions.taken_path(current, entry).split("[")[0] if entry else ""
    target = f"/drafts/{quote(draft_id)}?{urlencode({'took': field})}#field-{quote(field)}"

    mismatch, not_done = not_written(
        request, "take", 409, "the draft changed after you opened it; read the change, then take it again"
    )
    return await compare_and_write(
        web.store,
        current,
        version,
        seen,
        lambda draft: suggestions.take_suggestion(draft, index, name),
        done=lambda _: RedirectResponse(target, status_code=303),
        mismatch=mismatch,
        conflict=not_done,
        refused=not_done,
    )


def _move_route(action: ReviewAction) -> Callable[..., Awaitable[Response]]:
    """The route of one review move."""

    async def move(request: Request, draft_id: str, web: Web) -> Response:
        name = request.state.session.name
        form = await request.form()
        text = str(form.get("comment") or "").strip()
        seen = str(form.get("version") or "")
        current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)

        # An approval is of the text the reviewer read: a draft changed since is read again first.
        mismatch, not_done = not_written(
            request, action.value, 409, "the draft changed after you opened it; read the change, then again"
        )
        return await compare_and_write(
            web.store,
            current,
            version,
            seen,
            lambda draft: review.move(draft, action, name, web.languages, text),
            done=lambda _: RedirectResponse(f"/drafts/{quote(draft_id)}?done={quote(action.value)}", status_code=303),
            mismatch=mismatch,
            conflict=not_done,
            refused=not_done,
        )

    move.__name__ = move.__qualname__ = f"move_{action.value.replace('-', '_')}"
    return move


for _action in review.MOVES:
    router.add_api_route(
        f"/drafts/{{draft_id}}/{_action.value}",
        _move_route(_action),
        methods=["POST"],
        response_class=HTMLResponse,
        name=_action.value,
    )


def form_values(form: Any) -> dict[str, Any]:
    """The form as path -> value, a list for a field of several choices."""
    out: dict[str, Any] = {}
    for key in form.keys():
        values = form.getlist(key)
        out[key] = values if len(values) > 1 or key.split(".")[0] in TERM_LISTS else values[0]
    return out
