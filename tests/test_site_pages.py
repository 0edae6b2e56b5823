"""The reader's site's pages, pure: rendered from small hand-made cases and read back as HTML."""

from __future__ import annotations

import json
import posixpath
from datetime import UTC, datetime
from typing import Any

import lxml.html
import pytest

from pipeline.models import Case
from pipeline.site import pages
from pipeline.site.context import SiteContext
from pipeline.site.labels import CASE_FACTS, LISTING_SECTIONS, field_label

BUILT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def case(number: int, date: str, **fields: Any) -> Case:
    case_id = f"IL-{number:04d}"
    return Case.model_validate(
        {
            "id": case_id,
            "org": fields.pop("org", "Acme"),
            "org_slug": fields.pop("org_slug", "acme"),
            "date": date,
            "date_kind": "incident",
            "title": fields.pop("title", {"en": f"Case {number}", "ko": f"사례 {number}"}),
            "summary": {"en": "A summary."},
            "sources": [{"url": f"https://example.org/pm/{number}", "kind": "blog"}],
            "updated_at": "2026-11-30T10:00:00Z",
            "url": f"https://example.org/lib/app/cases/{case_id}",
            **fields,
        }
    )


def render(*cases: Case, **options: Any) -> dict[str, bytes]:
    return pages.render(SiteContext.of(cases, base_url="https://example.org/lib/app", built_at=BUILT, **options))


def html(files: dict[str, bytes], key: str) -> Any:
    return lxml.html.fromstring(files[key].decode())


def text(element: Any) -> str:
    return " ".join(element.text_content().split())


@pytest.fixture
def two() -> dict[str, bytes]:
    """The seed's listing: two cases, NCCL and PyTorch the most frequent components."""
    return render(
        case(
            1,
            "2024-07-01",
            symptoms_text={"ko": "학습이 466번 중단되었다.", "en": "Training was interrupted 466 times."},
            detection={"ko": "flight recorder 가 기록했다.", "en": "The flight recorder logged it."},
            remediation=[{"text": {"ko": "자동화가 처리했다.", "en": "Automation handled it."}}],
            lessons={"en": "Synchronous training is fragile."},
            components=["nccl", "pytorch"],
            root_cause="hardware-failure",
        ),
        case(
            125,
            "2022-03-01",
            org="BigScience",
            org_slug="bigscience",
            trigger={"ko": "GPU 하나가 죽었다.", "en": "A GPU died."},
            components=["nccl", "pytorch", "slurm"],
            contributing=["missing-monitoring"],
        ),
    )


def test_the_korean_listing_is_the_seeds(two: dict[str, bytes]) -> None:
    page = html(two, "ko/index.html")
    assert page.get("lang") == "ko"
    main = page.cssselect("main")[0]
    assert main.get("data-lang") == "ko"
    assert text(page.cssselect(".count")[0]) == "사례 2건"
    assert text(page.cssselect(".range")[0]) == "2건 중 1~2번째"
    items = page.cssselect("ol.cases > li.case")
    assert [item.get("id") for item in items] == ["IL-0001", "IL-0125"]  # newest first
    second = items[1]
    assert "IL-0125" in text(second) and "BigScience" in text(second) and "2022" in text(second)
    assert "GPU 하나가 죽었다." in text(second)
    labels = [text(dt) for dt in items[0].cssselect("dl.sections dt")]
    order = [field_label(name, "ko") for name in LISTING_SECTIONS]
    assert labels == [label for label in order if label in labels] and labels[0] == "증상"
    # As the seed's: the vocabulary's sections stay under their headings when empty (no contributing factor).
    assert labels == ["증상", "원인", "구성 요소", "기여 요인", "감지", "조치", "교훈"]
    assert text(page.cssselect("p.summing-up")[0]) == "이 2건에서 가장 많이 나오는 구성 요소: NCCL, PyTorch, SLURM"
    assert page.cssselect("section#facets[hidden]") and page.cssselect("div#search")
    assert page.cssselect('script[src="../assets/facets.js"][defer]')
    feed = page.cssselect('link[rel="alternate"][type="application/atom+xml"]')[0]
    assert feed.get("href") == "feed.xml"
    assert page.cssselect('a.other-language[href="../en/"]')


def test_a_vocabulary_term_is_shown_by_its_label_in_the_pages_language(two: dict[str, bytes]) -> None:
    ko = text(html(two, "ko/index.html").cssselect("li#IL-0001")[0])
    en = text(html(two, "en/index.html").cssselect("li#IL-0001")[0])
    assert "하드웨어" in ko and "Hardware" in en


def test_text_missing_in_the_pages_language_is_the_others_marked_not_translated(two: dict[str, bytes]) -> None:
    item = html(two, "ko/index.html").cssselect("li#IL-0001")[0]
    lessons = item.cssselect("dd")[-1]
    fallback = lessons.cssselect('span.text[lang="en"]')[0]
    assert fallback.text == "Synchronous training is fragile."
    assert text(lessons.cssselect(".not-translated")[0]) == "아직 번역되지 않음"
    assert not html(two, "en/index.html").cssselect("li#IL-0001 .not-translated")


def test_the_summing_up_line_names_only_components_above_the_rest_and_says_a_tie() -> None:
    # Three cases of two components each, all six different: none stands out, and none is picked by name.
    tied = render(
        case(1, "2024-01-01", components=["dns", "database"]),
        case(2, "2023-01-01", components=["nccl", "pytorch"]),
        case(3, "2022-01-01", components=["slurm", "storage"]),
    )
    assert text(html(tied, "ko/index.html").cssselect("p.summing-up")[0]) == (
        "이 3건에서 두드러지는 구성 요소는 없습니다: 6개가 각각 1건에 나옵니다."
    )
    assert text(html(tied, "en/index.html").cssselect("p.summing-up")[0]) == (
        "No component stands out in these 3 cases: 6 appear in one case each."
    )
    # One case naming four: a tie in it too; DNS named twice and three others once: DNS alone stands out.
    one = render(case(1, "2024-01-01", components=["dns", "database", "nccl", "slurm"]))
    assert text(html(one, "en/index.html").cssselect("p.summing-up")[0]) == (
        "No component stands out in this case: it names 4."
    )
    above = render(
        case(1, "2024-01-01", components=["dns", "database"]),
        case(2, "2023-01-01", components=["dns", "nccl"]),
        case(3, "2022-01-01", components=["slurm"]),
    )
    assert text(html(above, "en/index.html").cssselect("p.summing-up")[0]) == (
        "Components most frequent in these 3 cases: DNS"
    )
    # Two at the top, then a tie below them: the two named; a tie of two in two cases each, said so.
    assert pages.standing({"dns": 3, "nccl": 3, "slurm": 1, "storage": 1}) == pages.Standing(("dns", "nccl"))
    assert pages.standing({"a": 2, "b": 2, "c": 2, "d": 2}) == pages.Standing((), tied=4, times=2)
    assert pages.standing({}) == pages.Standing(())


def test_twenty_a_page_with_the_range_and_links_between_pages() -> None:
    files = render(*(case(n, f"2020-01-{n:02d}") for n in range(1, 26)))
    first, second = html(files, "en/index.html"), html(files, "en/page/2/index.html")
    assert len(first.cssselect("li.case")) == 20 and len(second.cssselect("li.case")) == 5
    assert text(first.cssselect(".range")[0]) == "1–20 of 25" and text(second.cssselect(".range")[0]) == "21–25 of 25"
    assert first.cssselect('a[rel="next"]')[0].get("href") == "../en/page/2/"
    assert second.cssselect('a[rel="prev"]')[0].get("href") == "../../../en/"
    # The summing-up line is of the listing's 25 cases on each of its pages.
    assert "25" in text(second.cssselect(".summing-up")[0])
    assert second.cssselect('link[rel="stylesheet"]')[0].get("href") == "../../../assets/site.css"


def test_a_terms_page_holds_a_hundred_compact_rows() -> None:
    # A facet value's listing shows each case by its id, title, org, year and components: five times as many
    # a page as the full listing, so a term of many cases has few pages.
    machine = case(1, "2020-02-01", machine_translations=["title.ko"], components=["nccl", "dns"])
    files = render(machine, *(case(n, f"2020-{1 + n % 12:02d}-01") for n in range(2, 106)))
    assert pages.COMPACT_PAGE_SIZE == 100
    first, second = html(files, "en/years/2020/index.html"), html(files, "en/years/2020/page/2/index.html")
    assert len(first.cssselect("li.case")) == 100 and len(second.cssselect("li.case")) == 5
    assert not first.cssselect("dt:not(:first-child)"), "compact rows: the components only"
    assert (
        text(first.cssselect(".range")[0]) == "1–100 of 105" and text(second.cssselect(".range")[0]) == "101–105 of 105"
    )
    assert first.cssselect('a[rel="next"]')[0].get("href") == "../../../en/years/2020/page/2/"
    assert "en/years/2020/page/3/index.html" not in files
    # a case a line: nothing between a row's blocks, nor between the rows
    listed = files["en/years/2020/index.html"].decode().split('<ol class="cases">\n')[1].split("</ol>")[0]
    rows = listed.splitlines()
    assert len(rows) == 100 and all(row.startswith('<li class="case"') and row.endswith("</li>") for row in rows)
    assert len(html(files, "en/index.html").cssselect("li.case")) == 20, "the full listing keeps twenty a page"
    # A row is made of the case's card (no case file read for it) and says what the full card says of it:
    # its title machine-translated, its components.
    row = html(files, "ko/years/2020/index.html").cssselect("li#IL-0001")[0]
    listing = [key for key in files if key == "ko/index.html" or key.startswith("ko/page/")]
    (full,) = (li for key in listing for li in html(files, key).cssselect("li#IL-0001"))
    assert text(row.cssselect("h2")[0]) == text(full.cssselect("h2")[0])
    assert row.cssselect("h2 .machine-translated") and [a.text for a in row.cssselect("dd a")] == ["NCCL", "DNS"]
    # a title in the page's language, unmarked, stands in its .title without a span of its own; marked, it keeps it
    other = html(files, "ko/years/2020/index.html").cssselect("li#IL-0002 h2 .title")[0]
    assert text(other) == "사례 2" and len(other) == 0 and row.cssselect("h2 .title > span.text")


def test_a_page_per_term_and_org_with_counts_and_a_facet_index(two: dict[str, bytes]) -> None:
    nccl = html(two, "ko/components/nccl/index.html")
    assert text(nccl.cssselect(".count")[0]) == "사례 2건"
    assert [li.get("id") for li in nccl.cssselect("li.case")] == ["IL-0001", "IL-0125"]
    slurm = html(two, "en/components/slurm/index.html")
    assert [li.get("id") for li in slurm.cssselect("li.case")] == ["IL-0125"]
    assert text(slurm.cssselect(".count")[0]) == "1 case"
    assert [li.get("id") for li in html(two, "ko/orgs/bigscience/index.html").cssselect("li.case")] == ["IL-0125"]
    index = html(two, "ko/components/index.html")
    counts = {text(li.cssselect("a")[0]): text(li.cssselect(".n")[0]) for li in index.cssselect("ul.facet-values li")}
    assert counts == {"NCCL": "2", "PyTorch": "2", "SLURM": "1"}
    assert "ko/root-causes/hardware-failure/index.html" in two and "ko/years/2022/index.html" in two


def test_facets_json_is_the_contracts(two: dict[str, bytes]) -> None:
    data = json.loads(two["api/v1/facets.json"])
    assert data["facets"] == ["domain", "component", "symptom", "contributing", "root_cause", "severity", "org", "year"]
    assert (
        data["labels"]["ko"]["component"]["nccl"] == "NCCL"
        and data["labels"]["en"]["org"]["bigscience"] == "BigScience"
    )
    first = data["cases"][0]
    assert set(first) == {"id", "title", "org", "year", *data["facets"]} - {"year"} | {"year"}
    assert first["id"] == "IL-0001" and first["title"] == {"ko": "사례 1", "en": "Case 1"}
    assert first["component"] == ["nccl", "pytorch"] and first["root_cause"] == "hardware-failure"
    assert first["year"] == "2024" and first["org"] == "acme"


def test_facet_counts_json_holds_each_values_count_and_no_case(two: dict[str, bytes]) -> None:
    counts = json.loads(two["api/v1/facet-counts.json"])
    full = json.loads(two["api/v1/facets.json"])
    assert counts["facets"] == full["facets"] and counts["labels"] == full["labels"]
    assert counts["total"] == len(full["cases"]) and "cases" not in counts
    for facet in full["facets"]:
        expected: dict[str, int] = {}
        for case in full["cases"]:
            found = case[facet] if isinstance(case[facet], list) else [case[facet]]
            for value in found:
                if value not in (None, ""):
                    expected[value] = expected.get(value, 0) + 1
        assert counts["counts"][facet] == expected


def test_a_case_page_has_every_field_it_shows_labelled_in_its_language(case_json: dict[str, Any]) -> None:
    full = Case.model_validate(
        {
            **case_json,
            "machine_translations": ["summary.ko"],
            "aliases": ["IL-0001"],
            "published": "2025-07-02T10:00:00Z",
        }
    )
    files = render(full)
    for lang in ("ko", "en"):
        page = html(files, f"{lang}/cases/{full.id}/index.html")
        assert page.get("lang") == lang
        shown = {dt.get("id"): text(dt) for dt in page.cssselect("section.facts dl.fields dt")}
        # Every fact the full case has (its links to other cases stripped by the fixture), under its label.
        facts = [path for path in CASE_FACTS if path not in ("related", "recurrence_of")]
        wanted = {f"f-{path.replace('.', '-')}": field_label(path, lang) for path in facts}
        assert shown == wanted
        sections = {s.get("id"): text(s.cssselect("h2")[0]) for s in page.cssselect(".narrative section")}
        assert sections["f-trigger"] == field_label("trigger", lang)
        assert page.cssselect('a[href="../../../api/v1/cases/IL-0428.json"]')
    ko = html(files, "ko/cases/IL-0428/index.html")
    summary = ko.cssselect("#f-summary")[0]
    assert text(summary.cssselect(".machine-translated")[0]).startswith("기계 번역")
    assert summary.cssselect(".machine-translated a")[0].get("href") == "../../../en/cases/IL-0428/#f-summary"
    assert not ko.cssselect("#f-trigger .machine-translated")


def test_sources_show_the_archived_copy_first_and_the_links_state() -> None:
    from pipeline.models import LinkState

    one = case(
        1,
        "2024",
        sources=[
            {
                "url": "https://example.org/pm",
                "kind": "blog",
                "archived": "https://web.archive.org/web/2024/https://example.org/pm",
            }
        ],
    )
    state = LinkState(url="https://example.org/pm", checked_at="2026-11-20T00:00:00Z", status="gone", http_status=404)
    page = html(render(one, links={"https://example.org/pm": state}), "en/cases/IL-0001/index.html")
    source = page.cssselect("li.source")[0]
    links = [a.get("class") for a in source.cssselect("a")]
    assert links[:2] == ["archived", "live"]
    assert text(source.cssselect(".link-state")[0]) == "Last checked 2026-11-20: gone"
    assert source.get("data-status") == "gone"


def test_relations_are_shown_both_ways() -> None:
    files = render(case(1, "2024", related=["IL-0002"]), case(2, "2023"), case(3, "2025", recurrence_of="IL-0002"))
    two = html(files, "en/cases/IL-0002/index.html")
    assert [a.get("href") for a in two.cssselect("ul.related-from a")] == ["../IL-0001/"]
    assert [a.get("href") for a in two.cssselect("ul.recurrences a")] == ["../IL-0003/"]
    one = html(files, "en/cases/IL-0001/index.html")
    assert one.cssselect('dt#f-related + dd a[href="../IL-0002/"]')
    three = html(files, "ko/cases/IL-0003/index.html")
    assert three.cssselect('dt#f-recurrence_of + dd a[href="../IL-0002/"]')


def test_the_citation_has_the_retrieval_date_in_text_and_bibtex(two: dict[str, bytes]) -> None:
    page = html(two, "en/cases/IL-0125/index.html")
    citation = text(page.cssselect(".citation")[0])
    assert citation.startswith("BigScience.") and "https://example.org/lib/app/cases/IL-0125" in citation
    # The case's own last change (updated_at) is written; assets/cite.js puts the reader's date in its place.
    assert "Retrieved 2026-11-30" in citation
    assert page.cssselect(".citation")[0].get("data-retrieved") == "2026-11-30"
    bibtex = page.cssselect("pre.bibtex")[0].text_content()
    assert bibtex.startswith("@misc{incidentlib-IL-0125,") and "urldate = {2026-11-30}" in bibtex
    assert "author = {{BigScience}}" in bibtex


def test_withdrawn_and_merged_cases_keep_a_page_that_says_so_and_leave_the_listing() -> None:
    gone = case(2, "2023")
    object.__setattr__(gone, "withdrawn", datetime(2026, 11, 1, tzinfo=UTC))  # the field comes with helper DATA
    merged = case(3, "2022")
    object.__setattr__(merged, "merged_into", "IL-0001")
    files = render(case(1, "2024"), gone, merged)
    listing = html(files, "ko/index.html")
    assert [li.get("id") for li in listing.cssselect("li.case")] == ["IL-0001"]
    assert text(listing.cssselect(".count")[0]) == "사례 1건"
    assert [c["id"] for c in json.loads(files["api/v1/facets.json"])["cases"]] == ["IL-0001"]
    withdrawn = html(files, "en/cases/IL-0002/index.html")
    assert "withdrawn on 2026-11-01" in text(withdrawn.cssselect(".notice")[0])
    survivor = html(files, "ko/cases/IL-0003/index.html").cssselect(".notice a.survivor")[0]
    assert survivor.get("href") == "../IL-0001/"
    # The withdrawn case's terms and org are no longer listed anywhere: its page names them without links,
    # so none of its links lead to a page the site does not have.
    assert withdrawn.cssselect("ul.terms span[data-term]") and not withdrawn.cssselect("ul.terms a")
    # A listed case's chips are links whose address names the term: no data-term repeats it (the site's
    # bytes), written from the language's folder, not from the site's root.
    chips = html(files, "ko/cases/IL-0001/index.html").cssselect("ul.terms a")
    assert chips and not any(chip.get("data-term") for chip in chips)
    assert all(chip.get("href", "").startswith("../../") and "/ko/" not in chip.get("href", "") for chip in chips)
    for href in (a.get("href") for a in withdrawn.cssselect("a[href]")):
        if href and href.endswith("/") and not href.startswith(("http:", "https:")):  # a page of the site
            target = posixpath.normpath(posixpath.join("en/cases/IL-0002/", href))
            assert target in files or f"{target}/index.html" in files, href
    both = case(4, "2021")
    object.__setattr__(both, "withdrawn", datetime(2026, 11, 1, tzinfo=UTC))
    object.__setattr__(both, "merged_into", "IL-0001")
    notice = text(html(render(case(1, "2024"), both), "ko/cases/IL-0004/index.html").cssselect(".notice")[0])
    assert "철회되었습니다. 이 사례는 IL-0001" in notice, notice


def test_the_root_and_a_cases_short_address_lead_to_korean(two: dict[str, bytes]) -> None:
    root = html(two, "index.html")
    assert root.cssselect('meta[http-equiv="refresh"]')[0].get("content") == "0; url=ko/"
    short = html(two, "cases/IL-0001/index.html")
    assert short.cssselect("a")[0].get("href") == "../../ko/cases/IL-0001/"


def test_no_page_asks_for_anything_outside_the_site(two: dict[str, bytes]) -> None:
    for key in two:
        if not key.endswith(".html"):
            continue
        page = html(two, key)
        loaded = [e.get("src") for e in page.cssselect("[src]")] + [
            e.get("href") for e in page.cssselect("link[href]") if e.get("rel") != "canonical"
        ]
        if key == "404.html":  # served at any missing page's address: it stands on the base's own path
            assert all(ref.startswith("/lib/app/") for ref in loaded), loaded
            continue
        assert all(not ref.startswith(("http:", "https:", "//", "/")) for ref in loaded), (key, loaded)


def test_a_korean_case_page_says_durations_in_korean_and_marks_the_impacts_english() -> None:
    timed = case(
        1,
        "2024",
        timeline={"detected_after": "PT11M", "resolved_after": "PT1H31M"},
        impact={"scope": "Uploads failed for every user", "users": "unknown", "region": "서울 리전"},
    )
    files = render(timed)
    korean = html(files, "ko/cases/IL-0001/index.html")
    resolved = korean.cssselect('dd[data-field="timeline.resolved_after"] time')[0]
    assert (text(resolved), resolved.get("datetime")) == ("1시간 31분", "PT1H31M")
    assert text(korean.cssselect('dd[data-field="timeline.detected_after"]')[0]) == "11분"
    scope = korean.cssselect('dd[data-field="impact.scope"]')[0]
    assert scope.cssselect('span[lang="en"]') and text(scope.cssselect(".not-translated")[0]) == "아직 번역되지 않음"
    assert not korean.cssselect('[data-field="impact.users"]'), "users affected unknown: left out"
    assert text(korean.cssselect('dd[data-field="impact.region"]')[0]) == "서울 리전"
    english = html(files, "en/cases/IL-0001/index.html")
    assert text(english.cssselect('dd[data-field="timeline.resolved_after"]')[0]) == "1 hour 31 minutes"
    assert not english.cssselect('dd[data-field="impact.scope"] .not-translated')


def test_a_listing_ends_with_the_sites_note_in_its_language(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The seed's listing ends by naming a tool that reads such reports: the operator's note, per language
    (INCIDENTLIB_SITE_NOTE), after the summing-up; a language without one has none."""
    monkeypatch.setenv("INCIDENTLIB_SITE_NOTE", '{"ko": "이 목록을 읽는 점검 도구가 있습니다."}')
    from pipeline.settings import Settings

    note = Settings(root=tmp_path).site_note
    files = render(case(1, "2025-01-01", components=["nccl"]), note=note)
    ko = html(files, "ko/index.html")
    assert text(ko.cssselect("p.summing-up + p.site-note")[0]) == "이 목록을 읽는 점검 도구가 있습니다."
    assert ko.cssselect("p.site-note") and html(files, "ko/components/nccl/index.html").cssselect("p.site-note")
    assert not html(files, "en/index.html").cssselect("p.site-note")
