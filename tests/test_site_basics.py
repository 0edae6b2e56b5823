"""The reader's site's basics, built by `build_site` from a data root and read in Chromium: a favicon, a
404 page that leads back to the listings, a footer on every page with the licence of the library's texts
(a setting), a sources page naming every site the cases quote with its licence where the registry says
it, URLs shown decoded while their links stay encoded, the listing's filters folded on a phone, and no
hidden file of the build's published.

With INCIDENTLIB_SCREENSHOTS set to a folder, the Chromium test saves there the listing (Korean and
English), the sources page and the 404 page at 390 and 1280 pixels wide.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import serving, shared_stems, site_page
from playwright.sync_api import Browser, expect
from test_site_search import axe_violations

from pipeline.models import Case, Source
from pipeline.render import shown_url
from pipeline.settings import Settings
from pipeline.site.build import build_site
from pipeline.store import Store

pytestmark = pytest.mark.runs_long(50)  # seconds in all: such modules start first (conftest.py)

SCREENSHOTS = os.environ.get("INCIDENTLIB_SCREENSHOTS")
TIMEOUT_MS = 15_000
# A source whose address is percent-encoded, as the DFDS postmortems' are: spaces and Hangul.
ENCODED = "https://github.com/dfds/postmortems/blob/master/PM2019-009%20-%20%ED%95%9C%20IP.md"
DECODED = "https://github.com/dfds/postmortems/blob/master/PM2019-009 - 한 IP.md"
# A source whose decoded address would be markup: shown decoded, as text.
TAGGED = "https://evil.example/a%3Cb%3Eb%3C/b%3E%3Cscript%3Ealert(1)%3C/script%3E"
LICENCE_WORD = "MIT <em>licence</em>"  # the registry's word is text: escaped where shown


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case], case_json: dict[str, Any]) -> Store:
    for n, sources in enumerate(
        [
            [{"url": ENCODED, "kind": "github"}, {"url": "https://example.org/pm/1", "kind": "blog"}],
            [{"url": "https://example.org/pm/2", "kind": "blog"}, {"url": TAGGED, "kind": "blog"}],
            [{"url": "https://example.org/pm/3", "kind": "blog"}],
        ],
        start=1,
    ):
        store.write_case(make_case(f"IL-{n:04d}", date=f"2024-0{n}-05", sources=sources))
    store.sources_dir.mkdir(exist_ok=True)
    (store.sources_dir / "basics.yaml").write_text(
        f"- url: {ENCODED}\n  licence: {LICENCE_WORD}\n- url: https://example.org/pm/1\n  licence: CC BY-SA 4.0\n"
    )
    return store


def _settings(store: Store, **given: Any) -> Settings:
    # The site at a host's root, so that the 404 page's links (on the base's path) resolve on the test's server.
    return Settings(root=store.root, public_base_url="https://example.net", **given)


@pytest.fixture
def site(library: Store, stems_cache: Path) -> Path:
    with shared_stems(library.root, stems_cache):
        build_site(library, _settings(library))
    return library.root / "site"


def test_shown_url_decodes_for_the_eye_only() -> None:
    assert shown_url(ENCODED) == DECODED
    assert shown_url("https://example.org/a%3Cb%3E") == "https://example.org/a<b>"  # Jinja escapes it where shown
    for kept in ("https://example.org/a%0Ab", "https://example.org/%E2%80%AEmoc.evil", "https://example.org/%FF"):
        assert shown_url(kept) == kept  # a line break, a right-to-left override, bytes that are not UTF-8


PAGES = ["ko/index.html", "en/index.html", "ko/cases/IL-0001/index.html", "en/components/index.html"]


@pytest.mark.parametrize("key", [*PAGES, "en/components/nccl/index.html", "ko/sources/index.html"])
def test_every_page_has_the_favicon_and_a_footer_naming_the_licence(site: Path, key: str) -> None:
    doc = site_page(site, key)
    (icon,) = doc.xpath("//head/link[@rel='icon']")
    assert icon.get("type") == "image/svg+xml"
    assert (site / key).parent.joinpath(icon.get("href")).resolve() == (site / "assets/favicon.svg").resolve()
    (footer,) = doc.xpath("//footer[@class='site']")
    (licence,) = footer.xpath(".//a[@rel='license']")
    assert (licence.text, licence.get("href")) == ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/")
    links = {a.get("class"): (site / key).parent.joinpath(a.get("href")).resolve() for a in footer.iter("a")}
    lang = key[:2]
    assert links["about"] == (site / lang / "sources").resolve()
    assert links["feed"] == (site / lang / "feed.xml").resolve() and links["feed"].is_file()
    assert links["api"] == (site / "api/v1/index.json").resolve() and links["api"].is_file()


def test_the_licence_is_the_settings_and_a_changed_one_changes_every_page(library: Store, site: Path) -> None:
    before = {key: (site / key).read_bytes() for key in PAGES}
    build_site(library, _settings(library, site_licence="CC0 1.0", site_licence_url="https://example.net/cc0?a=1&b=2"))
    for key in PAGES:
        (licence,) = site_page(site, key).xpath("//footer//a[@rel='license']")
        assert (licence.text, licence.get("href")) == ("CC0 1.0", "https://example.net/cc0?a=1&b=2"), key
        assert (site / key).read_bytes() != before[key]
    with pytest.raises(ValueError, match="http"):
        Settings(root=library.root, site_licence_url="javascript:alert(1)")


def test_the_sources_page_lists_every_site_with_its_cases_and_licences(site: Path) -> None:
    for lang in ("ko", "en"):
        doc = site_page(site, f"{lang}/sources/index.html")
        sites = {s.get("data-host"): s for s in doc.xpath("//section[@class='source-site']")}
        assert list(sites) == ["example.org", "evil.example", "github.com"]  # most cases first, then by name
        counts = [s.find_class("site-cases")[0].text for s in sites.values()]
        assert counts == (["사례 3건", "사례 1건", "사례 1건"] if lang == "ko" else ["3 cases", "1 case", "1 case"])
        urls = {a.get("href"): a.text for a in doc.xpath("//a[@class='source-url']")}
        assert set(urls) == {ENCODED, TAGGED, *(f"https://example.org/pm/{n}" for n in (1, 2, 3))}
        assert urls[ENCODED] == DECODED  # shown decoded, the link as written
        assert urls[TAGGED] == "https://evil.example/a<b>b</b><script>alert(1)</script>"  # text, never markup
        assert doc.xpath("//script[contains(., 'alert')]") == [] and doc.xpath("//b") == []
        github = sites["github.com"]
        assert github.find_class("source-licence")[0].text == f"({LICENCE_WORD})"
        assert LICENCE_WORD in github.find_class("attribution")[0].text and github.xpath(".//em") == []
        unknown = "기록 없음" if lang == "ko" else "not recorded"
        # one of example.org's three sources has a licence: it is not said of the whole site
        assert sites["example.org"].find_class("attribution")[0].text.endswith(f"CC BY-SA 4.0, {unknown}")
        assert sites["evil.example"].find_class("attribution")[0].text.endswith(unknown)
        (case,) = github.xpath(".//a[@class='source-case']")
        assert (site / lang / "sources").joinpath(case.get("href")).resolve() == site / lang / "cases/IL-0001"
        assert doc.xpath("//a[@rel='license']/@href")[0] == "https://creativecommons.org/licenses/by/4.0/"


def test_the_sources_page_is_made_again_only_when_what_it_lists_changed(library: Store, site: Path) -> None:
    keys = [f"{lang}/sources/index.html" for lang in ("ko", "en")]
    case = library.read_case("IL-0003")
    library.write_case(case.model_copy(update={"summary": {**case.summary, "en": "Only the summary changed."}}))
    report = build_site(library, _settings(library))
    assert report.written and not set(keys) & set(report.written)  # a large library's largest page, not made
    library.write_case(
        case.model_copy(update={"sources": [*case.sources, Source(url="https://example.com/pm/4", kind="blog")]})
    )
    (library.sources_dir / "basics.yaml").write_text("- url: https://example.org/pm/3\n  licence: CC0 1.0\n")
    report = build_site(library, _settings(library))
    assert set(keys) <= set(report.written)
    for key in keys:
        doc = site_page(site, key)
        assert "https://example.com/pm/4" in doc.xpath("//a[@class='source-url']/@href")
        assert doc.xpath("//section[@data-host='example.org']//span[@class='source-licence']/text()") == ["(CC0 1.0)"]


def test_the_case_page_shows_its_source_urls_decoded_and_links_them_encoded(site: Path) -> None:
    for lang in ("ko", "en"):
        (source,) = [
            li
            for li in site_page(site, f"{lang}/cases/IL-0001/index.html").xpath("//li[@class='source']")
            if li.find_class("live")[0].get("href") == ENCODED
        ]
        assert source.find_class("url")[0].text == DECODED
    (tagged,) = [
        li
        for li in site_page(site, "en/cases/IL-0002/index.html").xpath("//li[@class='source']")
        if li.find_class("live")[0].get("href") == TAGGED
    ]
    assert tagged.find_class("url")[0].text.endswith("<script>alert(1)</script>")


def test_the_404_page_is_at_the_root_in_both_languages_and_leads_to_the_listings(site: Path) -> None:
    doc = site_page(site, "404.html")
    assert doc.get("lang") == "ko" and doc.find(".//h1").text == "페이지를 찾을 수 없습니다"
    assert [(a.get("href"), a.getparent().getparent().get("lang")) for a in doc.xpath("//a[@class='listing']")] == [
        ("/ko/", "ko"),
        ("/en/", "en"),
    ]


def test_no_hidden_file_of_the_build_is_published_on_a_build_or_a_rebuild(library: Store, site: Path) -> None:
    assert sorted(p.name for p in site.rglob(".*")) == []
    state = sorted(p.name for p in (library.root / ".incidentlib/site").rglob("*"))
    assert state  # the build's state is kept, outside the site
    case = library.read_case("IL-0002")
    library.write_case(case.model_copy(update={"summary": {"en": "Changed.", "ko": "바뀜."}}))
    build_site(library, _settings(library))
    assert sorted(p.name for p in site.rglob(".*")) == []


# ---------------------------------------------------------------- in Chromium


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


@pytest.mark.parametrize("width", [390, 1280])
def test_the_basics_in_chromium(browser: Browser, served: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 844})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    for lang in ("ko", "en"):
        page.goto(f"{served}/{lang}/")
        # the favicon is served, as the page names it
        icon = page.evaluate("document.querySelector('link[rel=icon]').href")
        assert page.request.get(icon).headers["content-type"] == "image/svg+xml"
        # the filters: folded on a phone, the count on the first screen; open on a wide screen, beside the cases
        fold = page.locator("details#filters")
        expect(page.locator("#facets")).not_to_be_empty()
        count = page.locator("p.count").bounding_box()
        assert count is not None
        expect(page.locator("footer.site a[rel=license]")).to_have_text("CC BY 4.0")
        _shoot(page, f"listing-{lang}-{width}")
        if width == 390:
            assert fold.evaluate("e => e.open") is False
            assert count["y"] + count["height"] <= 844
            expect(page.locator("#facets")).to_be_hidden()
            page.locator("details#filters > summary").click()
            expect(page.locator("#facets")).to_be_visible()
        else:
            assert fold.evaluate("e => e.open") is True
            expect(page.locator("#facets")).to_be_visible()
            # a column beside the cases: the count line and the first case on the first screen too
            filters, case = fold.bounding_box(), page.locator("ol.cases li.case").first.bounding_box()
            assert filters is not None and case is not None
            assert filters["x"] + filters["width"] <= count["x"] and count["y"] < case["y"] < 844
        assert axe_violations(page) == []
        page.locator("footer.site a.about").click()
        expect(page.locator("section.source-site")).to_have_count(3)
        expect(page.locator("a.source-url").filter(has_text="PM2019-009 - 한 IP.md")).to_have_attribute("href", ENCODED)
        _shoot(page, f"sources-{lang}-{width}")
        assert axe_violations(page) == []
        ids = page.locator("a.source-case").evaluate_all("es => es.map(e => getComputedStyle(e).whiteSpace)")
        assert ids and set(ids) == {"nowrap"}  # an id on one line, never split at its hyphen
        page.locator("a.source-case").last.click()  # IL-0001's page, its source shown decoded
        expect(page.locator("li.source .url").first).to_have_text(DECODED)
        expect(page.locator("footer.site a[rel=license]")).to_have_text("CC BY 4.0")
        _shoot(page, f"case-{lang}-{width}")
    page.goto(f"{served}/404.html")
    page.locator("a.listing[hreflang=en]").click()
    expect(page).to_have_url(f"{served}/en/")
    page.goto(f"{served}/404.html")
    _shoot(page, f"404-{width}")
    assert axe_violations(page) == []
    context.close()


def _shoot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)
