"""The reader's site built and written: the command on a real data root, an incremental rebuild, the
Prefect flow, and the site served on loopback and read in Chromium."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import serving
from playwright.sync_api import Browser, Request
from test_site_search import axe_violations

from pipeline.models import Case
from pipeline.records import dump_record
from pipeline.settings import Settings
from pipeline.site.build import BuildReport, build_files, build_site, site_context
from pipeline.site.tree import TREE_CACHE, SiteTree, Wanted
from pipeline.store import Store


def publish(store: Store, *cases: Case) -> None:
    for case in cases:
        store.write_case(case)


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case]) -> Store:
    publish(
        store,
        make_case("IL-0001", date="2024-01-05", related=["IL-0002"]),
        make_case("IL-0002", date="2023-06-01", title={"en": "The second case"}),
        make_case("IL-0003", date="2025-02-01", recurrence_of="IL-0002"),
    )
    return store


def test_the_command_builds_the_site_into_the_data_root_and_says_how_to_open_it(
    cli: Callable[..., Any], library: Store
) -> None:
    result = cli("site", "--root", str(library.root))
    assert result.exit_code == 0, result.output
    site = library.root / "site"
    assert f"python -m http.server -d {site}" in result.stdout
    for key in (
        "index.html",
        "ko/index.html",
        "en/index.html",
        "ko/cases/IL-0002/index.html",
        "cases/IL-0001/index.html",
    ):
        assert (site / key).is_file(), key
    assert (site / "assets" / "site.css").read_text().count("@media print") == 1
    again = json.loads(cli("site", "--root", str(library.root), "--json").stdout)
    assert again["counts"]["written"] == 0 and again["counts"]["removed"] == 0 and again["counts"]["unchanged"] > 10
    assert again["search"] == {"update": "changed", "documents": 0, "pages": {"ko": 3, "en": 3}}
    table = cli("site", "--root", str(library.root))  # the table, on a rebuild that updates the index
    assert table.exit_code == 0, table.output
    assert "search: pages indexed" in table.stdout and "search: documents updated" in table.stdout


def test_an_index_made_by_other_code_is_made_whole_again(library: Store, tmp_path: Path) -> None:
    """A document holds its terms' labels: an index kept from a build by another version of the site's code
    or vocabulary (here: the last build's record says so, as a build before the labels were indexed left
    none) is made whole, not updated; and a rebuild by the same code updates it in place."""
    settings = Settings(root=library.root)
    out = tmp_path / "out"
    build_site(library, settings, out)
    made = {path: path.read_bytes() for path in (out / "search").rglob("*.json")}
    assert _index_update(build_site(library, settings, out)) == "changed"
    tree = SiteTree(library.state, out)
    last = tree.last()
    last["plan"]["code"] = "the code of another version"
    tree.write_cache(TREE_CACHE, pickle.dumps(last))
    assert _index_update(build_site(library, settings, out)) == "whole"
    assert {path: path.read_bytes() for path in (out / "search").rglob("*.json")} == made
    assert _index_update(build_site(library, settings, out)) == "changed"


def _index_update(report: BuildReport) -> str:
    assert report.search is not None
    return str(report.search["update"])


def test_init_ignores_the_site(cli: Callable[..., Any], tmp_path: Path) -> None:
    assert cli("init", str(tmp_path / "lib")).exit_code == 0
    assert "/site/" in (tmp_path / "lib" / ".gitignore").read_text().splitlines()


def test_a_rebuild_after_one_change_rewrites_only_the_pages_it_changes(
    library: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    settings = Settings(root=library.root)
    out = tmp_path / "out"
    first = build_site(library, settings, out)
    assert first.counts()["written"] == len(build_files(site_context(library, settings))) and first.unchanged == 0
    same = build_site(library, settings, out)
    assert same.counts() == {"written": 0, "unchanged": first.counts()["written"], "removed": 0}
    assert same.rendered < 60  # the case pages were not rendered again

    changed = library.read_case("IL-0003")
    library.write_case(changed.model_copy(update={"lessons": {"en": "A new lesson."}}))
    after = build_site(library, settings, out)
    assert "ko/cases/IL-0003/index.html" in after.written and "en/cases/IL-0003/index.html" in after.written
    assert "ko/cases/IL-0001/index.html" not in after.written and "ko/index.html" in after.written
    assert 0 < len(after.written) < first.counts()["written"] / 3 and after.removed == []
    assert "A new lesson." in (out / "en/cases/IL-0003/index.html").read_text()

    # A case gone from cases/ leaves the listing; its pages stay (permalinks), the rest of its files go.
    (library.root / "cases" / "IL-0003.json").unlink()
    gone = build_site(library, settings, out)
    assert (out / "ko/cases/IL-0003/index.html").is_file() and (out / "cases/IL-0003/index.html").is_file()
    assert "IL-0003" not in (out / "ko/index.html").read_text()
    assert all("/cases/" not in path for path in gone.removed)
    # What the removals leave empty goes too (a static server would list an empty folder).
    assert any(not (out / path).parent.exists() for path in gone.removed)
    assert [p for p in out.rglob("*") if p.is_dir() and not any(p.iterdir())] == []
    # A page deleted by hand is made again.
    (out / "en/cases/IL-0001/index.html").unlink()
    assert "en/cases/IL-0001/index.html" in build_site(library, settings, out).written


@pytest.mark.usefixtures("prefect_api")
def test_the_site_flow_runs_and_promotion_builds_the_site(library: Store) -> None:
    from pipeline import flows
    from pipeline.site.build import BuildReport

    report = flows.run(flows.site, BuildReport, root=str(library.root))
    assert report.counts()["written"] > 0 and (library.root / "site" / "ko" / "index.html").is_file()
    assert library.state.read_runs()["site"].state == "completed"
    assert library.state.read_runs()["site"].counts["written"] == report.counts()["written"]
    from pipeline.publish import PromoteReport

    flows.run(flows.promote, PromoteReport, root=str(library.root))  # nothing approved: no rebuild
    assert library.state.read_runs()["site"].counts["written"] == report.counts()["written"]


# ---------------------------------------------------------------- in a real browser


@pytest.fixture
def served(library: Store) -> Iterator[str]:
    build_site(library, Settings(root=library.root))
    with serving(library.root / "site") as url:
        yield url


def test_the_served_site_in_chromium_counts_the_cases_and_shows_every_field(
    browser: Browser, served: str, library: Store
) -> None:
    context = browser.new_context()
    context.set_default_timeout(10_000)
    page = context.new_page()
    requests: list[str] = []

    def seen(request: Request) -> None:
        requests.append(request.url)

    page.on("request", seen)
    page.goto(f"{served}/")  # leads to Korean
    page.wait_for_url(f"{served}/ko/")
    assert page.locator(".count").inner_text() == "사례 3건"
    assert page.locator("li.case").count() == 3
    page.locator("li#IL-0002 h2 a").click()
    page.wait_for_url(f"{served}/ko/cases/IL-0002/")
    shown = {dt.get_attribute("id") for dt in page.locator("section.facts dl.fields dt").element_handles()}
    assert {"f-components", "f-sources", "f-updated_at"} <= shown
    assert page.locator("h1 .not-translated").inner_text() == "아직 번역되지 않음"
    assert page.locator("ul.related-from a").inner_text() == "IL-0001"
    assert page.evaluate("getComputedStyle(document.querySelector('dl.fields dt')).fontWeight") in ("600", "bold")
    assert requests and all(url.startswith(served) for url in requests), requests
    context.close()


def test_a_case_record_is_left_as_it_was(library: Store) -> None:
    before = (library.root / "cases" / "IL-0001.json").read_bytes()
    build_site(library, Settings(root=library.root))
    assert (
        (library.root / "cases" / "IL-0001.json").read_bytes()
        == before
        == dump_record(library.read_case("IL-0001"), "IL-0001")
    )


@pytest.mark.parametrize("bad", ["../outside.html", "/etc/passwd", "a//b", "a/./b", "a\\b", ""])
def test_a_site_path_that_would_leave_its_folder_is_refused(store: Store, tmp_path: Path, bad: str) -> None:
    from pipeline.errors import StoreError

    with pytest.raises(StoreError):
        SiteTree(store.state, tmp_path / "out").sync(Wanted({bad: b"x"}))
    assert not (tmp_path / "outside.html").exists()


def test_the_built_listing_and_case_page_have_no_accessibility_violation_and_cite_today(
    browser: Browser, served: str
) -> None:
    context = browser.new_context()
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{served}/ko/")
    page.wait_for_selector("#facets:not([hidden])")
    assert axe_violations(page) == []
    page.goto(f"{served}/ko/cases/IL-0002/")
    assert axe_violations(page) == []
    # The page is written with the case's last change as the retrieval date; the reader's own date replaces it.
    today = page.evaluate("new Date().toISOString().slice(0, 10)")
    assert f"urldate = {{{today}}}" in page.locator("pre.bibtex").inner_text()
    context.close()
