"""Possible duplicates, related cases and recurrences: suggestions for a reviewer, never written by themselves.

    from pipeline.similar import doc_of_draft, library_index, suggestions

    index = library_index(store)                   # the data root's drafts and cases, cached in its state
    index.duplicates(doc_of_draft(draft))          # [Match(id, "duplicate", score, reasons, passage)]
    suggestions(store, "IL-0042").related          # cases sharing terms and close text, with the reasons

Pure core: `docs` (a record as compared), `text` (words, shingles, terms, passages), `index` (the rules);
I/O shell: `library` (the data root's index and its cache). The rules and their thresholds are told in
docs/similar.md.
"""

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
