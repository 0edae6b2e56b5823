"""The case page as a person reads it, built on disk and read in Chromium: the head (title, org, date,
severity), the text sections in the listing's order, the facts beside them at 1,280 pixels and below them
at 390, empty fields left out, one "not yet translated" mark a section, the record behind its link."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import page_text, serving, shared_stems, site_page
from playwright.sync_api import Browser
from test_site_search import axe_violations

from pipeline.case_view import case_rows
from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.site import pages
from pipeline.site.build import build_site
from pipeline.site.labels import CASE_FACTS, CASE_HEAD, CASE_RECORD_ONLY, Lang, field_label
from pipeline.store import Store
from pipeline.vocabulary import vocabulary
from pipeline.withdraw import withdraw

# With INCIDENTLIB_SCREENSHOTS=DIR the Chromium test saves the case page there, each language at each width.
SCREENSHOTS = os.environ.get("INCIDENTLIB_SCREENSHOTS")
# Three actions written in English only: on the Korean page, one mark for the section, not three.
ACTIONS_EN = [
    "Moved checkpoint writes off the training ranks' critical path.",
    "Set a `timeout` on every storage call, see https://example.com/runbooks/storage",
    "Paged the storage team on write latency above one second.",
]
LESSONS = {"en": "Checkpoints are part of the step.\n- a\n- b", "ko": "체크포인트 저장도 학습 단계의 일부다."}


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case], case_json: dict[str, Any]) -> Store:
    """IL-0001 as the published example: a Korean title with code, some texts in English only, users
    affected unknown, no region; IL-0002 merged into it (its alias)."""
    store.write_case(
        make_case(
            "IL-0001",
            date="2025-06-12",
            title={"en": "`train_step` hang on *every* rank", "ko": "`train_step` 멈춤"},
            summary={"en": "Checkpoint writes stalled the run.", "ko": "체크포인트 저장이 멈추면서 학습이 멈췄다."},
            trigger={"en": "A storage maintenance window."},  # English only: marked once on the Korean page
            remediation=[{"text": {"en": text}} for text in ACTIONS_EN],
            lessons=LESSONS,
            impact={**case_json["impact"], "users": "unknown", "region": ""},
            published="2025-07-02T10:00:00Z",
            updated_at="2026-11-01T08:00:00Z",
        )
    )
    store.write_case(make_case("IL-0002", date="2025-06-13", updated_at="2026-11-01T08:00:00Z"))
    withdraw(
        store, "IL-0002", why="the same outage", by="carol", into="IL-0001", now=datetime(2026, 11, 20, tzinfo=UTC)
    )
    return store


@pytest.fixture
def site(library: Store, stems_cache: Path) -> Path:
    with shared_stems(library.root, stems_cache):
        build_site(library, Settings(root=library.root))
    return library.root / "site"


def test_every_field_of_the_record_has_one_place_on_the_page(make_case: Callable[..., Case]) -> None:
    """The head, the text sections, the facts, or the record only: a field added to the format and placed
    nowhere fails here, rather than vanish from the page."""
    places = [CASE_HEAD, pages._CASE_SECTIONS, CASE_FACTS, CASE_RECORD_ONLY]
    placed = [path for place in places for path in place]
    assert len(placed) == len(set(placed)), "a field in two places"
    assert set(placed) == {row.path for row in case_rows(make_case())}


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_head_says_title_org_date_and_severity_and_the_id_only_small(
    site: Path, lang: str, case_json: dict[str, Any]
) -> None:
    doc = site_page(site, f"{lang}/cases/IL-0001/index.html")
    (head,) = doc.cssselect("header.case-head")
    assert [code.text for code in head.cssselect("h1 code")] == ["train_step"], "the title's code rendered"
    assert "`" not in page_text(head) and "IL-0001" not in page_text(head), "no backticks, no id up top"
    meta = head.cssselect("p.meta")[0]
    assert meta.cssselect("a.org")[0].get("href") == f"../../orgs/{case_json['org_slug']}/"
    assert meta.cssselect("time")[0].get("datetime") == "2025-06-12"
    severity = meta.cssselect(".severity")[0]
    said = vocabulary().terms["severities"]["high"].label_in(lang)
    assert severity.get("data-term") == "high" and page_text(severity) == said
    assert severity.get("href") == "../../severity/high/"
    # The page's <title> is the plain title: the code's text without its backticks.
    title = doc.find(".//title").text
    assert title.startswith("train_step 멈춤 · IL-0001" if lang == "ko" else "train_step hang on every rank · IL-0001")
    # The listing's card renders the title's code too, inside its link.
    card = site_page(site, f"{lang}/index.html").cssselect("li#IL-0001 h2 a .title")[0]
    assert [code.text for code in card.cssselect("code")] == ["train_step"] and "`" not in page_text(card)


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_text_sections_follow_the_listings_order(site: Path, lang: Lang) -> None:
    doc = site_page(site, f"{lang}/cases/IL-0001/index.html")
    shown = [
        page_text(h2).replace("아직 번역되지 않음", "").replace("Not yet translated", "").strip()
        for h2 in doc.cssselect(".narrative section h2")
    ]
    # The listing's card for the same case, its headings in its order, those the case page has as text.
    card = site_page(site, f"{lang}/index.html").cssselect("li#IL-0001 dl.sections dt")
    assert shown == [page_text(dt) for dt in card if page_text(dt) in shown]
    names = ["symptoms_text", "trigger", "detection", "remediation", "action_items", "lessons"]
    assert shown == [field_label(name, lang) for name in names], "detection before remediation, lessons last"
    assert doc.cssselect(".narrative .lead")[0].get("data-field") == "summary", "the summary leads"


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_empty_fields_and_the_records_bookkeeping_are_left_out(site: Path, lang: Lang) -> None:
    doc = site_page(site, f"{lang}/cases/IL-0001/index.html")
    said = page_text(doc.cssselect("main")[0])
    for path in ("impact.users", "impact.region", *CASE_RECORD_ONLY):
        assert not doc.cssselect(f'[data-field="{path}"]'), path
        if path not in ("id",):
            assert field_label(path, lang) not in said.replace(field_label("review.reviewed_by", lang), ""), path
    assert not doc.cssselect(".none") and " — " not in said
    assert "unknown" not in said.lower() and "알 수 없음" not in said


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_facts_hold_terms_durations_sources_aliases_and_dates(site: Path, lang: str) -> None:
    doc = site_page(site, f"{lang}/cases/IL-0001/index.html")
    (facts,) = doc.cssselect("section.facts")
    ids = [dt.get("id") for dt in facts.cssselect("dl.fields > dt")]
    assert ids == [
        "f-components",
        "f-symptoms",
        "f-root_cause",
        "f-contributing",
        "f-domain",
        "f-impact-scope",
        "f-timeline-detected_after",
        "f-timeline-resolved_after",
        "f-sources",
        "f-docs",
        "f-aliases",
        "f-published",
        "f-updated_at",
        "f-review-written_by",
        "f-review-reviewed_by",
        "f-url",
    ]
    assert [a.get("href") for a in facts.cssselect('dd[data-field="aliases"] a')] == ["../IL-0002/"]
    # the case's permanent address: the site's, linked
    assert [a.get("href") for a in facts.cssselect('dd[data-field="url"] a')] == [
        "https://benchlet.com/incidentlib/app/cases/IL-0001"
    ]
    assert facts.cssselect('dd[data-field="published"] time')[0].get("datetime") == "2025-07-02T10:00:00Z"
    assert [a.get("class") for a in facts.cssselect("li.source")[0].cssselect("a")][:2] == ["archived", "live"]


def test_a_section_says_not_yet_translated_once(site: Path) -> None:
    doc = site_page(site, "ko/cases/IL-0001/index.html")
    marks = doc.cssselect(".narrative .not-translated")
    # trigger (one text) and remediation (three actions): a mark each, in its heading; the rest are Korean.
    assert [mark.getparent().getparent().get("data-field") for mark in marks] == ["trigger", "remediation"]
    assert all(mark.getparent().tag == "h2" for mark in marks)
    remediation = doc.cssselect('section[data-field="remediation"]')[0]
    assert [item.get("lang") for item in remediation.cssselect("li > .text")] == ["en"] * 3, (
        "each text says its language"
    )
    assert not site_page(site, "en/cases/IL-0001/index.html").cssselect(".not-translated")


def test_the_record_link_leads_to_its_json(site: Path) -> None:
    doc = site_page(site, "en/cases/IL-0001/index.html")
    (link,) = doc.cssselect("section.facts p.json a")
    assert (page_text(link), link.get("type")) == ("Record (JSON)", "application/json")
    target = (site / "en/cases/IL-0001" / link.get("href")).resolve()
    assert json.loads(target.read_bytes())["id"] == "IL-0001"
    assert page_text(doc.cssselect("section.facts p.json .case-id")[0]) == "IL-0001"


# ---------------------------------------------------------------- in Chromium


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


_BOX = "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"


@pytest.mark.parametrize("width", [390, 1280])
def test_the_case_page_lays_its_facts_beside_or_below_the_text(browser: Browser, served: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    for lang in ("ko", "en"):
        page.goto(f"{served}/{lang}/cases/IL-0001/")
        text = page.locator(".narrative").evaluate(_BOX)
        facts = page.locator("section.facts").evaluate(_BOX)
        if width == 1280:  # a column to the right of the text, its top level with the text's
            assert facts[0] >= text[2] and abs(facts[1] - text[1]) < 40, (text, facts)
            assert facts[2] - facts[0] < (text[2] - text[0]) / 2, "a side column, narrower than the text"
        else:  # a block below the text, as wide as it
            assert facts[1] >= text[3] and abs((facts[2] - facts[0]) - (text[2] - text[0])) < 2, (text, facts)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "nothing wider than the screen"
        assert axe_violations(page) == [], (lang, width)
        if SCREENSHOTS:
            page.screenshot(path=str(Path(SCREENSHOTS) / f"case-{lang}-{width}.png"), full_page=True)
        # The record link resolves on the served site, to the record.
        href = page.locator("p.json a").get_attribute("href")
        assert href is not None
        answer = page.request.get(f"{served}/{lang}/cases/IL-0001/{href}")
        assert answer.ok and answer.json()["id"] == "IL-0001"
        # The merged case's page: its banner first, the same layout below it.
        page.goto(f"{served}/{lang}/cases/IL-0002/")
        assert page.locator(".notice").evaluate(_BOX)[3] <= page.locator("h1").evaluate(_BOX)[1]
        assert axe_violations(page) == [], (lang, width, "IL-0002")
        if SCREENSHOTS:
            page.screenshot(path=str(Path(SCREENSHOTS) / f"case-merged-{lang}-{width}.png"), full_page=True)
    context.close()
