"""The library looked up by a tool: search, a case, similar cases, the vocabulary's counts. The published cases
only (cases/; a draft is never read), read-only. What `incidentlib mcp` (pipeline.mcp_server) answers with.

    lookup = Lookup.open(store, settings)              # the index, made or read from its cache, once
    lookup.search_cases("nccl timeout", component="nccl")   # SearchAnswer: ranked hits, each with its passage
    lookup.get_case("IL-0002")                         # CaseAnswer: an alias resolves to its survivor, saying so
    lookup.similar_cases("training hung after a GPU fell off the bus")
    lookup.list_terms("components")                    # TermsAnswer: each term, its labels, its count

The same analysis as the reader's site (pipeline.site.search): a case's terms per language are its search
document's (title weighted, every narrative field and action, its vocabulary terms' labels, Korean words'
stems from kiwipiepy); a query's words are the search box's (lower case, a Korean word's particle
stripped, an English plural's s dropped), each matching the terms it begins, every word required, ranked
by summed weights. `similar_cases` weighs a described situation against each case's narrative by the
similarity code's TF-IDF terms (pipeline.similar.text: words, and Hangul by letter pairs).

A withdrawn case is answered for by its id, saying so; it is searched, but ranked after every standing
case; it is never offered as similar. An id merged into another (a withdrawn case's `merged_into`, a
survivor's `aliases`) resolves to the survivor, and the answer names both.

Every hit and answer carries the case's permanent address (`publish.case_url` under the settings'
`public_base_url`) and its sources with their archived copies, so that a tool can cite them.

The index is made once when the lookup opens and kept in the data root's state (`lookup.pickle`) with each
case file's inode, size and modification time: a later start reads only the files that changed (a
10,000-case library opens from it in 0.4 s; made afresh, in 27 s on a busy shared machine: see
bench/mcp.py). Korean words' stems come from the reader's site's cache (`site/search-stems.json`, which
`incidentlib site` keeps); words it lacks are analysed here, once, and kept in this index.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import pickle
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, Field

from pipeline import models as _models
from pipeline.errors import LookupRefused, RecordError
from pipeline.fields import ACTION_LISTS, NARRATIVE
from pipeline.ids import is_case_id
from pipeline.models import Case
from pipeline.publish import case_url
from pipeline.settings import Settings
from pipeline.similar import text as _text
from pipeline.similar.text import passage
from pipeline.site import search as _search
from pipeline.site.search import Stems, clipped, search_doc, shown_text, strip_particles
from pipeline.store import Store
from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "CACHE_FILE",
    "TERM_KINDS",
    "CaseAnswer",
    "CaseHit",
    "Lookup",
    "Passage",
    "SearchAnswer",
    "SimilarAnswer",
    "SimilarHit",
    "SourceRef",
    "TermCount",
    "TermsAnswer",
    "query_words",
]

CACHE_FILE = "lookup.pickle"  # in the data root's state
STEMS_FILE = "site/search-stems.json"  # the reader's site's cache of Korean stems (pipeline.site.build)
Lang = Literal["en", "ko"]
TermKind = Literal["components", "symptoms", "root_causes", "contributing", "domains"]
TERM_KINDS: tuple[TermKind, ...] = ("components", "symptoms", "root_causes", "contributing", "domains")
PASSAGE_CHARS = 240  # at most this much of a matched passage is quoted
_RACY_NS = 2_000_000_000  # a file changed this close to the last look is read again (git's racy rule)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_WORD = re.compile(r"[^\W_]+")
_PLURAL = re.compile(r"^[a-z]{4,}s$")
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")
# The cache's format: the code that makes what it holds; a cache of other code is not read.
_FORMAT = hashlib.sha256(
    b"".join(Path(m.__file__ or "").read_bytes() for m in (_search, _text, _models)) + Path(__file__).read_bytes()
).hexdigest()


# ---------------------------------------------------------------- the answers


class SourceRef(BaseModel):
    """A source of a case: where it was published, and its archived copy (cite this one: it stays)."""

    url: str
    kind: str
    archived: str | None = None


class Passage(BaseModel):
    """The text behind a hit: the field it is in (`summary`, `root_cause`'s narrative `trigger`, ...) and a
    quote of at most 240 characters."""

    field: str
    text: str


class CaseHit(BaseModel):
    id: str
    title: str
    url: str = Field(description="The case's permanent address on the reader's site.")
    org: str
    date: str
    score: float
    components: list[str]
    symptoms: list[str]
    root_cause: str
    passage: Passage | None
    sources: list[SourceRef]
    withdrawn: bool = False
    note: str | None = Field(default=None, description="Said when the case was withdrawn or merged.")


class SearchAnswer(BaseModel):
    query: str
    words: list[str] = Field(description="The query's words as searched (a Korean word's particle stripped).")
    lang: Lang
    total: int = Field(description="How many cases matched; `results` holds the first `limit`.")
    results: list[CaseHit]


class CaseAnswer(BaseModel):
    asked: str
    id: str
    url: str
    title: str
    summary: str
    withdrawn: bool
    note: str | None = Field(default=None, description="Said when the id asked for is an alias or withdrawn.")
    sources: list[SourceRef]
    record: dict[str, object] = Field(description="The case as the library publishes it (both languages).")


class SimilarHit(BaseModel):
    id: str
    title: str
    url: str
    score: float = Field(description="TF-IDF cosine of the text and the case's narrative, 0 to 1.")
    shared_components: list[str]
    shared_symptoms: list[str]
    passage: Passage | None
    sources: list[SourceRef]


class SimilarAnswer(BaseModel):
    lang: Lang
    components: list[str] = Field(description="The vocabulary's components the text names.")
    symptoms: list[str] = Field(description="The vocabulary's symptoms the text names.")
    results: list[SimilarHit]


class TermCount(BaseModel):
    name: str
    label: str
    label_ko: str
    count: int = Field(description="Published cases standing (not withdrawn) that carry the term.")


class TermsAnswer(BaseModel):
    kind: TermKind
    terms: list[TermCount]


# ---------------------------------------------------------------- a case as indexed


@dataclass(frozen=True)
class _Entry:
    """What the index keeps of a case: enough to filter, rank and resolve without reading its file."""

    id: str
    withdrawn: bool
    merged_into: str | None
    aliases: tuple[str, ...]
    org: str
    org_slug: str
    date: str
    components: frozenset[str]
    symptoms: frozenset[str]
    root_cause: str
    contributing: frozenset[str]
    domains: frozenset[str]


@dataclass(frozen=True)
class _Terms:
    """What a case is found by, kept in the cache beside its entry: per language its search document's
    (term, weight) pairs, and the similarity code's TF-IDF terms of its narrative in every language."""

    search: dict[str, tuple[tuple[str, int], ...]]
    closeness: tuple[str, ...]


def _narrative(case: Case) -> str:
    """Every narrative field and action in every language (pipeline.similar.docs' narrative)."""
    texts: list[str] = []
    for name in NARRATIVE:
        value = getattr(case, name, None) or {}
        texts += [value[lang] for lang in sorted(value)]
    for name in ACTION_LISTS:
        for action in getattr(case, name, None) or ():
            texts += [action.text[lang] for lang in sorted(action.text)]
    return "\n".join(t for t in texts if t)


def _entry(case: Case, stems: Stems) -> tuple[_Entry, _Terms]:
    # A withdrawn case has no search document on the site; here it is searched (ranked last), so its
    # document is made as if it stood.
    standing = case if case.withdrawn is None else case.model_copy(update={"withdrawn": None})
    terms: dict[str, tuple[tuple[str, int], ...]] = {}
    for lang in ("en", "ko"):
        doc = search_doc(standing, lang, stems)
        terms[lang] = doc.terms if doc else ()
    entry = _Entry(
        id=case.id,
        withdrawn=case.withdrawn is not None,
        merged_into=case.merged_into,
        aliases=tuple(case.aliases),
        org=case.org,
        org_slug=case.org_slug,
        date=case.date,
        components=frozenset(case.components),
        symptoms=frozenset(case.symptoms),
        root_cause=case.root_cause,
        contributing=frozenset(case.contributing),
        domains=frozenset(case.domain),
    )
    return entry, _Terms(terms, tuple(_text.terms(_narrative(case))))


@dataclass
class _Index:
    """The entries (in id order); per language the term matrix: rows the entries, columns the terms in
    sorted order, so that the terms a word begins are one run of columns; and the narratives' TF-IDF
    weights (sublinear tf, smoothed idf, rows of unit length: pipeline.similar.index's weighting)."""

    entries: list[_Entry]
    vocab: dict[str, list[str]]
    matrix: dict[str, sp.csc_matrix]
    columns: dict[str, int]  # a TF-IDF term's column
    idf: np.ndarray
    weights: sp.csr_matrix

    @classmethod
    def of(cls, entries: list[_Entry], found: list[_Terms]) -> _Index:
        vocab: dict[str, list[str]] = {}
        matrix: dict[str, sp.csc_matrix] = {}
        for lang in ("en", "ko"):
            names = sorted({t for f in found for t, _w in f.search[lang]})
            column = {t: i for i, t in enumerate(names)}
            rows, cols, weights = [], [], []
            for r, f in enumerate(found):
                for t, w in f.search[lang]:
                    rows.append(r)
                    cols.append(column[t])
                    weights.append(w)
            vocab[lang] = names
            matrix[lang] = sp.csc_matrix(
                (np.array(weights, dtype=np.float32), (rows, cols)), shape=(len(entries), len(names))
            )
        columns: dict[str, int] = {}
        rows, cols, tfs = [], [], []
        for r, f in enumerate(found):
            counted: dict[int, int] = {}
            for term in f.closeness:
                c = columns.setdefault(term, len(columns))
                counted[c] = counted.get(c, 0) + 1
            rows += [r] * len(counted)
            cols += list(counted)
            tfs += list(counted.values())
        counts = sp.csr_matrix(
            (np.array(tfs, dtype=np.float32), (rows, cols)), shape=(len(entries), max(len(columns), 1))
        )
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = (np.log((1 + len(entries)) / (1 + df)) + 1).astype(np.float32)
        counts.data = (1 + np.log(counts.data)).astype(np.float32)  # sublinear tf
        weighted = _unit_rows(counts @ sp.diags(idf))
        return cls(entries, vocab, matrix, columns, idf, weighted)

    def vector(self, terms: Iterable[str]) -> sp.csr_matrix:
        """A text's TF-IDF row, weighted as the entries' (terms the library never met count for nothing)."""
        counted: dict[int, int] = {}
        for term in terms:
            c = self.columns.get(term)
            if c is not None:
                counted[c] = counted.get(c, 0) + 1
        data = np.array([(1 + np.log(n)) * self.idf[c] for c, n in counted.items()], dtype=np.float32)
        row = sp.csr_matrix((data, ([0] * len(counted), list(counted))), shape=(1, self.weights.shape[1]))
        return _unit_rows(row)


def _unit_rows(matrix: sp.spmatrix) -> sp.csr_matrix:
    matrix = sp.csr_matrix(matrix)
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    return sp.csr_matrix(sp.diags(1 / norms) @ matrix)


# ---------------------------------------------------------------- query words, passages


def query_words(query: str) -> list[str]:
    """A query's words as the site's search box takes them (search.js `queryWords`): letters and digits,
    lower case, a Korean word's particle stripped, an English plural's s dropped, each once."""
    found: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFC", query).lower()):
        if _HANGUL.search(word):
            word = strip_particles(word)
        elif _PLURAL.match(word) and not word.endswith("ss"):
            word = word[:-1]
        if word not in found:
            found.append(word)
    return found


def _fields(case: Case, lang: str) -> list[tuple[str, str]]:
    """The case's texts a passage is quoted from, in the language (else the other), by field path."""
    out: list[tuple[str, str]] = []
    for name in NARRATIVE:
        text = shown_text(getattr(case, name, None), lang)
        if text:
            out.append((name, text))
    for name in ACTION_LISTS:
        for i, action in enumerate(getattr(case, name, None) or ()):
            out.append((f"{name}.{i}", shown_text(action.text, lang)))
    return out


def _quote(text: str) -> str:
    return clipped(text, PASSAGE_CHARS, " …")


def _best_passage(case: Case, lang: str, words: Sequence[str]) -> Passage | None:
    """The sentence of the case that holds the most of the query's words (by their beginnings, as the
    search matches them): the passage a hit is ranked by."""
    best: tuple[int, int, str, str] | None = None
    for order, (name, text) in enumerate(_fields(case, lang)):
        for sentence in _SENTENCE.split(text):
            lowered = sentence.lower()
            hits = sum(1 for w in words if w in lowered)
            if hits and (best is None or hits > best[0]):
                best = (hits, order, name, sentence)
    if best is None:
        return None
    return Passage(field=best[2], text=_quote(best[3]))


def _sources(case: Case) -> list[SourceRef]:
    return [SourceRef(url=s.url, kind=s.kind, archived=s.archived) for s in case.sources]


# ---------------------------------------------------------------- the lookup


class Lookup:
    """The published cases of a data root, indexed once; every method answers from memory but for the
    files of the cases it returns (read for their passages and sources)."""

    def __init__(self, store: Store, settings: Settings, index: _Index) -> None:
        self.store = store
        self.settings = settings
        self._index = index
        self._row = {e.id: i for i, e in enumerate(index.entries)}
        # An id merged into another: the survivor (a withdrawn case's `merged_into`, a survivor's `aliases`).
        self._survivor: dict[str, str] = {}
        for e in index.entries:
            for alias in e.aliases:
                self._survivor.setdefault(alias, e.id)
            if e.withdrawn and e.merged_into:
                self._survivor[e.id] = e.merged_into
        self._standing = np.array([not e.withdrawn for e in index.entries], dtype=bool)
        self._numbers = np.array([_search.doc_number(e.id) for e in index.entries], dtype=np.int64)
        # Each kind's terms counted over the standing cases, once.
        self._term_counts: dict[str, dict[str, int]] = {kind: {} for kind in TERM_KINDS}
        for e in index.entries:
            if e.withdrawn:
                continue
            carried: dict[str, Iterable[str]] = {
                "components": e.components,
                "symptoms": e.symptoms,
                "root_causes": (e.root_cause,),
                "contributing": e.contributing,
                "domains": e.domains,
            }
            for kind, values in carried.items():
                for value in values:
                    self._term_counts[kind][value] = self._term_counts[kind].get(value, 0) + 1

    def __len__(self) -> int:
        return len(self._index.entries)

    # ------------------------------------------------ opening

    @classmethod
    def open(cls, store: Store, settings: Settings) -> Lookup:
        """The data root's published cases indexed: from the cache for the case files unchanged since it was
        kept, the others read (and their Korean words' stems taken from the site's cache, else analysed)."""
        return cls(store, settings, _load_index(store))

    # ------------------------------------------------ limits

    def _limit(self, limit: int | None) -> int:
        cap = self.settings.mcp_max_results
        if limit is None:
            return min(10, cap)
        if limit < 1:
            raise LookupRefused(f"limit must be at least 1, not {limit}")
        return min(limit, cap)

    def _within(self, what: str, text: str, most: int) -> None:
        if len(text) > most:
            raise LookupRefused(f"{what} is {len(text):,} characters; at most {most:,} are taken: shorten it")

    # ------------------------------------------------ reading one case

    def _read(self, case_id: str) -> Case:
        try:
            return self.store.read_case(case_id)
        except RecordError as error:
            raise LookupRefused(str(error).splitlines()[0]) from None

    def _url(self, case_id: str) -> str:
        return case_url(self.settings.public_base_url, case_id)

    # ------------------------------------------------ the operations

    def search_cases(
        self,
        query: str,
        *,
        component: str | None = None,
        symptom: str | None = None,
        root_cause: str | None = None,
        org: str | None = None,
        since: str | None = None,
        lang: Lang = "en",
        limit: int | None = None,
    ) -> SearchAnswer:
        """The cases whose search document holds every word of `query` (each word matching the terms it
        begins), among those that carry the terms asked for, ranked by summed weights, withdrawn cases last;
        an empty query lists the cases the filters keep, newest first."""
        self._within("the query", query, self.settings.mcp_max_query_chars)
        count = self._limit(limit)
        lang = _lang(lang)
        index = self._index
        entries = index.entries
        keep = self._filter(component=component, symptom=symptom, root_cause=root_cause, org=org, since=since)
        words = query_words(query)
        if words:
            scores = np.ones(len(entries), dtype=np.float64) * keep
            total_score = np.zeros(len(entries), dtype=np.float64)
            names = index.vocab[lang]
            for word in words:
                lo = bisect.bisect_left(names, word)
                hi = bisect.bisect_left(names, word + "\U0010ffff")
                found = (
                    np.asarray(index.matrix[lang][:, lo:hi].sum(axis=1)).ravel() if hi > lo else np.zeros(len(entries))
                )
                scores *= found > 0
                total_score += found
            score = total_score * (scores > 0)
        else:
            score = keep.astype(np.float64)
        rows = np.flatnonzero(score > 0)
        if words:  # standing first, then by weight, then the newer id (search.js: doc number descending)
            ranked = rows[np.lexsort((-self._numbers[rows], -score[rows], ~self._standing[rows]))]
        else:  # standing first, then the newest
            listed = sorted(rows.tolist(), key=lambda r: (not self._standing[r], _neg(entries[r].date), r))
            ranked = np.asarray(listed, dtype=np.int64)
        hits = [self._hit(entries[r], lang, words, float(score[r]) if words else 0.0) for r in ranked[:count]]
        return SearchAnswer(query=query, words=words, lang=lang, total=len(rows), results=hits)

    def _filter(
        self,
        *,
        component: str | None,
        symptom: str | None,
        root_cause: str | None,
        org: str | None,
        since: str | None,
    ) -> np.ndarray:
        for kind, value in (("components", component), ("symptoms", symptom), ("root_causes", root_cause)):
            if value and value not in vocabulary().terms[kind]:  # type: ignore[index]
                known = ", ".join(vocabulary().names(kind))  # type: ignore[arg-type]
                raise LookupRefused(f"unknown {kind[:-1].replace('_', ' ')} {value!r}; known: {known}")
        if since and not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", since):
            raise LookupRefused(f"since must be a date as 2024, 2024-03 or 2024-03-02, not {since!r}")
        wanted_org = (org or "").strip().lower()
        keep = np.ones(len(self._index.entries), dtype=bool)
        if not (component or symptom or root_cause or wanted_org or since):
            return keep
        for i, e in enumerate(self._index.entries):
            keep[i] = (
                (not component or component in e.components)
                and (not symptom or symptom in e.symptoms)
                and (not root_cause or root_cause == e.root_cause)
                and (not wanted_org or wanted_org in (e.org_slug, e.org.lower()))
                and (not since or e.date >= since)
            )
        return keep

    def _note(self, entry: _Entry, case: Case) -> str | None:
        if not entry.withdrawn:
            return None
        if entry.merged_into:
            return f"{entry.id} was withdrawn: merged into {entry.merged_into}; cite {entry.merged_into}"
        why = f": {case.withdrawn_reason}" if case.withdrawn_reason else ""
        return f"{entry.id} was withdrawn{why}; it stays readable under its id but is not to be relied on"

    def _hit(self, entry: _Entry, lang: str, words: Sequence[str], score: float) -> CaseHit:
        case = self._read(entry.id)
        found = _best_passage(case, lang, words) if words else None
        if found is None:
            summary = shown_text(case.summary, lang)
            found = Passage(field="summary", text=_quote(summary)) if summary else None
        return CaseHit(
            id=case.id,
            title=shown_text(case.title, lang),
            url=self._url(case.id),
            org=case.org,
            date=case.date,
            score=round(score, 2),
            components=list(case.components),
            symptoms=list(case.symptoms),
            root_cause=case.root_cause,
            passage=found,
            sources=_sources(case),
            withdrawn=entry.withdrawn,
            note=self._note(entry, case),
        )

    def get_case(self, case_id: str, *, lang: Lang = "en") -> CaseAnswer:
        """The case of `case_id`; an id merged into another answers with the survivor, saying so."""
        asked = case_id.strip()
        lang = _lang(lang)
        if not is_case_id(asked):
            raise LookupRefused(f"{asked[:40]!r} is not a case id (as IL-0001)")
        target = asked
        seen = {asked}
        while target in self._survivor:  # a chain of merges ends at the case that stands
            target = self._survivor[target]
            if target in seen:
                break
            seen.add(target)
        if target not in self._row:
            raise LookupRefused(f"no published case {asked}")
        case = self._read(target)
        entry = self._index.entries[self._row[target]]
        note: str | None
        if target != asked:
            note = f"{asked} was merged into {target}: this is {target}, which {asked} is an alias of"
        else:
            note = self._note(entry, case)
        return CaseAnswer(
            asked=asked,
            id=case.id,
            url=self._url(case.id),
            title=shown_text(case.title, lang),
            summary=shown_text(case.summary, lang),
            withdrawn=entry.withdrawn,
            note=note,
            sources=_sources(case),
            record=case.model_dump(mode="json", exclude_none=True),
        )

    def case_text(self, case_id: str, *, lang: Lang = "en") -> str:
        """The case as its page reads, in plain text: title, address, each field under its name, sources."""
        answer = self.get_case(case_id, lang=lang)
        case = self._read(answer.id)
        lines = [answer.title, answer.url, ""]
        if answer.note:
            lines += [f"Note: {answer.note}", ""]
        lines += [f"{case.id} · {case.org} · {case.date} · root cause: {case.root_cause}", ""]
        for name, text in _fields(case, lang):
            lines += [f"## {name}", text, ""]
        lines.append("## sources")
        lines += [f"- {s.url} (archived: {s.archived or 'none'})" for s in case.sources]
        return "\n".join(lines) + "\n"

    def similar_cases(self, text: str, *, lang: Lang = "en", limit: int | None = None) -> SimilarAnswer:
        """Standing cases whose narratives are closest to `text` by TF-IDF cosine, with the components and
        symptoms the text names that each shares, and the passage behind each."""
        self._within("the text", text, self.settings.mcp_max_text_chars)
        count = self._limit(limit)
        lang = _lang(lang)
        if not text.strip():
            raise LookupRefused("the text is empty: describe the symptom or situation")
        named_components = _named("components", text)
        named_symptoms = _named("symptoms", text)
        results: list[SimilarHit] = []
        if len(self):
            vector = self._index.vector(_text.terms(text))
            cosines = np.asarray((self._index.weights @ vector.T).todense()).ravel() * self._standing
            # shared terms add to the cosine a little: a situation naming a case's parts is closer to it
            entries = self._index.entries
            bonus = np.array(
                [0.05 * (len(e.components & named_components) + len(e.symptoms & named_symptoms)) for e in entries]
            )
            score = np.where(cosines > 0, cosines + bonus, 0.0)
            rows = np.flatnonzero(score > 0)
            top = rows[np.lexsort((rows, -score[rows]))][:count]
            for r in top:
                entry = entries[r]
                case = self._read(entry.id)
                found = _shared_passage(case, lang, text) or _best_passage(
                    case, lang, [w for w in query_words(text) if len(w) > 3]
                )
                results.append(
                    SimilarHit(
                        id=case.id,
                        title=shown_text(case.title, lang),
                        url=self._url(case.id),
                        score=round(float(min(cosines[r], 1.0)), 2),
                        shared_components=sorted(entry.components & named_components),
                        shared_symptoms=sorted(entry.symptoms & named_symptoms),
                        passage=found,
                        sources=_sources(case),
                    )
                )
        return SimilarAnswer(
            lang=lang, components=sorted(named_components), symptoms=sorted(named_symptoms), results=results
        )

    def list_terms(self, kind: str) -> TermsAnswer:
        """The vocabulary's terms of `kind` with how many standing cases carry each, most first."""
        if kind not in TERM_KINDS:
            raise LookupRefused(f"unknown kind {kind!r}; known: {', '.join(TERM_KINDS)}")
        counts = self._term_counts[kind]
        terms = vocabulary().terms[kind]
        listed = [
            TermCount(name=name, label=term.label, label_ko=term.label_in("ko"), count=counts.get(name, 0))
            for name, term in terms.items()
        ]
        listed.sort(key=lambda t: (-t.count, t.name))
        return TermsAnswer(kind=kind, terms=listed)


@functools.cache
def _words_of(kind: Kind) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each term of `kind` as a pattern of its words (and label) on word boundaries."""
    found = []
    for name, term in vocabulary().terms[kind].items():
        words = sorted({*term.words, term.label.lower(), name.replace("-", " ")}, key=len, reverse=True)
        alternation = "|".join(re.escape(w) for w in words if w)
        found.append((re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])"), name))
    return tuple(found)


def _named(kind: Kind, text: str) -> set[str]:
    """The terms of `kind` a text names by one of their words (the vocabulary's "words that suggest it")."""
    lowered = text.lower()
    return {name for pattern, name in _words_of(kind) if pattern.search(lowered)}


def _neg(date: str) -> tuple[int, ...]:
    return tuple(-int(part) for part in date.split("-"))


def _lang(lang: str) -> Lang:
    if lang not in ("en", "ko"):
        raise LookupRefused(f"lang must be en or ko, not {lang[:10]!r}")
    return lang  # type: ignore[return-value]


def _shared_passage(case: Case, lang: str, text: str) -> Passage | None:
    """The sentence of the case holding the longest run of words it shares with `text` (the similarity
    code's `passage`, at least three words), in the language asked, else in English."""
    for in_lang in dict.fromkeys((lang, "en")):
        best: tuple[int, str, str] | None = None
        for name, field_text in _fields(case, in_lang):
            for sentence in _SENTENCE.split(field_text):
                quote = passage(sentence, text)
                if quote is not None and (best is None or len(quote) > best[0]):
                    best = (len(quote), name, sentence)
        if best is not None:
            return Passage(field=best[1], text=_quote(best[2]))
    return None


# ---------------------------------------------------------------- the cache


_Stat = tuple[int, int, int]


def _load_index(store: Store) -> _Index:
    """The index, from the cache when no case file changed, else made again from the cached terms of the
    unchanged files and the changed files read. The cache holds the index and the files' terms as two
    pickles in one: a start with nothing changed unpickles only the index."""
    data = store.state.read(CACHE_FILE)
    try:
        header, index_blob, files_blob = pickle.loads(data) if data else (None, b"", b"")
    except Exception:  # whatever an unreadable cache raises, it is not used
        header, index_blob, files_blob = None, b"", b""
    fresh = not (isinstance(header, dict) and header.get("format") == _FORMAT)
    looked_before: int = 0 if fresh or header is None else int(header["looked"])
    kept: dict[str, _Stat] = {} if fresh or header is None else dict(header["stats"])
    looked = time.time_ns()
    stats = store.record_stats("case")
    changed = [
        case_id
        for case_id, stat in sorted(stats.items())
        if kept.get(case_id) != stat or stat[2] >= looked_before - _RACY_NS
    ]
    if not fresh and not changed and stats.keys() == kept.keys():
        try:
            index = pickle.loads(index_blob)
        except Exception:
            index = None
        if isinstance(index, _Index):
            return index
    files: dict[str, tuple[_Entry, _Terms]] = {}
    if not fresh:
        try:
            files = pickle.loads(files_blob)
        except Exception:
            files, changed = {}, sorted(stats)
    files = {k: v for k, v in files.items() if k in stats and k not in changed}
    cases: list[Case] = []
    for case_id in changed:
        try:
            cases.append(store.read_case(case_id))
        except RecordError:  # a case file that cannot be read is not answered for (`validate` names it)
            continue
    if cases:
        stems = Stems.load(store.state.read(STEMS_FILE))
        stems.analyse(_search.korean_words(cases))
        for case in cases:
            files[case.id] = _entry(case, stems)
    ids = sorted(files)
    index = _Index.of([files[k][0] for k in ids], [files[k][1] for k in ids])
    header = {"format": _FORMAT, "looked": looked, "stats": {k: stats[k] for k in ids}}
    try:
        blob = pickle.dumps((header, pickle.dumps(index, protocol=5), pickle.dumps(files, protocol=5)), protocol=5)
        store.state.write(CACHE_FILE, blob, durable=False)
    except OSError:  # a data root read-only to this process: the next start reads the files again
        pass
    return index
