"""Withdrawals and merges on the reader's site, built on disk: the reason in the banner, the survivor's
aliases, the withdrawn page's term chips styled as any, read in Chromium."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import page_text, serving, site_page
from playwright.sync_api import Browser
from test_site_search import axe_violations

from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.site.build import build_site
from pipeline.store import Store
from pipeline.withdraw import withdraw

MERGED_WHY = "the same outage as IL-0001 <b>&</b>"  # markup in an operator's words is text
WITHDRAWN_WHY = "사고가 아니라 계획된 이전"


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case]) -> Store:
    """IL-0002 and IL-0004 merged into IL-0001 (IL-0004 into IL-0002 first, then sent on), IL-0003 withdrawn."""
    for n in (1, 2, 3, 4):
        store.write_case(
            make_case(
                f"IL-000{n}", date=f"2024-0{n}-01", updated_at="2026-11-01T08:00:00Z", published="2026-10-01T08:00:00Z"
            )
        )
    at = datetime(2026, 11, 20, 12, tzinfo=UTC)
    withdraw(store, "IL-0004", why="dup", by="carol", into="IL-0002", now=at)
    withdraw(store, "IL-0002", why=MERGED_WHY, by="carol", into="IL-0001", now=at)
    withdraw(store, "IL-0003", why=WITHDRAWN_WHY, by="carol", now=at)
    return store


@pytest.fixture
def site(library: Store) -> Path:
    build_site(library, Settings(root=library.root))
    return library.root / "site"


def test_a_withdrawn_cases_banner_says_why_in_both_languages(site: Path) -> None:
    for lang, why in (("ko", "이유"), ("en", "Why")):
        merged = site_page(site, f"{lang}/cases/IL-0002/index.html").cssselect(".notice")[0]
        reason = merged.cssselect(".withdrawn-reason")[0]
        assert page_text(reason) == f"{why}: {MERGED_WHY}.", "said as written, its markup as text, a sentence"
        assert reason.cssselect("span[lang]")[0].get("lang") == "en", "an English reason is marked so"
        assert merged.cssselect("a.survivor")[0].get("href") == "../IL-0001/"
        korean = site_page(site, f"{lang}/cases/IL-0003/index.html").cssselect(".notice .withdrawn-reason span")[0]
        assert (korean.text, korean.get("lang")) == (f"{WITHDRAWN_WHY}.", "ko")
        assert not site_page(site, f"{lang}/cases/IL-0001/index.html").cssselect(".notice"), "a standing case has none"


def test_the_survivor_is_also_known_by_the_ids_merged_into_it(site: Path) -> None:
    for lang, said in (("ko", "다른 번호: IL-0002, IL-0004"), ("en", "Also known as: IL-0002, IL-0004")):
        page = site_page(site, f"{lang}/cases/IL-0001/index.html")
        aliases = page.cssselect('section.facts dd[data-field="aliases"]')[0]
        assert f"{page_text(aliases.getprevious())}: {', '.join(aliases.itertext()).strip()}" == said
        assert [a.get("href") for a in aliases.cssselect("a")] == ["../IL-0002/", "../IL-0004/"]
        for gone in ("IL-0002", "IL-0004"):  # and each alias's page sends its reader to the survivor
            assert (
                site_page(site, f"{lang}/cases/{gone}/index.html").cssselect("a.survivor")[0].get("href")
                == "../IL-0001/"
            )
        assert not site_page(site, f"{lang}/cases/IL-0003/index.html").cssselect('[data-field="aliases"]')


def test_the_built_index_says_each_cases_dates_aliases_and_survivor(site: Path, library: Store) -> None:
    index = {entry["id"]: entry for entry in json.loads((site / "api/v1/index.json").read_bytes())}
    said = {
        case_id: (entry["published"], entry["modified"], entry["withdrawn"], entry["aliases"], entry["merged_into"])
        for case_id, entry in index.items()
    }
    at = "2026-11-20T12:00:00Z"
    assert said == {
        "IL-0001": ("2026-10-01T08:00:00Z", at, None, ["IL-0002", "IL-0004"], None),
        "IL-0002": ("2026-10-01T08:00:00Z", at, at, [], "IL-0001"),
        "IL-0003": ("2026-10-01T08:00:00Z", at, at, [], None),
        "IL-0004": ("2026-10-01T08:00:00Z", at, at, [], "IL-0001"),
    }


def _files(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_a_rebuild_removes_the_feeds_of_a_term_and_an_org_whose_pages_went(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    store.write_case(make_case("IL-0001", components=["storage"]))
    store.write_case(make_case("IL-0002", components=["nccl"], org="Solo", org_slug="solo"))
    settings, out = Settings(root=store.root), tmp_path / "site"
    build_site(store, settings, out)
    stale = [f"{lang}/{where}/feed.xml" for lang in ("ko", "en") for where in ("components/nccl", "orgs/solo")]
    assert all((out / path).is_file() for path in stale)
    withdraw(store, "IL-0002", why="not an incident", by="carol")
    report = build_site(store, settings, out)
    assert not [path for path in stale if (out / path).exists()], "no feed follows a page that is gone"
    assert set(stale) <= set(report.removed)
    assert (out / "ko/cases/IL-0002/index.html").is_file(), "the case's own pages stay"
    clean = tmp_path / "clean"
    build_site(store, Settings(root=store.root), clean)
    assert _files(out) == _files(clean), "the rebuild is a clean build, byte for byte"


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


_CHIP = """el => { const s = getComputedStyle(el);
  return [s.display, s.borderTopStyle, s.borderTopWidth, s.borderTopLeftRadius, s.paddingLeft, s.fontSize]; }"""


def test_a_withdrawn_cases_term_chips_keep_their_style_in_chromium(browser: Browser, served: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{served}/ko/cases/IL-0001/")
    standing = page.locator("ul.terms li a").first.evaluate(_CHIP)
    page.goto(f"{served}/ko/cases/IL-0003/")
    chip = page.locator("ul.terms li span[data-term]").first
    assert chip.evaluate(_CHIP) == standing
    assert standing[1] == "solid" and standing[3] != "0px", "a chip: bordered and rounded"
    assert page.locator(".notice .withdrawn-reason").inner_text() == f"이유: {WITHDRAWN_WHY}."
    for width in (390, 1280):  # at 390 the BibTeX block wraps rather than scrolls out of the keyboard's reach
        page.set_viewport_size({"width": width, "height": 900})
        for key in ("ko/cases/IL-0003/", "en/cases/IL-0002/", "ko/cases/IL-0001/", "en/cases/IL-0001/"):
            page.goto(f"{served}/{key}")
            assert axe_violations(page) == [], (key, width)
    context.close()
