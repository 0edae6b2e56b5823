"""Published cases: the list (`/cases`, with each case's broken links) and one case (`/cases/{id}`),
every field of its record labelled (pipeline.case_view)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from pipeline.case_view import case_rows
from pipeline.errors import RecordNotFound
from pipeline.models import Case, LinkStatus
from pipeline.web.pages import page
from pipeline.web.state import Web

_BROKEN = {LinkStatus.GONE, LinkStatus.MOVED, LinkStatus.BLOCKED}

router = APIRouter()


@router.get("/cases", response_class=HTMLResponse)
async def cases_page(request: Request, web: Web) -> HTMLResponse:
    store = web.store
    cases = await asyncio.to_thread(lambda: sorted(store.cases(), key=lambda c: c.id, reverse=True))
    states = store.state.read_links()
    broken = {c.id: [s.url for s in c.sources if s.url in states and states[s.url].status in _BROKEN] for c in cases}
    return page(request, "cases.html", cases=cases, broken=broken)


@router.get("/cases/{case_id}", response_class=HTMLResponse)
async def case_page(request: Request, case_id: str, web: Web) -> Response:
    try:
        case: Case = await asyncio.to_thread(web.store.read_case, case_id)
    except RecordNotFound:
        return page(request, "missing.html", 404, what=f"case {case_id}")
    return page(request, "case.html", case=case, rows=case_rows(case), link_states=web.store.state.read_links())
