"""Response bodies decoded here, a bounded piece at a time: a gzip bomb costs the limit and a piece.

httpx decodes a whole network chunk at once, which a bomb inflates into tens of megabytes
before any limit is checked; so the crawler asks only for the codings undone here
(`ACCEPT_ENCODING`) and reads raw bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

from pipeline.errors import FetchError
from pipeline.reasons import Reason

__all__ = ["ACCEPT_ENCODING", "DECODE_STEP", "content_codings", "decoded"]

# The codings this module can undo a bounded piece at a time; asked for by name so that
# httpx never offers br or zstd, whose decoders it would run unbounded.
ACCEPT_ENCODING = "gzip, deflate"
# The most decoded bytes one step of decompression makes: what a bomb may cost beyond the limit.
DECODE_STEP = 64 * 1024


# RFC 9110, 8.4.1: gzip (x-gzip its alias) and deflate, which is the zlib format (RFC 1950);
# some servers send raw deflate (RFC 1951) instead, which is read too, as browsers do.
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def content_codings(url: str, header: str | None) -> list[str]:
    """The codings applied to the body, in the order they were applied; identity left out."""
    codings = [c.strip().lower() for c in (header or "").split(",") if c.strip().lower() not in ("", "identity")]
    unknown = [c for c in codings if c not in _WBITS]
    if unknown:
        raise FetchError(
            url, Reason.BAD_RESPONSE, f"served with Content-Encoding {unknown[0]}, which was not asked for"
        )
    return codings


class _Inflater:
    """One content coding undone; each call makes at most `DECODE_STEP` bytes at a time."""

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._zlib = zlib.decompressobj(_WBITS[coding])
        self._started = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if not self._started and data and self._coding == "deflate":
            self._started = True
            try:  # a zlib header, or raw deflate
                zlib.decompressobj().decompress(data[:2])
            except zlib.error:
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        while True:
            # max_length bounds what one compressed chunk may inflate to; the rest of the
            # input waits in unconsumed_tail for the next call.
            piece = self._zlib.decompress(data, DECODE_STEP)
            data = self._zlib.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < DECODE_STEP:
                return


async def decoded(url: str, raw: AsyncIterator[bytes], codings: list[str]) -> AsyncIterator[bytes]:
    """The body as the server meant it: `raw` with its codings undone, innermost last."""
    inflaters = [_Inflater(coding) for coding in reversed(codings)]

    def undo(data: bytes, stage: int) -> Iterator[bytes]:
        if stage == len(inflaters):
            yield data
            return
        for piece in inflaters[stage].pieces(data):
            yield from undo(piece, stage + 1)

    try:
        async for chunk in raw:
            for piece in undo(chunk, 0):
                yield piece
    except zlib.error as exc:
        raise FetchError(url, Reason.BAD_RESPONSE, f"the response could not be read: {exc}") from None
