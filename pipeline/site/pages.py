"""The reader's site's HTML pages, pure: `render(ctx)` gives every page as site-relative path -> bytes.

    files = render(ctx)     # {"ko/index.html": b"<!doctype html>...", "ko/cases/IL-0001/index.html": ...}

The layout (docs/site.md):

    index.html, cases/{id}/index.html           lead to Korean (meta refresh and a link: no JavaScript)
    {lang}/index.html, {lang}/page/{n}/index.html   the listing, PAGE_SIZE cases a page, newest first
    {lang}/cases/{id}/index.html                every field of a case, labelled in the page's language
    {lang}/{folder}/index.html                  a facet's values with their counts (folder: components, orgs, ...)
    {lang}/{folder}/{value}/index.html          the cases of one value, as compact rows (COMPACT_PAGE_SIZE a page)
    api/v1/facets.json                          every listed case's facet values, for the facet script
    api/v1/facet-counts.json                    each facet value's count and labels: the unfiltered facets

Every link is relative, so the site works under any base path and from `python -m http.server`; no page
asks for anything outside the site. A withdrawn or merged case keeps its pages (a published id always
resolves), which say so and lead to the survivor; it is left out of the listings and the facets.

Honest languages: a text missing in the page's language is shown in the other, marked with its `lang`
and a visible "not yet translated"; a Korean text accepted from the writer assist's model (the case's
`machine_translations`) is marked machine-translated, with a link to the English.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cache, cached_property, partial
from itertools import chain
from operator import attrgetter
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from pipeline import gate
from pipeline.case_view import Row, Value, case_rows
from pipeline.fieldpath import FieldPath
from pipeline.fields import kind_of
from pipeline.models import Case
from pipeline.render import escaped as _e
from pipeline.render import inline, inline_text, markdown, shown_url
from pipeline.site.context import EVERY, LICENCE, Card, Planned, SiteContext, case_group, everything
from pipeline.site.context import text_in as _in
from pipeline.site.labels import (
    CASE_FACTS,
    FACET_FIELDS,
    FACET_FOLDERS,
    FIELD_LABELS,
    LISTING_SECTIONS,
    Lang,
    field_label,
    ui,
)
from pipeline.site.search import search_box_html
from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "COMPACT_PAGE_SIZE",
    "FACETS",
    "PAGE_SIZE",
    "SUMMING_UP_TERMS",
    "Standing",
    "facet_counts_json",
    "facet_values",
    "groups",
    "listed",
    "render",
    "shown_url",
    "standing",
    "summing_up",
]

PAGE_SIZE = 20
# A facet value's own listing shows each case as a compact row (its id, title, org, year and components),
# a fifth of a full card: its pages hold this many, so that a term of 1,000 cases has 10 pages, not 50,
# each with its head, search box, filters and footer (about 3 KB) written once for 100 rows.
COMPACT_PAGE_SIZE = 100
# The summing-up line names the components that stand above the rest in the cases of a listing, at most
# this many: the most frequent, as many as are each more frequent than every component left unnamed (by
# count, most first, then by name). With the fourth as frequent as the third, the third is not named, nor
# the second if it ties with it too: when even the most frequent ties beyond this many, the line says the
# tie ("no component stands out: 6 appear in one case each"), never picking some of the tied by their
# name. facets.js counts the same way under its filter.
SUMMING_UP_TERMS = 3
FACETS: tuple[str, ...] = tuple(FACET_FIELDS)
_FACET_VOCABULARY: dict[str, Kind] = {
    "domain": "domains",
    "component": "components",
    "symptom": "symptoms",
    "contributing": "contributing",
    "root_cause": "root_causes",
    "severity": "severities",
}


@cache
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("pipeline.site", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # the package's templates do not change while it runs: no look at each file a page
        finalize=gate.finalize,  # every printed string through the gate: the pages' last line (pipeline.gate)
    )
    env.globals.update(ui=ui, label=_label, search_box=lambda lang, root: Markup(search_box_html(lang, root)))
    env.filters["shown_url"] = shown_url
    return env


def _label(path: str, lang: Lang) -> str:
    """A field's label; a field the labels do not know yet (a record-format change on its way) by its name."""
    return FIELD_LABELS[path][lang] if path in FIELD_LABELS else path.replace("_", " ")


# ---------------------------------------------------------------- what is listed, and its facets


def withdrawn(case: Case | Card) -> Any:
    return getattr(case, "withdrawn", None)


def merged_into(case: Case | Card) -> str | None:
    return getattr(case, "merged_into", None)


def listed(ctx: SiteContext) -> list[Card]:
    """The cases the listings and facets show: all but the withdrawn and the merged, newest first."""
    return [c for c in ctx.cases if not withdrawn(c) and not merged_into(c)]


def facet_values(case: Case | Card) -> dict[str, list[str]]:
    """Each facet's values of one case, each once: vocabulary terms by name, the org by its slug, the year
    as text. A card's are worked out once a version of it (every listing and facet asks; do not change
    what is returned)."""
    if not isinstance(case, Card):
        return _facet_values(case)
    key = (case.id, case.digest)
    found = _VALUES.get(key)
    if found is None:
        if len(_VALUES) > 200_000:  # a long-running server's builds: old versions go
            _VALUES.clear()
        found = _VALUES[key] = _facet_values(case)
    return found


_VALUES: dict[tuple[str, str], dict[str, list[str]]] = {}


def _facet_values(case: Case | Card) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for facet, name in FACET_FIELDS.items():
        value = getattr(case, name)
        if facet == "org":
            value = case.org_slug
        elif facet == "year":
            value = case.date[:4]
        values[facet] = list(dict.fromkeys(value)) if isinstance(value, list) else [value]
    return values


def _orgs(cases: Iterable[Card]) -> dict[str, str]:
    names: dict[str, str] = {}
    for case in cases:
        names.setdefault(case.org_slug, case.org)
    return names


def _value_label(facet: str, value: str, lang: Lang, orgs: dict[str, str]) -> str:
    if facet == "org":
        return orgs.get(value, value)
    if facet == "year":
        return value
    term = vocabulary().terms[_FACET_VOCABULARY[facet]].get(value)
    return term.label_in(lang) if term else value


class Standing(NamedTuple):
    """The components a listing's summing-up line is about: those that stand above the rest (`named`, most
    frequent first), or, when none does, how many tie at the top (`tied`) and in how many cases (`times`)."""

    named: tuple[str, ...]
    tied: int = 0
    times: int = 0


def summing_up(cases: Sequence[Card], lang: Lang, top: Standing | None = None) -> str:
    """The line under a listing: the components that stand above the rest in `cases` (see SUMMING_UP_TERMS;
    `top`: those components, when worked out already for the listing in another language)."""
    top = _top_components(cases) if top is None else top
    n = len(cases)
    if top.named:
        terms = ", ".join(_value_label("component", name, lang, {}) for name in top.named)
        return ui("summing_up_one" if n == 1 else "summing_up", lang, n=n, terms=terms)
    if top.tied:
        key = "summing_up_tie_one" if n == 1 else "summing_up_tie_once" if top.times == 1 else "summing_up_tie"
        return ui(key, lang, n=n, tied=top.tied, times=top.times)
    return ui("summing_up_none", lang, n=n)


def standing(counts: Mapping[str, int], most: int = SUMMING_UP_TERMS) -> Standing:
    """Of components' counts, those that stand above the rest: the first k (by count, then name), k at most
    `most` and as large as it can be while the k-th is more frequent than the next; else the tie at the top."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    for k in range(min(most, len(ranked)), 0, -1):
        if k == len(ranked) or ranked[k - 1][1] > ranked[k][1]:
            return Standing(tuple(name for name, _ in ranked[:k]))
    if not ranked:
        return Standing(())
    times = ranked[0][1]
    return Standing((), sum(1 for _, count in ranked if count == times), times)


def _top_components(cases: Sequence[Card]) -> Standing:
    # A card's components are each named once (Card.of); a Case's may not be.
    cards = set(map(type, cases)) <= {Card}  # then each term is named once: read off in C, not a call a case
    return standing(Counter(chain.from_iterable(map(_COMPONENTS if cards else _components, cases))))


def _components(case: Case | Card) -> list[str]:
    return case.components if type(case) is Card else list(dict.fromkeys(case.components))


_COMPONENTS = attrgetter("components")


def _facet_labels(ctx: SiteContext, cases: list[Card], by_value: dict[str, dict[str, list[Card]]]) -> dict[str, Any]:
    """Each language's label of every facet value the listed cases use."""
    orgs = _orgs(cases)
    return {
        lang: {facet: {v: _value_label(facet, v, lang, orgs) for v in sorted(by_value[facet])} for facet in FACETS}
        for lang in ctx.langs
    }


def facet_counts_json(ctx: SiteContext, by_value: dict[str, dict[str, list[Card]]] | None = None) -> bytes:
    """api/v1/facet-counts.json: per facet, per value, how many listed cases have it, and the values'
    labels in each language: what facets.js draws a listing without a filter from. Its size follows the
    number of distinct values, not of cases (facets.json, every case's values, is fetched only once a
    filter is chosen). `by_value`: the listed cases by facet value, when worked out already."""
    cases = listed(ctx)
    by_value = by_value if by_value is not None else _by_value(cases)
    data = {
        "facets": list(FACETS),
        "total": len(cases),
        "labels": _facet_labels(ctx, cases, by_value),
        "counts": {
            facet: {v: len(found) for v, found in sorted(by_value[facet].items()) if v not in (None, "")}
            for facet in FACETS
        },
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def facets_json(ctx: SiteContext, by_value: dict[str, dict[str, list[Card]]] | None = None) -> bytes:
    """api/v1/facets.json: the facets, their values' labels in each language, every listed case's values.

    A case's `title` has both languages, a missing one filled from the other (the pages mark it)."""
    cases = listed(ctx)
    labels = _facet_labels(ctx, cases, by_value if by_value is not None else _by_value(cases))
    head = json.dumps({"facets": list(FACETS), "labels": labels}, ensure_ascii=False, separators=(",", ":"))
    # Each card's row as it cached it (Card.facet_row), joined: the same bytes as one json.dumps.
    return f'{head[:-1]},"cases":[{",".join(card.facet_row for card in cases)}]}}'.encode()


# ---------------------------------------------------------------- texts in a language, honestly


@dataclass(frozen=True)
class _Marks:
    """What a text's marks need: the page's language, the machine-translated paths, the English page."""

    lang: Lang
    machine: frozenset[str]
    english: str  # the English case page, relative to the page the text is on
    linked: bool = True  # terms link to their pages; not on a withdrawn case's page, whose terms may have none


def _text(
    texts: dict[str, str] | None, path: str, marks: _Marks, rich: bool = False, note: bool = True, bare: bool = False
) -> Markup:
    """A text in the page's language, marked when it is in the other or machine-translated. `rich`: a
    narrative or an action's text, its Markdown rendered (pipeline.render); a title has its inline code and
    emphasis rendered only (`inline`: it sits in a link on the listings). `note`: the "not yet translated"
    mark beside the text; the case page says it once for a whole section instead (`_untranslated`).
    `bare`: a text that renders inline, in the page's language and unmarked, without the `<span>` around
    it, where its parent sets it as the span would (a title, a card's section, a case page's section:
    tens of thousands of spans on a site; facets.js writes its cards the same way)."""
    text, other = _in(texts, marks.lang)
    body = markdown(text) if rich else inline(text)
    # A rendered text of paragraphs or a list is a block (`div`); one line of it stays inline (`span`).
    tag = "div" if body.startswith(_BLOCKS) else "span"
    kind = "text md" if rich else "text"
    if other is not None:
        said = f' <small class="not-translated">{_e(ui("not_translated", marks.lang))}</small>' if note else ""
        return Markup(f'<{tag} class="{kind}" lang="{_e(other)}">{body}</{tag}>{said}')
    machine = f"{path}.{marks.lang}" in marks.machine and marks.english
    if bare and tag == "span" and not machine:
        return Markup(body)
    html = f'<{tag} class="{kind}">{body}</{tag}>'
    if machine:
        field = FieldPath.parse(path).root
        html += (
            f' <small class="machine-translated">{_e(ui("machine_translated", marks.lang))} · '
            f'<a href="{_e(marks.english)}#f-{_e(field)}" hreflang="en">{_e(ui("read_in_english", marks.lang))}</a>'
            "</small>"
        )
    return Markup(html)


_BLOCKS = ("<p>", "<ul>", "<ol>")


def _machine(case: Case | Card) -> frozenset[str]:
    return frozenset(getattr(case, "machine_translations", None) or ())


# ---------------------------------------------------------------- links between pages


def _up(key: str) -> str:
    """From the page at `key` up to the site's root: "ko/cases/IL-0001/index.html" -> "../../../"."""
    return "../" * key.count("/")


def _folder_of(key: str) -> str:
    return key.removesuffix("index.html")


def _other_lang(ctx: SiteContext, lang: Lang) -> Lang:
    return next((other for other in ctx.langs if other != lang), lang)


@dataclass(frozen=True)
class _Page:
    """What base.html needs of any page: where it is, its language and title, the other language, the
    licence its footer names; `rooted`: the site's root as an absolute path, for the 404 page, which a host
    serves at any depth, where no relative link would lead home."""

    key: str
    lang: Lang
    title: str
    other: Lang
    licence: tuple[str, str] = LICENCE
    rooted: str | None = None

    @cached_property  # asked for a dozen times a page
    def root(self) -> str:
        return self.rooted if self.rooted is not None else _up(self.key)

    @cached_property
    def lang_root(self) -> str:
        """From the page up to its language's folder ("ko/cases/IL-0001/index.html" -> "../../"; "" from the
        folder itself, whose link to itself is "./"): links into the page's own language are written from
        there, not from the site's root, a few bytes shorter each (ten thousand links a listing's pages)."""
        if self.rooted is not None or not self.key.startswith(f"{self.lang}/"):
            return f"{self.root}{self.lang}/"
        return _up(self.key.removeprefix(f"{self.lang}/"))

    @cached_property
    def other_href(self) -> str:
        if self.rooted is not None:  # the 404 page: the other language's listing
            return f"{self.root}{self.other}/"
        rest = _folder_of(self.key).removeprefix(f"{self.lang}/")
        return f"{self.root}{self.other}/{rest}"


# ---------------------------------------------------------------- the frame every page shares

# base.html's parts that differ between pages of one frame, as marks while the frame is made: control
# characters, which no record's text may hold (pipeline.gate refuses them) and escaping leaves as they are.
_MARKS = "\x1b\x1c\x1d\x1e"
_TITLE, _OTHER_HREF, _HEAD, _MAIN = (Markup(mark) for mark in _MARKS)
_FRAME_MARK = re.compile(f"([{_MARKS}])")


@dataclass(frozen=True)
class _FramePage:
    """What base.html reads of a page, with its title and the address of its other language as marks."""

    lang: Lang
    title: str
    root: str
    lang_root: str
    other: Lang
    other_href: str
    licence: tuple[str, str]


@cache
def _frame(lang: Lang, root: str, lang_root: str, other: Lang, licence: tuple[str, str], home: bool) -> list[str]:
    """base.html made once for the pages at one depth in one language: its literal parts, each part at an
    odd index a mark to fill (`_framed`). A page's frame is two thirds of its template's work, and the same
    on every case page of a language. `home`: the page's title is the site's (base.html then prints it
    once)."""
    title = ui("site_title", lang) if home else _TITLE
    page = _FramePage(lang, title, root, lang_root, other, _OTHER_HREF, licence)
    child = (
        f"{{% extends 'base.html' %}}{{% block head %}}{_HEAD}{{% endblock %}}{{% block main %}}{_MAIN}{{% endblock %}}"
    )
    return _FRAME_MARK.split(_env().from_string(child).render(page=page, lang=lang))


def _framed(name: str, page: _Page, values: dict[str, Any]) -> str:
    """The template `name` (which extends base.html) rendered for `page`: its blocks rendered, and set in
    the page's frame (`_frame`), with the same bytes as the template rendered whole."""
    template = _env().get_template(name)
    context = template.new_context({**values, "page": page, "lang": page.lang})
    blocks = template.blocks
    filled: dict[str, str] = {
        _TITLE: _printed(page.title),
        _OTHER_HREF: _printed(page.other_href),
        _HEAD: "".join(blocks["head"](context)) if "head" in blocks else "",
        _MAIN: "".join(blocks["main"](context)),
    }
    home = page.title == ui("site_title", page.lang)
    parts = _frame(page.lang, page.root, page.lang_root, page.other, page.licence, home)
    return "".join(filled[part] if n % 2 else part for n, part in enumerate(parts))


def _from_lang(page: _Page, href: str) -> str:
    """A site-relative folder ("ko/years/") as linked from the page: from its language's folder when in it."""
    inside = href.removeprefix(f"{page.lang}/")
    if inside == href:
        return page.root + href
    return f"{page.lang_root}{inside}" or "./"


def _terms_html(facet: str, names: Iterable[str], lang: Lang, lang_root: str, linked: bool = True) -> Markup:
    items = [
        f'<li><a href="{_e(lang_root)}{FACET_FOLDERS[facet]}/{_e(name)}/">'
        f"{_e(_value_label(facet, name, lang, {}))}</a></li>"
        if linked
        else f'<li><span data-term="{_e(name)}">{_e(_value_label(facet, name, lang, {}))}</span></li>'
        for name in names
    ]
    return Markup(f'<ul class="terms">{"".join(items)}</ul>') if items else Markup("")


_SECTION_FACETS = {"components": "component", "contributing": "contributing", "root_cause": "root_cause"}


def _section(case: Case | Card, name: str, marks: _Marks, lang_root: str) -> Markup:
    """One of the listing's sections of a case, as HTML; empty when the case has nothing there."""
    value = getattr(case, name)
    if name in _SECTION_FACETS:
        return _terms_html(_SECTION_FACETS[name], value if isinstance(value, list) else [value], marks.lang, lang_root)
    held = _held(name)
    if held and held[0] == "actions":
        items = [
            f"<li>{_text(action.text, f'{name}.{i}.text', marks, True, bare=True)}</li>"
            for i, action in enumerate(value)
        ]
        return Markup(f'<ul class="actions">{"".join(items)}</ul>') if items else Markup("")
    return _text(value, name, marks, True, bare=True) if value else Markup("")


# ---------------------------------------------------------------- the listings


_COMPACT_SECTIONS = ("components",)
# Where a card's links begin, until the card is placed on a page (`_Items`): a control character, which
# no record's text may hold (pipeline.gate refuses it) and escaping leaves as it is. Markup, so that the
# gate's `finalize` leaves it to be replaced.
_ROOT = Markup("\x1a")


class _Items:
    """Each case's listing item, rendered once a language and a depth (the pages at one depth share it)."""

    def __init__(self, ctx: SiteContext) -> None:
        self._ctx = ctx
        self._done: dict[tuple[str, Lang, str, bool], Markup] = {}
        self._tops: dict[int, tuple[Sequence[Card], Standing]] = {}

    def top(self, cases: Sequence[Card]) -> Standing:
        """A listing's most frequent components, counted once for both its languages (a listing's cases are
        one list, shared by its pages in each language)."""
        key = id(cases)
        if key not in self._tops:
            self._tops[key] = (cases, _top_components(cases))  # the list kept: its id stays its own
        return self._tops[key][1]

    def __call__(self, card: Card, lang: Lang, lang_root: str, full: bool) -> Markup:
        key = (card.id, lang, lang_root, full)
        done = self._done.get(key)
        if done is None:
            # Made once a language with `_ROOT` where the listing's language folder goes, then placed at
            # each depth: a case stands on listings at two or three depths (its language's first page, its
            # terms' pages), and making it is most of a listing page's time.
            anywhere = (card.id, lang, _ROOT, full)
            if anywhere not in self._done:
                self._done[anywhere] = self._made(card, lang, full)
            done = self._done[key] = Markup(self._done[anywhere].replace(_ROOT, lang_root))
        return done

    def _made(self, card: Card, lang: Lang, full: bool) -> Markup:
        # A compact row (a facet value's pages, 100 a page) is all of the card: no case file is read for
        # it, so a rebuild after one change does not read the hundred cases of each of its terms' pages.
        case: Case | Card = self._ctx.case(card.id) if full else card
        marks = _Marks(lang, _machine(case), f"{_ROOT}../en/cases/{case.id}/")
        sections = [
            (field_label(name, lang), html)
            for name in (LISTING_SECTIONS if full else _COMPACT_SECTIONS)
            # As the seed's listing: the vocabulary's sections (root cause, components, contributing
            # factors) under their headings even when empty; a text or a list of actions only when given.
            if (html := _section(case, name, marks, _ROOT)) or name in _SECTION_FACETS
        ]
        return Markup(_item_html(case, _text(case.title, "title", marks, bare=True), sections))


def _printed(value: object) -> str:
    """A value as a template prints it: through the gate (`finalize`), then escaped unless it is Markup."""
    return _e(gate.finalize(value))


def _item_html(case: Case | Card, title: Markup, sections: list[tuple[str, Markup]]) -> str:
    """One case of a listing, a line, its links from `_ROOT` (a listing's pages hold 22,000 of them on
    a site of 1,000 cases, and a line break between its blocks shows nothing). Written here rather than as
    a template: the template's call was most of a card's time, 4,000 cards a build of 1,000 cases;
    facets.js writes the same card in the browser."""
    case_id, year = _printed(case.id), _printed(case.date[:4])
    html = (
        f'<li class="case" id="{case_id}"><h2><a href="{_ROOT}cases/{case_id}/"><span class="case-id">{case_id}'
        f'</span> <span class="title">{_printed(title)}</span></a></h2><p class="meta"><a class="org" href="'
        f'{_ROOT}orgs/{_printed(case.org_slug)}/">{_printed(case.org)}</a> <a class="year" href="{_ROOT}years/'
        f'{year}/">{year}</a></p>'
    )
    if sections:
        shown = "".join(f"<dt>{_printed(name)}</dt><dd>{_printed(body)}</dd>" for name, body in sections)
        html += f'<dl class="sections">{shown}</dl>'
    return f"{html}</li>\n"


@dataclass(frozen=True)
class _Placed:
    """Where a listing stands and how it shows its cases: its folder ("ko/", "ko/components/nccl/"), its
    heading, the crumbs that lead to it, each case with its sections (`full`) or its components only, and
    the group its pages are made in."""

    folder: str
    heading: str
    crumbs: Sequence[tuple[str, str]] = ()
    full: bool = True
    group: str = EVERY
    term: tuple[str, str] | None = None  # a facet value's own listing: (facet, value), ticked by facets.js


def _listing(ctx: SiteContext, lang: Lang, cases: Sequence[Card], placed: _Placed, items: _Items) -> dict[str, Planned]:
    """A listing of `cases` under its folder: its first page and the rest. Each case with its sections
    (`full`), or, on a facet value's pages, with its components only: a value's pages hold a case each
    time it is listed there (ten or more times over), the listing once.

    A page's inputs are what its bytes are made of besides the code: where it is, its heading, the
    listing's size and summing-up line, its cases' digests (a site of 10,000 cases has 12,000 listing pages:
    their inputs are worked out on each build, their bytes only for those whose inputs changed)."""
    pages: dict[str, Planned] = {}
    # The summing-up line is of the listing's cases (the listing or the filter), the same on each of its
    # pages: a reader of page 3 learns about the whole listing, as facets.js says it for a filter.
    summary = summing_up(cases, lang, items.top(cases))
    folder = placed.folder
    listing = _ListingOf(
        ctx, lang, folder, len(cases), placed.heading, summary, tuple(placed.crumbs), placed.full, items, placed.term
    )
    common = f"{_code_mark()}\x00{listing.common()}"
    size = listing.page_size
    for number in range(1, listing.total_pages + 1):
        shown = cases[(number - 1) * size : number * size]
        key = f"{folder}index.html" if number == 1 else f"{folder}page/{number}/index.html"
        inputs = "\x00".join([common, str(number), *map(_digest, shown)])
        pages[key] = Planned(inputs, partial(listing.page, number, shown), placed.group)
    return pages


_digest = attrgetter("digest")


@dataclass(frozen=True)
class _ListingOf:
    """What every page of one listing shares."""

    ctx: SiteContext
    lang: Lang
    folder: str
    size: int
    heading: str
    summary: str
    crumbs: tuple[tuple[str, str], ...]
    full: bool
    items: _Items
    term: tuple[str, str] | None = None

    @property
    def page_size(self) -> int:
        """Cases a page: PAGE_SIZE full cards, or COMPACT_PAGE_SIZE compact rows (a facet value's pages)."""
        return PAGE_SIZE if self.full else COMPACT_PAGE_SIZE

    @property
    def total_pages(self) -> int:
        return max(1, -(-self.size // self.page_size))

    def common(self) -> str:
        """What every page of the listing is made of (its inputs but its number and cases)."""
        note = self.ctx.note.get(self.lang, "")
        placed = (self.folder, self.size, self.heading, self.summary, self.crumbs, self.full, self.term)
        return repr((self.lang, *placed, note, self.ctx.licence))

    def page(self, number: int, shown: Sequence[Card]) -> bytes:
        lang, folder, total_pages = self.lang, self.folder, self.total_pages
        key = f"{folder}index.html" if number == 1 else f"{folder}page/{number}/index.html"
        title = self.heading if number == 1 else f"{self.heading} ({ui('page_n', lang, n=number)})"
        page = _Page(key, lang, title, _other_lang(self.ctx, lang), self.ctx.licence)
        to_folder = page.root + folder
        first = (number - 1) * self.page_size + 1
        lang_root = page.lang_root
        count = ui("count_one" if self.size == 1 else "count", lang, n=self.size)
        values: dict[str, Any] = {
            "page": page,
            "lang": lang,
            "heading": self.heading,
            "crumbs": [(_from_lang(page, href), text) for href, text in self.crumbs],
            "count": count,
            "range": ui("range", lang, n=self.size, first=first, last=first + len(shown) - 1) if shown else "",
            "summing_up": self.summary,
            "note": self.ctx.note.get(lang, ""),
            "previous": (to_folder if number == 2 else f"{to_folder}page/{number - 1}/") if number > 1 else None,
            "next": f"{to_folder}page/{number + 1}/" if number < total_pages else None,
            "lang_root": lang_root,
            "facet_folders": [(FACET_FOLDERS[f], _facet_name(f, lang)) for f in FACETS],
            "term": self.term,
        }
        values["items"] = Markup("".join([self.items(card, lang, lang_root, self.full) for card in shown]))
        return _framed("listing.html", page, values).encode()


def _facet_name(facet: str, lang: Lang) -> str:
    if facet == "year":
        return ui("year", lang)
    return _label(FACET_FIELDS[facet], lang)


def _by_value(cases: Sequence[Card]) -> dict[str, dict[str, list[Card]]]:
    """Per facet, per value, its cases (in the order given)."""
    by_value: dict[str, dict[str, list[Card]]] = {facet: {} for facet in FACETS}
    if not all(type(case) is Card for case in cases):
        for case in cases:
            for facet, names in facet_values(case).items():
                for value in names:
                    by_value[facet].setdefault(value, []).append(case)
        return by_value
    # Cards, read off facet by facet: the same values as `facet_values` (a card names each term once),
    # without making a dict of lists for each of 10,000 cards on each build.
    for facet, name in FACET_FIELDS.items():
        found = by_value[facet]
        if facet in ("org", "year"):
            value_of = attrgetter("org_slug") if facet == "org" else _year
            for card in cases:
                found.setdefault(value_of(card), []).append(card)
            continue
        get = attrgetter(name)
        for card in cases:
            values = get(card)
            for value in values if isinstance(values, list) else (values,):
                found.setdefault(value, []).append(card)
    return by_value


def _year(card: Card) -> str:
    return card.date[:4]


def _facet_pages(
    ctx: SiteContext,
    lang: Lang,
    items: _Items,
    by_value: dict[str, dict[str, list[Card]]],
    wanted: Callable[[str], bool],
) -> dict[str, Planned]:
    """Per facet: an index of its values with their counts, and one listing a value (those `wanted`);
    `by_value`: the listed cases of each facet's values (`_by_value`)."""
    pages: dict[str, Planned] = {}
    orgs = _orgs(card for found in by_value["org"].values() for card in found[:1])
    template = _env().get_template("facet.html")
    for facet in FACETS:
        name = _facet_name(facet, lang)
        folder = f"{lang}/{FACET_FOLDERS[facet]}/"
        ordered = sorted(by_value[facet].items(), key=lambda item: (-len(item[1]), item[0]))
        if facet == "year":
            ordered = sorted(by_value[facet].items(), reverse=True)
        key = f"{folder}index.html"
        page = _Page(key, lang, name, _other_lang(ctx, lang), ctx.licence)
        values = [(value, _value_label(facet, value, lang, orgs), len(found)) for value, found in ordered]
        made = template.render(page=page, lang=lang, heading=name, values=values, listing=page.lang_root)
        pages[key] = _ready(made.encode())
        crumbs = [(f"{lang}/", ui("listing", lang)), (folder, name)]
        for value, found in ordered:
            if not wanted(group := _facet_group(facet, value)):
                continue
            heading = ui("cases_of", lang, label=name, value=_value_label(facet, value, lang, orgs))
            placed = _Placed(f"{folder}{value}/", heading, crumbs, full=False, group=group, term=(facet, value))
            pages.update(_listing(ctx, lang, found, placed, items))
    return pages


# ---------------------------------------------------------------- a case's page


def _plain(value: Value) -> Markup:
    if value.href and value.href.startswith("/cases/"):
        return Markup(f'<a href="../{_e(value.href.removeprefix("/cases/"))}/">{_e(value.text)}</a>')
    if value.href:
        text = shown_url(value.text) if value.text == value.href else value.text
        return Markup(f'<a href="{_e(value.href)}">{_e(text)}</a>')
    if value.machine:
        return Markup(f'<time datetime="{_e(value.machine)}">{_e(value.text)}</time>')
    return escape(value.text)


def _list(items: Sequence[Markup]) -> Markup:
    if not items:
        return Markup('<span class="none">—</span>')
    if len(items) == 1:
        return items[0]
    return Markup(f"<ul>{''.join(f'<li>{i}</li>' for i in items)}</ul>")


@cache
def _held(name: str) -> tuple[str, Kind | None] | None:
    """How a field of a case is held (pipeline.fields.kind_of), asked once a field."""
    info = Case.model_fields.get(name)
    return kind_of(info) if info is not None else None


def _row_html(case: Case, row: Row, marks: _Marks, lang_root: str) -> Markup:
    name = FieldPath.parse(row.path).root
    held = _held(name)
    if row.kind == "narrative":
        texts = getattr(case, name)
        return _text(texts, name, marks, name != "title") if texts else _list([])
    if row.kind == "actions":
        actions = getattr(case, name)
        return _list([_text(a.text, f"{name}.{i}.text", marks, True) for i, a in enumerate(actions)])
    if row.kind in ("choice", "multiple") and held is not None and "." not in row.path:
        _, vocab = held
        facet = next((f for f, k in _FACET_VOCABULARY.items() if k == vocab), None)
        names = [v.term or v.text for item in row.items for v in item]
        if facet:
            return _terms_html(facet, names, marks.lang, lang_root, marks.linked) or _list([])
        terms = vocabulary().terms[vocab] if vocab else {}
        return _list([escape(terms[n].label_in(marks.lang) if n in terms else n) for n in names])
    if row.path.startswith("timeline.") and isinstance(value := getattr(case.timeline, row.path[9:], None), timedelta):
        return Markup(f'<time datetime="{_e(_iso_duration(value))}">{_e(_duration_in(value, marks.lang))}</time>')
    if row.path.startswith("impact."):
        said = str(getattr(case.impact, row.path[7:], "") or "")
        return _impact_part(said, marks.lang) if said else _list([])
    return _list([Markup(" ").join(_plain(v) for v in item) for item in row.items])


_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _sentence(said: str) -> str:
    """An operator's words ended as a sentence, so that the banner's next sentence does not run on."""
    said = said.strip()
    return said if said.endswith((".", "!", "?", "。")) else f"{said}."


def _words_lang(said: str) -> Lang:
    """The language of an operator's words, which no record tags: Korean when they hold Hangul."""
    return "ko" if _HANGUL.search(said) else "en"


def _impact_part(said: str, lang: Lang) -> Markup:
    """One part of the impact (scope, users, region): free text with no language of its own in the record.
    "unknown" is shown in the page's words; text without Hangul on a Korean page is English, marked so.
    Its Markdown is rendered, as a narrative's is."""
    if said == "unknown":
        return Markup(f'<span class="unknown">{_e(ui("unknown", lang))}</span>')
    body = markdown(said)
    tag = "div" if body.startswith(_BLOCKS) else "span"
    if lang == "ko" and not _HANGUL.search(said):
        note = ui("not_translated", lang)
        return Markup(
            f'<{tag} class="text md" lang="en">{body}</{tag}> <small class="not-translated">{_e(note)}</small>'
        )
    return Markup(f'<{tag} class="text md">{body}</{tag}>') if tag == "div" else body


def _duration_in(value: timedelta, lang: Lang) -> str:
    """A duration in the page's words: "1 hour 31 minutes", "1시간 31분"."""
    minutes, seconds = divmod(int(value.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if lang == "ko":
        said = [f"{n}{unit}" for n, unit in ((days, "일"), (hours, "시간"), (minutes, "분")) if n]
        return " ".join(said) or f"{seconds}초"
    parts = ((days, "day"), (hours, "hour"), (minutes, "minute"))
    said = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n]
    return " ".join(said) or f"{seconds} seconds"


def _iso_duration(value: timedelta) -> str:
    minutes, seconds = divmod(int(value.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    clock = "".join(f"{n}{u}" for n, u in ((hours, "H"), (minutes, "M"), (seconds, "S")) if n)
    return "P" + (f"{days}D" if days else "") + (f"T{clock}" if clock else "" if days else "T0S")


def _sources(ctx: SiteContext, case: Case, lang: Lang) -> list[dict[str, Any]]:
    """Each source: its archived copy first, the live link beside it, its state from the last refresh."""
    kinds = vocabulary().terms["source_kinds"]
    out = []
    for source in case.sources:
        state = ctx.links.get(source.url)
        archived = source.archived or (state.archived if state else None)
        if state is None:
            said = ui("link_unchecked", lang)
        else:
            said = ui("link_state", lang, date=f"{state.checked_at:%Y-%m-%d}", state=ui(f"link_{state.status}", lang))
        out.append(
            {
                "url": source.url,
                "archived": archived,
                "kind": kinds[source.kind].label_in(lang) if source.kind in kinds else source.kind,
                "state": said,
                "status": state.status.value if state else "unchecked",
                "moved_to": state.moved_to if state else None,
            }
        )
    return out


def _bib(value: str) -> str:
    return re.sub(r"([{}\\])", r"\\\1", value)


def _citation(ctx: SiteContext, case: Case, lang: Lang) -> tuple[str, str]:
    """The case's citation, in text and as BibTeX. The retrieval date written is the day the case was
    last changed (`updated_at`), so an unchanged case's page stays byte for byte the same across
    builds; `assets/cite.js` puts the reader's own date in its place when the page is read."""
    title = inline_text(_in(case.title, lang)[0])
    url = ctx.case_url(case.id)
    retrieved = f"{case.updated_at:%Y-%m-%d}"
    site = ui("site_title", lang)
    text = f"{case.org}. “{title}”. {case.id}, {site}, {case.date}. {url} ({ui('retrieved', lang)} {retrieved})"
    bibtex = "\n".join(
        [
            f"@misc{{incidentlib-{case.id},",
            f"  title = {{{_bib(case.id)}: {_bib(title)}}},",
            f"  author = {{{{{_bib(case.org)}}}}},",
            f"  howpublished = {{{_bib(site)}}},",
            f"  year = {{{case.date[:4]}}},",
            f"  url = {{{url}}},",
            f"  urldate = {{{retrieved}}},",
            "}",
        ]
    )
    return text, bibtex


def _incoming(ctx: SiteContext) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Who names each case: as related (`related`) and as what it recurs (`recurrence_of`)."""
    related: dict[str, list[str]] = {}
    recurrences: dict[str, list[str]] = {}
    for case in ctx.cases:
        for other in case.related:
            related.setdefault(other, []).append(case.id)
        if case.recurrence_of:
            recurrences.setdefault(case.recurrence_of, []).append(case.id)
    return related, recurrences


# The case page's text sections: the listing's, in its order (LISTING_SECTIONS, the one list), but for the
# vocabulary's (root cause, components, contributing factors), which the page gives among its facts.
_CASE_SECTIONS = tuple(name for name in LISTING_SECTIONS if name not in _SECTION_FACETS)


def _untranslated(case: Case, name: str, lang: Lang) -> bool:
    """Whether any text of a section (a narrative, or each action of a list) is shown in the other language."""
    value = getattr(case, name)
    texts = [action.text for action in value] if isinstance(value, list) else [value]
    return any(_in(texts_of, lang)[1] is not None for texts_of in texts if texts_of)


def _note(case: Case, name: str, lang: Lang) -> str:
    """The section's one "not yet translated" mark, when any of its texts is in the other language."""
    if not _untranslated(case, name, lang):
        return ""
    return f' <small class="not-translated">{_e(ui("not_translated", lang))}</small>'


def _narrative_html(case: Case, marks: _Marks) -> Markup:
    """The summary as the page's lead, then each text section the case has, in the listing's order, under
    its heading; one "not yet translated" mark a section, however many of its texts lack the language."""
    out: list[str] = []
    if case.summary:
        lead = _text(case.summary, "summary", marks, True, note=False)
        out.append(
            f'<div class="lead" id="f-summary" data-field="summary">{lead}{_note(case, "summary", marks.lang)}</div>\n'
        )
    for name in _CASE_SECTIONS:
        value = getattr(case, name)
        if not value:
            continue
        if isinstance(value, list):  # a list of actions
            items = "".join(
                f"<li>{_text(action.text, f'{name}.{i}.text', marks, True, note=False, bare=True)}</li>"
                for i, action in enumerate(value)
            )
            body = f'<ul class="actions">{items}</ul>'
        else:
            body = str(_text(value, name, marks, True, note=False, bare=True))
        out.append(
            f'<section id="f-{name}" data-field="{name}">\n<h2>{_e(field_label(name, marks.lang))}'
            f"{_note(case, name, marks.lang)}</h2>\n{body}\n</section>\n"
        )
    return Markup("".join(out))


def _shown(case: Case, row: Row) -> bool:
    """Whether a fact is worth its line: not empty, and an impact's part not merely "unknown"."""
    if row.path.startswith("impact."):
        return str(getattr(case.impact, row.path[7:], "") or "") not in ("", "unknown")
    return any(value.text for item in row.items for value in item)


def _case_page(
    ctx: SiteContext, case: Case, lang: Lang, incoming: tuple[list[str], list[str]], rows: list[Row]
) -> bytes:
    key = f"{lang}/cases/{case.id}/index.html"
    page = _Page(key, lang, f"{inline_text(_in(case.title, lang)[0])} · {case.id}", _other_lang(ctx, lang), ctx.licence)
    lang_root = page.lang_root
    marks = _Marks(
        lang, _machine(case), "" if lang == "en" else f"{page.root}en/cases/{case.id}/", linked=case.withdrawn is None
    )
    text, bibtex = _citation(ctx, case, lang)
    gone = withdrawn(case)
    survivor = merged_into(case)
    return _framed(
        "case.html",
        page,
        dict(
            case=case,
            title=_text(case.title, "title", marks, bare=True),
            severity=_value_label("severity", case.severity, lang, {}),
            narrative_html=_narrative_html(case, marks),
            facts_html=_facts_html(
                case, rows, _sources(ctx, case, lang), incoming, marks, lang_root, ctx.case_url(case.id)
            ),
            citation=text,
            retrieved=f"{case.updated_at:%Y-%m-%d}",
            bibtex=bibtex,
            json_href=f"{page.root}api/v1/cases/{case.id}.json",
            withdrawn=f"{gone:%Y-%m-%d}" if gone else None,
            # The reason in the banner, in the words of whoever withdrew it: its language told by its script.
            reason=_sentence(case.withdrawn_reason) if gone and case.withdrawn_reason else None,
            reason_lang=_words_lang(case.withdrawn_reason or ""),
            survivor=survivor,
            lang_root=lang_root,
        ),
    ).encode()


def _facts_html(
    case: Case,
    rows: list[Row],
    sources: list[dict[str, Any]],
    incoming: tuple[list[str], list[str]],
    marks: _Marks,
    lang_root: str,
    address: str,
) -> Markup:
    """The case page's facts (CASE_FACTS, in its order), `<dt>` and `<dd>` a fact the case has: an empty one
    is left out (the sources as a list of their own; `url` the site's own address for the case; after
    `related` and `recurrence_of`, the cases naming this one). Written here rather than in case.html: a
    template's loop over 40 fields was half the time of a build of 10,000 cases."""
    out: list[str] = []
    related_from, recurrences = incoming
    by_path = {row.path: row for row in rows}
    lang = marks.lang
    for path in CASE_FACTS:
        row = by_path.get(path)
        if path == "url":
            # The permanent address is the site's, never what the file says: a hand-edited `url` on another
            # host (a fault of `validate`) is not shown as this case's address.
            link = f'<a href="{_e(address)}">{_e(shown_url(address))}</a>'
            out.append(f'<dt id="f-url">{_e(_label(path, lang))}</dt>\n<dd data-field="url">{link}</dd>\n')
        elif path == "sources" and sources:
            out.append(f'<dt id="f-sources">{_e(_label(path, lang))}</dt>\n<dd>\n<ul class="sources">\n')
            out += [_source_html(source, lang) for source in sources]
            out.append("</ul>\n</dd>\n")
        elif row is not None and path != "sources" and _shown(case, row):
            anchor = path.replace(".", "-")
            html = _row_html(case, row, marks, lang_root)
            out.append(
                f'<dt id="f-{_e(anchor)}">{_e(_label(path, lang))}</dt>\n<dd data-field="{_e(path)}">{html}</dd>\n'
            )
        if path == "related" and related_from:
            out.append(_naming_html("related-from", ui("related_from", lang), related_from))
        if path == "recurrence_of" and recurrences:
            out.append(_naming_html("recurrences", ui("recurrences", lang), recurrences))
    return Markup("".join(out))


def _source_html(source: dict[str, Any], lang: Lang) -> str:
    archived = (
        f'<a class="archived" href="{_e(source["archived"])}">{_e(ui("archived_copy", lang))}</a> · '
        if source["archived"]
        else ""
    )
    moved = source["moved_to"]
    moved = f' → <a href="{_e(moved)}">{_e(shown_url(moved))}</a>' if moved else ""
    return (
        f'<li class="source" data-status="{_e(source["status"])}">\n{archived}'
        f'<a class="live" href="{_e(source["url"])}">{_e(ui("live_link", lang))}</a> '
        f'<span class="url">{_e(shown_url(source["url"]))}</span>\n<span class="kind">({_e(source["kind"])})</span>\n'
        f'<small class="link-state">{_e(source["state"])}{moved}</small>\n</li>\n'
    )


def _naming_html(name: str, label: str, ids: list[str]) -> str:
    links = "".join(f'<li><a href="../{_e(other)}/">{_e(other)}</a></li>' for other in ids)
    return f'<dt id="f-{name}">{_e(label)}</dt>\n<dd><ul class="{name}">{links}</ul></dd>\n'


def _redirect(key: str, to: str, lang: Lang) -> bytes:
    """A page that leads to `to` (relative to it): a meta refresh and a link, no JavaScript."""
    return _env().get_template("redirect.html").render(lang=lang, to=to, text=ui("goes_to", lang)).encode()


# ---------------------------------------------------------------- the site's own pages: sources, 404


@dataclass(frozen=True)
class _Site:
    """One source site (a host) on the sources page: its cases, its sources (URL, case id, licence where the
    registry says it), the licences known of them and whether some source's licence is not recorded (so
    that one source's licence is never said of the whole site)."""

    host: str
    cases: int
    sources: list[tuple[str, str, str | None]]
    licences: list[str]
    unrecorded: bool


def _source_sites(ctx: SiteContext) -> list[_Site]:
    """Every site the listed cases quote, most cases first, then by name; each source of each case once."""
    found: dict[str, list[tuple[str, str, str | None]]] = {}
    for card in listed(ctx):
        for url in dict.fromkeys(card.sources):
            host = (urlsplit(url).hostname or url).removeprefix("www.")
            found.setdefault(host, []).append((url, card.id, ctx.licences.get(url)))
    sites = [
        _Site(
            host,
            len({case_id for _, case_id, _ in sources}),
            sorted(sources),
            sorted({licence for _, _, licence in sources if licence}),
            any(licence is None for _, _, licence in sources),
        )
        for host, sources in found.items()
    ]
    return sorted(sites, key=lambda site: (-site.cases, site.host))


def sources_page(ctx: SiteContext, lang: Lang, sites: list[_Site]) -> bytes:
    """{lang}/sources/index.html: what the library is, the licence of its texts, and every site its listed
    cases quote, with the count of its cases, each source with its licence where known, an attribution line."""
    key = f"{lang}/sources/index.html"
    page = _Page(key, lang, ui("about_title", lang), _other_lang(ctx, lang), ctx.licence)
    listed_n = len(listed(ctx))
    return (
        _env()
        .get_template("sources.html")
        .render(
            page=page,
            lang=lang,
            lang_root=page.lang_root,
            sites=sites,
            cases=ui("count_one" if listed_n == 1 else "count", lang, n=listed_n),
            site_count=len(sites),
        )
        .encode()
    )


def _sources_made(ctx: SiteContext, lang: Lang, sites: Callable[[], list[_Site]]) -> bytes:
    return sources_page(ctx, lang, sites())


def not_found_page(ctx: SiteContext) -> bytes:
    """404.html at the site's root, in both languages: what most static hosts serve for a missing page, at
    that page's address, so its links stand on the site's own path (of the public base), not relative."""
    path = urlsplit(ctx.base_url).path.rstrip("/")
    lang = ctx.langs[0]
    other = _other_lang(ctx, lang)
    page = _Page("404.html", lang, ui("not_found", lang), other, ctx.licence, rooted=f"{path}/")
    return _env().get_template("404.html").render(page=page, lang=lang, other=other, langs=ctx.langs).encode()


# ---------------------------------------------------------------- the whole site


def _ready(data: bytes) -> Planned:
    return Planned(None, lambda: data)


def case_pages(ctx: SiteContext, wanted: Callable[[str], bool] = everything) -> dict[str, Planned]:
    """Each case page and its redirect (those `wanted`), each with its inputs (what it is made of) and how
    to make it.

    A case page depends on its case, the cases naming it, its sources' link states, the site's base, the
    code that renders it (`_code_mark`)."""
    related, recurrences = _incoming(ctx)
    made: dict[str, Planned] = {}
    default = ctx.langs[0]
    shared = f"{_code_mark()}\x00{ctx.base_url}\x00{ctx.licence!r}"
    nobody: tuple[list[str], list[str]] = ([], [])
    for card in ctx.cases:
        if not wanted(group := case_group(card.id)):
            continue
        incoming = (
            (sorted(related.get(card.id, ())), sorted(recurrences.get(card.id, ())))
            if card.id in related or card.id in recurrences
            else nobody
        )
        states = "\x00".join(ctx.links[url].model_dump_json() for url in card.sources if url in ctx.links)
        text = f"{shared}\x00{card.digest}\x00{incoming!r}\x00{states}"
        pages = _CasePages(ctx, card.id, incoming)
        for lang in ctx.langs:
            made[f"{lang}/cases/{card.id}/index.html"] = Planned(f"{lang}\x00{text}", partial(pages.page, lang), group)
        to = f"../../{default}/cases/{card.id}/"
        made[f"cases/{card.id}/index.html"] = Planned(f"{shared}\x00{to}", partial(_redirect, "", to, default), group)
    return made


_FACT_PATHS = frozenset(CASE_FACTS)


class _CasePages:
    """What a case's pages are made from; the case read, and its rows worked out, once for its languages."""

    __slots__ = ("_case", "_rows", "case_id", "ctx", "incoming")

    def __init__(self, ctx: SiteContext, case_id: str, incoming: tuple[list[str], list[str]]):
        self.ctx, self.case_id, self.incoming = ctx, case_id, incoming
        self._case: Case | None = None
        self._rows: list[Row] | None = None

    def page(self, lang: Lang) -> bytes:
        if self._case is None:
            self._case = self.ctx.case(self.case_id)
            self._rows = case_rows(self._case, _FACT_PATHS)
        assert self._rows is not None
        return _case_page(self.ctx, self._case, lang, self.incoming, self._rows)


@cache
def _code_mark() -> str:
    """What the pages' own code is: the templates' text and the modules that write into the pages (this
    one, the labels, the search box's), so a change to any of them is a new build."""
    from importlib import resources

    digest = hashlib.sha256()
    for module in ("pages.py", "labels.py", "search.py", "context.py"):
        digest.update(resources.files("pipeline.site").joinpath(module).read_bytes())
    digest.update(resources.files("pipeline").joinpath("render.py").read_bytes())  # the texts' Markdown
    digest.update(resources.files("pipeline").joinpath("vocabulary.yaml").read_bytes())  # the terms' labels
    for name in sorted(p.name for p in resources.files("pipeline.site").joinpath("templates").iterdir()):
        digest.update(resources.files("pipeline.site").joinpath("templates", name).read_bytes())
    return digest.hexdigest()


def _facet_group(facet: str, value: str) -> str:
    return f"facet:{facet}:{value}"


def groups(ctx: SiteContext, cards: Iterable[Card]) -> set[str]:
    """The groups of pages that show any of `cards` (the old and new versions of the cases that changed):
    their own pages; the pages of the cases they name (which list them as naming them); the listings of
    their facets' values."""
    found: set[str] = set()
    for card in cards:
        found.add(case_group(card.id))
        found.update(case_group(other) for other in (*card.related, card.recurrence_of) if other)
        found.update(_facet_group(facet, value) for facet, values in facet_values(card).items() for value in values)
    return found


def plan(ctx: SiteContext, wanted: Callable[[str], bool] = everything) -> dict[str, Planned]:
    """Every page of the site (of the groups `wanted`, and every page of `EVERY`), each with its inputs and
    how to make it (`render` makes them all)."""
    cases = listed(ctx)
    items = _Items(ctx)
    by_value = _by_value(cases)
    planned: dict[str, Planned] = {}
    default = ctx.langs[0]
    planned["index.html"] = _ready(_redirect("index.html", f"{default}/", default))
    for lang in ctx.langs:
        planned.update(_listing(ctx, lang, cases, _Placed(f"{lang}/", ui("site_title", lang)), items))
        planned.update(_facet_pages(ctx, lang, items, by_value, wanted))
    # The sources page lists every source of every listed case (a large page for a large library): made
    # only when they, their licences or the site's languages and licence change, the sites worked out then.
    sites = cache(partial(_source_sites, ctx))
    quoted = "\x00".join(f"{card.id} {' '.join(card.sources)}" for card in cases)
    about = f"{_code_mark()}\x00{ctx.langs!r}\x00{ctx.licence!r}\x00{sorted(ctx.licences.items())!r}\x00{quoted}"
    for lang in ctx.langs:
        planned[f"{lang}/sources/index.html"] = Planned(f"{lang}\x00{about}", partial(_sources_made, ctx, lang, sites))
    planned["404.html"] = Planned(None, partial(not_found_page, ctx))
    planned["api/v1/facets.json"] = Planned(None, partial(facets_json, ctx, by_value))
    planned["api/v1/facet-counts.json"] = Planned(None, partial(facet_counts_json, ctx, by_value))
    planned.update(case_pages(ctx, wanted))
    return planned


def render(ctx: SiteContext) -> dict[str, bytes]:
    """Every page of the site, by site-relative path."""
    return {key: planned.make() for key, planned in plan(ctx).items()}
