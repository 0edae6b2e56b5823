"""The site's offline search: a Pagefind index over the written case pages, Korean found by its stems.

    report = index_site(Path("site"))          # after the pages are written: builds site/pagefind/
    search_box_html("ko", "../")                # the search box a page includes (links relative)

Only the case pages are indexed (`ko/cases/*/index.html`, `en/cases/*/index.html`), and of each only its
title, its summary and its narrative fields (`pipeline.fields.NARRATIVE` and `ACTION_LISTS`: the texts a
person wrote), not the page's header, navigation, sources or citation. A page that marks its fields
(`data-field="trigger"` on the element holding a field) gives exactly those; a page that does not gives
its `<main>` less its navigation, forms, code blocks (the BibTeX) and anything `data-pagefind-ignore`.

Korean by stem. Pagefind splits words on spaces and matches every word of a query as a prefix, so a
search for 서울 already finds 서울은 (a noun and its particle). What prefix matching misses is a stem that
does not begin its word: a verb's dictionary form (끊겼다 → 끊기다), a noun inside a compound (통신장애 →
장애). Each page's Korean words are therefore analysed into morphemes (kiwipiepy) and the stems that no
word of the page begins with are added to what Pagefind indexes, as a hidden meta field (`stems`):
searched, but never in an excerpt, and never in the page written on disk. The query side: the search
box strips a Korean word's particle before searching (서울은 → 서울, the same rule as
`strip_particles`), so a search for 서울은 finds 서울에서 too. Without kiwipiepy, the fallback is
`strip_particles` alone, which adds nothing prefix matching does not find.

The index is built by the `pagefind` package's binary from a staging folder, then copied into
`folder/pagefind/` file by file: a file whose bytes did not change is left alone, a file no longer in
the bundle is removed, so a rebuild rewrites only what Pagefind changed.
"""

from __future__ import annotations

import bisect
import html
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import lxml.html

from pipeline.fields import ACTION_LISTS, NARRATIVE
from pipeline.site.labels import FACET_FIELDS as LABELLED_FACETS
from pipeline.site.labels import LANGS, Lang, field_label, ui

__all__ = [
    "BUNDLE",
    "SEARCHABLE",
    "SearchReport",
    "analyser",
    "index_site",
    "korean_stems",
    "search_box_html",
    "strip_particles",
]

BUNDLE = "pagefind"
# The fields a search looks in: the record's texts (narrative fields and lists of actions).
SEARCHABLE: tuple[str, ...] = (*NARRATIVE, *ACTION_LISTS)
# Where a page without field marks keeps what is not its text.
_NOT_TEXT = " | ".join(
    [f".//{tag}" for tag in ("nav", "header", "footer", "script", "style", "template", "form", "pre")]
    + [".//*[@id='search']", ".//*[@id='facets']", ".//*[@data-pagefind-ignore]"]
)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")

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


@dataclass
class SearchReport:
    """What `index_site` did: the pages indexed per language, the stems added, the bundle's files."""

    pages: dict[str, int] = field(default_factory=dict)  # language → case pages indexed
    stems_added: int = 0  # Korean stems no word of their page begins with, indexed beside the page
    analyser: str = "kiwipiepy"  # or "particles" (the fallback)
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    bundle_bytes: int = 0

    @property
    def total_pages(self) -> int:
        return sum(self.pages.values())


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
    return "particles" if _kiwi() is None else "kiwipiepy"


# Stems per word, kept across calls in one process (and in `index_site`'s cache file across processes).
_STEMS: dict[str, list[str]] = {}
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


def _analyse(words: list[str]) -> None:
    """Fill `_STEMS` for words not there yet: each distinct word analysed once, many to a call."""
    kiwi = _kiwi()
    new = sorted({w for w in words if w not in _STEMS})
    if kiwi is None:
        for word in new:
            _STEMS[word] = [strip_particles(word)]
        return
    for chunk in _chunks(new):
        starts: list[int] = []
        offset = 0
        for word in chunk:
            starts.append(offset)
            offset += len(word) + 1
        tokens_of: list[list[Any]] = [[] for _ in chunk]
        for token in kiwi.tokenize("\n".join(chunk)):
            # the word the token starts in: the last whose start is not after it
            index = _word_at(starts, token.start)
            tokens_of[index].append(token)
        for word, tokens in zip(chunk, tokens_of, strict=True):
            _STEMS[word] = _stems_of(tokens)


def _word_at(starts: list[int], position: int) -> int:
    return max(0, bisect.bisect_right(starts, position) - 1)


def _words(text: str) -> list[str]:
    """The text's words as Pagefind sees them: split on spaces, punctuation at either end dropped."""
    return [w for w in (_PUNCT.sub("", part) for part in text.split()) if w]


def korean_stems(text: str) -> list[str]:
    """The stems of the text's Korean words that no word of the text begins with (what Pagefind's
    prefix matching would miss), each once, in the text's order."""
    words = _words(text)
    korean = [w for w in words if _HANGUL.search(w)]
    _analyse(korean)
    prefixes = {w.lower()[:n] for w in words for n in range(1, len(w) + 1)}
    added: list[str] = []
    for word in korean:
        for stem in _STEMS.get(word, []):
            if stem.lower() not in prefixes:
                prefixes.add(stem.lower())
                added.append(stem)
    return added


# ---------------------------------------------------------------- the pages


def case_pages(folder: Path) -> list[Path]:
    """The written site's case pages, in each language, by path."""
    return sorted(p for lang in LANGS for p in folder.glob(f"{lang}/cases/*/index.html"))


def _field_name(element: Any) -> str:
    return str(element.get("data-field", "")).split(".")[0]


def _root(document: Any) -> Any:
    for query in ("//*[@data-pagefind-body]", "//main", "//body"):
        found = document.xpath(query)
        if found:
            return found[0]
    return document


def _searchable_html(document: Any) -> str:
    """The part of a case page that is searched, as HTML: its title and its texts."""
    root = _root(document)
    marked = root.xpath(".//*[@data-field]")
    if marked:
        titles = root.xpath(".//h1")
        kept = [el for el in marked if _field_name(el) in SEARCHABLE and _field_name(el) != "title"]
        parts = titles[:1] + [el for el in kept if not any(a in kept for a in el.iterancestors())]
        return "".join(lxml.html.tostring(el, encoding="unicode", with_tail=False) for el in parts)
    for element in root.xpath(_NOT_TEXT):
        element.drop_tree()
    return "".join(
        [html.escape(root.text or "")]
        + [lxml.html.tostring(child, encoding="unicode", with_tail=True) for child in root]
    )


def _is_redirect(document: Any) -> bool:
    return bool(document.xpath("//meta[translate(@http-equiv,'REFRESH','refresh')='refresh']"))


def prepared_page(page: str, lang: str) -> tuple[str, int] | None:
    """What Pagefind indexes for one written case page: a page of its searchable parts and, for a
    Korean page, the stems prefix matching would miss; and how many stems. None for a page that
    only leads elsewhere (a meta refresh)."""
    document = lxml.html.document_fromstring(page)
    if _is_redirect(document):
        return None
    lang = str(document.get("lang") or lang).split("-")[0]
    body = _searchable_html(document)
    stems: list[str] = []
    if lang == "ko":
        text = " ".join(lxml.html.fragment_fromstring(body, create_parent="div").itertext())
        stems = korean_stems(text)
    # A meta field is searched but never shown in an excerpt (search.js drops it from the result).
    extra = f'<div hidden data-pagefind-meta="stems">{html.escape(" ".join(stems))}</div>' if stems else ""
    prepared = (
        f'<!doctype html><html lang="{html.escape(lang)}"><head><meta charset="utf-8"></head>'
        f"<body><main data-pagefind-body>{body}</main>{extra}</body></html>"
    )
    return prepared, len(stems)


# ---------------------------------------------------------------- the index


# Files of Pagefind's bundle that the site never loads (other UIs, the highlighter): left out.
_UNUSED = ("pagefind-component-ui.", "pagefind-modular-ui.", "pagefind-highlight.")


def _pagefind(staging: Path, output: Path) -> None:
    """Pagefind's indexer over the staged pages, its bundle into `output`. The package's own binary,
    through its command line: the Python API's service answers some ten messages a second and writes a
    large bundle three times slower (20,000 pages: 136 s against 42 s)."""
    command = [sys.executable, "-m", "pagefind", "--site", str(staging), "--output-path", str(output), "--silent"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pagefind failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")


def _same(old: bytes, new: bytes, suffix: str) -> bool:
    """The same file: the same bytes, or for JSON the same value (Pagefind writes the languages of
    pagefind-entry.json in no fixed order)."""
    if old == new:
        return True
    if suffix != ".json":
        return False
    try:
        return bool(json.loads(old) == json.loads(new))
    except ValueError:
        return False


def _sync(built: Path, target: Path, report: SearchReport) -> None:
    """Copy the bundle built into `target`, writing only files whose bytes changed; remove the rest."""
    fresh = {p.relative_to(built) for p in built.rglob("*") if p.is_file() and not p.name.startswith(_UNUSED)}
    for relative in sorted(fresh):
        data = (built / relative).read_bytes()
        report.bundle_bytes += len(data)
        destination = target / relative
        if destination.is_file() and _same(destination.read_bytes(), data, relative.suffix):
            report.unchanged += 1
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        temporary = destination.with_name(f".{destination.name}.new")
        temporary.write_bytes(data)
        os.replace(temporary, destination)
        report.written += 1
    if target.is_dir():
        for old in sorted(target.rglob("*"), reverse=True):
            if old.is_file() and old.relative_to(target) not in fresh:
                old.unlink()
                report.removed += 1
            elif old.is_dir() and not any(old.iterdir()):
                old.rmdir()


def _load_cache(cache: Path | None) -> int:
    """Read the words' stems kept by an earlier build; how many words are known then."""
    if cache is not None and cache.is_file():
        try:
            loaded = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        if isinstance(loaded, dict):
            _STEMS.update({k: v for k, v in loaded.items() if isinstance(v, list) and k not in _STEMS})
    return len(_STEMS)


def _save_cache(cache: Path | None, known: int) -> None:
    """Keep the words' stems for the next build, when this one met new words (or kept none yet)."""
    if cache is None or (len(_STEMS) == known and cache.is_file()):
        return
    cache.parent.mkdir(parents=True, exist_ok=True)
    temporary = cache.with_name(f".{cache.name}.new")
    temporary.write_text(json.dumps(_STEMS, sort_keys=True, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, temporary.with_name(cache.name))


def index_site(folder: Path, *, stem_cache: Path | None = None) -> SearchReport:
    """Build the search index of the site written in `folder` into `folder/pagefind/`.

    `stem_cache`: a JSON file keeping each Korean word's stems between builds (outside the site, e.g.
    in the data root), so that a rebuild analyses only words it has not met."""
    report = SearchReport(analyser=analyser())
    known = _load_cache(stem_cache)
    with tempfile.TemporaryDirectory(prefix="incidentlib-search-") as work:
        staging, built = Path(work, "pages"), Path(work, "bundle")
        for page in case_pages(folder):
            relative = page.relative_to(folder)
            prepared = prepared_page(page.read_text(encoding="utf-8"), relative.parts[0])
            if prepared is None:
                continue
            text, stems = prepared
            destination = staging / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(text, encoding="utf-8")
            report.pages[relative.parts[0]] = report.pages.get(relative.parts[0], 0) + 1
            report.stems_added += stems
        staging.mkdir(parents=True, exist_ok=True)
        _pagefind(staging, built)
        if not built.is_dir():
            built.mkdir()
        _sync(built, folder / BUNDLE, report)
    _save_cache(stem_cache, known)
    return report


# ---------------------------------------------------------------- the search box


def _rooted(root_rel: str) -> str:
    return root_rel if not root_rel or root_rel.endswith("/") else root_rel + "/"


def search_box_html(lang: Lang, root_rel: str) -> str:
    """The search box a page includes: a labelled search input written in the page, and the site's glue
    (search.js), every link relative (`root_rel` leads from the page to the site's root: "", "../",
    "../../../"). Pagefind's UI (its script and stylesheet, named in `data-ui` and `data-ui-css`) is
    loaded only when the reader focuses the input or types in it; search.js then hands the typed query
    over to it."""
    root = html.escape(_rooted(root_rel), quote=True)
    label = html.escape(ui("search", lang), quote=True)
    return (
        f'<div class="site-search" role="search" aria-label="{label}">'
        f'<div id="search" data-root="{root}" data-lang="{lang}" data-label="{label}"'
        f' data-ui="{root}{BUNDLE}/pagefind-ui.js" data-ui-css="{root}{BUNDLE}/pagefind-ui.css">'
        f'<label class="visually-hidden" for="search-start">{label}</label>'
        f'<input type="search" id="search-start" class="search-start" aria-label="{label}" placeholder="{label}"'
        ' autocomplete="off">'
        "</div>"
        "</div>"
        f'<script src="{root}assets/search.js" defer></script>'
    )


# ---------------------------------------------------------------- the facets' words

# Each facet of `api/v1/facets.json`, and the field (or phrase) whose label names its group: the facets'
# own fields (labels.FACET_FIELDS), but the year, which is named by its phrase, not by the date's label.
FACET_FIELDS: dict[str, str] = {**LABELLED_FACETS, "year": "year"}
_FACET_PHRASES = ("count", "count_one", "range", "summing_up", "summing_up_one", "summing_up_none")
_FACET_UI = ("filters", "clear_filters")


def facet_words() -> dict[str, dict[str, Any]]:
    """The words static/facets.js writes, per language, from labels.py: each facet's title, the phrases
    of the count, range and summing-up lines (`{n}`, `{first}`, `{last}`, `{terms}` filled in the
    browser), and the filter box's own. facets.js holds a copy; a test keeps the two equal."""
    words: dict[str, dict[str, Any]] = {}
    for lang in LANGS:
        titles = {
            facet: ui("year", lang) if name == "year" else field_label(name, lang)
            for facet, name in FACET_FIELDS.items()
        }
        # each phrase with its placeholders kept as they are, for the browser to fill
        kept = {name: "{" + name + "}" for name in ("n", "first", "last", "terms")}
        phrases = {key: ui(key, lang, **kept) for key in (*_FACET_PHRASES, *_FACET_UI)}
        words[lang] = {"titles": titles, **phrases}
    return words
