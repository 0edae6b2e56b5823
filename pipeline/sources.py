"""The crawl registry's operations (`sources/*.yaml`): add a source, and the pages it holds already."""

from __future__ import annotations

from pathlib import Path

from pipeline.ids import same_page_key
from pipeline.models import SourceEntry
from pipeline.registry import RegisteredSource
from pipeline.store import Store

__all__ = ["add_source", "registered_by_page"]


def add_source(store: Store, entry: SourceEntry, file_name: str = "added.yaml") -> Path:
    """Append one entry to a registry file (`incidentlib add`), refusing a URL already registered anywhere
    (DuplicateSource); the file's comments and layout stay as they were. The registry file's path."""
    with store.state.lock("sources"):
        return store.append_sources([entry], file_name)


def registered_by_page(store: Store) -> dict[str, RegisteredSource]:
    """The registry's sources by `same_page_key`: what a feed may not propose again."""
    registered, _ = store.read_sources()
    found: dict[str, RegisteredSource] = {}
    for source in registered:  # a registered URL is a valid one: its port parses
        found.setdefault(same_page_key(source.entry.url), source)
    return found
