"""Possible duplicates, related cases and recurrences: suggestions for a reviewer, never written by themselves.

    from pipeline.similar import doc_of_draft, library_index, suggestions

    index = library_index(store)                   # the data root's drafts and cases, cached in its state
    index.duplicates(doc_of_draft(draft))          # [Match(id, "duplicate", score, reasons, passage)]
    suggestions(store, "IL-0042").related          # cases sharing terms and close text, with the reasons

Pure core: `docs` (a record as compared), `text` (words, shingles, terms, passages), `index` (the rules);
I/O shell: `library` (the data root's index and its cache). The rules and their thresholds are told in
docs/similar.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.similar.docs import Doc, doc_of_case, doc_of_draft
    from pipeline.similar.index import Match, SimilarIndex
    from pipeline.similar.library import Library, Suggestions, library_index, load_library, suggestions

__all__ = [
    "Doc",
    "Library",
    "Match",
    "SimilarIndex",
    "Suggestions",
    "doc_of_case",
    "doc_of_draft",
    "library_index",
    "load_library",
    "suggestions",
]

# Each name from its module when first asked for (PEP 562): a process that needs only `text` (the tools'
# lookup, pipeline.lookup) does not import scikit-learn and datasketch, a second and a half of start-up.
_FROM = {
    "Doc": "docs",
    "doc_of_case": "docs",
    "doc_of_draft": "docs",
    "Match": "index",
    "SimilarIndex": "index",
    "Library": "library",
    "Suggestions": "library",
    "library_index": "library",
    "load_library": "library",
    "suggestions": "library",
}


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"pipeline.similar.{_FROM[name]}"), name)
