"""The crawl registry (`sources/*.yaml`), parsed, pure: entries with the file and line they stand on.

A registry file is a YAML list of entries; each entry is a URL with optional hints:

    - url: https://github.com/org/repo/blob/main/postmortems/2024-01-01.md
      org: Example Org
      kind: github
      tags: [kubernetes]

A bare string is accepted as an entry with only a URL. Faults name `file:line`, so an
operator with a registry of hundreds of entries goes straight to the bad one.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from pydantic import ValidationError

from pipeline.errors import Fault
from pipeline.ids import canonical_url
from pipeline.models import SourceEntry
from pipeline.records import faults_from

__all__ = ["RegisteredSource", "find_duplicates", "parse_registry"]


@dataclass(frozen=True)
class RegisteredSource:
    entry: SourceEntry
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def parse_registry(text: str, label: str) -> tuple[list[RegisteredSource], list[Fault]]:
    """Parse one registry file; bad entries become faults and the good ones are still returned."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(exc, "problem", None) or str(exc)
        return [], [Fault(where, "-", f"not valid YAML: {problem}")]
    finally:
        loader.dispose()
    if root is None:
        return [], []
    if not isinstance(root, yaml.SequenceNode):
        return [], [Fault(f"{label}:{root.start_mark.line + 1}", "-", "expected a list of source entries")]

    entries: list[RegisteredSource] = []
    faults: list[Fault] = []
    for node in root.value:
        where = f"{label}:{node.start_mark.line + 1}"
        data = loader.construct_document(node)
        if isinstance(data, str):
            data = {"url": data}
        if not isinstance(data, dict):
            faults.append(Fault(where, "-", "expected a mapping with at least a url, or a bare URL"))
            continue
        try:
            entry = SourceEntry.model_validate(data)
        except ValidationError as exc:
            faults.extend(faults_from(exc, where))
            continue
        entries.append(RegisteredSource(entry, label, node.start_mark.line + 1))
    return entries, faults


def find_duplicates(sources: list[RegisteredSource]) -> list[Fault]:
    """One fault per entry whose canonical URL an earlier entry already registered."""
    first: dict[str, RegisteredSource] = {}
    faults = []
    for source in sources:
        key = canonical_url(source.entry.url)
        if key in first:
            faults.append(Fault(source.where, "url", f"duplicate of the entry at {first[key].where}: {key}"))
        else:
            first[key] = source
    return faults
