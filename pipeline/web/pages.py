"""The web page's pages as answers: any template with what every page shows (`page`), a draft beside
its text (`draft_page`), and a draft someone else changed meanwhile (`conflict`).

Every template is rendered with autoescape (pipeline.web.app builds the environment): every value a
page shows may come from a crawled page. See docs/review.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse

from pipeline import claims as claiming
from pipeline import queue as review_queue
from pipeline import review
from pipeline.errors import IncidentlibError, StoreError
from pipeline.fieldpath import FieldPath
from pipeline.fragments import fragment_link
from pipeline.ids import is_case_id
from pipeline.learn import finder_in_use
from pipeline.models import Draft, Evidence
from pipeline.suggestions import takeable
from pipeline.web.forms import FormField, by_language, form_fields, languages_for
from pipeline.web.marks import evidence_passages, headings_of, likely_passages, suggestion_passages, text_pane
from pipeline.web.proposals import assist_view
from pipeline.web.security import Session
from pipeline.web.state import web_of

__all__ = ["conflict", "draft_page", "page", "their_change"]

# The moves whose `?done=` a draft page says it made; any other value says nothing.
_KNOWN_DONE = frozenset(action.value for action in review.MOVES) | {"merge", "relate", "dismiss"}


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The template `name` with `context`, and what every page has: who is signed in, the CSRF token."""
    session: Session = request.state.session
    web = web_of(request)
    context.update(me=session.name, csrf=session.csrf, request=request, sso=web.sso)
    return web.templates.TemplateResponse(request, name, context, status_code=status)


def suggested_beside(fields: list[FormField], suggested: dict[int, Evidence]) -> dict[str, list[tuple[int, Evidence]]]:
    """Each suggestion (by its mark's number) beside the first form field of its case field: an impact's
    beside its scope, a remediation step's beside the steps."""
    beside: dict[str, list[tuple[int, Evidence]]] = {}
    for number, entry in suggested.items():
        root = FieldPath.parse(entry.field).root
        path = next((f.path for f in fields if FieldPath.parse(f.path).root == root), None)
        if path is not None:
            beside.setdefault(path, []).append((number, entry))
    return beside


def draft_page(
    request: Request,
    draft: Draft,
    version: str,
    status: int = 200,
    *,
    problem: str | None = None,
    problems: list[tuple[str, str]] | None = None,
    typed: Draft | None = None,
    theirs: list[str] | None = None,
    yours: list[tuple[str, list[tuple[str, str]]]] | None = None,
) -> HTMLResponse:
    """The draft beside its text, at `version`; its form filled with `typed` when given (a save
    refused), with the problem(s) found, someone else's change (`theirs`) and what was typed (`yours`:
    each changed field's text, language by language)."""
    web = web_of(request)
    languages = web.languages
    shown = typed or draft
    # The writer assist, only when a model is configured: otherwise the page shows nothing of it.
    settings = web.settings
    assist = assist_view(draft, settings.llm_model or "", request.query_params) if settings.assist_configured else None
    text = draft.text or ""
    passages, marks = evidence_passages(text, draft.evidence)
    offered, suggested = suggestion_passages(text, draft.suggestions, len(marks) + 1)
    passages += offered
    if assist:
        passages += assist.number_passages(len(marks) + len(suggested) + 1)
    # How the finder reads the text: each sentence marked with the field it most likely serves.
    try:
        finder = finder_in_use(web.store, settings)
    except StoreError:
        finder = None  # a model file that cannot be read: the crawl says so; the page drafts nothing
    if finder is not None and text:
        passages += likely_passages(text, finder.marks(text, draft.sections), len(passages) + 1, finder.name)
    base = review_queue.evidence_url(draft)
    links = {}
    for passage in passages:
        try:
            links[passage.number] = fragment_link(base, text, passage.start, passage.end)
        except ValueError:
            links[passage.number] = base
    done = request.query_params.get("done")
    fields = form_fields(shown, languages_for(shown, languages), marks)
    return page(
        request,
        "draft.html",
        status,
        draft=draft,
        version=version,
        fields=fields,
        # Beside each field, its suggestions in the drafter's order: surest first.
        suggested={
            path: sorted(found, key=lambda pair: draft.suggestions.index(pair[1]))
            for path, found in suggested_beside(fields, suggested).items()
        },
        finder=finder.name if finder is not None else None,
        # Each suggestion's place in the draft's list, which the dismiss button sends (any field's).
        dismissing={n: draft.suggestions.index(e) for n, e in suggested.items()},
        # Each suggestion's place in the draft's list, which its button sends; none for a field of no passage.
        taking={n: draft.suggestions.index(e) for n, e in suggested.items() if takeable(e)},
        took=request.query_params.get("took"),
        dismissed=request.query_params.get("dismissed"),
        languages=languages_for(shown, languages),
        pieces=text_pane(text, passages, headings_of(text, draft.sections)),
        marks=marks,
        links=links,
        lacks=review_queue.lacks(shown, languages),  # the queue's words: content, then sign-offs awaited
        link_states=web.store.state.read_links(),
        claim=claiming.holding(claiming.claims(web.store).get(draft.id), draft),
        next_turn=review.next_turn(draft),
        problem=problem,
        problems=problems or [],
        theirs=theirs or [],
        yours=yours or [],
        done=done if done in _KNOWN_DONE else None,
        archived=next((s.archived for s in draft.sources if s.archived), None),
        assist=assist,
        record_href=record_href,
    )


def record_href(record_id: str) -> str:
    """Where a draft's or case's page is, by its id (a possible duplicate names either)."""
    return f"/cases/{quote(record_id)}" if is_case_id(record_id) else f"/drafts/{quote(record_id)}"


def conflict(request: Request, current: Draft, version: str, typed: Draft) -> HTMLResponse:
    """Someone saved after the page was loaded: nothing is saved. The form shows the draft as it is
    now (a second save from it cannot undo their change), and what was typed is listed beside,
    field by field, to copy back."""
    yours = [(path, by_language(review.value_at(typed, path))) for path in review.changed_fields(current, typed)]
    return draft_page(
        request,
        current,
        version,
        409,
        theirs=their_change(current),
        yours=yours,
        problem="not saved: someone changed this draft after you opened it; their change is shown, "
        "and what you typed is listed to copy back",
    )


def not_written(
    request: Request, what: str, status: int, changed: str, *, theirs: bool = True
) -> tuple[Callable[[Draft, str], HTMLResponse], Callable[[Draft, str, IncidentlibError], HTMLResponse]]:
    """The draft page's two answers to a write that was not done, for `writes.Answers`: the
    page showed another version (`changed` says what to do, beside the other person's change when
    `theirs`), and the review refused the write or someone wrote the draft meanwhile (the error)."""

    def mismatch(draft: Draft, now: str) -> HTMLResponse:
        return draft_page(
            request,
            draft,
            now,
            status,
            theirs=their_change(draft) if theirs else None,
            problem=f"{what}: not done: {changed}",
        )

    def not_done(draft: Draft, now: str, exc: IncidentlibError) -> HTMLResponse:
        return draft_page(request, draft, now, status, problem=f"{what}: {exc}")

    return mismatch, not_done


def their_change(draft: Draft) -> list[str]:
    """The history's last entry, as what someone else did since the page was loaded."""
    if not draft.history:
        return []
    last = draft.history[-1]
    what = ", ".join(last.changed) if last.changed else last.to_state.value
    return [f"{last.by} at {last.at:%Y-%m-%d %H:%M}: {last.comment or last.to_state.value} ({what})"]
