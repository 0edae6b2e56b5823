"""The web page's routes: no two can match one request, so the order they are added in decides
nothing; each review move has its own; a move the page has none for is one line."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi import FastAPI
from fastapi import routing as fastapi_routing
from fastapi.testclient import TestClient
from helpers import reviewable_draft
from starlette.convertors import PathConvertor
from starlette.routing import Mount

from pipeline import review
from pipeline.cli import app as cli_app
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web import create_app

PASSWORD = "correct horse battery"
DRAFT_ID = "example-org-outage-00000001"
_PARAMETER = re.compile(r"\{(\w+)(?::\w+)?\}")
_ANY_METHOD = frozenset({"*"})


def _settings(root: Path, assist: bool) -> Settings:
    # A model configured only adds the assist's routes: nothing here asks it anything.
    if assist:
        return Settings(root=root, llm_url="http://127.0.0.1:9/v1", llm_model="stand-in")
    return Settings(root=root)


# ---------------------------------------------------------------- which two routes can match one request


def _routes(app: FastAPI) -> list[Any]:
    """Every route of the app, those of its included routers too. FastAPI 0.150 keeps an included
    router as one entry of `app.routes`, its routes listed by `iter_route_contexts`; before, each
    of its routes was copied into `app.routes`."""
    flatten = getattr(fastapi_routing, "iter_route_contexts", None)
    return list(flatten(app.routes)) if flatten else list(app.routes)


def _shape(route: Any) -> tuple[frozenset[str], list[str | re.Pattern[str]], bool]:
    """A route as (its methods, its path's segments: a literal, or the pattern of a segment holding a
    parameter; whether it matches any path below too: a `:path` parameter, or a mount)."""
    if isinstance(getattr(route, "original_route", route), Mount):
        return _ANY_METHOD, _segments(route.path, {}), True
    convertors = route.param_convertors
    below = any(isinstance(convertor, PathConvertor) for convertor in convertors.values())
    methods = frozenset(route.methods or _ANY_METHOD) - {"HEAD"}  # HEAD goes with GET
    segments = _segments(route.path.split("{", 1)[0] if below else route.path, convertors)
    return methods, segments, below


def _segments(path: str, convertors: dict[str, Any]) -> list[str | re.Pattern[str]]:
    out: list[str | re.Pattern[str]] = []
    for segment in path.strip("/").split("/") if path.strip("/") else []:
        if not _PARAMETER.search(segment):
            out.append(segment)
            continue
        pattern, last = "", 0
        for found in _PARAMETER.finditer(segment):
            pattern += re.escape(segment[last : found.start()]) + f"(?:{convertors[found.group(1)].regex})"
            last = found.end()
        out.append(re.compile(pattern + re.escape(segment[last:])))
    return out


def _may_match_one_text(a: str | re.Pattern[str], b: str | re.Pattern[str]) -> bool:
    """Whether two segments can match one segment of a path. Two parameters are taken to clash:
    nothing here proves their patterns have no text in common."""
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        literal, pattern = (a, b) if isinstance(a, str) else (b, a)
        assert isinstance(literal, str) and isinstance(pattern, re.Pattern)
        return pattern.fullmatch(literal) is not None
    return True


def _clash(a: Any, b: Any) -> bool:
    methods_a, segments_a, below_a = _shape(a)
    methods_b, segments_b, below_b = _shape(b)
    if _ANY_METHOD not in (methods_a, methods_b) and not methods_a & methods_b:
        return False
    if len(segments_a) != len(segments_b):
        shorter_below = below_a if len(segments_a) < len(segments_b) else below_b
        if not shorter_below:
            return False
    return all(_may_match_one_text(x, y) for x, y in zip(segments_a, segments_b, strict=False))


def clashes(app: FastAPI) -> list[tuple[str, str]]:
    """Every two routes of `app` one request could match (the path templates of each)."""
    return [(a.path, b.path) for a, b in combinations(_routes(app), 2) if _clash(a, b)]


@pytest.mark.parametrize("assist", [False, True], ids=["without-model", "with-model"])
def test_no_two_routes_can_match_one_request(root: Path, assist: bool) -> None:
    app = create_app(_settings(root, assist))
    assert len(_routes(app)) == 27 + 2 * assist
    assert clashes(app) == []


def test_a_catch_all_route_is_a_clash(root: Path) -> None:
    """The check itself: a `{parameter}` where another route has a word, a `:path` parameter, a
    route under the static files; and what can never match one request is no clash."""
    app = create_app(_settings(root, False))

    @app.post("/drafts/{draft_id}/{action}")
    async def catch_all(draft_id: str, action: str) -> None: ...

    found = clashes(app)
    assert ("/drafts/{draft_id}/approve", "/drafts/{draft_id}/{action}") in found
    assert ("/drafts/{draft_id}/save", "/drafts/{draft_id}/{action}") in found
    assert not any(other.startswith(("/cases", "/candidates")) for pair in found for other in pair), found

    deeper = create_app(_settings(root, False))
    deeper.get("/static/{rest:path}")(catch_all)
    deeper.get("/{number:int}")(catch_all)  # never "cases" or "candidates": no clash with them
    deeper.get("/{anything}")(catch_all)
    found = clashes(deeper)
    assert ("/static", "/static/{rest:path}") in found
    assert ("/cases", "/{anything}") in found and ("/candidates", "/{anything}") in found
    assert ("/{number:int}", "/{anything}") in found
    assert not any("/{number:int}" in pair and "/cases" in pair for pair in found), found


# ---------------------------------------------------------------- the moves' routes


def test_each_move_of_the_review_has_its_route_and_command(root: Path) -> None:
    """The page and the commands both make every move pipeline.review names, and no other."""
    app = create_app(_settings(root, False))
    posted = {r.path for r in _routes(app) if "POST" in (r.methods or ())}
    for action in review.MOVES:
        assert f"/drafts/{{draft_id}}/{action.value}" in posted
    commands = set(typer.main.get_command(cli_app).commands)  # type: ignore[attr-defined]
    assert {action.value for action in review.MOVES} <= commands


def test_a_move_the_page_has_no_route_for_is_one_line(root: Path, store: Store, case_json: dict[str, Any]) -> None:
    store.write_draft(reviewable_draft(case_json, DRAFT_ID))
    add_reviewer(store, "ann", PASSWORD)
    client = TestClient(create_app(_settings(root, False)), follow_redirects=False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text)
    assert token
    signed_in = client.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": token.group(1)})
    assert signed_in.status_code == 303
    page = client.get(f"/drafts/{DRAFT_ID}").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    for action in ("frobnicate", "ask", "accept", "edit", "promote"):
        answer = client.post(f"/drafts/{DRAFT_ID}/{action}", data={"csrf_token": token.group(1)})
        assert answer.status_code == 404 and f"No action {action} here." in answer.text, action
        assert answer.headers["x-frame-options"] == "DENY"
    assert client.get("/nowhere").status_code == 404
    assert client.get(f"/drafts/{DRAFT_ID}/approve").status_code == 405
