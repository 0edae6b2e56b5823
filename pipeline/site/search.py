"""The site's offline search: its own static index, sharded and updated in place, Korean found by its stems.

    stems = Stems.load(kept_bytes)                      # the Korean word -> stems cache of the last build
    docs = search_docs(cases, stems)                    # what each case page offers the search (batched)
    files = index_files(docs)                           # the whole index under search/, site-relative keys
    update = update_index(previous, {("ko", "IL-0001"): doc})   # only what one changed case touches
    search_box_html("ko", "../")                        # the box a page includes (links relative)

Why not a ready-made index. Pagefind (what the site used first) cannot update an index: a rebuild after
one case changed re-indexed all 20,000 case pages (90 s at 10,000 cases), and it splits Korean on spaces
only. lunr, elasticlunr and MiniSearch serialise one monolithic index that a browser downloads whole,
megabytes at 10,000 cases, far over the 300 KB a first search may cost. So the site writes its own.

What is searched: a case page's title, summary and every narrative field and action list (`SEARCHABLE`),
in the text the page shows (the other language's text when the page's is missing, without the "not yet
translated" note), and the labels of its vocabulary terms in the page's language (`LABELLED`: 데이터베이스
finds a case of the component `database`). A withdrawn (or merged) case's page is not searchable.

The index, per language (`search/ko/`, `search/en/`):

- `index.json`, the manifest: the format version, how many documents a docs/ file holds, and the first
  characters of the shards' keys (one string: a few KB for a thousand Hangul syllables).
- `shards/{key}.json`: every indexed term beginning with `key` and its postings, `[doc, weight, doc-delta,
  weight, ...]` (doc numbers ascending, each after the first as the difference from the one before). The
  key is a term's first two characters when the first is not ASCII (two Hangul syllables), its first
  three otherwise; the file is named by the key's code points in hex (`c11c-c6b8.json` for 서울,
  `6e-63-63.json` for ncc). Keys this long keep a shard to a few terms, so a common word's shard is about
  as large as its own postings.
- `heads/{c}.json`: the shard keys beginning with the character `c` (a few hundred bytes). A query word
  needs its heads file and the shards it begins or that begin with it (one for a word as long as a key).
- `docs/{n // 8}.json`: per document its href, title and excerpt, eight documents a file: fetched only for
  the results shown.
- `keys/{n // 128}.json` and `live.json`: bookkeeping for `update_index` (`bookkeeping(path)`): each
  document's shard keys with their postings' hashes, as one string; the documents indexed and the shards
  that exist. Never fetched by a browser, so never published: the build keeps them among its state
  (pipeline.site.build), under the same paths.

A document's number is its case id's number (IL-0042 is 42): stable across updates, never reused (a
published id is never reused), and the same whether the index is made from scratch or updated, so that
`update_index` gives exactly the bytes `index_files` gives. A term's weight in a document is its count,
a title's words counting `TITLE_WEIGHT` times.

Korean by stem. A query's words match the index's terms they begin (서울 finds 서울은 and 서울에서), and the
search box strips a Korean word's particle first (서울에서 → 서울: `strip_particles`, the same list in
search.js). What prefix matching misses is a stem that does not begin its word: a verb's dictionary form
(끊겼다 → 끊기다), a noun inside a compound (통신장애 → 장애). Each Korean word is therefore analysed into
morphemes (kiwipiepy) and its stems that it does not begin with are indexed as terms of the document
too. `Stems` keeps each distinct word's stems (analysed once, many words to a call), and its bytes between
builds, so a rebuild analyses only new words; without kiwipiepy the fallback is `strip_particles`, which
adds nothing prefix matching does not find.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import threading
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pipeline.fields import ACTION_LISTS, NARRATIVE
from pipeline.models import Case
from pipeline.site.context import text_in
from pipeline.site.labels import FACET_FIELDS as LABELLED_FACETS
from pipeline.site.labels import LANGS, LISTING_SECTIONS, Lang, field_label, ui
from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "FORMAT",
    "PARTICLES",
    "SEARCHABLE",
    "Aside",
    "IndexUpdate",
    "SearchDoc",
    "Stems",
    "analyser",
    "bookkeeping",
    "clipped",
    "doc_number",
    "facet_words",
    "index_files",
    "search_box_html",
    "search_doc",
    "search_docs",
    "searchable",
    "shard_key",
    "shown_text",
    "strip_particles",
    "terms_of",
    "update_index",
]

FORMAT = 4  # the index's format version (in each manifest); another version is rebuilt from scratch
ROOT = "search"
# The fields a search looks in: the record's texts (narrative fields and lists of actions).
SEARCHABLE: tuple[str, ...] = (*NARRATIVE, *ACTION_LISTS)
TITLE_WEIGHT = 8  # a title's word counts this many times a word elsewhere
MAX_WEIGHT = 255
EXCERPT_CHARS = 200
DOCS_PER_FILE = 8  # per docs/ file: fetched for the results shown
KEYS_PER_FILE = 128  # per keys/ file: bookkeeping only
MAX_TERM = 40  # characters of a term kept

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_WORD = re.compile(r"[^\W_]+")  # letters and digits (search.js: /[\p{L}\p{N}]+/u)
_ID_NUMBER = re.compile(r"-([0-9]+)$")

# A Korean word's particles and copula endings, longest first: stripped from a query's word (and by the
# fallback analyser) when at least two syllables stay. search.js holds the same list.
PARTICLES: tuple[str, ...] = (
    "으로부터",
    "에서부터",
    "이라고",
    "에게서",
    "으로서",
    "으로써",
    "까지",
    "부터",
    "에서",
    "에게",
    "한테",
    "으로",
    "처럼",
    "보다",
    "마다",
    "이나",
    "이다",
    "입니다",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "에",
    "의",
    "와",
    "과",
    "도",
    "로",
    "만",
    "나",
)


# ---------------------------------------------------------------- Korean


def strip_particles(word: str) -> str:
    """A Korean word without its particle (서울은 → 서울, 서울에서 → 서울), when two syllables stay; any
    other word as it is."""
    for particle in PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2 and _HANGUL.search(word[-len(particle) - 1]):
            return word[: -len(particle)]
    return word


@lru_cache(maxsize=1)
def _kiwi() -> Any:
    """kiwipiepy's analyser, loaded once (two seconds); None when kiwipiepy is not installed."""
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        return None
    return Kiwi()


def analyser() -> str:
    """Which analyser Korean words go through here: "kiwipiepy", or "particles" without it."""
    try:
        import kiwipiepy  # noqa: F401
    except ImportError:
        return "particles"
    return "kiwipiepy"


_CONTENT_TAGS = ("NNG", "NNP", "NR", "XR", "SH")
_PREDICATE_TAGS = ("VV", "VA")


def _stems_of(tokens: Iterable[Any]) -> list[str]:
    stems: list[str] = []
    for token in tokens:
        tag = str(token.tag)
        if tag.startswith(_CONTENT_TAGS) and len(token.form) >= 2:
            stems.append(token.form)
        elif tag.startswith(_PREDICATE_TAGS):
            stems.append(token.form + "다")
    return stems


def _chunks(words: list[str], size: int = 20_000) -> Iterator[list[str]]:
    chunk: list[str] = []
    length = 0
    for word in words:
        chunk.append(word)
        length += len(word) + 1
        if length >= size:
            yield chunk
            chunk, length = [], 0
    if chunk:
        yield chunk


@dataclass(frozen=True)
class Aside:
    """Stems being analysed in a process of their own (`Stems.analyse_aside`): calling it takes them in,
    waiting for them; `ready()` says whether they are there to take without waiting."""

    take: Callable[[], None]
    ready: Callable[[], bool]

    def __call__(self) -> None:
        self.take()


class Stems:
    """Korean words' stems: each distinct word analysed once (kiwipiepy, many words to a call), kept
    between builds as bytes (`dump`, `load`). `changed`: words were analysed since `load`."""

    def __init__(self, known: dict[str, tuple[str, ...]] | None = None) -> None:
        self._known: dict[str, tuple[str, ...]] = dict(known or {})
        self._terms: dict[str, tuple[str, ...]] = {}  # `terms`, of the words met
        self.changed = False

    @classmethod
    def load(cls, data: bytes | None) -> Stems:
        """The cache of an earlier build's `dump()` (None, or bytes not of a dump: an empty cache)."""
        known: dict[str, tuple[str, ...]] = {}
        try:
            loaded = json.loads(data) if data else {}
        except ValueError:
            loaded = {}
        if isinstance(loaded, dict) and loaded.get("analyser") == analyser():
            words = loaded.get("words", {})
            known = {k: tuple(v) for k, v in words.items() if isinstance(v, list)} if isinstance(words, dict) else {}
        return cls(known)

    def dump(self) -> bytes:
        words = {word: list(stems) for word, stems in sorted(self._known.items())}
        return json.dumps({"analyser": analyser(), "words": words}, ensure_ascii=False, separators=(",", ":")).encode()

    def __len__(self) -> int:
        return len(self._known)

    def unknown(self, words: Iterable[str]) -> list[str]:
        """The words not known yet, each once, sorted."""
        return sorted({w for w in words if w not in self._known})

    def analyse(self, words: Iterable[str]) -> None:
        """Analyse the words not known yet, in few calls (a few seconds for 10,000 cases' words)."""
        new = self.unknown(words)
        if not new:
            return
        self.changed = True
        kiwi = _kiwi()
        if kiwi is None:
            for word in new:
                self._known[word] = (strip_particles(word),)
            return
        # Each word analysed on its own (kiwipiepy takes a list of texts, analysing each apart): a word's
        # stems must not depend on the words analysed with it, or an index updated with one case's new
        # words would differ from one made with all of them at once.
        for chunk in _chunks(new):
            for word, tokens in zip(chunk, kiwi.tokenize(chunk), strict=True):
                self._known[word] = tuple(_stems_of(tokens))

    def analyse_aside(self, words: Iterable[str]) -> Aside:
        """Start analysing the words not known yet in a process of its own (`pipeline.site.stemmer`), and
        return what takes its stems in, waiting for it (once, from whichever thread asks first): the caller
        goes on meanwhile. Loading kiwipiepy's model and its first analysis take four to five seconds of one
        core, holding Python's lock the while (a thread would stop the build): a full build makes its pages
        on the other core. The
        stems are the same as `analyse`'s (each word is analysed on its own); a process that fails leaves
        its words to `analyse`. Nothing is started when every word is known, kiwipiepy is not installed,
        or this process loaded it already (an analysis here then costs milliseconds)."""
        new = self.unknown(words)
        if not new or analyser() != "kiwipiepy" or _kiwi.cache_info().currsize:
            return Aside(lambda: None, lambda: True)
        command = [sys.executable, "-m", "pipeline.site.stemmer"]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        answer: list[bytes] = []
        # One thread talks to it (write the words, read the stems), so that neither pipe fills while the
        # caller is busy; it waits on the pipes, not holding Python's lock.
        talk = threading.Thread(
            target=lambda: answer.append(process.communicate(json.dumps(new).encode())[0]), daemon=True
        )
        talk.start()

        taking = threading.Lock()  # taken once, whichever of the build's threads asks first (the others wait)

        def take() -> None:
            with taking:
                talk.join()
                if not answer:
                    return  # taken already
                try:
                    found = json.loads(answer.pop()) if process.returncode == 0 else None
                except ValueError:
                    found = None
                if isinstance(found, dict):
                    self._known.update((w, tuple(found[w])) for w in new if isinstance(found.get(w), list))
                    self.changed = True

        return Aside(take, lambda: not talk.is_alive())

    def of(self, word: str) -> tuple[str, ...]:
        """The word's stems (analysed now if it is not known)."""
        if word not in self._known:
            self.analyse([word])
        return self._known[word]

    def terms(self, word: str) -> tuple[str, ...]:
        """The index's terms of a word of a page (`terms_of`): the word, and when it is Korean each of its
        stems it does not begin with, once each; worked out once a word (a build meets a word thousands of
        times, and its stems never change once analysed)."""
        found = self._terms.get(word)
        if found is None:
            more = [s.lower() for s in self.of(word)] if _HANGUL.search(word) else []
            found = self._terms[word] = tuple(dict.fromkeys([word, *(s for s in more if not word.startswith(s))]))
        return found


# ---------------------------------------------------------------- a case's document


@dataclass(frozen=True)
class SearchDoc:
    """What one case page offers the search: where it is, what a result shows, its terms and weights."""

    case_id: str
    lang: str
    href: str  # the page's folder, site-relative: "ko/cases/IL-0001/"
    title: str
    excerpt: str
    terms: tuple[tuple[str, int], ...]  # sorted (term, weight)


def doc_number(case_id: str) -> int:
    """A document's number in the index: its case id's number (IL-0042 → 42)."""
    found = _ID_NUMBER.search(case_id)
    if found is None:
        raise ValueError(f"not a case id: {case_id!r}")
    return int(found.group(1))


def shown_text(texts: dict[str, str] | None, lang: str) -> str:
    """The text as the page in `lang` shows it: its own, or the other language's (`context.text_in`)."""
    return text_in(texts, lang)[0]


def _texts(case: Case, lang: str) -> list[str]:
    """The page's searchable texts but the title, as shown."""
    out: list[str] = []
    for name in SEARCHABLE:
        if name == "title":
            continue
        value = getattr(case, name, None)
        if name in ACTION_LISTS:
            out += [shown_text(action.text, lang) for action in value or ()]
        else:
            out.append(shown_text(value, lang))
    return [text for text in out if text]


# The case's vocabulary terms whose labels a page's search finds (the facets a case page shows by label):
# the field, and the vocabulary it names terms of.
LABELLED: tuple[tuple[str, Kind], ...] = (
    ("domain", "domains"),
    ("components", "components"),
    ("symptoms", "symptoms"),
    ("contributing", "contributing"),
    ("root_cause", "root_causes"),
)  # not the severity: its labels say what it means ("데이터 손실"), which is not what a case tells


def _labels(case: Case, lang: str) -> list[str]:
    """The labels of the case's vocabulary terms in the page's language (데이터베이스 for `database` on a
    Korean page), as the page shows them: what a reader searching by a facet's word types."""
    terms = vocabulary().terms
    out: list[str] = []
    for name, kind in LABELLED:
        value = getattr(case, name, None)
        for term in value if isinstance(value, list) else [value] if value else []:
            known = terms[kind].get(str(term))
            out.append(known.label_in(lang) if known else str(term))
    return out


# A build reads each text twice (for its Korean words, then for its terms) and the same text on both
# languages' pages when one lacks it, and the vocabulary's labels on every page: each text's words are
# found once (the cache holds a few pages' worth; a hundred thousand texts of 10,000 cases pass through).
@lru_cache(maxsize=1 << 14)
def _words(text: str) -> tuple[str, ...]:
    """The text's words as the index and the search box see them: runs of letters and digits, lower case,
    a Latin word of one letter left out."""
    words = _WORD.findall(unicodedata.normalize("NFC", text).lower())
    return tuple([w[:MAX_TERM] for w in words if len(w) > 1 or not w.isascii()])


def _korean(words: Iterable[str]) -> list[str]:
    return [w for w in words if _HANGUL.search(w)]


def terms_of(title: str, texts: Iterable[str], stems: Stems) -> tuple[tuple[str, int], ...]:
    """The sorted (term, weight) pairs of a page's title and texts: each word, and each Korean word's
    stems it does not begin with, a title's counting `TITLE_WEIGHT` times."""
    counts: Counter[str] = Counter()  # each word's weight in the page, counted in C
    for text in texts:
        counts.update(_words(text))
    for word in _words(title):
        counts[word] += TITLE_WEIGHT
    weights: dict[str, int] = {}
    terms = stems.terms
    for word, count in counts.items():  # then each distinct word's terms
        for term in terms(word):
            weights[term] = weights.get(term, 0) + count
    return tuple(sorted((term, min(weight, MAX_WEIGHT)) for term, weight in weights.items()))


def clipped(text: str, chars: int, tail: str = "…") -> str:
    """The text on one line, cut at a word before `chars` characters (mid-word only when the word would
    leave less than half) and ended with `tail`: a search result's excerpt, an MCP answer's passage."""
    text = " ".join(text.split())
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > chars // 2 else cut).rstrip(" ,.;:") + tail


def search_doc(case: Case, lang: Lang, stems: Stems) -> SearchDoc | None:
    """What the case's page in `lang` offers the search: its title, its texts and its vocabulary terms'
    labels; None for a withdrawn or merged case. Pure given `stems`."""
    if not searchable(case):
        return None
    title = shown_text(case.title, lang)
    return SearchDoc(
        case_id=case.id,
        lang=lang,
        href=f"{lang}/cases/{case.id}/",
        title=title,
        excerpt=clipped(shown_text(case.summary, lang), EXCERPT_CHARS),
        terms=terms_of(title, [*_texts(case, lang), *_labels(case, lang)], stems),
    )


def searchable(case: Any) -> bool:
    """A case (or card) whose pages the index holds: one not withdrawn (a merged case is withdrawn too)."""
    return getattr(case, "withdrawn", None) is None


def korean_words(cases: Iterable[Case], langs: Iterable[Lang] = LANGS) -> set[str]:
    """The Korean words of the searchable pages of `cases`: those their documents need the stems of."""
    langs = tuple(langs)
    texts: set[str] = set()  # each once: a text untranslated shows on both languages' pages
    for case in cases:
        if searchable(case):
            for lang in langs:
                texts.update((shown_text(case.title, lang), *_texts(case, lang), *_labels(case, lang)))
    # A text with no Hangul (most of an English page) has none; the others' words found in one pass, the
    # texts joined by a line break, which no word holds.
    return set(_korean(_words("\n".join(text for text in texts if _HANGUL.search(text)))))


def search_docs(
    cases: Iterable[Case], stems: Stems, langs: Iterable[Lang] = LANGS, analysed: bool = False
) -> list[SearchDoc]:
    """Every searchable page's document, the Korean words of all analysed first in one batch (unless the
    caller had them analysed already: `analysed`; a word not analysed yet is then analysed alone)."""
    cases = list(cases)
    langs = tuple(langs)
    if not analysed:
        stems.analyse(korean_words(cases, langs))
    return [doc for case in cases for lang in langs if (doc := search_doc(case, lang, stems)) is not None]


# ---------------------------------------------------------------- the index's files


def shard_key(term: str) -> str:
    """The shard a term lives in: its first two characters when the first is not ASCII (two Hangul
    syllables), else its first three."""
    return term[:2] if not term[:1].isascii() else term[:3]


@lru_cache(maxsize=1 << 17)
def _shard_name(key: str) -> str:
    return "-".join(f"{ord(c):x}" for c in key)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def _manifest_key(lang: str) -> str:
    return f"{ROOT}/{lang}/index.json"


def _live_key(lang: str) -> str:
    return f"{ROOT}/{lang}/live.json"


def _heads_path(lang: str, head: str) -> str:
    return f"{ROOT}/{lang}/heads/{_shard_name(head)}.json"


def _shard_path(lang: str, key: str) -> str:
    return f"{ROOT}/{lang}/shards/{_shard_name(key)}.json"


def _docs_path(lang: str, chunk: int) -> str:
    return f"{ROOT}/{lang}/docs/{chunk}.json"


def _keys_path(lang: str, chunk: int) -> str:
    return f"{ROOT}/{lang}/keys/{chunk}.json"


def bookkeeping(path: str) -> bool:
    """Whether a file of the index (`index_files`, `update_index`) is bookkeeping for updates (keys/,
    live.json), which no reader fetches: kept by the build, not published."""
    parts = path.split("/")
    return len(parts) >= 3 and parts[0] == ROOT and (parts[2] == "keys" or parts[2:] == ["live.json"])


def _deltas(numbers: Iterable[int]) -> list[int]:
    out: list[int] = []
    last = 0
    for n in numbers:
        out.append(n - last)
        last = n
    return out


def _undeltas(deltas: Iterable[int]) -> list[int]:
    out: list[int] = []
    last = 0
    for d in deltas:
        last += d
        out.append(last)
    return out


# A shard held: term -> {doc number: weight}.
_Shard = dict[str, dict[int, int]]


def _encode_shard(shard: _Shard) -> bytes:
    encoded: dict[str, list[int]] = {}
    for term, postings in shard.items():
        flat: list[int] = []
        last = 0
        for number in sorted(postings):
            flat += (number - last, postings[number])
            last = number
        encoded[term] = flat
    return _dumps(encoded)


def _decode_shard(data: bytes) -> _Shard:
    shard: _Shard = {}
    for term, flat in json.loads(data).items():
        postings: dict[int, int] = {}
        last = 0
        for i in range(0, len(flat), 2):
            last += flat[i]
            postings[last] = flat[i + 1]
        shard[term] = postings
    return shard


def _manifest(lang: str, shards: Iterable[str]) -> bytes:
    return _manifest_heads(lang, {key[:1] for key in shards})


def _manifest_heads(lang: str, heads: Iterable[str]) -> bytes:
    return _dumps({"version": FORMAT, "lang": lang, "docs_per_file": DOCS_PER_FILE, "heads": "".join(sorted(heads))})


def _heads(shards: Iterable[str]) -> dict[str, list[str]]:
    """The shard keys by their first character (what heads/ holds)."""
    heads: dict[str, list[str]] = {}
    for key in sorted(shards):
        heads.setdefault(key[:1], []).append(key)
    return heads


def _doc_entry(doc: SearchDoc) -> list[str]:
    return [doc.href, doc.title, doc.excerpt]


def _encode_chunk(entries: Mapping[int, Any]) -> bytes:
    return _dumps({str(n): entries[n] for n in sorted(entries)})


def _decode_chunk(data: bytes) -> dict[int, Any]:
    return {int(n): value for n, value in json.loads(data).items()}


def _live(numbers: Iterable[int], shards: Iterable[str]) -> bytes:
    # the shards' keys as one string, a line each (a list of 50,000 strings costs ten times as much)
    return _dumps({"version": FORMAT, "docs": _deltas(sorted(numbers)), "shards": "\n".join(sorted(shards))})


def _numbered(docs: Iterable[SearchDoc]) -> dict[str, dict[int, SearchDoc]]:
    by_lang: dict[str, dict[int, SearchDoc]] = {lang: {} for lang in LANGS}
    for doc in docs:
        held = by_lang.setdefault(doc.lang, {})
        number = doc_number(doc.case_id)
        if number in held:
            raise ValueError(f"two documents numbered {number} in {doc.lang}: {held[number].case_id}, {doc.case_id}")
        held[number] = doc
    return by_lang


def _keys_of(doc: SearchDoc) -> str:
    """The shards a document has postings in, each with a short hash of those postings: an update rewrites
    only the shards whose hash changed (a case whose summary gained a word touches that word's shard, not
    the fifty others its terms live in). One string, each shard's key followed by its hash's eight hex
    digits, a space between ("ai65c404a6 cud73ddc9d8": a key is letters and digits, never a space): a
    third of the bytes of a list of pairs, 2 MB of a site of 1,000 cases that no reader fetches."""
    # A term's shard key is its first characters, so the sorted terms of one shard come together, and the
    # shards in their keys' order: each run of one key is one shard's.
    # Written out as a loop, not `groupby`: a document's few hundred terms, for every document of a build.
    keys: list[str] = []
    key = ""
    lines: list[str] = []
    for term, weight in doc.terms:
        here = shard_key(term)
        if here != key:
            if lines:
                keys.append(f"{key}{_lines_hash(lines)}")
            key, lines = here, []
        lines.append(f"{term}\t{weight}")
    if lines:
        keys.append(f"{key}{_lines_hash(lines)}")
    return " ".join(keys)


def _lines_hash(lines: list[str]) -> str:
    """One document's postings in one shard, as eight hex digits: its terms and weights (a tab between),
    a line each."""
    joined = "\n".join(lines)
    return f"{zlib.crc32(joined.encode()):08x}"


def _key_pairs(keys: str) -> Iterator[tuple[str, str]]:
    """A document's shard keys and their hashes, as `_keys_of` wrote them."""
    for entry in keys.split():
        yield entry[:-8], entry[-8:]


def index_files(docs: Iterable[SearchDoc]) -> dict[str, bytes]:
    """The whole index, every language (each has its manifest, even with no document), by site-relative
    path under search/. The same documents give the same bytes, whatever their order."""
    files: dict[str, bytes] = {}
    for lang, numbered in _numbered(docs).items():
        postings: dict[str, dict[int, int]] = {}
        docs_chunks: dict[int, dict[int, Any]] = {}
        keys_chunks: dict[int, dict[int, Any]] = {}
        for number, doc in numbered.items():
            for term, weight in doc.terms:
                held = postings.get(term)
                if held is None:
                    held = postings[term] = {}
                held[number] = weight
            docs_chunks.setdefault(number // DOCS_PER_FILE, {})[number] = _doc_entry(doc)
            keys_chunks.setdefault(number // KEYS_PER_FILE, {})[number] = _keys_of(doc)
        shards: dict[str, _Shard] = {}
        for term, held in postings.items():  # each distinct term's shard, once
            shards.setdefault(shard_key(term), {})[term] = held
        for key, shard in shards.items():
            files[_shard_path(lang, key)] = _encode_shard(shard)
        for chunk, entries in docs_chunks.items():
            files[_docs_path(lang, chunk)] = _encode_chunk(entries)
        for chunk, entries in keys_chunks.items():
            files[_keys_path(lang, chunk)] = _encode_chunk(entries)
        for head, keys in _heads(shards).items():
            files[_heads_path(lang, head)] = _dumps(keys)
        files[_live_key(lang)] = _live(numbered, shards)
        files[_manifest_key(lang)] = _manifest(lang, shards)
    return dict(sorted(files.items()))


@dataclass
class IndexUpdate:
    """An update of the index: the files that change (their new bytes) and the files left as they are (in
    no particular order); together the whole index. A file of the last index in neither is gone."""

    files: dict[str, bytes] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)


class _Stale(Exception):
    """The previous index is missing, of another format, or lacks a file it names."""


def _read(previous: Callable[[str], bytes | None], key: str) -> bytes:
    data = previous(key)
    if data is None:
        raise _Stale(key)
    return data


def _all_files(lang: str, shards: Iterable[str], heads: str, live: Iterable[int]) -> list[str]:
    """Every file of a language's index, from its bookkeeping (a list of 50,000 paths in some 10 ms)."""
    live = list(live)
    base = f"{ROOT}/{lang}"
    return [
        _manifest_key(lang),
        _live_key(lang),
        *(f"{base}/shards/{_shard_name(key)}.json" for key in shards),
        *(f"{base}/heads/{_shard_name(head)}.json" for head in heads),
        *(f"{base}/docs/{n}.json" for n in sorted({n // DOCS_PER_FILE for n in live})),
        *(f"{base}/keys/{n}.json" for n in sorted({n // KEYS_PER_FILE for n in live})),
    ]


def _update_heads(
    previous: Callable[[str], bytes | None], lang: str, heads: set[str], added: set[str], gone: set[str]
) -> dict[str, bytes | None]:
    """The heads/ files of the shards added and gone, updated (None: no shard begins so any more); `heads`
    updated in place."""
    out: dict[str, bytes | None] = {}
    for head in sorted({key[:1] for key in added | gone}):
        keys = set(json.loads(_read(previous, _heads_path(lang, head)))) if head in heads else set()
        keys = (keys - gone) | {key for key in added if key[:1] == head}
        out[_heads_path(lang, head)] = _dumps(sorted(keys)) if keys else None
        (heads.add if keys else heads.discard)(head)
    return out


def _update_chunks(
    previous: Callable[[str], bytes | None],
    path: Callable[[int], str],
    per_file: int,
    values: Mapping[int, Any | None],
    live: set[int],
) -> tuple[dict[str, bytes | None], dict[int, Any]]:
    """The chunk files the changed documents are in, updated (None: now empty); and the old values."""
    out: dict[str, bytes | None] = {}
    old: dict[int, Any] = {}
    for chunk in sorted({n // per_file for n in values}):
        key = path(chunk)
        held = _decode_chunk(_read(previous, key)) if any(n // per_file == chunk for n in live) else {}
        for number, value in values.items():
            if number // per_file != chunk:
                continue
            if number in held:
                old[number] = held.pop(number)
            if value is not None:
                held[number] = value
        out[key] = _encode_chunk(held) if held else None
    return out, old


def _update_lang(
    previous: Callable[[str], bytes | None], lang: str, changed: Mapping[int, SearchDoc | None]
) -> tuple[dict[str, bytes | None], list[str]]:
    """One language's files that the changed documents touch (None: gone), and all its files before."""
    manifest = json.loads(_read(previous, _manifest_key(lang)))
    if not isinstance(manifest, dict) or manifest.get("version") != FORMAT:
        raise _Stale(_manifest_key(lang))
    live_data = json.loads(_read(previous, _live_key(lang)))
    live = set(_undeltas(live_data["docs"]))
    listed = live_data["shards"].split("\n") if live_data["shards"] else []
    shards = set(listed)
    heads = set(manifest["heads"])
    before = _all_files(lang, listed, manifest["heads"], live)
    if not changed:
        return {}, before
    new_keys = {n: (_keys_of(doc) if doc is not None else None) for n, doc in changed.items()}
    out, old_keys = _update_chunks(previous, lambda c: _keys_path(lang, c), KEYS_PER_FILE, new_keys, live)
    if any(n in live and n not in old_keys for n in changed):  # keys/ lacks a document the index holds
        raise _Stale(f"{ROOT}/{lang}/keys")
    docs = {n: (_doc_entry(doc) if doc is not None else None) for n, doc in changed.items()}
    docs_out, _ = _update_chunks(previous, lambda c: _docs_path(lang, c), DOCS_PER_FILE, docs, live)
    out.update(docs_out)
    # The shards whose postings of a changed document differ (its old ones from keys/, with their hashes).
    before_keys = {(n, key): held for n, keys in old_keys.items() for key, held in _key_pairs(keys)}
    after_keys = {(n, key): held for n, keys in new_keys.items() if keys for key, held in _key_pairs(keys)}
    touched = {
        key
        for n, key in before_keys.keys() | after_keys.keys()
        if before_keys.get((n, key)) != after_keys.get((n, key))
    }
    added: set[str] = set()
    gone: set[str] = set()
    for key in sorted(touched):
        shard = _decode_shard(_read(previous, _shard_path(lang, key))) if key in shards else {}
        for term in list(shard):
            for number in changed:
                shard[term].pop(number, None)
            if not shard[term]:
                del shard[term]
        for number, doc in changed.items():
            for term, weight in doc.terms if doc is not None else ():
                if shard_key(term) == key:
                    shard.setdefault(term, {})[number] = weight
        out[_shard_path(lang, key)] = _encode_shard(shard) if shard else None
        if shard and key not in shards:
            added.add(key)
        elif not shard and key in shards:
            gone.add(key)
    shards = (shards - gone) | added
    out.update(_update_heads(previous, lang, heads, added, gone))
    live = (live - set(changed)) | {n for n, doc in changed.items() if doc is not None}
    out[_live_key(lang)] = _live(live, shards)
    out[_manifest_key(lang)] = _manifest_heads(lang, heads)
    return out, before


def update_index(
    previous: Callable[[str], bytes | None], changed: Mapping[tuple[str, str], SearchDoc | None]
) -> IndexUpdate | None:
    """The index after the `changed` documents ((lang, case id) → its new document, None: gone), from
    the last index's files (`previous(key)`): reads and rewrites only the shards the changed documents'
    old and new terms live in, their docs/ and keys/ files, the heads/ files whose list of shards
    changed, the manifest and live.json. None when the last index is missing or of another format (then
    make it anew with `index_files`). Gives exactly the files `index_files` gives from all the documents.
    At 10,000 cases (50,000 files a language) one case's update takes about 0.1 s, most of it listing
    the files kept."""
    by_lang: dict[str, dict[int, SearchDoc | None]] = {lang: {} for lang in LANGS}
    for (lang, case_id), doc in changed.items():
        if doc is not None and (doc.lang, doc.case_id) != (lang, case_id):
            raise ValueError(f"the document of {lang}/{case_id} is {doc.lang}/{doc.case_id}")
        by_lang.setdefault(lang, {})[doc_number(case_id)] = doc
    update = IndexUpdate()
    try:
        for lang, docs in by_lang.items():
            written, before = _update_lang(previous, lang, docs)
            for key, data in written.items():
                if data is not None and data != previous(key):
                    update.files[key] = data
            update.kept += [key for key in before if key not in written or written[key] is not None]
    except (_Stale, ValueError, KeyError, TypeError, AttributeError):  # a file not of this index: made anew
        return None
    update.kept = [k for k in update.kept if k not in update.files]
    update.files = dict(sorted(update.files.items()))
    return update


# ---------------------------------------------------------------- the search box


def _rooted(root_rel: str) -> str:
    return root_rel if not root_rel or root_rel.endswith("/") else root_rel + "/"


def search_box_html(lang: Lang, root_rel: str) -> str:
    """The search box a page includes: a search input under a visible label, and the site's glue (search.js:
    it keeps the query in the address, `?q=`, so that a search can be shared and bookmarked, and runs the
    address's query on opening). Every link is relative (`root_rel` leads from the page to the site's root:
    "", "../", "../../../"). The index (`search/{lang}/`) is fetched only when the reader focuses the input
    or types in it, or the address holds a query.

    Only what a reader sees before searching is written: the label and the input, so nothing moves when the
    script starts. search.js adds the live region for the count, the results' list and the "more" button,
    in the words it holds per language (`search_words`, from labels.py): a listing's every page does not
    carry them (0.9 MB of a site of 1,000 cases)."""
    root = html.escape(_rooted(root_rel), quote=True)
    label = html.escape(ui("search", lang), quote=True)
    return (
        f'<div class="site-search" role="search" aria-label="{label}">'
        f'<div id="search" data-root="{root}" data-lang="{lang}">'
        f'<label class="search-label" for="search-input">{label}</label> '
        '<input type="search" id="search-input" class="search-input" name="q" autocomplete="off">'
        "</div>"
        "</div>"
        f'<script src="{root}assets/search.js" defer></script>'
    )


def search_words() -> dict[str, dict[str, str]]:
    """The words static/search.js writes, per language, from labels.py: the count of results (`{n}` filled
    in the browser), the failure and the "more" button. search.js holds a copy; a test keeps the two equal."""
    return {
        lang: {
            "results": ui("search_results", lang, n="{n}"),
            "results_one": ui("search_results_one", lang, n="{n}"),
            "failed": ui("search_failed", lang),
            "more": ui("search_more", lang),
        }
        for lang in LANGS
    }


# ---------------------------------------------------------------- the facets' words

# Each facet of `api/v1/facets.json`, and the field (or phrase) whose label names its group: the facets'
# own fields (labels.FACET_FIELDS), but the year, which is named by its phrase, not by the date's label.
FACET_FIELDS: dict[str, str] = {**LABELLED_FACETS, "year": "year"}
_FACET_PHRASES = (
    "count",
    "count_one",
    "range",
    "summing_up",
    "summing_up_one",
    "summing_up_none",
    "summing_up_tie",
    "summing_up_tie_once",
    "summing_up_tie_one",
)
_FACET_UI = ("filters", "clear_filters", "more_cases", "not_translated", "machine_translated", "read_in_english")


def facet_words() -> dict[str, dict[str, Any]]:
    """The words static/facets.js writes, per language, from labels.py: each facet's title, the listing's
    sections' headings (a filtered listing's cards), the phrases of the count, range and summing-up lines
    (`{n}`, `{first}`, `{last}`, `{terms}`, `{tied}`, `{times}` filled in the browser), and the filter
    box's own. facets.js holds a copy; a test keeps the two equal."""
    words: dict[str, dict[str, Any]] = {}
    for lang in LANGS:
        titles = {
            facet: ui("year", lang) if name == "year" else field_label(name, lang)
            for facet, name in FACET_FIELDS.items()
        }
        # each phrase with its placeholders kept as they are, for the browser to fill
        kept = {name: "{" + name + "}" for name in ("n", "first", "last", "terms", "tied", "times")}
        phrases = {key: ui(key, lang, **kept) for key in (*_FACET_PHRASES, *_FACET_UI)}
        # a filtered listing's cards: each section's heading, in the listing's order
        sections = [[name, field_label(name, lang)] for name in LISTING_SECTIONS]
        words[lang] = {"titles": titles, "sections": sections, **phrases}
    return words
