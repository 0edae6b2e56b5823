"""The site's search and facets, on a small site written here by hand (the contract's layout, not the
pages' renderer): `index_site` builds the Pagefind bundle, a loopback `http.server` serves the site
under a base path (/lib/app/), and Debian's chromium searches it and filters its listing.

axe-core's `axe.min.js` comes from npm's `axe-core`, installed once into a cache folder
(~/.cache/incidentlib/axe-core, or $INCIDENTLIB_AXE_CACHE) with `npm install` when it is not there.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from pipeline.site import search
from pipeline.site.search import PARTICLES, facet_words, index_site, korean_stems, search_box_html, strip_particles

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
TRIGGER = {"ko": "스위치 펌웨어 갱신", "en": "A firmware update"}


def _document(lang: str, title: str, root: str, body: str, scripts: str = "") -> str:
    other = "en" if lang == "ko" else "ko"
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
        f'<link rel="stylesheet" href="{root}assets/facets.css"></head><body>'
        f'<header><nav aria-label="{other}"><a href="{root}{other}/index.html">{other}</a></nav>'
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
        f'<p class="summing-up">{words["summing_up"].format(n=n, terms="NCCL, PyTorch")}</p>'
        f"<p>{ONLY_ON_THE_LISTING}</p>"
    )
    return _document(lang, "listing", "../", body, '<script src="../assets/facets.js"></script>')


def _case_page(lang: str, case: dict[str, Any]) -> str:
    body = (
        f"<h1>{html.escape(case['title'][lang])}</h1>"
        f'<section data-field="summary"><h2>summary</h2><p>{html.escape(case["summary"][lang])}</p></section>'
        f'<section data-field="org"><h2>org</h2><p>{case["org"]} {ONLY_ON_THE_LISTING}org</p></section>'
        f'<section data-field="trigger"><h2>trigger</h2><p>{TRIGGER[lang]}</p></section>'
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
    (folder / "assets").mkdir(exist_ok=True)
    for asset in STATIC.iterdir():
        shutil.copy(asset, folder / "assets" / asset.name)


@dataclass
class Served:
    url: str  # the site's base: http://127.0.0.1:PORT/lib/app/
    folder: Path


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served_root = tmp_path_factory.mktemp("served")
    folder = served_root / BASE.strip("/")
    folder.mkdir(parents=True)
    write_site(folder)
    index_site(folder)
    handler = functools.partial(_Quiet, directory=str(served_root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}{BASE}", folder)
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


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


# ---------------------------------------------------------------- the index, without a browser


def test_only_the_case_pages_are_indexed_and_a_rebuild_rewrites_nothing(site: Served) -> None:
    bundle = site.folder / "pagefind"
    entry = json.loads((bundle / "pagefind-entry.json").read_text())
    assert {lang: entry["languages"][lang]["page_count"] for lang in ("ko", "en")} == {"ko": 3, "en": 3}
    assert (bundle / "pagefind-ui.js").is_file()
    assert not list(bundle.glob("pagefind-component-ui.*")), "the bundle keeps only what the site loads"
    again = index_site(site.folder)
    assert again.pages == {"ko": 3, "en": 3}
    assert again.analyser == "kiwipiepy"
    assert (again.written, again.removed) == (0, 0) and again.unchanged > 0


def test_korean_stems_are_only_those_prefix_matching_misses() -> None:
    stems = korean_stems("서울은 통신장애로 NCCL 통신이 끊겼다.")
    assert "서울" not in stems and "통신" not in stems  # found by prefix: 서울은, 통신이
    assert {"장애", "끊기다"} <= set(stems)


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


def test_the_search_box_links_only_into_the_site() -> None:
    box = search_box_html("ko", "../..")
    assert 'data-ui="../../pagefind/pagefind-ui.js"' in box and 'src="../../assets/search.js"' in box
    assert 'data-ui-css="../../pagefind/pagefind-ui.css"' in box
    # Pagefind's UI is not loaded with the page, only when the reader reaches for the search
    assert '<script src="../../pagefind/' not in box and "<link" not in box
    assert '<input type="search"' in box and '<label class="visually-hidden" for="search-start">검색</label>' in box
    assert "http" not in box and 'aria-label="검색"' in box


# ---------------------------------------------------------------- in the browser


def _search(visit: Visit, site: Served, lang: str, query: str) -> list[str]:
    page = visit.page
    page.goto(f"{site.url}{lang}/index.html")
    page.get_by_role("searchbox", name="검색" if lang == "ko" else "Search", exact=True).fill(query)
    # the UI's message names the query while it searches ("서울 검색 중...") and once it is done
    message = page.locator(".pagefind-ui__message")
    expect(message).to_contain_text(query)
    expect(message).not_to_have_text(re.compile(r"(\.\.\.|…)\s*$"))
    said = re.search(r"\d+", message.inner_text().replace(query, ""))
    results = page.locator(".pagefind-ui__result-link")
    expect(results).to_have_count(int(said.group()) if said else 0)
    return [str(link.get_attribute("href")) for link in results.all()]


def test_a_korean_search_finds_the_page_by_its_stem(visit: Visit, site: Served) -> None:
    assert _search(visit, site, "ko", "서울") == [f"{BASE}ko/cases/IL-0003/"]
    page = visit.page
    expect(page.locator(".pagefind-ui__result-excerpt").first).to_contain_text("서울은")
    # the particle of the query is stripped (the page says 서울은), a verb found by its dictionary form
    assert _search(visit, site, "ko", "서울에서") == [f"{BASE}ko/cases/IL-0003/"]
    assert _search(visit, site, "ko", "끊기다") == [f"{BASE}ko/cases/IL-0003/"]
    # neither the listing nor a field outside the texts (org) is searched
    assert _search(visit, site, "ko", ONLY_ON_THE_LISTING) == []
    assert visit.outside == []


def test_an_english_search_finds_its_case_and_opens_it(visit: Visit, site: Served) -> None:
    assert _search(visit, site, "en", "collective") == [f"{BASE}en/cases/IL-0003/"]
    assert sorted(_search(visit, site, "en", "timeouts")) == [f"{BASE}en/cases/IL-0001/", f"{BASE}en/cases/IL-0003/"]
    visit.page.locator(".pagefind-ui__result-link").first.click()
    expect(visit.page.locator("h1")).to_contain_text(re.compile("Checkpoints|Seoul"))
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
    # without a filter: the counts only, and neither every case's values nor Pagefind's UI
    page.wait_for_load_state("networkidle")
    assert any(url.endswith("api/v1/facet-counts.json") for url in fetched)
    assert not any(url.endswith(("api/v1/facets.json", "pagefind-ui.js", "pagefind-ui.css")) for url in fetched)
    # by keyboard: the NCCL box focused and ticked with the space bar
    _facet(page, "component", "nccl").focus()
    page.keyboard.press("Space")
    expect(page).to_have_url(re.compile(r"\?component=nccl$"))
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    assert _count(page, "year", "2022") == "(1)" and _count(page, "year", "2021") == "(1)"
    _facet(page, "year", "2022").check()
    expect(page).to_have_url(re.compile(r"\?component=nccl&year=2022$"))
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(page.locator("ol.cases li.case#IL-0003 a")).to_have_attribute("href", f"{site.url}ko/cases/IL-0003/")
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
    expect(page.locator(".summing-up")).to_have_text("Components most frequent in these 3 cases: NCCL, PyTorch")
    assert visit.outside == []


def test_the_listing_with_facets_has_no_accessibility_violation(visit: Visit, site: Served) -> None:
    page = visit.page
    page.goto(f"{site.url}ko/index.html?component=nccl")
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    assert axe_violations(page) == []
