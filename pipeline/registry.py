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
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from pipeline.errors import Fault
from pipeline.ids import canonical_url
from pipeline.models import Feed, SourceEntry
from pipeline.records import faults_from

__all__ = ["RegisteredFeed", "RegisteredSource", "find_duplicates", "parse_entries", "parse_feeds", "parse_registry"]

E = TypeVar("E", bound=BaseModel)


@dataclass(frozen=True)
class RegisteredSource:
    entry: SourceEntry
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class RegisteredFeed:
    feed: Feed
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def parse_registry(text: str, label: str) -> tuple[list[RegisteredSource], list[Fault]]:
    """Parse one registry file; bad entries become faults and the good ones are still returned."""
    entries, faults = parse_entries(text, label, SourceEntry, bare="url")
    return [RegisteredSource(entry, label, line) for entry, line in entries], faults


def parse_feeds(text: str, label: str) -> tuple[list[RegisteredFeed], list[Fault]]:
    """Parse `sources/feeds.yaml`, as the registry is parsed: one fault per bad entry, with its line."""
    from pipeline.feeds.links import check_selector  # soupsieve, only when there are feeds

    feeds, faults = parse_entries(text, label, Feed)
    good = []
    for feed, line in feeds:
        problem = check_selector(feed.selector) if feed.selector else None
        if problem:
            faults.append(Fault(f"{label}:{line}", "selector", f"not a CSS selector: {problem}"))
        else:
            good.append(RegisteredFeed(feed, label, line))
    # A feed listed twice is read once, as the first entry says (the crawl takes a source once too).
    first: dict[str, RegisteredFeed] = {}
    for registered in good:
        key = canonical_url(registered.feed.url)
        if key in first:
            faults.append(Fault(registered.where, "url", f"duplicate of the feed at {first[key].where}: {key}"))
        first.setdefault(key, registered)
    good = list(first.values())
    names: dict[str, RegisteredFeed] = {}
    for registered in good:
        name = registered.feed.name
        if name and name in names:
            faults.append(Fault(registered.where, "name", f"{name} names the feed at {names[name].where} too"))
        elif name:
            names[name] = registered
    return good, faults


def _yaml_fault(text: str, label: str) -> Fault:
    loader = yaml.SafeLoader(text)
    try:
        loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(exc, "problem", None) or str(exc)
        return Fault(where, "-", f"not valid YAML: {problem}")
    finally:
        loader.dispose()
    return Fault(label, "-", "not valid YAML")


def _duplicate_keys(node: yaml.Node, label: str) -> list[Fault]:
    """A key written twice in one mapping: YAML's loaders keep the last value without a word, so an entry
    would be read otherwise than it reads. One fault for each, at the second key's line."""
    faults = []
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                line = key.start_mark.line + 1
                if key.value in seen:
                    faults.append(
                        Fault(f"{label}:{line}", "-", f"duplicate key {key.value!r}: also at line {seen[key.value]}")
                    )
                else:
                    seen[key.value] = line
            faults += _duplicate_keys(value, label)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            faults += _duplicate_keys(item, label)
    return faults


def parse_entries(
    text: str, label: str, model: type[E], *, bare: str | None = None
) -> tuple[list[tuple[E, int]], list[Fault]]:
    """The entries of a YAML list file as `model`, each with its line; bad entries become faults.
    `bare`: the field a bare string stands for (a registry line that is only a URL)."""
    what = model.__name__
    # libyaml's parser when PyYAML has it (4 times faster on a candidates file of thousands), with the same
    # marks; a broken file is parsed again by PyYAML's own, whose messages say what it found instead.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError:
        return [], [_yaml_fault(text, label)]
    finally:
        loader.dispose()
    if root is None:
        return [], []
    if not isinstance(root, yaml.SequenceNode):
        return [], [Fault(f"{label}:{root.start_mark.line + 1}", "-", f"expected a list of {what} entries")]

    entries: list[tuple[E, int]] = []
    faults: list[Fault] = []
    for node in root.value:
        where = f"{label}:{node.start_mark.line + 1}"
        twice = _duplicate_keys(node, label)
        if twice:
            faults += twice
            continue
        data = loader.construct_document(node)
        if isinstance(data, str) and bare:
            data = {bare: data}
        if not isinstance(data, dict):
            expected = "a mapping with at least a url, or a bare URL" if bare else "a mapping with at least a url"
            faults.append(Fault(where, "-", f"expected {expected}"))
            continue
        try:
            entry = model.model_validate(data)
        except ValidationError as exc:
            faults.extend(faults_from(exc, where))
            continue
        entries.append((entry, node.start_mark.line + 1))
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
