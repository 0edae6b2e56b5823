"""Signing in and out (the page's own accounts, pipeline.reviewers), and the health check."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from pipeline.web.pages import page
from pipeline.web.security import Session, Throttle, local
from pipeline.web.state import Web

router = APIRouter()


@router.get("/healthz")
async def healthz() -> Response:
    return Response("ok")


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return page(request, "login.html", next=local(next), problem=None)


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, web: Web) -> Response:
    """Sign in with a name and password; failures slow the next tries from that address, and of that name
    from that address (security.Throttle)."""
    from pipeline.reviewers import MAX_NAME_LENGTH, check_password

    form = await request.form()
    name = str(form.get("name") or "").strip()
    password = str(form.get("password") or "")
    target = local(str(form.get("next") or "/"))
    if not name or len(name) > MAX_NAME_LENGTH:
        return page(request, "login.html", 401, next=target, problem="wrong name or password")
    keys = Throttle.keys(name, request.client.host if request.client else "-")
    wait = web.throttle.wait_s(*keys)
    if wait:
        answer = page(
            request, "login.html", 429, next=target, problem=f"too many failed sign-ins; try again in {wait:.0f} s"
        )
        answer.headers["Retry-After"] = str(max(1, round(wait)))
        return answer
    if not await asyncio.to_thread(check_password, web.store, name, password):
        web.throttle.failed(*keys)
        return page(request, "login.html", 401, next=target, problem="wrong name or password")
    web.throttle.passed(*keys)
    session: Session = request.state.session
    session.sign_in(name, web.stamps.get().get(name))
    return RedirectResponse(target, status_code=303)


@router.post("/logout")
async def logout(request: Request) -> Response:
    session: Session = request.state.session
    session.sign_out()
    return RedirectResponse("/login", status_code=303)
