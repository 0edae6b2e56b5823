"""The case texts as a reader meets them: their Markdown rendered on the built site and on the review page,
and Korean set by words in Chromium at a phone's width."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from fastapi.testclient import TestClient
from helpers import serving, site_page
from playwright.sync_api import Browser, Page
from test_site_search import axe_violations
from test_web_browser import PASSWORD as WEB_PASSWORD
from test_web_browser import served as serve_web
from test_web_browser import sign_in_here

from pipeline.models import Case
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.site.build import build_site
from pipeline.store import Store
from pipeline.web.app import create_app

LESSON_EN = "Set `CUDA_LAUNCH_BLOCKING=1` before a rerun, to see the kernel that failed.\n- a\n- b"
LESSON_KO = "재실행 전에 `CUDA_LAUNCH_BLOCKING=1` 을 설정하자.\n- 가\n- 나"
REMEDIATION = "Followed the runbook at https://example.com/runbooks/nccl <script>alert(1)</script>"
# With INCIDENTLIB_SCREENSHOTS=DIR the Chromium test saves the site's pages there at both widths.
SCREENSHOTS = os.environ.get("INCIDENTLIB_SCREENSHOTS")
# A long Korean sentence of long words: at 390 pixels it takes several lines, and each must end at a space.
LONG_KO = (
    "분산학습클러스터의 체크포인트저장소가 유지보수작업으로 느려지자 학습랭크들의 임계경로에 놓인 "
    "동기식쓰기호출이 차례차례 막혔고 결국 전체작업이 멈춰서 운영자들은 모니터링대시보드와 스토리지로그를 "
    "번갈아 확인하면서 원인을 찾아야 했다"
)


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case], case_json: dict[str, Any]) -> Store:
    store.write_case(
        make_case(
            "IL-0001",
            date="2024-01-05",
            impact={**case_json["impact"], "scope": "All of `eu-west`, as https://example.com/status said"},
            title={"en": "The `train_step` *hang*", "ko": "`train_step` 멈춤"},
            lessons={"en": LESSON_EN, "ko": LESSON_KO},
            summary={"en": "The job stopped.", "ko": LONG_KO},
            remediation=[{"text": {"en": REMEDIATION, "ko": REMEDIATION}}],
        )
    )
    return store


@pytest.fixture
def site(library: Store) -> Path:
    build_site(library, Settings(root=library.root))
    return library.root / "site"


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_built_case_page_and_listing_render_the_lessons_markdown(site: Path, lang: str) -> None:
    for key in (f"{lang}/cases/IL-0001/index.html", f"{lang}/index.html"):
        doc = site_page(site, key)
        lessons = doc.xpath("//*[@data-field='lessons']") or [
            dt.getnext() for dt in doc.xpath("//dl[@class='sections']/dt") if dt.getnext().find(".//code") is not None
        ]
        assert lessons, key
        (text,) = lessons[0].find_class("md")
        assert [code.text for code in text.iter("code")] == ["CUDA_LAUNCH_BLOCKING=1"], key
        assert [li.text_content() for li in text.xpath(".//ul/li")] == (["a", "b"] if lang == "en" else ["가", "나"])
        assert "`" not in text.text_content() and "- a" not in text.text_content()


def test_a_remediations_url_is_a_link_and_its_html_is_text(site: Path) -> None:
    doc = site_page(site, "en/cases/IL-0001/index.html")
    (item,) = doc.xpath("//*[@data-field='remediation']")
    assert [(a.get("href"), a.get("rel")) for a in item.iter("a")] == [
        ("https://example.com/runbooks/nccl", "nofollow noopener")
    ]
    assert doc.xpath("//script[contains(., 'alert')]") == []
    assert "<script>alert(1)</script>" in item.text_content()


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_impacts_free_text_is_rendered_too(site: Path, lang: str) -> None:
    (scope,) = site_page(site, f"{lang}/cases/IL-0001/index.html").xpath("//*[@data-field='impact.scope']")
    assert [code.text for code in scope.iter("code")] == ["eu-west"]
    assert [a.get("href") for a in scope.iter("a")] == ["https://example.com/status"]


def test_the_title_renders_its_code_and_emphasis_only(site: Path) -> None:
    doc = site_page(site, "en/cases/IL-0001/index.html")
    assert doc.find(".//h1").text_content() == "The train_step hang"
    # in the page's language and unmarked, the title stands in the heading without a span around it
    assert [e.tag for e in doc.find(".//h1").iter()] == ["h1", "code", "em"]
    assert doc.find(".//title").text.startswith("The train_step hang · IL-0001")


def test_the_review_pages_case_view_renders_the_texts_too(library: Store) -> None:
    add_reviewer(library, "ann", "correct horse battery staple")
    client = TestClient(create_app(Settings(root=library.root)), follow_redirects=False)
    token = client.get("/login").text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    signed = client.post(
        "/login", data={"name": "ann", "password": "correct horse battery staple", "csrf_token": token}
    )
    assert signed.status_code == 303, signed.text
    doc = lxml.html.fromstring(client.get("/cases/IL-0001").text)
    (lessons,) = doc.xpath("//*[@data-field='lessons']")
    assert [code.text for code in lessons.iter("code") if code.text.startswith("CUDA")] == [
        "CUDA_LAUNCH_BLOCKING=1"
    ] * 2
    assert [li.text_content() for li in lessons.xpath(".//ul/li")] == ["a", "b", "가", "나"]
    (remediation,) = doc.xpath("//*[@data-field='remediation']")
    assert {a.get("href") for a in remediation.iter("a")} == {"https://example.com/runbooks/nccl"}
    assert doc.xpath("//script[contains(., 'alert')]") == []
    (scope,) = doc.xpath("//*[@data-field='impact.scope']/dd")
    assert [a.get("href") for a in scope.iter("a")] == ["https://example.com/status"]
    (title,) = doc.xpath("//*[@data-field='title']/dd")
    # the title as the reader's site shows it: its code and emphasis rendered, never a link
    assert {c.text for c in title.xpath(".//code")} == {"train_step"}
    assert "hang" in [e.text for e in title.xpath(".//em")]
    assert "`" not in title.text_content()


# ---------------------------------------------------------------- in Chromium


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


# Each character of the element's text with the top of its line box; a character that begins a new line
# whose previous one was not a space is a break inside a word.
_BREAKS_IN_WORDS = """element => {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (box) chars.push([node.data[i], box.top]);
    }
  }
  let lines = 1;
  const inside = [];
  for (let i = 1; i < chars.length; i++) {
    if (chars[i][1] > chars[i - 1][1] + 2) {
      lines++;
      if (!/\\s/.test(chars[i - 1][0]) && !/\\s/.test(chars[i][0])) inside.push(chars[i - 1][0] + "/" + chars[i][0]);
    }
  }
  return {lines, inside};
}"""


def _summary(page: Page) -> Any:
    return page.locator("[data-field='summary'] .md").element_handle()


@pytest.mark.parametrize("width", [390, 1280])
def test_a_long_korean_sentence_breaks_only_between_words(browser: Browser, served: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{served}/ko/cases/IL-0001/")
    summary = _summary(page)
    style = page.evaluate("e => [getComputedStyle(e).wordBreak, getComputedStyle(e).lineBreak]", summary)
    assert style == ["keep-all", "strict"]
    family = page.evaluate("e => getComputedStyle(e).fontFamily", summary)
    assert family.startswith('"Noto Sans KR"'), family
    set_by_words = page.evaluate(_BREAKS_IN_WORDS, summary)
    assert set_by_words["lines"] >= (4 if width == 390 else 2), set_by_words
    assert set_by_words["inside"] == [], set_by_words
    # The measure sees a split word when there is one: Chromium's default rule splits Korean anywhere.
    page.evaluate("e => { e.style.wordBreak = 'normal'; }", summary)
    assert page.evaluate(_BREAKS_IN_WORDS, summary)["inside"] != []
    # Code keeps its own face on a Korean page; the rendered code, lists and links pass axe.
    code = page.locator("[data-field='lessons'] code").first
    assert "monospace" in code.evaluate("e => getComputedStyle(e).fontFamily")
    page.reload()
    assert axe_violations(page) == []
    if SCREENSHOTS:  # every kind of page, each language, for a person to look at
        for lang in ("ko", "en"):
            for key in (f"{lang}/", f"{lang}/cases/IL-0001/", f"{lang}/components/", f"{lang}/years/2024/"):
                page.goto(f"{served}/{key}")
                name = "site-" + key.strip("/").replace("/", "-")
                page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}-{width}.png"), full_page=True)
    context.close()


def test_the_review_pages_case_view_sets_korean_by_words_on_a_phone(browser: Browser, library: Store) -> None:
    add_reviewer(library, "ann", WEB_PASSWORD)
    context = browser.new_context(viewport={"width": 390, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    with serve_web(Settings(root=library.root)) as url:
        page.goto(f"{url}/login")
        sign_in_here(page, "ann")
        page.goto(f"{url}/cases/IL-0001")
        summary = page.locator("[data-field='summary'] .text[lang='ko']").element_handle()
        set_by_words = page.evaluate(_BREAKS_IN_WORDS, summary)
        assert set_by_words["lines"] >= 4 and set_by_words["inside"] == [], set_by_words
        # The label stands above the text, which has the page's width, not a column beside the label.
        row = page.locator("[data-field='summary']")
        assert (
            page.evaluate("e => getComputedStyle(e).gridTemplateColumns.split(' ').length", row.element_handle()) == 1
        )
    context.close()
