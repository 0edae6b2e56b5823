"""One deadline for all a fetch does: its requests, redirects, retries and the waits between them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from types import TracebackType

__all__ = ["Deadline"]


class Deadline:
    """The time one fetch may take, `seconds` in all, however many requests and waits it needs.

    Its clock runs while the fetch is served and while it waits to retry; it stops while
    the fetch waits for its host's turn or a global slot (politeness, others' time) and
    while robots.txt is read (bounded by a deadline of its own). When it runs out, the
    task is cancelled wherever it is, and `async with` raises TimeoutError.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._scope = asyncio.timeout(None)
        self._left = seconds

    async def __aenter__(self) -> Deadline:
        await self._scope.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._scope.__aexit__(exc_type, exc, tb)

    @property
    def expired(self) -> bool:
        return self._scope.expired()

    def left(self) -> float:
        when = self._scope.when()
        return self._left if when is None else max(0.0, when - asyncio.get_running_loop().time())

    def run(self) -> None:
        if self._scope.when() is None and not self._scope.expired():
            self._scope.reschedule(asyncio.get_running_loop().time() + self._left)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        running = self._scope.when() is not None
        if running and not self._scope.expired():
            self._left = self.left()
            self._scope.reschedule(None)
        try:
            yield
        finally:
            if running:
                self.run()
