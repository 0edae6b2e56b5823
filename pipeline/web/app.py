"""The reviewer's web page: the queue, a draft beside its text, the review's moves, published cases,
the candidates the feeds proposed, and (with a model configured) the writer assist's proposals.

    app = create_app(settings)      # an ASGI app; `incidentlib web` serves it with uvicorn

A thin shell, like the command line: each action is one call of pipeline.review, pipeline.queue,
pipeline.claims, pipeline.candidates or pipeline.assist under the store's locks; no rule is written twice.
Every page needs a signed-in person (pipeline.reviewers), whose name is the one every move is made in.

This module is the wiring alone: the shared state (pipeline.web.state), the middleware
(pipeline.web.security, which says how the page is kept safe), the static files, the routers
(pipeline.web.routes) and the answers to a record that is not there. See docs/review.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from itsdangerous import URLSafeTimedSerializer
from jinja2 import Environment, FileSystemLoader
from starlette.exceptions import HTTPException

from pipeline import gate
from pipeline.claims import claimable
from pipeline.errors import RecordError, RecordNotFound, StoreError
from pipeline.render import inline, markdown, shown_url
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web.cache import DraftCache
from pipeline.web.forms import word_diff
from pipeline.web.pages import page
from pipeline.web.routes import assist, candidates, cases, drafts, queue, signin
from pipeline.web.security import SESSION_COOKIE, BodyLimit, Guard, Revoked, Sessions, Stamps, Throttle, signing_secret
from pipeline.web.state import WebState

__all__ = ["SESSION_COOKIE", "create_app"]

_HERE = Path(__file__).parent
_DRAFT_ACTION = re.compile(r"/drafts/[^/]+/([^/]+)")


def create_app(settings: Settings) -> FastAPI:
    """The web page on the data root of `settings`."""
    store = Store.from_settings(settings)
    signer = URLSafeTimedSerializer(signing_secret(settings, store), salt="incidentlib-session")
    languages = list(settings.required_languages)
    # Autoescape everywhere, not only for .html: every value a page shows may come from a crawled page.
    # And every printed string through the gate (pipeline.gate), the page's last line against a control character.
    env = Environment(loader=FileSystemLoader(_HERE / "templates"), autoescape=True, finalize=gate.finalize)
    templates = Jinja2Templates(env=env)
    templates.env.globals.update(word_diff=word_diff, quote=quote, claimable=claimable)
    templates.env.filters["markdown"] = markdown  # a case's texts as the reader's site shows them
    templates.env.filters["inline"] = inline  # a title's code spans and emphasis
    templates.env.filters["shown_url"] = shown_url  # a URL decoded for the eye; its href stays as it is
    stamps = Stamps(store)

    app = FastAPI(title="incidentlib", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = WebState(
        settings=settings,
        store=store,
        templates=templates,
        cache=DraftCache(store, languages),
        throttle=Throttle(),
        stamps=stamps,
        languages=languages,
    )
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    # The last added runs first: the session is read before the guard looks at it.
    app.add_middleware(
        Guard,
        stamps=stamps,
        archive_origin=settings.wayback_public_url,
        trusted_header=settings.web_user_header,
        trusted_proxies=set(settings.web_trusted_proxies),
    )
    app.add_middleware(Sessions, signer=signer, revoked=Revoked(store), secure=settings.web_secure_cookies)
    app.add_middleware(BodyLimit)  # outermost: no layer reads a body before its size is known
    app.add_exception_handler(RecordError, _record_error)
    app.add_exception_handler(StoreError, _record_error)  # a state file damaged: one line, not a server error
    app.add_exception_handler(HTTPException, _not_found)

    for area in (signin, queue, drafts, cases, candidates):
        app.include_router(area.router)
    if settings.assist_configured:
        app.include_router(assist.router)
    return app


async def _record_error(request: Request, exc: Exception) -> HTMLResponse:
    """A draft or case that is not there (404) or an id that names none, or a broken file, a record's or a
    state file's (422): one line naming it, not a server error."""
    if isinstance(exc, RecordNotFound):
        return page(request, "missing.html", 404, what=f"{exc.kind} {exc.record_id}")
    return page(request, "missing.html", 422, message=str(exc))


async def _not_found(request: Request, exc: Exception) -> Response:
    """A move of a draft that the page has no route for (a typo, or /ask without a model): one
    line naming the action, as for a draft that is not there. Any other answer as FastAPI's own."""
    assert isinstance(exc, HTTPException)  # the one kind it is registered for
    action = _DRAFT_ACTION.fullmatch(request.url.path)
    if exc.status_code == 404 and request.method == "POST" and action:
        return page(request, "missing.html", 404, what=f"action {action.group(1)}")
    return await http_exception_handler(request, exc)
