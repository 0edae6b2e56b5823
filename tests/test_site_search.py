"""The site's search and facets, on a small site written here by hand (the contract's layout, not the
pages' renderer): the search index made by `index_files` from `search_doc`'s documents of real cases, a
loopback `http.server` serving the site under a base path (/lib/app/), and Debian's chromium searching it
and filtering its listing. The index's own rules (documents, determinism, the update that equals a build
from scratch, small shards) are checked without a browser.

axe-core's `axe.min.js` comes from npm's `axe-core`, installed once into a cache folder
(~/.cache/incidentlib/axe-core, or $INCIDENTLIB_AXE_CACHE) with `npm install` when it is not there.
"""

from __future__ import annotations

import functools
import html
import json
import os
import random
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import CASE_FIXTURE, serving
from playwright.sync_api import Browser, Page, Route, expect

from pipeline.models import Case
from pipeline.render import browser_rules
from pipeline.site import search
from pipeline.site.labels import ui
from pipeline.site.search import (
    PARTICLES,
    SearchDoc,
    Stems,
    bookkeeping,
    facet_words,
    index_files,
    search_box_html,
    search_doc,
    search_docs,
    search_words,
    strip_particles,
    update_index,
)
from pipeline.site.tree import SiteTree
from pipeline.store import Store
from pipeline.vocabulary import vocabulary

pytestmark = pytest.mark.runs_long(45)  # seconds in all: such modules start first (conftest.py)

STATIC = Path(search.__file__).parent / "static"
TIMEOUT_MS = 15_000
BASE = "/lib/app/"
AXE_VERSION = "4.14.1"

# ---------------------------------------------------------------- a small site, by hand

CASES: list[dict[str, Any]] = [
    {
        "id": "IL-0003",
        "title": {"ko": "서울은 하루 동안 학습이 멈췄다", "en": "Seoul lost its collectives for a day"},
        "summary": {
            "ko": "서울은 NCCL 통신이 끊겨 학습 작업이 멈췄다.",
            "en": "NCCL timeouts stalled the training runs in the Seoul region.",
        },
        "trigger": {"ko": "스위치 펌웨어를 갱신하자 연결이 끊겼다.", "en": "A firmware update dropped the links."},
        "org": "Acme",
        "year": 2022,
        "domain": ["training"],
        "component": ["nccl", "pytorch"],
        "symptom": ["hang"],
        "contributing": ["no-alerting"],
        "root_cause": "software",
        "severity": "major",
    },
    {
        "id": "IL-0002",
        "title": {"ko": "부산 데이터센터의 전원이 나갔다", "en": "The Busan data centre lost power"},
        "summary": {
            "ko": "전원 장치가 고장 나 클러스터가 꺼졌다.",
            "en": "A power unit failed and the cluster went down.",
        },
        # no Korean text: the Korean page shows the English one, and its search finds it
        "trigger": {"en": "Generators were never drilled."},
        "org": "Beta",
        "year": 2022,
        "domain": ["infrastructure"],
        "component": ["power"],
        "symptom": ["outage"],
        "contributing": ["single-point"],
        "root_cause": "hardware",
        "severity": "critical",
    },
    {
        "id": "IL-0001",
        "title": {"ko": "체크포인트 저장이 느려졌다", "en": "Checkpoints became slow"},
        "summary": {"ko": "저장소가 느려 NCCL 타임아웃이 났다.", "en": "Slow storage led to NCCL timeouts."},
        "trigger": {"ko": "메타데이터 서버가 느려졌다.", "en": "The metadata server slowed down."},
        "org": "Acme",
        "year": 2021,
        "domain": ["training"],
        "component": ["nccl", "storage"],
        "symptom": ["slowdown"],
        "contributing": ["no-alerting"],
        "root_cause": "software",
        "severity": "minor",
    },
]
LABELS = {
    "ko": {"component": {"nccl": "NCCL", "pytorch": "PyTorch", "power": "전원", "storage": "저장소"}},
    "en": {"component": {"nccl": "NCCL", "pytorch": "PyTorch", "power": "Power", "storage": "Storage"}},
}
FACETS = ["domain", "component", "symptom", "contributing", "root_cause", "severity", "org", "year"]
ONLY_ON_THE_LISTING = "목록전용낱말"
FIXTURE: dict[str, Any] = json.loads(CASE_FIXTURE.read_text(encoding="utf-8"))


def case_model(case: dict[str, Any], **changes: Any) -> Case:
    """The suite's case with this one's id, texts and org, and none of the fixture's other texts."""
    data = {
        **FIXTURE,
        "id": case["id"],
        "title": case["title"],
        "summary": case["summary"],
        "trigger": case["trigger"],
        "org": case["org"],
        "org_slug": case["org"].lower(),
        "url": f"https://example.org/lib/app/cases/{case['id']}",
        "related": [],
        "recurrence_of": None,
        **{name: None for name in ("symptoms_text", "detection", "lessons")},
        # its own components, and no other term: their labels are searched as the page's words
        "components": [c for c in case["component"] if c in vocabulary().terms["components"]],
        **{name: [] for name in ("domain", "symptoms", "contributing")},
        "remediation": [],
        "action_items": [],
    }
    return Case.model_validate({**data, **changes})


MODELS = [case_model(case) for case in CASES]


@functools.cache
def stems() -> Stems:
    return Stems()


def _document(lang: str, title: str, root: str, body: str, scripts: str = "") -> str:
    other = "en" if lang == "ko" else "ko"
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
        f'<link rel="stylesheet" href="{root}assets/site.css"><link rel="stylesheet" href="{root}assets/facets.css">'
        f'</head><body><header><nav aria-label="{other}"><a href="{root}{other}/index.html">{other}</a></nav>'
        f"{search_box_html(lang, root)}</header>"  # type: ignore[arg-type]
        f'<main data-lang="{lang}">{body}</main><footer><p>incidentlib</p></footer>{scripts}</body></html>'
    )


def _listing(lang: str) -> str:
    words = facet_words()[lang]
    items = "".join(
        f'<li class="case" id="{c["id"]}"><a href="cases/{c["id"]}/">{c["id"]}</a> {html.escape(c["title"][lang])} '
        f"{c['org']} {c['year']}</li>"
        for c in CASES
    )
    n = len(CASES)
    body = (
        f"<h1>{'장애 사례 라이브러리' if lang == 'ko' else 'Incident case library'}</h1>"
        f'<p class="count">{words["count"].format(n=n)}</p>'
        f'<p class="range">{words["range"].format(n=n, first=1, last=n)}</p>'
        f'<section id="facets" hidden></section><ol class="cases">{items}</ol>'
        f'<p class="summing-up">{words["summing_up"].format(n=n, terms="NCCL")}</p>'
        f"<p>{ONLY_ON_THE_LISTING}</p>"
    )
    return _document(lang, "listing", "../", body, '<script src="../assets/facets.js"></script>')


def _case_page(lang: str, case: dict[str, Any]) -> str:
    summary = case["summary"][lang]
    body = (
        f"<h1>{html.escape(case['title'][lang])}</h1>"
        f'<section data-field="summary"><h2>summary</h2><p>{html.escape(summary)}</p></section>'
        f'<section data-field="org"><h2>org</h2><p>{case["org"]}</p></section>'
    )
    return _document(lang, case["id"], "../../../", body)


def write_site(folder: Path) -> None:
    files: dict[str, str] = {"index.html": '<!doctype html><meta http-equiv="refresh" content="0; url=ko/index.html">'}
    for lang in ("ko", "en"):
        files[f"{lang}/index.html"] = _listing(lang)
        for case in CASES:
            files[f"{lang}/cases/{case['id']}/index.html"] = _case_page(lang, case)
    files["api/v1/facets.json"] = json.dumps({"facets": FACETS, "labels": LABELS, "cases": CASES}, ensure_ascii=False)
    counts: dict[str, dict[str, int]] = {facet: {} for facet in FACETS}
    for case in CASES:
        for facet in FACETS:
            for value in case[facet] if isinstance(case[facet], list) else [case[facet]]:
                counts[facet][str(value)] = counts[facet].get(str(value), 0) + 1
    files["api/v1/facet-counts.json"] = json.dumps(
        {"facets": FACETS, "total": len(CASES), "labels": LABELS, "counts": counts}, ensure_ascii=False
    )
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    for path, data in index_files(search_docs(MODELS, stems())).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    shutil.copytree(STATIC, folder / "assets", dirs_exist_ok=True)  # vendor/ too, for the cards' Markdown
    (folder / "assets" / "markdown.json").write_bytes(browser_rules())


@dataclass
class Served:
    url: str  # the site's base: http://127.0.0.1:PORT/lib/app/
    folder: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served_root = tmp_path_factory.mktemp("served")
    folder = served_root / BASE.strip("/")
    folder.mkdir(parents=True)
    write_site(folder)
    with serving(served_root) as url:
        yield Served(f"{url}{BASE}", folder)


@dataclass
class Visit:
    page: Page
    outside: list[str]  # every request for anything not on the site


@pytest.fixture
def visit(browser: Browser, site: Served) -> Iterator[Visit]:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    outside: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith(site.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    yield Visit(context.new_page(), outside)
    context.close()


@functools.cache
def axe_script() -> str:
    """npm's axe-core (`axe.min.js`), installed into a cache folder the first time."""
    cache = Path(os.environ.get("INCIDENTLIB_AXE_CACHE") or Path.home() / ".cache" / "incidentlib" / "axe-core")
    script = cache / "node_modules" / "axe-core" / "axe.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: the accessibility tests install axe-core with it", pytrace=False)
        cache.mkdir(parents=True, exist_ok=True)
        command = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", f"axe-core@{AXE_VERSION}"]
        subprocess.run(command, check=True, capture_output=True, timeout=300)
    return script.read_text(encoding="utf-8")


def axe_violations(page: Page) -> list[str]:
    page.add_script_tag(content=axe_script())
    found = page.evaluate("async () => (await axe.run(document)).violations.map(v => [v.id, v.nodes.map(n => n.html)])")
    return [f"{rule}: {nodes}" for rule, nodes in found]


# ---------------------------------------------------------------- the documents, without a browser


def _terms(doc: SearchDoc | None) -> dict[str, int]:
    assert doc is not None
    return dict(doc.terms)


def test_korean_words_are_indexed_with_the_stems_prefix_matching_misses() -> None:
    found = Stems()
    assert "끊기다" in found.of("끊겼다") and found.changed
    terms = _terms(search_doc(MODELS[0], "ko", found))
    assert {"서울은", "끊겼다", "끊기다", "nccl"} <= set(terms)
    assert "서울" not in terms  # 서울은 begins with it: found by prefix, not indexed twice
    # a title's word weighs more than the same word in the texts
    assert terms["서울은"] > terms["nccl"]
    # the cache's bytes give the same stems without analysing again
    again = Stems.load(found.dump())
    assert again.of("끊겼다") == found.of("끊겼다") and not again.changed
    assert len(Stems.load(None)) == 0 and len(Stems.load(b"not json")) == 0


def test_a_page_offers_its_text_as_shown_and_a_withdrawn_case_nothing() -> None:
    korean = search_doc(MODELS[1], "ko", stems())
    assert korean is not None and korean.href == "ko/cases/IL-0002/"
    assert korean.title == CASES[1]["title"]["ko"] and korean.excerpt == CASES[1]["summary"]["ko"]
    terms = _terms(korean)
    assert "generators" in terms  # the English text the Korean page shows in its place
    note = ui("not_translated", "ko").split()
    assert not any(word in terms for word in note)  # but not the note beside it
    assert "beta" not in terms  # the org is not a text of the page's search
    withdrawn = case_model(CASES[1], withdrawn=datetime(2025, 1, 1, tzinfo=UTC), withdrawn_reason="duplicate")
    assert search_doc(withdrawn, "ko", stems()) is None and search_doc(withdrawn, "en", stems()) is None
    long = case_model(CASES[1], summary={"en": "word " * 200})
    excerpt = search_doc(long, "en", stems())
    assert excerpt is not None and len(excerpt.excerpt) <= 201 and excerpt.excerpt.endswith("…")


def test_a_page_offers_its_terms_labels_and_a_merged_case_nothing() -> None:
    both = case_model(CASES[0], components=["database", "nccl"], contributing=["missing-monitoring"])
    korean, english = search_doc(both, "ko", stems()), search_doc(both, "en", stems())
    # each term's label in the page's language: 데이터베이스 on the Korean page, Database on the English one
    assert {"데이터베이스", "모니터링"} <= _terms(korean).keys() and "database" not in _terms(korean)
    assert {"database", "monitoring"} <= _terms(english).keys() and "데이터베이스" not in _terms(english)
    gone = datetime(2025, 1, 1, tzinfo=UTC)
    merged = case_model(CASES[0], withdrawn=gone, withdrawn_reason="duplicate", merged_into="IL-0002")
    assert search_doc(merged, "ko", stems()) is None and search_docs([merged], stems()) == []


def test_the_query_side_strips_particles_as_search_js_does() -> None:
    assert [strip_particles(w) for w in ("서울은", "서울에서", "회사가", "아이", "NCCL")] == [
        "서울",
        "서울",
        "회사",
        "아이",
        "NCCL",
    ]
    script = (STATIC / "search.js").read_text(encoding="utf-8")
    listed = re.search(r"var PARTICLES = \[(.*?)\];", script, re.S)
    assert listed is not None
    assert json.loads(f"[{listed.group(1)}]") == list(PARTICLES)


def test_facets_js_holds_the_words_of_labels_py() -> None:
    script = (STATIC / "facets.js").read_text(encoding="utf-8")
    block = re.search(r"var WORDS = (\{.*?\});\n\s*// END WORDS", script, re.S)
    assert block is not None
    assert json.loads(block.group(1)) == facet_words()


def test_search_js_holds_the_words_of_labels_py() -> None:
    script = (STATIC / "search.js").read_text(encoding="utf-8")
    block = re.search(r"var WORDS = (\{.*?\});\n\s*// END WORDS", script, re.S)
    assert block is not None
    assert json.loads(block.group(1)) == search_words()
    assert search_words()["ko"]["results"] == "검색 결과 {n}건"


def test_the_search_box_links_only_into_the_site() -> None:
    box = search_box_html("ko", "../..")
    assert 'data-root="../../" data-lang="ko"' in box and 'src="../../assets/search.js"' in box
    # the index is not loaded with the page, only when the reader reaches for the search
    assert "<link" not in box and box.count("<script") == 1
    assert '<input type="search"' in box and '<label class="search-label" for="search-input">검색</label>' in box
    # what shows only once a search runs is search.js's to add, in its words: no page carries it
    assert "aria-live" not in box and "search-results" not in box and "{n}" not in box and "<button" not in box
    assert "http" not in box


# ---------------------------------------------------------------- the index, without a browser

_VOCABULARY = [
    *(f"w{i}" for i in range(40)),
    "서울",
    "서울은",
    "서버",
    "부산",
    "끊기다",
    "nccl",
    "ncclx",
    "타임아웃",
]


def _random_doc(rng: random.Random, lang: str, number: int) -> SearchDoc:
    case_id = f"IL-{number:04d}"
    terms = sorted((term, rng.randint(1, 20)) for term in rng.sample(_VOCABULARY, rng.randint(1, 8)))
    title = f"{case_id} {rng.random():.3f}"
    return SearchDoc(
        case_id, lang, f"{lang}/cases/{case_id}/", title, f"{lang} excerpt {rng.randint(0, 9)}", tuple(terms)
    )


def _applied(before: dict[str, bytes], changed: dict[tuple[str, str], SearchDoc | None]) -> dict[str, bytes]:
    update = update_index(before.get, changed)
    assert update is not None
    assert not set(update.files) & set(update.kept)
    assert set(update.kept) <= set(before), "a file kept is one of the last index's"
    return {**update.files, **{key: before[key] for key in update.kept}}


def test_the_index_is_the_same_bytes_whatever_the_documents_order() -> None:
    rng = random.Random(7)
    docs = [_random_doc(rng, lang, n) for lang in ("ko", "en") for n in rng.sample(range(1, 400), 60)]
    files = index_files(docs)
    assert index_files(list(reversed(docs))) == files
    assert {"search/ko/index.json", "search/en/index.json"} <= set(files)
    assert set(index_files([])) == {f"search/{lang}/{name}.json" for lang in ("ko", "en") for name in ("index", "live")}


@pytest.mark.parametrize("seed", range(6))
def test_an_update_gives_exactly_the_index_made_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    held: dict[tuple[str, str], SearchDoc] = {}
    for number in rng.sample(range(1, 300), 40):
        for lang in ("ko", "en"):
            held[(lang, f"IL-{number:04d}")] = _random_doc(rng, lang, number)
    files = index_files(held.values())
    for _ in range(25):
        changed: dict[tuple[str, str], SearchDoc | None] = {}
        for _ in range(rng.randint(1, 4)):
            lang = rng.choice(("ko", "en"))
            what = rng.random()
            if what < 0.35 and held:  # gone (withdrawn, or its record left)
                key = rng.choice(sorted(held))
                changed[key] = None
            elif what < 0.7 and held:  # changed
                key = rng.choice(sorted(held))
                changed[key] = _random_doc(rng, key[0], int(key[1][3:]))
            else:  # new
                number = rng.randint(1, 400)
                changed[(lang, f"IL-{number:04d}")] = _random_doc(rng, lang, number)
        for key, doc in changed.items():
            if doc is None:
                held.pop(key, None)
            else:
                held[key] = doc
        files = _applied(files, changed)
        assert files == index_files(held.values())
    # nothing changed: every file kept
    update = update_index(files.get, {})
    assert update is not None and update.files == {} and sorted(update.kept) == sorted(files)


def test_an_update_of_another_format_or_of_nothing_asks_for_a_new_index() -> None:
    doc = _random_doc(random.Random(1), "ko", 5)
    assert update_index(lambda key: None, {("ko", doc.case_id): doc}) is None
    files = index_files([doc])
    manifest = files["search/ko/index.json"]
    assert f'"version":{search.FORMAT}'.encode() in manifest
    old = {**files, "search/ko/index.json": manifest.replace(f'"version":{search.FORMAT}'.encode(), b'"version":0')}
    assert update_index(old.get, {("ko", doc.case_id): None}) is None
    # The bookkeeping lives in the build's state, where no hash is checked: any damage asks for a new index.
    for damaged in (b"[]", b"{}", b"\x80not json", b'{"docs": 5, "shards": 3}'):
        for key in [k for k in files if bookkeeping(k)]:
            assert update_index({**files, key: damaged}.get, {("ko", doc.case_id): None}) is None, (key, damaged)


def test_the_keys_bookkeeping_is_one_string_a_document() -> None:
    # keys/ is never fetched by a reader: each document's shards and their postings' hashes, one string of
    # "key" + eight hex digits, a space between, as small as it can be read back
    docs = [_random_doc(random.Random(n), "ko", n) for n in (3, 5, 9)]
    files = index_files(docs)
    held = json.loads(files["search/ko/keys/0.json"])
    assert sorted(held) == ["3", "5", "9"]
    for n, doc in zip((3, 5, 9), docs, strict=True):
        entries = held[str(n)].split(" ")
        assert all(re.fullmatch(r"[^\s]+[0-9a-f]{8}", entry) for entry in entries), held[str(n)]
        assert [entry[:-8] for entry in entries] == sorted({search.shard_key(term) for term, _ in doc.terms})


def test_a_shard_stays_small_and_one_update_touches_few_files() -> None:
    # 10,000 documents a language, their words drawn as a library's are (a few common, most rare)
    rng = random.Random(428)
    syllables = [chr(0xAC00 + rng.randrange(11172)) for _ in range(300)]
    endings = ["", "은", "이", "을", "에서", "으로", "다"]
    words = [rng.choice(syllables) + rng.choice(syllables) + rng.choice(endings) for _ in range(20_000)]
    words += ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(10_000)]
    weights = [1 / (rank + 1) for rank in range(len(words))]

    def doc(number: int) -> SearchDoc:
        case_id = f"IL-{number:05d}"
        terms = sorted({(w, rng.randint(1, 9)) for w in rng.choices(words, weights, k=60)})
        return SearchDoc(case_id, "ko", f"ko/cases/{case_id}/", "제목 " * 10, "요약 " * 60, tuple(dict(terms).items()))

    docs = [doc(n) for n in range(1, 10_001)]
    files = index_files(docs)
    shards = {key: len(data) for key, data in files.items() if "/shards/" in key}
    assert max(shards.values()) <= 200_000, max(shards.items(), key=lambda item: item[1])
    assert len(files["search/ko/index.json"]) <= 10_000
    assert max(len(data) for key, data in files.items() if "/heads/" in key) <= 10_000
    assert max(len(data) for key, data in files.items() if "/docs/" in key) <= 8_000
    old, new = docs[41], doc(42)
    began = time.perf_counter()
    update = update_index(files.get, {("ko", "IL-00042"): new})
    took = time.perf_counter() - began
    # the shards of its old and new terms, their heads, its docs/ and keys/ files, live.json: no more
    touched = {search.shard_key(term) for term, _ in (*old.terms, *new.terms)}
    assert update is not None and len(update.files) <= 2 * len(touched) + 3
    assert took < 1.0, f"one case's update took {took:.3f} s"  # about 0.05 s here; the bound leaves room


# ---------------------------------------------------------------- in the browser


def _search(visit: Visit, site: Served, lang: str, query: str) -> list[str]:
    page = visit.page
    page.goto(f"{site.url}{lang}/index.html")
    page.get_by_role("searchbox", name="검색" if lang == "ko" else "Search", exact=True).fill(query)
    # the live region says the count once the results are shown
    status = page.locator("#search .search-status")
    expect(status).to_have_text(re.compile(r"\d"))
    said = re.search(r"\d+", status.inner_text())
    assert said is not None
    results = page.locator("#search .search-result-link")
    expect(results).to_have_count(min(int(said.group()), 10))
    return [str(link.get_attribute("href")) for link in results.all()]


def test_a_korean_search_finds_the_page_by_its_stem(visit: Visit, site: Served) -> None:
    fetched: list[str] = []
    visit.page.on("request", lambda request: fetched.append(request.url))
    assert _search(visit, site, "ko", "서울") == ["../ko/cases/IL-0003/"]
    page = visit.page
    expect(page.locator("#search .search-status")).to_have_text("검색 결과 1건")
    expect(page.locator(".search-result-excerpt").first).to_contain_text("서울은")
    expect(page.locator(".search-result-link mark").first).to_have_text("서울은")  # the word it begins, whole
    # the manifest, the one shard of 서, the docs file of the result: nothing else of the index
    index = sorted(url.split("/search/ko/")[1] for url in fetched if "/search/" in url)
    assert index == [
        "docs/0.json",
        f"heads/{ord('서'):x}.json",
        "index.json",
        f"shards/{ord('서'):x}-{ord('울'):x}.json",
    ]
    # the particle of the query is stripped (the page says 서울은), a verb found by its dictionary form
    assert _search(visit, site, "ko", "서울에서") == ["../ko/cases/IL-0003/"]
    assert _search(visit, site, "ko", "끊기다") == ["../ko/cases/IL-0003/"]
    # all the words must match; the English text a Korean page shows is searched there too
    assert _search(visit, site, "ko", "서울 타임아웃") == []
    assert _search(visit, site, "ko", "NCCL 타임아웃") == ["../ko/cases/IL-0001/"]
    assert _search(visit, site, "ko", "generators") == ["../ko/cases/IL-0002/"]
    # neither the listing nor a field outside the texts (org) is searched
    assert _search(visit, site, "ko", ONLY_ON_THE_LISTING) == []
    expect(page.locator("#search .search-status")).to_have_text("검색 결과 0건")
    assert _search(visit, site, "ko", "Acme") == []
    assert visit.outside == []


def test_nothing_of_the_index_is_loaded_before_the_reader_searches(visit: Visit, site: Served) -> None:
    fetched: list[str] = []
    page = visit.page
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"{site.url}ko/index.html")
    page.wait_for_load_state("networkidle")
    assert not any("/search/" in url for url in fetched)
    with page.expect_response(re.compile(r"/search/ko/index\.json$")):
        page.get_by_role("searchbox", name="검색").focus()


def test_an_english_search_finds_its_case_and_opens_it(visit: Visit, site: Served) -> None:
    assert _search(visit, site, "en", "collective") == ["../en/cases/IL-0003/"]
    # the word a query word begins is marked whole: "collective" marks the title's "collectives"
    expect(visit.page.locator(".search-result-link mark").first).to_have_text("collectives")
    # ranked: the title's word first (Checkpoints became slow … NCCL timeouts), a plural found by its singular
    assert _search(visit, site, "en", "timeouts") == ["../en/cases/IL-0003/", "../en/cases/IL-0001/"]
    assert _search(visit, site, "en", "slow") == ["../en/cases/IL-0001/"]
    expect(visit.page.locator("#search .search-status")).to_have_text("1 result")
    visit.page.locator(".search-result-link").first.click()
    expect(visit.page).to_have_url(f"{site.url}en/cases/IL-0001/")
    expect(visit.page.locator("h1")).to_contain_text("Checkpoints")
    assert visit.outside == []


def test_a_search_result_has_no_accessibility_violation(visit: Visit, site: Served) -> None:
    assert _search(visit, site, "ko", "서울") != []
    assert axe_violations(visit.page) == []


def _facet(page: Page, facet: str, value: str) -> Any:
    return page.locator(f'#facets input[name="{facet}"][value="{value}"]')


def _count(page: Page, facet: str, value: str) -> str:
    return page.locator(
        f'#facets label[for="{_facet(page, facet, value).get_attribute("id")}"] .facet-count'
    ).inner_text()


def test_a_facet_combination_filters_and_is_kept_in_the_url(visit: Visit, site: Served) -> None:
    page = visit.page
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"{site.url}ko/index.html")
    expect(page.locator("#facets")).to_be_visible()
    assert _count(page, "component", "nccl") == "(2)" and _count(page, "year", "2022") == "(2)"
    # without a filter: the counts only, and neither every case's values nor the search index
    page.wait_for_load_state("networkidle")
    assert any(url.endswith("api/v1/facet-counts.json") for url in fetched)
    assert not any(url.endswith("api/v1/facets.json") or "/search/" in url for url in fetched)
    # by keyboard: the NCCL box focused and ticked with the space bar
    _facet(page, "component", "nccl").focus()
    page.keyboard.press("Space")
    expect(page).to_have_url(re.compile(r"\?component=nccl$"))
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    assert _count(page, "year", "2022") == "(1)" and _count(page, "year", "2021") == "(1)"
    _facet(page, "year", "2022").check()
    expect(page).to_have_url(re.compile(r"\?component=nccl&year=2022$"))
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(page.locator("ol.cases li.case#IL-0003 h2 a")).to_have_attribute("href", f"{site.url}ko/cases/IL-0003/")
    expect(page.locator(".summing-up")).to_have_text("이 1건에서 가장 많이 나오는 구성 요소: NCCL, PyTorch")
    expect(page.locator(".count")).to_have_text("사례 1건")
    expect(page.locator(".range")).to_have_text("1건 중 1~1번째")
    # a second value of one facet widens it (OR)
    _facet(page, "year", "2021").check()
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    expect(page.locator(".summing-up")).to_have_text("이 2건에서 가장 많이 나오는 구성 요소: NCCL, PyTorch, 저장소")
    # the address alone gives the same page
    page.goto(f"{site.url}en/index.html?component=power")
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(_facet(page, "component", "power")).to_be_checked()
    expect(page.locator(".summing-up")).to_have_text("Components most frequent in this case: Power")
    expect(page.locator(".count")).to_have_text("1 case")
    page.get_by_role("button", name="Clear filters").click()
    expect(page).to_have_url(f"{site.url}en/index.html")
    expect(page.locator("ol.cases li.case")).to_have_count(3)
    expect(page.locator(".summing-up")).to_have_text("Components most frequent in these 3 cases: NCCL")
    assert visit.outside == []


def test_the_listing_with_facets_has_no_accessibility_violation(visit: Visit, site: Served) -> None:
    page = visit.page
    page.goto(f"{site.url}ko/index.html?component=nccl")
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    assert axe_violations(page) == []


def test_a_words_stems_do_not_depend_on_the_words_analysed_with_it() -> None:
    """An index updated with one case's new words equals one made with every word at once only if a
    word's stems are its own: each word is analysed apart, in a batch or alone."""
    words = ["서울은", "끊겼다", "통신장애가", "재시작했다", "부산에서"]
    together = search.Stems()
    together.analyse(words)
    for word in words:
        alone = search.Stems()
        alone.analyse([word])
        assert alone.of(word) == together.of(word), word


_BUILD_ALONE = """
import json, sys
from pathlib import Path
from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.site import search
from pipeline.site.build import build_site
from pipeline.store import Store

root = Path(sys.argv[1])
store = Store(root)
for line in sys.stdin:
    store.write_case(Case.model_validate_json(line))
build_site(store, Settings(root=root), root / "site", workers=1)
print(json.dumps({"kiwi_loaded": search._kiwi.cache_info().currsize}))
"""


def test_a_full_build_analyses_its_korean_words_aside_with_the_same_stems(tmp_path: Path) -> None:
    """kiwipiepy's model takes seconds of one core to load, holding Python's lock: a full build has its
    Korean words analysed in a process of its own (pipeline.site.stemmer) while it makes its pages, and
    indexes the same stems as an analysis in the building process."""
    # A process of its own: this one may have loaded kiwipiepy already (a build here then analyses here).
    given = "".join(case.model_dump_json() + "\n" for case in MODELS)
    run = subprocess.run(
        ["python", "-c", _BUILD_ALONE, str(tmp_path)], input=given, capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout.splitlines()[-1]) == {"kiwi_loaded": 0}
    expected = index_files(search_docs(MODELS, Stems()))
    assert any("끊기다" in data.decode() for key, data in expected.items() if "/shards/" in key)
    built = tmp_path / "site"
    published = {key: data for key, data in expected.items() if not bookkeeping(key)}
    assert {key: (built / key).read_bytes() for key in published} == published
    # The bookkeeping for updates (keys/, live.json) is the build's state, never published.
    kept = {key: data for key, data in expected.items() if bookkeeping(key)}
    assert kept and not any((built / key).exists() for key in kept)
    assert not (built / "search" / "ko" / "keys").exists()
    tree = SiteTree(Store(tmp_path).state, built)
    assert {key: tree.read_cache(key) for key in kept} == kept


def test_a_build_into_another_folder_analyses_no_word_again(tmp_path: Path) -> None:
    """A word's stems are the analyser's, whatever the folder: the builds of one data root share one cache
    of them, so a build into a new folder (`--out`, a benchmark's runs) analyses no word again."""
    from pipeline.settings import Settings
    from pipeline.site.build import build_site
    from pipeline.store import Store

    store = Store(tmp_path / "root")
    for case in MODELS:
        store.write_case(case)
    settings = Settings(root=store.root)
    build_site(store, settings, tmp_path / "first", workers=1)
    kept = store.state.stat("site/search-stems.json")
    assert kept is not None and "끊기다" in (store.state.read("site/search-stems.json") or b"").decode()
    build_site(store, settings, tmp_path / "second", workers=1)
    assert store.state.stat("site/search-stems.json") == kept, "no word analysed, the cache not written again"
    first, second = tmp_path / "first" / "search", tmp_path / "second" / "search"
    assert {p.relative_to(first): p.read_bytes() for p in first.rglob("*.json")} == {
        p.relative_to(second): p.read_bytes() for p in second.rglob("*.json")
    }
