"""The similarity index and its rules: possible duplicates, related cases, recurrences. Pure.

    index = SimilarIndex.of(docs)                 # every draft and case as a Doc (pipeline.similar.docs)
    index.duplicates(doc)                         # the same incident told elsewhere, with the shared passage
    index.related(doc); index.recurrences(doc)    # cases to link, with what they share
    index.duplicate_pairs()                       # the full pass: every pair the duplicate rules flag
    index = index.updated([changed_doc], removed=["gone-id"])

A possible duplicate is one of two things, and a wrong one costs a reviewer more than a missed one, so
both rules ask for much:

- **The same text.** Most of the shorter text's shingles (pipeline.similar.text) are in the other:
  the same post served as HTML and as Markdown, or a syndicated copy wrapped in its own boilerplate.
  Containment, not Jaccard, because the wrapping adds shingles to one side only. Candidates come from
  MinHash signatures (datasketch) split into bands (locality-sensitive hashing): a pair is looked at
  only when one band of its signatures agrees, then its shingles are compared exactly.
- **The same incident told twice.** The same org, incident dates that overlap (a partial date is its
  span; a report's publication date reaches back, pipeline.similar.docs), and close text by TF-IDF
  cosine: a status page's entry and the blog post written after.

Related cases share the root cause (a known one) and a component or symptom, and have close text;
recurrences are the same org's earlier cases with the same root cause and a shared component.

The thresholds were set on bench/similar.py's generated development library (its `--seed 28`, not the
measuring seed), for precision first: see docs/similar.md for the figures.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from datasketch import MinHash
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

from pipeline.similar.docs import Doc
from pipeline.similar.text import passage, shingles, terms, words

__all__ = [
    "CONTAINMENT",
    "DATE_COSINE",
    "DATE_SLACK_DAYS",
    "RELATED_COSINE",
    "Match",
    "SimilarIndex",
]

# The same text: at least this share of the shorter text's shingles is in the other. A syndicated copy
# keeps all of the post's; the HTML and Markdown renderings of one post nearly all; two posts of one
# org on one subject, written apart, share their boilerplate and a few phrases, well under half (on the
# development library: every copy 1.00, any other pair at most 0.02).
CONTAINMENT = 0.8
# A text of fewer shingles than this (a one-line status, an empty draft) is too short to call a copy.
MIN_SHINGLES = 20
# The rows a text is compared with, at the most: those met in the most LSH bands. A library of many near-copies
# (a status page's templated posts) would otherwise compare each new draft with every one of them; the five
# kept (`duplicates`' limit) are among the likeliest copies. Bounds the check's cost per draft.
MAX_TEXT_CANDIDATES = 50
# The same incident: dates at most this many days apart count as overlapping (time zones, an incident
# over midnight, a status page dating by its last update), ...
DATE_SLACK_DAYS = 2
# ... neither date vaguer than this many days (a year-only date overlaps the whole year: it says nothing
# of the incident being the same; a month, or a report's date with its lag, is kept) ...
MAX_SPAN_DAYS = 62
# ... and this TF-IDF cosine between the texts: a status entry and a blog post of one incident name the
# same parts, errors and steps in other sentences; two incidents of one org share its product's words.
# On the development library the highest pair of one org that was not one incident scored 0.22 and the
# lowest that was 0.46: 0.3 keeps a margin of 0.08 above the first.
DATE_COSINE = 0.3
# Related: this cosine between the narratives besides the shared root cause and component or symptom,
# above what texts of other orgs share by chance (at most 0.055 on the development library).
RELATED_COSINE = 0.1

NUM_PERM = 128  # MinHash permutations: a Jaccard estimate within about ±0.04
BAND_ROWS = 3  # LSH: 42 bands of 3 rows; a pair of Jaccard 0.4 meets in a band 94 times in 100, of 0.1 4 in 100
BANDS = NUM_PERM // BAND_ROWS
MINHASH_SEED = 1
_FEATURES = 2**20  # hashed TF-IDF terms: collisions are rare at a library's vocabulary


def _given(terms: list[str]) -> list[str]:
    return terms


# The terms are worked out here (pipeline.similar.text, with the shingles); scikit-learn hashes and counts them.
_VECTORISER = HashingVectorizer(
    analyzer=_given, n_features=_FEATURES, alternate_sign=False, norm=None, dtype=np.float32
)


@dataclass(frozen=True)
class Match:
    """One suggestion: the record found, why, how strongly (0..1), and the shared passage of a copy."""

    id: str
    kind: Literal["duplicate", "related", "recurrence"]
    score: float  # 0..1, rounded to 2 places
    reasons: tuple[str, ...]  # one line each, for a person
    passage: str | None = None  # the shared passage, for a duplicate by text


def _features_of(doc: Doc) -> tuple[np.ndarray, list[str]]:
    """A doc's shingles, and its TF-IDF terms: of the narrative in every language, and of the extracted
    text when there is one."""
    said = words(doc.text)
    closeness = terms(doc.text, said)
    if doc.text != doc.narrative:
        closeness += terms(doc.narrative)
    return shingles(doc.text, said), closeness


def _signatures(sets: Sequence[np.ndarray]) -> np.ndarray:
    """MinHash signatures (one row a doc) by datasketch, its permutations made once for all the docs."""
    if not sets:
        return np.zeros((0, NUM_PERM), dtype=np.uint32)
    hashes = MinHash.bulk([s.tolist() for s in sets], num_perm=NUM_PERM, seed=MINHASH_SEED, hashfunc=int)
    return np.vstack([m.hashvalues for m in hashes]).astype(np.uint32)


def _bands(signatures: np.ndarray) -> np.ndarray:
    """Each band's rows folded into one 64-bit key (an FNV-style mix: equal rows, equal key).

    The banding is written here, not taken from datasketch's MinHashLSH: that is a mutable store of keys,
    where this index stays immutable and picklable, and the full pass groups every row by band at once
    with numpy instead of asking the store row by row."""
    used = signatures[:, : BANDS * BAND_ROWS].astype(np.uint64).reshape(len(signatures), BANDS, BAND_ROWS)
    keys = np.zeros((len(signatures), BANDS), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for r in range(BAND_ROWS):
            keys = (keys ^ used[:, :, r]) * np.uint64(1099511628211)
    return keys


def _containment(a: np.ndarray, b: np.ndarray) -> float:
    shorter = min(len(a), len(b))
    if shorter == 0:
        return 0.0
    return len(np.intersect1d(a, b, assume_unique=True)) / shorter


def _overlap(a: tuple[datetime.date, datetime.date] | None, b: tuple[datetime.date, datetime.date] | None) -> bool:
    if a is None or b is None:
        return False
    if (a[1] - a[0]).days > MAX_SPAN_DAYS or (b[1] - b[0]).days > MAX_SPAN_DAYS:
        return False
    slack = datetime.timedelta(days=DATE_SLACK_DAYS)
    return a[0] - slack <= b[1] and b[0] - slack <= a[1]


def _span(dates: tuple[datetime.date, datetime.date]) -> str:
    first, last = dates
    return first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _shared_terms(doc: Doc, other: Doc, *, symptoms: bool = True) -> list[str]:
    reasons = []
    if shared := sorted(doc.components & other.components):
        reasons.append("components: " + ", ".join(shared))
    if symptoms and (shared := sorted(doc.symptoms & other.symptoms)):
        reasons.append("symptoms: " + ", ".join(shared))
    reasons.append(f"root cause: {doc.root_cause}")
    return reasons


def _ranked(matches: Iterable[Match], limit: int) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, m.id))[:limit]


class SimilarIndex:
    """Every draft and case's features, row by row: shingles, MinHash band keys, hashed term counts.

    Immutable (`updated` makes a new index sharing the unchanged rows) and picklable: the library's
    shell keeps it in the data root's state. The TF-IDF weights are worked out from the counts when first
    needed, since they change with every document added (its inverse document frequencies)."""

    def __init__(
        self,
        docs: Sequence[Doc],
        shingle_sets: Sequence[np.ndarray],
        bands: np.ndarray,
        counts: sp.csr_matrix,
    ) -> None:
        self.docs: tuple[Doc, ...] = tuple(docs)
        self.shingle_sets: tuple[np.ndarray, ...] = tuple(shingle_sets)
        self.bands = bands
        self.counts = counts
        self.row: dict[str, int] = {d.id: i for i, d in enumerate(self.docs)}
        if len(self.row) != len(self.docs):
            raise ValueError("two docs of one id in a similarity index")

    def __getstate__(self) -> dict[str, Any]:
        return {"docs": self.docs, "shingle_sets": self.shingle_sets, "bands": self.bands, "counts": self.counts}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["docs"], state["shingle_sets"], state["bands"], state["counts"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.docs)

    # ---------------------------------------------------------------- building

    @classmethod
    def of(cls, docs: Iterable[Doc]) -> SimilarIndex:
        docs = sorted(docs, key=lambda d: d.id)
        if not docs:  # the vectoriser refuses an empty list
            return cls([], [], np.zeros((0, BANDS), dtype=np.uint64), sp.csr_matrix((0, _FEATURES), dtype=np.float32))
        features = [_features_of(d) for d in docs]
        sets = [f[0] for f in features]
        counts = _VECTORISER.transform([f[1] for f in features]).tocsr()
        return cls(docs, sets, _bands(_signatures(sets)), counts)

    def updated(self, docs: Iterable[Doc] = (), removed: Iterable[str] = ()) -> SimilarIndex:
        """A new index with `docs` added or replacing those of their ids, and the `removed` ids gone."""
        new = SimilarIndex.of(docs)
        gone = set(removed) | set(new.row)
        keep = [i for i, d in enumerate(self.docs) if d.id not in gone]
        return SimilarIndex(
            [self.docs[i] for i in keep] + list(new.docs),
            [self.shingle_sets[i] for i in keep] + list(new.shingle_sets),
            np.vstack([self.bands[keep], new.bands]),
            sp.vstack([self.counts[keep], new.counts], format="csr"),
        )

    @cached_property
    def _tfidf(self) -> TfidfTransformer:
        # sublinear tf: a word said ten times is not ten times the evidence
        return TfidfTransformer(sublinear_tf=True).fit(self.counts) if len(self.docs) else TfidfTransformer()

    @cached_property
    def _weights(self) -> sp.csr_matrix:
        if not len(self.docs):
            return sp.csr_matrix((0, _FEATURES), dtype=np.float32)
        return self._tfidf.transform(self.counts).tocsr()

    @cached_property
    def _by_org(self) -> dict[str, list[int]]:
        rows: dict[str, list[int]] = defaultdict(list)
        for i, doc in enumerate(self.docs):
            if doc.org_slug:
                rows[doc.org_slug].append(i)
        return dict(rows)

    @cached_property
    def _org_dates(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each org's rows whose dates are narrow enough to overlap (`_overlap`): rows, first and last day
        (ordinals), so that a draft meets its org's dates in one vectorised comparison, not a loop."""
        found: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for i, doc in enumerate(self.docs):
            if doc.org_slug and doc.dates and (doc.dates[1] - doc.dates[0]).days <= MAX_SPAN_DAYS:
                found[doc.org_slug].append((i, doc.dates[0].toordinal(), doc.dates[1].toordinal()))
        return {
            org: (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array([r[2] for r in rows]))
            for org, rows in found.items()
        }

    def _same_org_dates(self, doc: Doc) -> list[int]:
        """The rows of `doc`'s org whose dates overlap its own (`_overlap`, vectorised)."""
        if not doc.org_slug or doc.dates is None or (doc.dates[1] - doc.dates[0]).days > MAX_SPAN_DAYS:
            return []
        if doc.org_slug not in self._org_dates:
            return []
        rows, first, last = self._org_dates[doc.org_slug]
        start, end = doc.dates[0].toordinal(), doc.dates[1].toordinal()
        hit = (start - DATE_SLACK_DAYS <= last) & (first - DATE_SLACK_DAYS <= end)
        return rows[hit].tolist()

    # ---------------------------------------------------------------- features of a doc asked about

    def _query(self, doc: Doc) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
        row = self.row.get(doc.id)
        if row is not None and self.docs[row] == doc:
            return self.shingle_sets[row], self.bands[row], self._weights[row]
        sets, closeness = _features_of(doc)
        counts = _VECTORISER.transform([closeness])
        weights = self._tfidf.transform(counts) if len(self.docs) else counts
        return sets, _bands(_signatures([sets]))[0], weights.tocsr()

    def _cosines(self, vector: sp.csr_matrix, rows: Sequence[int]) -> np.ndarray:
        if not len(rows):
            return np.zeros(0)
        return np.asarray((self._weights[list(rows)] @ vector.T).todense()).ravel()

    # ---------------------------------------------------------------- the rules

    def _text_match(self, doc: Doc, other: int, own: np.ndarray) -> tuple[float, str] | None:
        theirs = self.shingle_sets[other]
        if min(len(own), len(theirs)) < MIN_SHINGLES:
            return None
        share = _containment(own, theirs)
        if share < CONTAINMENT:
            return None
        return share, f"same text: {share:.0%} of the shorter one's wording is in the other"

    def _date_reason(self, doc: Doc, other: Doc, cosine: float) -> str | None:
        if not doc.org_slug or doc.org_slug != other.org_slug or not _overlap(doc.dates, other.dates):
            return None
        if cosine < DATE_COSINE:
            return None
        assert doc.dates and other.dates
        return f"same org {doc.org_slug}, dates overlap: {_span(doc.dates)} and {_span(other.dates)}; text {cosine:.2f}"

    def _duplicate(self, doc: Doc, other: int, own: np.ndarray, cosine: float | None) -> Match | None:
        """The match of row `other`, or None; a match by text has its passage "" until `_quoted` quotes it
        (the costly part: see `duplicates`)."""
        if doc.page is not None and doc.page == self.docs[other].page:
            return None  # one page and the incidents cut from it: one document, not two tellings
        text = self._text_match(doc, other, own)
        date = self._date_reason(doc, self.docs[other], cosine) if cosine is not None else None
        if text is None and date is None:
            return None
        score = max(text[0] if text else 0.0, cosine if date and cosine is not None else 0.0)
        reasons = tuple(r for r in (text[1] if text else None, date) if r)
        # The shared passage (a copy's) is quoted later, for the matches kept alone (`duplicates`).
        return Match(self.docs[other].id, "duplicate", round(score, 2), reasons, "" if text else None)

    def _candidates(self, doc: Doc, sets: np.ndarray, bands: np.ndarray) -> tuple[set[int], list[int]]:
        """Rows met in an LSH band (for the text rule), at most MAX_TEXT_CANDIDATES of those met in the most
        bands, and rows of the same org with overlapping dates."""
        by_text: set[int] = set()
        if len(sets) >= MIN_SHINGLES and len(self.docs):
            met = (self.bands == bands).sum(axis=1)
            rows = np.flatnonzero(met)
            if len(rows) > MAX_TEXT_CANDIDATES:  # most bands met first: the likeliest copies (then by row)
                rows = rows[np.lexsort((rows, -met[rows]))[:MAX_TEXT_CANDIDATES]]
            by_text = set(rows.tolist())
        by_date = self._same_org_dates(doc)
        own = self.row.get(doc.id)
        return by_text - {own}, [i for i in by_date if i != own]

    def duplicates(self, doc: Doc, *, limit: int = 5) -> list[Match]:
        """Drafts and cases that may tell the same incident as `doc` (never `doc` itself)."""
        sets, bands, vector = self._query(doc)
        by_text, by_date = self._candidates(doc, sets, bands)
        # Of the org's rows with overlapping dates, those whose text is close enough for the date rule, the
        # closest MAX_TEXT_CANDIDATES: a row below DATE_COSINE can only match by its text, met above if at all.
        close = [
            (i, c) for i, c in zip(by_date, self._cosines(vector, by_date).tolist(), strict=True) if c >= DATE_COSINE
        ]
        close.sort(key=lambda pair: (-pair[1], pair[0]))
        cosines = dict(close[:MAX_TEXT_CANDIDATES])
        by_date = list(cosines)
        found = (self._duplicate(doc, i, sets, cosines.get(i)) for i in sorted(by_text | set(by_date)))
        kept = _ranked((m for m in found if m is not None), limit)
        # Quoting a passage reads both texts word by word: done for the matches kept, not for every copy met.
        return [self._quoted(doc, m) for m in kept]

    def _quoted(self, doc: Doc, match: Match) -> Match:
        """The match with its passage quoted, when it is a duplicate by text (passage "")."""
        if match.passage != "":
            return match
        return replace(match, passage=passage(doc.text, self.docs[self.row[match.id]].text))

    def related(self, doc: Doc, *, limit: int = 5) -> list[Match]:
        """Cases sharing `doc`'s root cause and a component or symptom, with close narratives."""
        if doc.root_cause is None:
            return []
        rows = [
            i
            for i, other in enumerate(self.docs)
            if other.kind == "case"
            and other.id != doc.id
            and other.root_cause == doc.root_cause
            and (doc.components & other.components or doc.symptoms & other.symptoms)
        ]
        vector = self._query(doc)[2]
        matches = []
        for i, cosine in zip(rows, self._cosines(vector, rows).tolist(), strict=True):
            if cosine >= RELATED_COSINE:
                other = self.docs[i]
                terms_share = _jaccard(doc.components | doc.symptoms, other.components | other.symptoms)
                reasons = "; ".join([*_shared_terms(doc, other), f"text {cosine:.2f}"])
                matches.append(Match(other.id, "related", round((cosine + terms_share) / 2, 2), (reasons,)))
        return _ranked(matches, limit)

    def recurrences(self, doc: Doc, *, limit: int = 5) -> list[Match]:
        """The same org's earlier cases with `doc`'s root cause and a component of it: the incident again."""
        if doc.root_cause is None or not doc.org_slug or doc.dates is None or not doc.components:
            return []
        start = doc.dates[0]
        rows = [
            i
            for i in self._by_org.get(doc.org_slug, ())
            if (other := self.docs[i]).kind == "case"
            and other.id != doc.id
            and other.dates is not None
            and other.dates[1] < start
            and other.root_cause == doc.root_cause
            and doc.components & other.components
        ]
        vector = self._query(doc)[2]
        matches = []
        for i, cosine in zip(rows, self._cosines(vector, rows).tolist(), strict=True):
            other = self.docs[i]
            assert other.dates is not None
            share = _jaccard(doc.components, other.components)
            reasons = "; ".join(
                [f"earlier: {_span(other.dates)}", *_shared_terms(doc, other, symptoms=False), f"text {cosine:.2f}"]
            )
            matches.append(Match(other.id, "recurrence", round((cosine + share) / 2, 2), (reasons,)))
        return _ranked(matches, limit)

    # ---------------------------------------------------------------- the full pass

    def _band_pairs(self) -> np.ndarray:
        """Every pair of rows (i < j) that meet in one LSH band, the short texts left out."""
        usable = np.array([len(s) >= MIN_SHINGLES for s in self.shingle_sets], dtype=bool)
        rows = np.flatnonzero(usable)
        found: list[np.ndarray] = []
        for band in range(BANDS):
            keys = self.bands[rows, band]
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
            starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
            sizes = np.diff(np.r_[starts, len(sorted_keys)])
            for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
                members = np.sort(rows[order[start : start + size]])
                i, j = np.triu_indices(size, k=1)
                found.append(members[i].astype(np.int64) * len(self.docs) + members[j])
        if not found:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(found))

    def _date_pairs(self) -> set[tuple[int, int]]:
        """Every pair of rows (i < j) of one org whose dates overlap."""
        slack = datetime.timedelta(days=DATE_SLACK_DAYS)
        pairs: set[tuple[int, int]] = set()
        for rows in self._by_org.values():
            dated = sorted((self.docs[i].dates, i) for i in rows if self.docs[i].dates is not None)
            for n, (first, i) in enumerate(dated):
                assert first is not None
                for second, j in dated[n + 1 :]:
                    assert second is not None
                    if second[0] - slack > first[1]:
                        break  # sorted by their first day: no later one overlaps this one
                    if _overlap(first, second):
                        pairs.add((min(i, j), max(i, j)))
        return pairs

    def duplicate_pairs(self) -> list[tuple[str, str, Match]]:
        """Every pair the duplicate rules flag, once: (a, b, b's match as seen from a), a draft before a case
        and then by id; the passage is quoted from a's text."""
        n = len(self.docs)
        by_text = {(int(p // n), int(p % n)) for p in self._band_pairs().tolist()}
        by_date = self._date_pairs()
        out = []
        for i, j in sorted(by_text | by_date):
            a, b = sorted((i, j), key=lambda k: (self.docs[k].kind != "draft", self.docs[k].id))
            cosine = None
            if (i, j) in by_date:
                cosine = float((self._weights[a] @ self._weights[b].T).toarray()[0, 0])
            match = self._duplicate(self.docs[a], b, self.shingle_sets[a], cosine)
            if match is not None:
                out.append((self.docs[a].id, self.docs[b].id, self._quoted(self.docs[a], match)))
        return out
