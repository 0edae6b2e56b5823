"""One draft: its page (`/drafts/{id}`), what it would lack as typed (`/lacks`), saving the form
(`/save`), taking a suggestion into its field (`/take`), one route per review move (`/write`,
`/approve`, `/request-changes`, `/reject`, `/reopen`: pipeline.review.MOVES), each made by
pipeline.review.move in the signed-in person's name, and a reviewer's decisions on the suggestions
(`/merge`, `/relate`, `/dismiss`: pipeline.merge; `/similar`, the related cases and recurrences).
Every change is of the version the page showed
(pipeline.web.writes)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast, get_args
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import escape

from pipeline import changes, gate, review
from pipeline import merge as merging
from pipeline import queue as review_queue
from pipeline.changes import Act
from pipeline.errors import IncidentlibError, RecordError, RecordNotFound
from pipeline.fieldpath import FieldPath
from pipeline.fields import TERM_LISTS
from pipeline.models import RelationKind, SuggestionKind
from pipeline.review import ReviewAction
from pipeline.web.forms import apply_form, languages_for
from pipeline.web.pages import conflict, draft_page, not_written, page, record_href
from pipeline.web.proposals import form_path
from pipeline.web.state import Web
from pipeline.web.writes import Answers, answered

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
    missing = review_queue.lacks(typed, web.languages) if typed else []
    return page(request, "_lacks.html", lacks=missing, problems=problems)


@router.post("/drafts/{draft_id}/save", response_class=HTMLResponse)
async def save(request: Request, draft_id: str, web: Web) -> Response:
    """The form as the signed-in person's edit, of the version the page showed."""
    name = request.state.session.name
    form = await request.form()
    loaded_version = str(form.get("version") or "")
    current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
    removed = gate.Removed()
    typed, problems = apply_form(current, form_values(form), languages_for(current, web.languages), removed)
    if typed is None:
        return draft_page(request, current, version, 422, problems=problems, problem="not saved: fix the fields named")
    as_typed = typed
    act = Act(name, removed.note() if removed else None, seen=loaded_version)
    return await answered(
        web.store,
        draft_id,
        lambda: changes.edit(web.store, draft_id, as_typed, act),
        Answers(
            done=lambda _: RedirectResponse(f"/drafts/{quote(draft_id)}?saved=1", status_code=303),
            changed=lambda draft, now: conflict(request, draft, now, as_typed),
            refused=lambda draft, now, exc: draft_page(
                request, draft, now, 409, typed=as_typed, problem=f"not saved: {exc}"
            ),
        ),
    )


async def _on_suggestion(
    request: Request, draft_id: str, web: Web, what: str, call: Callable[[int, Act], Response]
) -> Response:
    """Take or dismiss one suggestion (`index`, its place in the draft's suggestions) in the signed-in
    person's name, of the version the page showed: `call(index, act)`, whose answer is the page to go to."""
    form = await request.form()
    act = Act(request.state.session.name, seen=str(form.get("version") or ""))
    raw = str(form.get("index") or "")
    if not raw.isdigit():
        current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
        return draft_page(request, current, version, 422, problem=f"{what}: index: {raw!r} is no suggestion's number")
    changed, refused = not_written(
        request, what, 409, f"the draft changed after you opened it; read the change, then {what} it again"
    )
    return await answered(web.store, draft_id, lambda: call(int(raw), act), Answers(lambda to: to, changed, refused))


@router.post("/drafts/{draft_id}/take", response_class=HTMLResponse)
async def take(request: Request, draft_id: str, web: Web) -> Response:
    """Take one suggestion into its field as the signed-in person's edit (pipeline.changes.take_suggestion)."""

    def call(index: int, act: Act) -> Response:
        field = form_path(changes.take_suggestion(web.store, draft_id, index, act).path)
        return RedirectResponse(f"/drafts/{quote(draft_id)}?{urlencode({'took': field})}#field-{quote(field)}", 303)

    return await _on_suggestion(request, draft_id, web, "take", call)


@router.post("/drafts/{draft_id}/dismiss-suggestion", response_class=HTMLResponse)
async def dismiss_passage(request: Request, draft_id: str, web: Web) -> Response:
    """Dismiss one suggestion as wrong for its field, in the signed-in person's name."""

    def call(index: int, act: Act) -> Response:
        entry = changes.dismiss_suggestion(web.store, draft_id, index, act).dismissed_passages[-1]
        return RedirectResponse(f"/drafts/{quote(draft_id)}?{urlencode({'dismissed': entry.field})}", 303)

    return await _on_suggestion(request, draft_id, web, "dismiss", call)


# ---------------------------------------------------------------- duplicates and relations (pipeline.merge)

_KINDS: dict[str, tuple[str, ...]] = {"relate": get_args(RelationKind), "dismiss": get_args(SuggestionKind)}


async def _decided(request: Request, web: Web, draft_id: str, what: str, call: Callable[[Act], object]) -> Response:
    """A reviewer's decision on a suggestion (a merge, a relation, a dismissal: pipeline.merge), made in the
    signed-in person's name (and comment) on the version the page showed: `call(act)`."""
    form = await request.form()
    comment = str(form.get("comment") or "").strip() or None
    act = Act(request.state.session.name, comment, seen=str(form.get("version") or ""))
    changed, refused = not_written(
        request, what, 409, "the draft changed after you opened it; read the change, then again"
    )
    done = RedirectResponse(f"/drafts/{quote(draft_id)}?done={quote(what)}", status_code=303)
    answers: Answers[object] = Answers(lambda _: done, changed, refused, refuses=(IncidentlibError,))
    return await answered(web.store, draft_id, lambda: call(act), answers)


async def _fields(request: Request, *names: str) -> list[str]:
    form = await request.form()
    return [str(form.get(name) or "").strip() for name in names]


async def _no_such_kind(request: Request, web: Web, draft_id: str, what: str, kind: str) -> Response | None:
    """The draft page saying that `kind` is no kind of suggestion `what` takes (a form not the page's)."""
    if kind in _KINDS[what]:
        return None
    current, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
    kinds = " or ".join(_KINDS[what])
    return draft_page(request, current, version, 422, problem=f"{what}: kind: {kind!r} is not {kinds}")


@router.post("/drafts/{draft_id}/merge", response_class=HTMLResponse)
async def merge_draft(request: Request, draft_id: str, web: Web) -> Response:
    """Merge this draft into `into` (a draft or case telling the same incident): pipeline.merge.merge."""
    (into,) = await _fields(request, "into")
    return await _decided(request, web, draft_id, "merge", lambda act: merging.merge(web.store, draft_id, into, act))


@router.post("/drafts/{draft_id}/relate", response_class=HTMLResponse)
async def relate_draft(request: Request, draft_id: str, web: Web) -> Response:
    """Accept a suggestion into `related` or `recurrence_of` (`kind`): an edit, pipeline.merge.relate."""
    other, kind = await _fields(request, "other", "kind")
    if refused := await _no_such_kind(request, web, draft_id, "relate", kind):
        return refused
    relation = cast(RelationKind, kind)
    return await _decided(
        request, web, draft_id, "relate", lambda act: merging.relate(web.store, draft_id, other, relation, act)
    )


@router.post("/drafts/{draft_id}/dismiss", response_class=HTMLResponse)
async def dismiss_suggestion(request: Request, draft_id: str, web: Web) -> Response:
    """Dismiss a suggestion for good (`kind`: duplicate, related, recurrence): pipeline.merge.dismiss."""
    other, kind = await _fields(request, "other", "kind")
    if refused := await _no_such_kind(request, web, draft_id, "dismiss", kind):
        return refused
    suggested = cast(SuggestionKind, kind)
    return await _decided(
        request, web, draft_id, "dismiss", lambda act: merging.dismiss(web.store, draft_id, other, suggested, act)
    )


@router.get("/drafts/{draft_id}/similar", response_class=HTMLResponse)
async def similar_fragment(request: Request, draft_id: str, web: Web) -> Response:
    """The draft's related cases and recurrences (pipeline.duplicates.similar_to), with a button to accept
    or dismiss each: a fragment the draft page loads after it shows, the index taking a moment."""
    from pipeline.duplicates import similar_to  # the index's libraries, loaded when asked for

    try:
        draft, version = await asyncio.to_thread(web.store.read_draft_versioned, draft_id)
        found = await asyncio.to_thread(similar_to, web.store, draft_id)
    except RecordError as exc:
        return HTMLResponse(f'<p class="problem">{escape(str(exc))}</p>', status_code=404)
    return page(
        request, "_similar.html", draft=draft, version=version, found=found.suggestions, record_href=record_href
    )


def _move_route(action: ReviewAction) -> Callable[..., Awaitable[Response]]:
    """The route of one review move."""

    async def move(request: Request, draft_id: str, web: Web) -> Response:
        form = await request.form()
        act = Act(request.state.session.name, str(form.get("comment") or "").strip(), str(form.get("version") or ""))
        # An approval is of the text the reviewer read: a draft changed since is read again first.
        changed, refused = not_written(
            request, action.value, 409, "the draft changed after you opened it; read the change, then again"
        )
        done = RedirectResponse(f"/drafts/{quote(draft_id)}?done={quote(action.value)}", status_code=303)
        return await answered(
            web.store,
            draft_id,
            lambda: changes.move(web.store, draft_id, action, act, web.languages),
            Answers(lambda _: done, changed, refused),
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


def _root(key: str) -> str | None:
    """The case field a form's name lies in (`symptoms`), or None for a name that is no field path (`csrf` is one)."""
    try:
        return FieldPath.parse(key).root
    except ValueError:
        return None


def form_values(form: Any) -> dict[str, Any]:
    """The form as path -> value, a list for a field of several choices."""
    out: dict[str, Any] = {}
    for key in form.keys():
        values = form.getlist(key)
        out[key] = values if len(values) > 1 or _root(key) in TERM_LISTS else values[0]
    return out
