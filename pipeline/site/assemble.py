"""Files made of one piece a case (the API's cases.csv and all.zip), rebuilt from the last build's copy.

    made = assemble(head, cards, piece, tail, previous)     # previous: (last bytes, their spans) or None
    made.data, made.spans                                   # the file, and where each case's piece lies

A library of 10,000 cases makes a cases.csv of 20 MB and an all.zip of 13 MB; after one case changed,
making either anew takes about a second (every case read, its row formatted or its file compressed).
Each piece is a function of its case's file alone, so the build keeps, beside the file, where each case's
piece lies in it and of which version of the case (`spans`: id -> (digest, offset, length)); the next build
copies the pieces of unchanged cases out of the last file and makes only the others.

The zip is written here, by hand, rather than with `zipfile`: `zipfile` compresses every member it writes
and cannot take a member compressed already (what copying a member from the last zip is). The format is
PKWARE's APPNOTE: a member is a local header, then its deflated bytes; a central directory lists them; an
end record says where the directory is. Members carry a fixed time (1980-01-01, zip's epoch) so equal
cases give equal bytes. `zipfile` reads the result (the tests open it with it).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Assembled", "Previous", "Span", "assemble", "zip_directory", "zip_member"]

Span = tuple[str, int, int]  # the case's digest, the piece's offset, its length
Previous = tuple[bytes, dict[str, Span]]  # the last build's file and its spans


class _Card(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def digest(self) -> str: ...


@dataclass(frozen=True)
class Assembled:
    data: bytes
    spans: dict[str, Span]
    made: int  # pieces made anew (the others were copied)


def assemble(
    head: bytes,
    cards: Sequence[_Card],
    piece: Callable[[str], bytes],
    tail: Callable[[dict[str, Span]], bytes],
    previous: Previous | None,
) -> Assembled:
    """`head`, one piece a card in their order (a card's from `previous` when its digest is the same),
    then `tail(spans)`."""
    last, last_spans = previous if previous is not None else (b"", {})
    out = bytearray(head)
    spans: dict[str, Span] = {}
    made = 0
    for card in cards:
        old = last_spans.get(card.id)
        if old is not None and old[0] == card.digest and old[1] + old[2] <= len(last):
            data = last[old[1] : old[1] + old[2]]
        else:
            data = piece(card.id)
            made += 1
        spans[card.id] = (card.digest, len(out), len(data))
        out += data
    out += tail(spans)
    return Assembled(bytes(out), spans, made)


# ---------------------------------------------------------------- zip, by hand (see the module's docstring)

_DOS_TIME, _DOS_DATE = 0, (0 << 9) | (1 << 5) | 1  # 1980-01-01 00:00
_DEFLATED, _VERSION = 8, 20
_UTF8 = 1 << 11  # names are UTF-8


def zip_member(name: str, data: bytes) -> bytes:
    """A member's local header and its deflated bytes."""
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate, as zip holds it
    deflated = packer.compress(data) + packer.flush()
    encoded = name.encode()
    header = struct.pack(
        "<IHHHHHIIIHH",
        0x04034B50,
        _VERSION,
        _UTF8,
        _DEFLATED,
        _DOS_TIME,
        _DOS_DATE,
        zlib.crc32(data),
        len(deflated),
        len(data),
        len(encoded),
        0,
    )
    return header + encoded + deflated


def zip_directory(members: Sequence[tuple[str, int, int, int, int]]) -> bytes:
    """The central directory and end record of members (name, crc, size, offset of its local header, length
    of its local header and data), in order. Under zip64's limits (65,535 members, 4 GB): a ValueError past them."""
    if len(members) > 0xFFFF:
        raise ValueError(f"all.zip: {len(members)} members, more than a zip without zip64 holds")
    directory = bytearray()
    end = 0
    for name, crc, size, offset, length in members:
        encoded = name.encode()
        compressed = length - 30 - len(encoded)
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            (3 << 8) | _VERSION,  # made by Unix, so the permissions below are read
            _VERSION,
            _UTF8,
            _DEFLATED,
            _DOS_TIME,
            _DOS_DATE,
            crc,
            compressed,
            size,
            len(encoded),
            0,
            0,
            0,
            0,
            0o100644 << 16,
            offset,
        )
        directory += encoded
        end = max(end, offset + length)
    if end > 0xFFFFFFFF:
        raise ValueError("all.zip: over 4 GB, more than a zip without zip64 holds")
    count = len(members)
    return bytes(directory) + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(directory), end, 0)
