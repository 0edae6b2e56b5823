"""The reviewer's web page: the queue, a draft beside its text, the review's moves, published cases,
the candidates the feeds proposed, and (with a model configured) the writer assist's proposals.

    app = create_app(settings)      # an ASGI app; `incidentlib web` serves it with uvicorn

A thin shell, like the command line: each action is one call of pipeline.review, pipeline.queue,
pipeline.claims, pipeline.candidates or pipeline.assist under the store's locks; no rule is written twice.
Every page needs a signed-in person (pipeline.reviewers), whose name is the one every move is made in.
How the page is kept safe is pipeline.web.security's; the drafts kept read between requests are
pipeline.web.cache's.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from itsdangerous import URLSafeTimedSerializer
from jinja2 import Environment, FileSystemLoader

from pipeline import assist as assisting
from pipeline import candidates as candidating
from pipeline import claims as claiming
from pipeline import queue as review_queue
from pipeline import review
from pipeline.assist.answers import ENGLISH_FIELDS
from pipeline.discover import DISCOVERED_FILE
from pipeline.errors import (
    ConflictError,
    IncidentlibError,
    RecordError,
    RecordNotFound,
    ReviewError,
)
from pipeline.fragments import fragment_link
from pipeline.models import Candidate, Case, Draft, DraftState, LinkStatus
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web.cache import DraftCache
from pipeline.web.forms import MULTIPLE, apply_form, form_fields, languages_for, marked_text, word_diff
from pipeline.web.proposals import assist_view, form_path, parse_ask
from pipeline.web.security import SESSION_COOKIE, Guard, Session, Sessions, Stamps, Throttle, local, signing_secret

__all__ = ["SESSION_COOKIE", "create_app"]

PAGE_SIZE = 50
_KNOWN_DONE = {"write", "approve", "request-changes", "reject", "reopen"}
_HERE = Path(__file__).parent
_BROKEN = {LinkStatus.GONE, LinkStatus.MOVED, LinkStatus.BLOCKED}


# ---------------------------------------------------------------- the application


def create_app(settings: Settings) -> FastAPI:
    """The web page on the data root of `settings`."""
    store = Store.from_settings(settings)
    signer = URLSafeTimedSerializer(signing_secret(store), salt="incidentlib-session")
    throttle = Throttle()
    stamps = Stamps(store)
    languages = list(settings.required_languages)
    cache = DraftCache(store, languages)
    # Autoescape everywhere, not only for .html: every value a page shows may come from a crawled page.
    env = Environment(loader=FileSystemLoader(_HERE / "templates"), autoescape=True)
    templates = Jinja2Templates(env=env)
    templates.env.globals.update(word_diff=word_diff, quote=quote)
    archive_origin = settings.wayback_url.rstrip("/")
    trusted_header = settings.web_user_header

    app = FastAPI(title="incidentlib", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")

    # The last added runs first: the session is read before the guard looks at it.
    app.add_middleware(
        Guard,
        stamps=stamps,
        archive_origin=archive_origin,
        trusted_header=trusted_header,
        trusted_proxies=set(settings.web_trusted_proxies),
    )
    app.add_middleware(Sessions, signer=signer, secure=settings.web_secure_cookies)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        session: Session = request.state.session
        context.update(me=session.name, csrf=session.csrf, request=request, sso=bool(trusted_header))
        return templates.TemplateResponse(request, name, context, status_code=status)

    @app.exception_handler(RecordError)
    async def record_error(request: Request, exc: RecordError) -> HTMLResponse:
        """A draft or case that is not there (404) or an id that names none, or a broken file (422):
        one line, not a server error."""
        if isinstance(exc, RecordNotFound):
            return page(request, "missing.html", 404, what=f"{exc.kind} {exc.record_id}")
        return page(request, "missing.html", 422, message=str(exc))

    @app.get("/healthz")
    async def healthz() -> Response:
        return Response("ok")

    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request, next: str = "/") -> HTMLResponse:
        return page(request, "login.html", next=local(next), problem=None)

    @app.post("/login", response_class=HTMLResponse)
    async def login(request: Request) -> Response:
        from pipeline.reviewers import MAX_NAME_LENGTH, check_password

        form = await request.form()
        name = str(form.get("name") or "").strip()
        password = str(form.get("password") or "")
        target = local(str(form.get("next") or "/"))
        if not name or len(name) > MAX_NAME_LENGTH:
            return page(request, "login.html", 401, next=target, problem="wrong name or password")
        keys = (f"name:{name.casefold()}", f"addr:{request.client.host if request.client else '-'}")
        wait = throttle.wait_s(*keys)
        if wait:
            answer = page(
                request, "login.html", 429, next=target, problem=f"too many failed sign-ins; try again in {wait:.0f} s"
            )
            answer.headers["Retry-After"] = str(max(1, round(wait)))
            return answer
        if not await asyncio.to_thread(check_password, store, name, password):
            throttle.failed(*keys)
            return page(request, "login.html", 401, next=target, problem="wrong name or password")
        throttle.passed(*keys)
        session: Session = request.state.session
        session.sign_in(name, stamps.get().get(name))
        return RedirectResponse(target, status_code=303)

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        session: Session = request.state.session
        session.sign_out()
        return RedirectResponse("/login", status_code=303)

    # ------------------------------------------------------------ the queue

    @app.get("/", response_class=HTMLResponse)
    async def queue_page(
        request: Request,
        state: str = "",
        org: str = "",
        component: str = "",
        older_than: str = "",
        writer: str = "",
        q: str = "",
        sort: str = "state",
        page_number: int = 1,
    ) -> HTMLResponse:
        drafts, unreadable = await asyncio.to_thread(cache.all)
        problem = None
        try:
            entries = review_queue.queue_of(
                drafts,
                unreadable,
                languages,
                states=[state] if state else None,
                org=org or None,
                component=component or None,
                older_than_days=float(older_than) if older_than else None,
                writer=writer or None,
                search=q or None,
                sort=sort,
                entry_of=cache.entry,
                text_of=cache.text,
            )
        except (ReviewError, ValueError) as exc:
            entries, problem = [], str(exc)
        counts: dict[str, int] = defaultdict(int)
        for draft in drafts:
            counts[draft.state.value] += 1
        if unreadable:
            counts[review_queue.UNREADABLE] = len(unreadable)
        pages = max(1, -(-len(entries) // PAGE_SIZE))
        page_number = min(max(1, page_number), pages)
        shown = entries[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
        filters = {"state": state, "org": org, "component": component, "older_than": older_than}
        filters |= {"writer": writer, "q": q, "sort": sort}
        return page(
            request,
            "queue.html",
            entries=shown,
            total=len(entries),
            counts=dict(counts),
            states=[s.value for s in DraftState] + [review_queue.UNREADABLE],
            filters=filters,
            page_number=page_number,
            pages=pages,
            query=lambda **change: urlencode({k: v for k, v in {**filters, **change}.items() if v}),
            claims=claiming.claims(store),
            problem=problem,
        )

    claim_moves: dict[str, Callable[[Store, str, str], object]] = {"claim": claiming.claim, "unclaim": claiming.unclaim}

    @app.post("/drafts/{draft_id}/claim", response_class=HTMLResponse)
    @app.post("/drafts/{draft_id}/unclaim", response_class=HTMLResponse)
    async def claim(request: Request, draft_id: str) -> HTMLResponse:
        """Claim the draft, or let go of it: the claim's cell, for htmx to swap in."""
        name = request.state.session.name
        problem = None
        try:
            await asyncio.to_thread(claim_moves[request.url.path.rsplit("/", 1)[1]], store, draft_id, name)
        except IncidentlibError as exc:
            problem = str(exc)
        return page(
            request, "_claim.html", draft_id=draft_id, claim=claiming.claims(store).get(draft_id), problem=problem
        )

    # ------------------------------------------------------------ one draft

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
        yours: list[tuple[str, str]] | None = None,
    ) -> HTMLResponse:
        shown = typed or draft
        # The writer assist, only when a model is configured: otherwise the page shows nothing of it.
        assist = (
            assist_view(draft, settings.llm_model or "", request.query_params) if settings.assist_configured else None
        )
        segments, marks = marked_text(draft.text or "", draft.evidence)
        spans = {number: (entry.start, entry.end) for number, entry in marks.items()}
        if assist:
            assist.mark_passages(segments, len(marks) + 1)
            spans |= assist.spans
        base = review_queue.evidence_url(draft)
        links = {}
        for number, (start, end) in spans.items():
            try:
                links[number] = fragment_link(base, draft.text or "", start, end)
            except ValueError:
                links[number] = base
        link_states = store.read_links()
        return page(
            request,
            "draft.html",
            status,
            draft=draft,
            version=version,
            fields=form_fields(shown, languages_for(shown, languages), marks),
            languages=languages_for(shown, languages),
            segments=segments,
            marks=marks,
            links=links,
            lacks=review.missing_for_publication(shown, languages),
            link_states=link_states,
            claim=claiming.claims(store).get(draft.id),
            problem=problem,
            problems=problems or [],
            theirs=theirs or [],
            yours=yours or [],
            done=request.query_params.get("done") if request.query_params.get("done") in _KNOWN_DONE else None,
            archived=next((s.archived for s in draft.sources if s.archived), None),
            assist=assist,
            pieces=assist.pieces if assist else {},
        )

    @app.get("/drafts/{draft_id}", response_class=HTMLResponse)
    async def show_draft(request: Request, draft_id: str) -> Response:
        try:
            draft, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
        except RecordNotFound:
            return page(request, "missing.html", 404, what=f"draft {draft_id}")
        except RecordError as exc:
            return page(request, "missing.html", 422, message=str(exc))
        return draft_page(request, draft, version)

    @app.post("/drafts/{draft_id}/lacks", response_class=HTMLResponse)
    async def lacks(request: Request, draft_id: str) -> HTMLResponse:
        """What the draft would still lack with the form as typed (not saved)."""
        draft = await asyncio.to_thread(store.read_draft, draft_id)
        form = await request.form()
        typed, problems = apply_form(draft, _form_values(form), languages_for(draft, languages))
        missing = review.missing_for_publication(typed, languages) if typed else []
        return page(request, "_lacks.html", lacks=missing, problems=problems)

    @app.post("/drafts/{draft_id}/save", response_class=HTMLResponse)
    async def save(request: Request, draft_id: str) -> Response:
        name = request.state.session.name
        form = await request.form()
        loaded_version = str(form.get("version") or "")
        current, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
        typed, problems = apply_form(current, _form_values(form), languages_for(current, languages))
        if typed is None:
            return draft_page(
                request, current, version, 422, problems=problems, problem="not saved: fix the fields named"
            )
        if version != loaded_version:
            return conflict(request, current, version, typed)
        try:
            updated = review.edited(current, typed, name)
            await asyncio.to_thread(store.write_draft, updated, expected_version=version)
        except ConflictError:
            fresh, fresh_version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
            return conflict(request, fresh, fresh_version, typed)
        except ReviewError as exc:
            return draft_page(request, current, version, 409, typed=typed, problem=f"not saved: {exc}")
        return RedirectResponse(f"/drafts/{quote(draft_id)}?saved=1", status_code=303)

    def conflict(request: Request, current: Draft, version: str, typed: Draft) -> HTMLResponse:
        """Someone saved after the page was loaded: nothing is saved. The form shows the draft as it is
        now (a second save from it cannot undo their change), and what was typed is listed beside,
        field by field, to copy back."""
        yours = [(path, str(review.value_at(typed, path))) for path in review.changed_fields(current, typed)]
        return draft_page(
            request,
            current,
            version,
            409,
            theirs=_their_change(current),
            yours=yours,
            problem="not saved: someone changed this draft after you opened it; their change is shown, "
            "and what you typed is listed to copy back",
        )

    # ------------------------------------------------------------ the writer assist (only with a model)

    if settings.assist_configured:
        asking: set[str] = set()  # drafts the model is being asked about: a second ask meanwhile is refused
        # A request holds a worker thread until the model answers (minutes, at worst): two at once, at
        # most, so that slow answers never take every thread the pages are read in.
        model_slots = asyncio.Semaphore(2)

        def assist_problem(request: Request, draft_id: str, status: int, problem: str) -> HTMLResponse:
            """The draft page saying what went wrong in one line. To htmx a 200, as it swaps no error
            answer into the page (and the person would see nothing happen)."""
            draft, version = store.read_draft_versioned(draft_id)
            status = 200 if request.headers.get("hx-request") else status
            return draft_page(request, draft, version, status, problem=problem)

        @app.post("/drafts/{draft_id}/ask", response_class=HTMLResponse)
        async def ask(request: Request, draft_id: str) -> Response:
            """Ask the model for one field (`summary:en`, `summary:ko`) or all the draft lacks; the page
            again, its proposals beside the fields. The request waits for the answer, off the event loop."""
            form = await request.form()
            value = str(form.get("ask") or "")
            try:
                fields, asked_languages, again = parse_ask(value)
            except ReviewError as exc:
                return await asyncio.to_thread(assist_problem, request, draft_id, 422, f"ask: {exc}")
            if draft_id in asking:
                problem = "ask: the model is being asked about this draft already; its answer shows here when it comes"
                return await asyncio.to_thread(assist_problem, request, draft_id, 409, problem)
            asking.add(draft_id)
            try:
                async with model_slots:
                    done = await asyncio.to_thread(
                        assisting.assist,
                        store,
                        settings,
                        draft_id,
                        fields=fields,
                        languages=asked_languages,
                        again=again,
                    )
            except RecordError:
                raise  # no such draft, or a broken file: the one-line page of record_error
            except IncidentlibError as exc:  # SettingsError, ReviewError, AssistError, a lock or the disk
                return await asyncio.to_thread(assist_problem, request, draft_id, 409, f"ask: {exc}")
            finally:
                asking.discard(draft_id)
            said = {"asked": done.outcome, "ask": value, "n": len(done.proposed), "dropped": done.dropped}
            where = f"#field-{form_path(ENGLISH_FIELDS.get(fields[0], fields[0]))}" if fields else "#assist"
            return RedirectResponse(f"/drafts/{quote(draft_id)}?{urlencode(said)}{where}", status_code=303)

        @app.post("/drafts/{draft_id}/accept", response_class=HTMLResponse)
        async def accept(request: Request, draft_id: str) -> Response:
            """Take one proposal as the signed-in person's edit, of the version the page showed."""
            name = request.state.session.name
            form = await request.form()
            path = str(form.get("path") or "")
            seen = str(form.get("version") or "")
            current, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
            status = 200 if request.headers.get("hx-request") else 409
            if seen != version:
                problem = (
                    "accept: not done: the draft changed after you opened it (an edit, or the model's answer); "
                    "read it again, then accept"
                )
                return draft_page(request, current, version, status, problem=problem)
            try:
                accepted = assisting.accept_proposal(current, path, name)
                await asyncio.to_thread(store.write_draft, accepted, expected_version=version)
            except (ReviewError, ConflictError) as exc:
                draft, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
                return draft_page(request, draft, version, status, problem=f"accept: {exc}")
            path = ENGLISH_FIELDS.get(path, path)  # a field's name (summary) stands for its English
            target = f"/drafts/{quote(draft_id)}?{urlencode({'accepted': path})}#field-{form_path(path)}"
            return RedirectResponse(target, status_code=303)

    moves: dict[str, Callable[[Draft, str, str | None], Draft]] = {
        "write": lambda d, by, text: review.write(d, by, languages, text or None),
        "approve": lambda d, by, text: review.approve(d, by, languages, text or None),
        "request-changes": lambda d, by, text: review.request_changes(d, by, text or ""),
        "reject": lambda d, by, text: review.reject(d, by, text or ""),
        "reopen": lambda d, by, text: review.reopen(d, by, text or None),
    }

    @app.post("/drafts/{draft_id}/{action}", response_class=HTMLResponse)
    async def move(request: Request, draft_id: str, action: str) -> Response:
        if action not in moves:
            return page(request, "missing.html", 404, what=f"action {action}")
        name = request.state.session.name
        form = await request.form()
        text = str(form.get("comment") or "").strip()
        seen = str(form.get("version") or "")
        current, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
        if seen != version:
            # An approval is of the text the reviewer read: a draft changed since is read again first.
            return draft_page(
                request,
                current,
                version,
                409,
                theirs=_their_change(current),
                problem=f"{action}: not done: the draft changed after you opened it; read the change, then again",
            )
        try:
            moved = moves[action](current, name, text)
            await asyncio.to_thread(store.write_draft, moved, expected_version=version)
        except (ReviewError, ConflictError) as exc:
            draft, version = await asyncio.to_thread(store.read_draft_versioned, draft_id)
            return draft_page(request, draft, version, 409, problem=f"{action}: {exc}")
        return RedirectResponse(f"/drafts/{quote(draft_id)}?done={quote(action)}", status_code=303)

    # ------------------------------------------------------------ published cases

    @app.get("/cases", response_class=HTMLResponse)
    async def cases_page(request: Request) -> HTMLResponse:
        cases = await asyncio.to_thread(lambda: sorted(store.cases(), key=lambda c: c.id, reverse=True))
        states = store.read_links()
        broken = {
            c.id: [s.url for s in c.sources if s.url in states and states[s.url].status in _BROKEN] for c in cases
        }
        return page(request, "cases.html", cases=cases, broken=broken)

    @app.get("/cases/{case_id}", response_class=HTMLResponse)
    async def case_page(request: Request, case_id: str) -> Response:
        try:
            case: Case = await asyncio.to_thread(store.read_case, case_id)
        except RecordNotFound:
            return page(request, "missing.html", 404, what=f"case {case_id}")
        return page(request, "case.html", case=case, link_states=store.read_links())

    # ------------------------------------------------------------ candidates the feeds proposed

    def candidates_view(
        request: Request,
        feed: str,
        dismissed: bool,
        status: int = 200,
        *,
        done: CandidatesDone | None = None,
        problem: str | None = None,
    ) -> HTMLResponse:
        registered_feeds, _ = store.read_feeds()
        labels = {f.feed.url: f.feed.label for f in registered_feeds}
        try:
            shown = candidating.candidates(store, feed or None, dismissed=dismissed)
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

    @app.get("/candidates", response_class=HTMLResponse)
    async def candidates_page(request: Request, feed: str = "", dismissed: bool = False) -> HTMLResponse:
        return await asyncio.to_thread(candidates_view, request, feed, dismissed)

    @app.post("/candidates/accept", response_class=HTMLResponse)
    async def accept_candidates(request: Request) -> HTMLResponse:
        """Register the candidates named (or every open one of `all_from`): the list again, saying
        what was registered and which drafts were written from their feed's text."""
        form = await request.form()
        ids = [str(v) for v in form.getlist("id") if str(v).strip()]
        all_from = str(form.get("all_from") or "").strip() or None
        feed = str(form.get("feed") or "")
        if not ids and not all_from:
            return await asyncio.to_thread(
                candidates_view, request, feed, False, 422, problem="accept: name a candidate"
            )

        def run() -> HTMLResponse:
            try:
                report = candidating.accept(store, settings, ids, all_from=all_from)
            except IncidentlibError as exc:
                return candidates_view(request, feed, False, 409, problem=f"accept: {exc}")
            return candidates_view(request, feed, False, done=CandidatesDone(accepted=report))

        return await asyncio.to_thread(run)

    @app.post("/candidates/dismiss", response_class=HTMLResponse)
    async def dismiss_candidates(request: Request) -> HTMLResponse:
        """Dismiss the candidates named, for good, with the reason given (if any)."""
        form = await request.form()
        ids = [str(v) for v in form.getlist("id") if str(v).strip()]
        reason = str(form.get("reason") or "").strip() or None
        feed = str(form.get("feed") or "")
        if not ids:
            return await asyncio.to_thread(
                candidates_view, request, feed, False, 422, problem="dismiss: name a candidate"
            )

        def run() -> HTMLResponse:
            try:
                gone = candidating.dismiss(store, ids, reason=reason)
            except IncidentlibError as exc:
                return candidates_view(request, feed, False, 409, problem=f"dismiss: {exc}")
            return candidates_view(request, feed, False, done=CandidatesDone(dismissed=gone))

        return await asyncio.to_thread(run)

    return app


@dataclass
class CandidatesDone:
    """What an accept or a dismiss did, for the page to say."""

    accepted: candidating.AcceptReport | None = None
    dismissed: list[Candidate] = field(default_factory=list)


def _form_values(form: Any) -> dict[str, Any]:
    """The form as path -> value, a list for a field of several choices."""
    out: dict[str, Any] = {}
    for key in form.keys():
        values = form.getlist(key)
        out[key] = values if len(values) > 1 or key.split(".")[0] in MULTIPLE else values[0]
    return out


def _their_change(draft: Draft) -> list[str]:
    """The history's last entry, as what someone else did since the page was loaded."""
    if not draft.history:
        return []
    last = draft.history[-1]
    what = ", ".join(last.changed) if last.changed else last.to_state.value
    return [f"{last.by} at {last.at:%Y-%m-%d %H:%M}: {last.comment or last.to_state.value} ({what})"]
