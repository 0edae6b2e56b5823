"""The manual's pages (docs/), for the tests that keep a table or a text of it in step with the code."""

from __future__ import annotations

from helpers import REPO

DOCS = REPO / "docs"


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(name: str, heading: str) -> str:
    """The text under `heading` (a whole line, such as "## Failure reasons") in page `name`, up to the
    next heading of its level or a higher one; fenced code is not searched for headings."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = page(name).splitlines()
    assert heading in lines, f"docs/{name} has no heading {heading!r}"
    found: list[str] = []
    fenced = False
    for line in lines[lines.index(heading) + 1 :]:
        if line.startswith("```"):
            fenced = not fenced
        depth = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < depth <= level and line[depth : depth + 1] == " ":
            break
        found.append(line)
    return "\n".join(found)
