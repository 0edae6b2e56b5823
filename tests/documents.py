"""Small documents the tests build themselves: a real PDF with a text layer, pages with odd bytes."""

from __future__ import annotations


def make_pdf(lines: list[str], title: str | None = None) -> bytes:
    """A one-page PDF whose text layer holds `lines` (Helvetica, one line each)."""
    text = (
        "BT /F1 11 Tf 50 780 Td 14 TL "
        + " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*" for line in lines
        )
        + " ET"
    )
    stream = text.encode("latin-1")
    info = f"<< /Title ({title}) >>" if title else "<< >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        info.encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        len(objects),
        xref,
    )
    return bytes(out)


POSTMORTEM_MD = """---
title: Cache stampede took the API down
date: 2024-03-05
---

# Cache stampede took the API down

## Summary

On 5 March 2024 the API returned errors for 40 minutes after the cache cluster restarted.
Every request missed the cache and went to the database, which ran out of connections.

## Impact

About 30% of API requests failed with HTTP 503 for 40 minutes.

## Timeline

### 2024-03-05

- 10:02 cache cluster restarted during maintenance
- 10:05 error rate alert fired
- 10:42 rate limiting in front of the database restored service

## Root cause

The restart emptied the cache at once, so the database got every request.

## Contributing factors

- The maintenance was not announced to the on-call engineer.
- The database connection limit was reached within seconds.

## Action items

- Warm the cache before a restart.
- Add request coalescing for cache misses.

## Lessons learned

A cache is part of capacity, not only of speed.
"""
