"""What every part of the web page shares, built once by create_app: one WebState on `app.state.web`.

A route takes it as a parameter of type `Web` (a FastAPI dependency); a helper given the request
reads it with `web_of(request)`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web.cache import DraftCache
from pipeline.web.security import Stamps, Throttle

__all__ = ["Web", "WebState", "web_of"]


@dataclass
class WebState:
    """The page's data root, settings and the state kept between requests."""

    settings: Settings
    store: Store
    templates: Jinja2Templates
    cache: DraftCache
    throttle: Throttle
    stamps: Stamps
    languages: list[str]
    asking: set[str] = field(default_factory=set)  # drafts the model is being asked about: a second ask is refused
    # A request holds a worker thread until the model answers (minutes, at worst): two at once, at
    # most, so that slow answers never take every thread the pages are read in.
    model_slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(2))

    @property
    def sso(self) -> bool:
        """Whether a proxy's header names the person (single sign-on) rather than the page's own sign-in."""
        return bool(self.settings.web_user_header)


def web_of(request: Request) -> WebState:
    web: WebState = request.app.state.web
    return web


async def _web(request: Request) -> WebState:
    # async: FastAPI runs a plain function dependency in a worker thread, a hop for nothing here.
    return web_of(request)


Web = Annotated[WebState, Depends(_web)]
