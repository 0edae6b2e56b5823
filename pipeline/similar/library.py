"""The data root's similarity index and a record's suggestions: the I/O shell of pipeline.similar.

    index = library_index(store)                      # every draft and case worth comparing, cached
    found = suggestions(store, "IL-0042")             # its possible duplicates, related cases, recurrences

The index holds every case not withdrawn and every draft not rejected, merged or published (a published
draft is its case, and the case's Doc carries the draft's extracted text; so is a draft reopened after
publication, which still names its case). It is kept in the data root's
state (`Store.similar_cache_path`) with each record file's inode, size and modification time, so that a
second call reads only the files that changed and updates the index with their Docs; a file changed
within two seconds of the last look is read again whatever its times say (git's "racy" rule, as the
site's build does). A cache that cannot be read, or was written by other code, is not trusted.

Nothing here writes a record: suggestions only. A person acts on them (pipeline.merge, the review).
"""

from __future__ import annotations

import hashlib
import pickle
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import datasketch
import sklearn

from pipeline import fields as _fields
from pipeline import models as _models
from pipeline.errors import RecordError
from pipeline.ids import is_case_id
from pipeline.models import Case, Draft
from pipeline.similar import docs as _docs_module
from pipeline.similar import index as _index_module
from pipeline.similar import text as _text_module
from pipeline.similar.docs import Doc, doc_of_case, doc_of_draft
from pipeline.similar.index import Match, SimilarIndex
from pipeline.store import RecordKind, Store

__all__ = ["Library", "Suggestions", "library_index", "load_library", "suggestions"]

_RACY_NS = 2_000_000_000  # a file changed this close to the last look is read again (git's racy rule)
_LEFT_OUT = frozenset({"rejected", "merged", "published"})  # a draft's states not compared ("merged" may not exist)
# The cache's format: the code that makes what it holds (this module's facts included, and the record's
# fields they are read from) and the libraries' versions; a cache of another is not read.
_FORMAT = hashlib.sha256(
    b"".join(Path(m.__file__ or "").read_bytes() for m in (_docs_module, _index_module, _text_module, _fields, _models))
    + Path(__file__).read_bytes()
    + f"{sklearn.__version__}:{datasketch.__version__}".encode()
).hexdigest()


@dataclass(frozen=True)
class _DraftFacts:
    state: str
    case_id: str | None
    text: str | None
    doc: Doc | None  # None for a draft with a case
    page: str | None = None  # the page it was cut from, or itself when cut into parts (Doc.page)


@dataclass(frozen=True)
class _CaseFacts:
    withdrawn: bool
    doc: Doc  # without its draft's text


_Stat = tuple[int, int, int]


@dataclass(frozen=True)
class Library:
    """The index and what making it took: `read` names each record file parsed this time ("case:IL-0001",
    "draft:acme-outage"), `unreadable` each one that could not be (its one-line error), `indexed` each
    record whose document was added to the index or replaced in it this time (every one, on a first build;
    a file read again whose document is the same is not), `dropped` each one taken out."""

    index: SimilarIndex
    read: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()
    indexed: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class Suggestions:
    """A record's suggestions, best first; each list leaves out what another one names."""

    id: str
    duplicates: list[Match] = field(default_factory=list)
    related: list[Match] = field(default_factory=list)
    recurrences: list[Match] = field(default_factory=list)


def _facts(store: Store, kind: RecordKind, record_id: str) -> _DraftFacts | _CaseFacts:
    if kind == "case":
        case = store.read_case(record_id)
        return _CaseFacts(case.withdrawn is not None, doc_of_case(case))
    draft = store.read_draft(record_id)
    # a draft with a case is compared as its case: only its text is kept
    doc = doc_of_draft(draft)
    return _DraftFacts(str(draft.state.value), draft.case_id, draft.text, None if draft.case_id else doc, doc.page)


# The cache as this process last read or wrote it, by data root, with its file's stat: a long-running
# process (the review page, whose draft pages ask for suggestions) loads 100 MB of index once, not on
# each request. The file is new on each write (an atomic rename), so an equal stat is the same cache.
_LOADED: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}
CACHE_FILE = "similar.pickle"  # in the data root's state: the index and what it was made of


def _cached(store: Store) -> dict[str, Any]:
    """The last run's cache, or an empty one when there is none, or it is unreadable or of other code."""
    stat = store.state.stat(CACHE_FILE)
    loaded = _LOADED.get(store.root)
    if stat is not None and loaded is not None and loaded[0] == stat:
        return loaded[1]
    data = store.state.read(CACHE_FILE)
    try:
        found = pickle.loads(data) if data else None
    except Exception:  # whatever an unreadable cache raises, it is not used
        return {}
    if not (
        isinstance(found, dict)
        and found.get("format") == _FORMAT
        and isinstance(found.get("looked"), int)
        and isinstance(found.get("files"), dict)
        and isinstance(found.get("index"), SimilarIndex)
    ):
        return {}
    if stat is not None:
        _LOADED[store.root] = (stat, found)
    return found


def _docs(files: Mapping[tuple[RecordKind, str], tuple[_Stat, _DraftFacts | _CaseFacts]]) -> list[Doc]:
    """The Docs compared: cases not withdrawn, with their draft's extracted text, and the drafts not left out.
    A draft with a case (published, or reopened since) is that case: only the case is compared."""
    texts: dict[str, str] = {}
    pages: dict[str, str | None] = {}
    docs: list[Doc] = []
    for _stat, facts in files.values():
        if isinstance(facts, _DraftFacts):
            if facts.case_id:
                if facts.text and (facts.state == "published" or facts.case_id not in texts):
                    texts[facts.case_id] = facts.text
                    pages[facts.case_id] = facts.page
            elif facts.state not in _LEFT_OUT and facts.doc is not None:
                docs.append(facts.doc)
    for (_kind, case_id), (_stat, facts) in files.items():
        if isinstance(facts, _CaseFacts) and not facts.withdrawn:
            found = replace(facts.doc, text=texts[case_id], page=pages[case_id]) if case_id in texts else facts.doc
            docs.append(found)
    return docs


def load_library(store: Store) -> Library:
    """The data root's index, from the cache and the record files changed since (see the module's words)."""
    cache = _cached(store)
    known: dict[tuple[RecordKind, str], tuple[_Stat, Any]] = cache.get("files", {})
    looked_before = cache.get("looked", 0)
    looked = time.time_ns()
    files: dict[tuple[RecordKind, str], tuple[_Stat, _DraftFacts | _CaseFacts]] = {}
    read: list[str] = []
    unreadable: list[str] = []
    for kind in ("draft", "case"):
        for record_id, stat in store.record_stats(kind).items():
            old = known.get((kind, record_id))
            if old is not None and old[0] == stat and stat[2] < looked_before - _RACY_NS:
                files[(kind, record_id)] = old
                continue
            try:
                files[(kind, record_id)] = (stat, _facts(store, kind, record_id))
            except RecordError as error:
                unreadable.append(str(error).splitlines()[0])
            read.append(f"{kind}:{record_id}")
    if cache and not read and not unreadable and files.keys() == known.keys():
        return Library(cache["index"])  # nothing changed since the last look
    docs = _docs(files)
    index: SimilarIndex = cache.get("index") or SimilarIndex.of(())
    if cache:  # only the documents that changed are indexed again: the rest keep their rows
        before = {d.id: d for d in index.docs}
        now = {d.id for d in docs}
        changed = [d for d in docs if before.get(d.id) != d]
        dropped = set(before) - now
        if changed or dropped:
            index = index.updated(changed, removed=dropped)
    else:
        index = SimilarIndex.of(docs)
        changed, dropped = docs, set()
    if read or not cache:
        _keep(store, {"format": _FORMAT, "looked": looked, "files": files, "index": index})
    return Library(index, tuple(read), tuple(unreadable), tuple(sorted(d.id for d in changed)), tuple(sorted(dropped)))


def _keep(store: Store, cache: dict[str, Any]) -> None:
    try:
        store.state.write(CACHE_FILE, pickle.dumps(cache, protocol=pickle.HIGHEST_PROTOCOL), durable=False)
    except OSError:  # a data root read-only to this process: the next run reads the files again
        return
    if (stat := store.state.stat(CACHE_FILE)) is not None:
        _LOADED[store.root] = (stat, cache)


def library_index(store: Store) -> SimilarIndex:
    """Every case not withdrawn and every draft not rejected, merged or published, as one index."""
    return load_library(store).index


def _doc_of(store: Store, index: SimilarIndex, record_id: str) -> tuple[Doc, set[str]]:
    """The record's Doc (the index's, or made from its file when it is left out of the index) and the ids
    that are the record itself under another name (a draft's case)."""
    row = index.row.get(record_id)
    if is_case_id(record_id):
        case: Case = store.read_case(record_id)  # RecordNotFound names an unknown id
        return (index.docs[row] if row is not None else doc_of_case(case)), set()
    draft: Draft = store.read_draft(record_id)
    return (index.docs[row] if row is not None else doc_of_draft(draft)), {draft.case_id} if draft.case_id else set()


def suggestions(
    store: Store, record_id: str, *, limit: int = 5, exclude: Collection[tuple[str, str]] = ()
) -> Suggestions:
    """A draft's or case's possible duplicates, related cases and recurrences; `exclude` leaves out (kind,
    id) pairs (a reviewer's dismissals). A case is not "related" to what is already its possible duplicate
    or recurrence. Read-only: raises the store's RecordNotFound for an unknown id."""
    index = library_index(store)
    doc, itself = _doc_of(store, index, record_id)
    wide = limit + len(exclude) + len(itself)

    def kept(kind: str, matches: list[Match], taken: Collection[str] = ()) -> list[Match]:
        return [m for m in matches if (kind, m.id) not in exclude and m.id not in itself and m.id not in taken][:limit]

    duplicates = kept("duplicate", index.duplicates(doc, limit=wide))
    recurrences = kept("recurrence", index.recurrences(doc, limit=wide + len(duplicates)), {m.id for m in duplicates})
    taken = {m.id for m in duplicates + recurrences}
    related = kept("related", index.related(doc, limit=wide + len(taken)), taken)
    return Suggestions(record_id, duplicates, related, recurrences)
