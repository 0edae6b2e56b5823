"""A built site's listings in Chromium: a filtered listing keeps each case's full card, a term's own page
starts with its term ticked and its cases' counts, the summing-up line says ties, and a search lives in
the address (`?q=`) and finds the terms' labels but neither the "not yet translated" note nor a
withdrawn case. The site is what `build_files` makes of four cases, written to disk and served on
127.0.0.1 under a base path.

With INCIDENTLIB_SCREENSHOTS set to a folder (read when the module loads, as test_web_browser reads
it), the tests save there the screenshots of the Korean and English listing, filtered and searched, at
390 and 1280 pixels wide.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import serving
from playwright.sync_api import Browser, Page, Route, expect
from test_site_search import axe_violations

from pipeline.models import Case
from pipeline.site.build import build_files
from pipeline.site.context import SiteContext

TIMEOUT_MS = 15_000
BASE = "/lib/app/"
BUILT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
WITHDRAWN_WORD = "철회되어사라질낱말"
SCREENSHOTS = os.environ.get("INCIDENTLIB_SCREENSHOTS")


def case(number: int, date: str, **fields: Any) -> Case:
    case_id = f"IL-{number:04d}"
    return Case.model_validate(
        {
            "id": case_id,
            "org": fields.pop("org", "Acme"),
            "org_slug": fields.pop("org_slug", "acme"),
            "date": date,
            "date_kind": "incident",
            "summary": {"en": "A summary.", "ko": "요약."},
            "sources": [{"url": f"https://example.org/pm/{number}", "kind": "blog"}],
            "updated_at": "2026-11-30T10:00:00Z",
            "url": f"https://example.org/lib/app/cases/{case_id}",
            **fields,
        }
    )


CASES = [
    case(
        1,
        "2024-05-01",
        title={"ko": "설정 변경으로 이름 풀이가 멈췄다", "en": "A config change stopped name resolution"},
        trigger={"ko": "DNS 설정을 바꾸자 조회가 실패했다.", "en": "A DNS change made lookups fail."},
        lessons={"en": "Stage resolver changes."},  # no Korean: the Korean card shows it, marked
        components=["dns", "database"],
        root_cause="configuration-error",
    ),
    case(
        2,
        "2023-03-01",
        org="Beta",
        org_slug="beta",
        title={"ko": "집합 통신이 하루 동안 멈췄다", "en": "Collectives hung for a day"},
        remediation=[{"text": {"ko": "노드를 다시 시작했다.", "en": "The nodes were restarted."}}],
        components=["dns", "nccl"],
    ),
    case(
        3,
        "2022-01-01",
        title={"ko": "체크포인트 저장이 느려졌다", "en": "Checkpoints became slow"},
        components=["slurm", "storage"],
    ),
    case(
        4,
        "2021-01-01",
        title={"ko": f"{WITHDRAWN_WORD} 데이터베이스 사례", "en": "A withdrawn database case"},
        components=["database"],
        withdrawn="2026-11-01T00:00:00Z",
        withdrawn_reason="Not an incident.",
    ),
    # texts in the Markdown subset, and what it must not link or run
    case(
        5,
        "2025-06-01",
        org="Delta",
        org_slug="delta",
        title={"ko": "`train_step` *전체가* 멈춤", "en": "`train_step` hung *whole*"},
        trigger={
            "ko": "`CUDA_LAUNCH_BLOCKING=1` 을 설정하자 <script>window.ran = 1</script> 가 보였다. "
            "1024*14 와 1024*12 에서 멈췄다. 기록: https://example.org/log%1Bx",
            "en": "Setting `CUDA_LAUNCH_BLOCKING=1` showed <script>window.ran = 1</script> as text. "
            "It hung at 1024*14 and 1024*12. Log: https://example.org/log%1Bx",
        },
        lessons={
            "ko": "- 작게 *나누어* 배포하자\n- 되돌리기를 연습하자",
            "en": "- Roll out in *stages*\n- Practise rollback",
        },
        remediation=[
            {"text": {"ko": "https://example.org/fix 를 보라", "en": "See https://example.org/fix"}},
            {"text": {"ko": "[누르지 말 것](javascript:alert(1))", "en": "[do not click](javascript:alert(1))"}},
        ],
        components=["gpu-driver"],
        root_cause="configuration-error",
        contributing=["untested-change"],
    ),
    # more cases of one component than a filtered listing shows at once
    *(
        case(
            100 + n,
            f"2019-01-{n + 1:02d}",
            org="Gamma",
            org_slug="gamma",
            title={"ko": f"캐시 사례 {n}", "en": f"Cache case {n}"},
            components=["cache"],
        )
        for n in range(21)
    ),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    served = tmp_path_factory.mktemp("served")
    folder = served / BASE.strip("/")
    ctx = SiteContext.of(CASES, base_url="https://example.org/lib/app", built_at=BUILT)
    for key, data in build_files(ctx).items():
        (folder / key).parent.mkdir(parents=True, exist_ok=True)
        (folder / key).write_bytes(data)
    with serving(served) as url:
        yield f"{url}{BASE}"


@pytest.fixture
def page(browser: Browser, site: str) -> Iterator[Page]:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    outside: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith(site):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    yield context.new_page()
    context.close()
    assert outside == []


def shoot(page: Page, name: str) -> None:
    """Save the page at 390 and 1280 pixels wide when INCIDENTLIB_SCREENSHOTS names a folder."""
    if not SCREENSHOTS:
        return
    folder = Path(SCREENSHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)


def _box(page: Page, facet: str, value: str) -> Any:
    return page.locator(f'#facets input[name="{facet}"][value="{value}"]')


def _count(page: Page, facet: str, value: str) -> str:
    box = _box(page, facet, value)
    return page.locator(f'#facets label[for="{box.get_attribute("id")}"] .facet-count').inner_text()


# ---------------------------------------------------------------- filtered listings


def test_a_filtered_listing_keeps_each_cases_full_card(page: Page, site: str) -> None:
    page.goto(f"{site}ko/index.html?component=dns")
    cards = page.locator("ol.cases li.case")
    expect(cards).to_have_count(2)
    first = page.locator("ol.cases li.case#IL-0001")
    # the title linked to the case's page, the org and year, and the sections in the listing's order
    expect(first.locator("h2 a")).to_have_attribute("href", f"{site}ko/cases/IL-0001/")
    expect(first.locator("h2 a .title")).to_have_text("설정 변경으로 이름 풀이가 멈췄다")
    expect(first.locator("p.meta a.org")).to_have_text("Acme")
    expect(first.locator("dl.sections dt")).to_have_text(["촉발", "원인", "구성 요소", "기여 요인", "교훈"])
    expect(first.locator("dl.sections dd").nth(0)).to_have_text("DNS 설정을 바꾸자 조회가 실패했다.")
    expect(first.locator("dl.sections dd").nth(1)).to_have_text("설정 오류")
    terms = first.locator("dl.sections dd").nth(2).locator("ul.terms a")
    expect(terms).to_have_text(["DNS", "데이터베이스"])
    expect(terms.first).to_have_attribute("href", f"{site}ko/components/dns/")
    # the English lesson the Korean card shows, in its language and marked as on the static pages
    lesson = first.locator("dl.sections dd").nth(4)
    expect(lesson.locator('span.text[lang="en"]')).to_have_text("Stage resolver changes.")
    expect(lesson.locator("small.not-translated")).to_have_text("아직 번역되지 않음")
    second = page.locator("ol.cases li.case#IL-0002")
    expect(second.locator("dl.sections ul.actions li")).to_have_text(["노드를 다시 시작했다."])
    expect(page.locator(".count")).to_have_text("사례 2건")
    expect(page.locator(".summing-up")).to_have_text("이 2건에서 가장 많이 나오는 구성 요소: DNS, 데이터베이스, NCCL")
    shoot(page, "ko-filtered")
    # in English, the same cards in English
    page.goto(f"{site}en/index.html?component=dns")
    expect(page.locator("ol.cases li.case#IL-0002 dl.sections dd ul.actions li")).to_have_text(
        ["The nodes were restarted."]
    )
    expect(page.locator("ol.cases li.case#IL-0001 h2 a .title")).to_have_text("A config change stopped name resolution")
    shoot(page, "en-filtered")
    assert axe_violations(page) == []


def _sections(page: Page, card: Any) -> list[str]:
    """The card's sections' HTML as the browser holds it, each heading and content, every link's address
    resolved (the static card's links are relative, the script's absolute)."""
    expect(card.locator("dl.sections")).to_have_count(1)
    resolved = """nodes => nodes.map(n => {
        const copy = n.cloneNode(true);
        copy.querySelectorAll("a[href]").forEach(a =>
            a.setAttribute("href", new URL(a.getAttribute("href"), document.baseURI).href));
        return copy.outerHTML;
    })"""
    return [str(html) for html in card.locator("dl.sections > *").evaluate_all(resolved)]


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_a_filtered_listings_cards_render_the_texts_as_the_static_ones(page: Page, site: str, lang: str) -> None:
    # the static card, written by the build (pipeline.render)
    page.goto(f"{site}{lang}/index.html")
    static = _sections(page, page.locator("ol.cases li.case#IL-0005"))
    static_title = page.locator("ol.cases li.case#IL-0005 h2 a .title").inner_html()
    expect(page.locator('script[src$="markdown-it.min.js"]')).to_have_count(0)  # not loaded without a card to build
    # the same case's card built in the browser (facets.js, markdown-it's script set up from assets/markdown.json)
    page.goto(f"{site}{lang}/index.html?component=gpu-driver")
    card = page.locator('ol.cases li.case#IL-0005[aria-busy="false"]')
    expect(card).to_have_count(1)
    assert _sections(page, card) == static
    dds = card.locator("dl.sections dd")
    # inline code, a "- " list with emphasis, a bare URL linked (rel nofollow noopener), the javascript: link
    # not linked, the raw <script> shown as text and never run
    expect(dds.nth(0).locator("code")).to_have_text("CUDA_LAUNCH_BLOCKING=1")
    expect(dds.nth(0)).to_contain_text("<script>window.ran = 1</script>")
    # a "*" between digits is a multiplication, in the browser as on the static page: no emphasis
    expect(dds.nth(0)).to_contain_text("1024*14")
    expect(dds.nth(0).locator("em")).to_have_count(0)
    # a link's text with an escape that would decode to a control character is shown as written
    expect(dds.nth(0).locator('a[href="https://example.org/log%1Bx"]')).to_have_text("https://example.org/log%1Bx")
    assert page.evaluate("window.ran") is None
    remedies = dds.locator("ul.actions > li")
    link = remedies.nth(0).locator("a")
    expect(link).to_have_attribute("href", "https://example.org/fix")
    expect(link).to_have_attribute("rel", "nofollow noopener")
    expect(remedies.nth(1).locator("a")).to_have_count(0)
    expect(remedies.nth(1)).to_contain_text("javascript:alert(1)")
    lessons = card.locator("dl.sections dd div.text.md ul li")
    expect(lessons).to_have_count(2)
    expect(lessons.first.locator("em")).to_have_count(1)
    # the title's inline code
    expect(card.locator("h2 a .title code")).to_have_text("train_step")
    expect(card.locator("h2 a .title")).not_to_contain_text("`")
    # the title as the static card renders it: its code and its emphasis, by the one rule of render.py
    expect(card.locator("h2 a .title em")).to_have_count(1)
    assert card.locator("h2 a .title").inner_html() == static_title
    shoot(page, f"{lang}-filtered-markdown")
    # a case without a root cause: its heading kept over nothing, as on the static card
    page.goto(f"{site}{lang}/index.html")
    static = _sections(page, page.locator("ol.cases li.case#IL-0002"))
    page.goto(f"{site}{lang}/index.html?component=nccl")
    assert _sections(page, page.locator('ol.cases li.case#IL-0002[aria-busy="false"]')) == static
    assert axe_violations(page) == []


def test_the_summing_up_line_of_a_filter_says_a_tie(page: Page, site: str) -> None:
    page.goto(f"{site}ko/index.html?year=2022&year=2023")
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    expect(page.locator(".summing-up")).to_have_text(
        "이 2건에서 두드러지는 구성 요소는 없습니다: 4개가 각각 1건에 나옵니다."
    )
    page.goto(f"{site}en/index.html?year=2022&year=2023")
    expect(page.locator(".summing-up")).to_have_text(
        "No component stands out in these 2 cases: 4 appear in one case each."
    )
    # DNS in two cases, every other component in one: DNS alone stands out
    page.goto(f"{site}en/index.html?year=2022&year=2023&year=2024")
    expect(page.locator(".summing-up")).to_have_text("Components most frequent in these 3 cases: DNS")


def test_a_filtered_listing_shows_twenty_cards_and_more_on_asking(page: Page, site: str) -> None:
    page.goto(f"{site}ko/index.html?component=cache")
    cards = page.locator("ol.cases li.case")
    expect(cards).to_have_count(20)
    expect(page.locator(".count")).to_have_text("사례 21건")
    expect(page.locator(".range")).to_have_text("21건 중 1~20번째")
    expect(page.locator("nav.pages")).to_be_hidden()  # the static pages' links are of the whole listing
    more = page.get_by_role("button", name="사례 더 보기")
    more.click()
    expect(cards).to_have_count(21)
    expect(more).to_be_hidden()
    expect(page.locator(".range")).to_have_text("21건 중 1~21번째")
    expect(page.locator("ol.cases li.case#IL-0100 h2 a")).to_be_focused()
    expect(page.locator("ol.cases li.case#IL-0100 dl.sections dd ul.terms a")).to_contain_text(["캐시"])


def test_a_terms_page_starts_with_its_term_ticked_and_its_cases_counts(page: Page, site: str) -> None:
    page.goto(f"{site}ko/components/dns/")
    expect(_box(page, "component", "dns")).to_be_checked()
    # the counts are those of the term's two cases, not of the library's three
    assert _count(page, "component", "dns") == "(2)"
    assert _count(page, "component", "database") == "(1)" and _count(page, "component", "nccl") == "(1)"
    expect(_box(page, "component", "slurm")).to_have_count(0)
    expect(_box(page, "year", "2022")).to_have_count(0)
    assert _count(page, "org", "beta") == "(1)"
    shoot(page, "ko-term")
    # the page stays as written (its term is not written into the address, the clear button has nothing to do)
    expect(page.locator("ol.cases li.case")).to_have_count(2)
    expect(page).to_have_url(f"{site}ko/components/dns/")
    expect(page.get_by_role("button", name="거르기 지우기")).to_be_disabled()
    # another filter narrows the term's cases, in full cards
    _box(page, "year", "2024").check()
    expect(page).to_have_url(f"{site}ko/components/dns/?year=2024")
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(page.locator("ol.cases li.case#IL-0001 dl.sections dt").first).to_have_text("촉발")
    # the address alone gives that page again
    page.goto(f"{site}ko/components/dns/?year=2024")
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(_box(page, "component", "dns")).to_be_checked()
    # unticking the page's own term leads to the whole listing, the other filter kept
    _box(page, "component", "dns").uncheck()
    expect(page).to_have_url(f"{site}ko/?year=2024")
    expect(page.locator("ol.cases li.case")).to_have_count(1)
    expect(_box(page, "year", "2024")).to_be_checked()
    expect(_box(page, "component", "dns")).not_to_be_checked()
    # an org's page likewise
    page.goto(f"{site}en/orgs/beta/")
    expect(_box(page, "org", "beta")).to_be_checked()
    assert _count(page, "component", "nccl") == "(1)"
    expect(_box(page, "component", "database")).to_have_count(0)
    shoot(page, "en-org")
    assert axe_violations(page) == []


# ---------------------------------------------------------------- search in the address


def _found(page: Page, *hrefs: str) -> None:
    """The search's results are these links, in this order (waited for: a result of the last query may show)."""
    links = page.locator("#search .search-result-link")
    if not hrefs:
        expect(page.locator("#search .search-status")).to_have_text(re.compile(r"^(검색 결과 0건|0 results)$"))
    expect(links).to_have_count(len(hrefs))
    for i, href in enumerate(hrefs):
        expect(links.nth(i)).to_have_attribute("href", href)


def test_a_search_is_kept_in_the_address_and_runs_from_it(page: Page, site: str) -> None:
    page.goto(f"{site}ko/index.html?component=dns")
    label = page.locator('label[for="search-input"]')
    expect(label).to_be_visible()
    expect(label).to_have_text("검색")
    box = page.get_by_role("searchbox", name="검색", exact=True)
    box.fill("데이터베이스")
    # a term's label finds the case that carries it, not the withdrawn case whose title says it
    _found(page, "../ko/cases/IL-0001/")
    expect(page).to_have_url(f"{site}ko/index.html?component=dns&q={quote('데이터베이스')}")
    shoot(page, "ko-searched")
    # the address alone runs the search again (shared, bookmarked), the filter kept beside it
    page.goto(f"{site}ko/index.html?q={quote('데이터베이스')}")
    expect(box).to_have_value("데이터베이스")
    _found(page, "../ko/cases/IL-0001/")
    # typing replaces the query in the address (no history entry a keystroke); an empty box takes it away
    box.fill("NCCL")
    _found(page, "../ko/cases/IL-0002/")
    expect(page).to_have_url(f"{site}ko/index.html?q=NCCL")
    box.fill("")
    expect(page).to_have_url(f"{site}ko/index.html")
    # neither the "not yet translated" note nor a withdrawn case is found
    box.fill("번역되지")
    _found(page)
    box.fill(WITHDRAWN_WORD)
    _found(page)
    # in English: the label in English; its English label finds the case
    page.goto(f"{site}en/index.html?q=database")
    expect(page.locator('label[for="search-input"]')).to_have_text("Search")
    _found(page, "../en/cases/IL-0001/")
    page.goto(f"{site}en/index.html?q=collectives")
    _found(page, "../en/cases/IL-0002/")
    shoot(page, "en-searched")
    assert axe_violations(page) == []


@pytest.mark.parametrize("width", [390, 1280])
def test_the_search_boxs_parts_come_from_its_script_and_move_nothing(browser: Browser, site: str, width: int) -> None:
    # A listing writes the search's label and input only; search.js adds the count's live region, the
    # results' list and the "more" button, empty or hidden until a search: the page under the box stands
    # where it stands without JavaScript, at either width.
    tops: dict[bool, float] = {}
    for script in (False, True):
        context = browser.new_context(java_script_enabled=script, viewport={"width": width, "height": 900})
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        served = page.goto(f"{site}ko/index.html")
        assert served is not None
        written = served.text()
        assert 'id="search-input"' in written and "search-status" not in written and "search-more" not in written
        status = page.locator("#search p.search-status[role=status][aria-live=polite]")
        if script:
            expect(status).to_have_count(1)
            expect(status).to_have_text("")
            expect(page.locator("#search ol.search-results#search-results")).to_be_hidden()
            expect(page.locator("#search button.search-more")).to_be_hidden()
            expect(page.locator("#search button.search-more")).to_have_text("검색 결과 더 보기")
            expect(page.locator("#search-input")).to_have_attribute("aria-controls", "search-results")
        else:
            expect(status).to_have_count(0)
        box = page.locator(".listing-body").bounding_box()
        assert box is not None
        tops[script] = box["y"]
        context.close()
    assert tops[True] == tops[False], tops


def test_a_terms_page_keeps_its_search_in_the_address(page: Page, site: str) -> None:
    page.goto(f"{site}en/components/dns/?q=nodes")
    _found(page, "../../../en/cases/IL-0002/")
    expect(_box(page, "component", "dns")).to_be_checked()
    page.get_by_role("searchbox", name="Search", exact=True).fill("lookups")
    _found(page, "../../../en/cases/IL-0001/")
    expect(page).to_have_url(f"{site}en/components/dns/?q=lookups")
