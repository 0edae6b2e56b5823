"""The crawl, called as a library: drafts made, updated, kept; failures recorded; nothing lost."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from documents import POSTMORTEM_MD

from pipeline.crawl import CrawlReport, SourceReport, after_crawl, crawl, extract_one, host_groups
from pipeline.draft import new_draft
from pipeline.errors import FetchError
from pipeline.ids import draft_id_for
from pipeline.models import DraftState, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, Site, SiteFarm, add_hostile_sites
from pipeline.store import Store
from pipeline.validate import validate


@pytest.fixture
def settings(root: Path) -> Settings:
    return Settings(root=root, allow_private_hosts=True, per_host_delay_s=0.0, retry_backoff_s=0.01, max_retries=1)


def register(root: Path, *entries: dict) -> list[SourceEntry]:
    lines = "".join("- " + "\n  ".join(f"{k}: {json.dumps(v)}" for k, v in entry.items()) + "\n" for entry in entries)
    (root / "sources" / "test.yaml").write_text(lines)
    return [SourceEntry.model_validate(e) for e in entries]


def crawled_postmortem(farm: SiteFarm, store: Store, settings: Settings, root: Path) -> tuple[Site, str]:
    """One registered Markdown postmortem, crawled once: its site and its draft's id."""
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    (entry,) = register(root, {"url": site.url("/pm.md")})
    crawl(store, settings)
    return site, draft_id_for(entry.url)


def test_a_crawl_makes_one_draft_per_source_ready_for_review(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/pm/cache.md"] = Page.markdown(POSTMORTEM_MD)
    register(root, {"url": site.url("/pm/cache.md"), "org": "Acme", "kind": "github"})

    report = crawl(store, settings)

    assert report.counts() == {"new": 1, "updated": 0, "unchanged": 0, "failed": 0, "deferred": 0, "skipped": 0}
    draft = store.read_draft(draft_id_for(site.url("/pm/cache.md")))
    assert (draft.org, draft.org_slug, draft.date) == ("Acme", "acme", "2024-03-05")
    assert draft.title == {"en": "Cache stampede took the API down"}
    assert draft.summary and draft.summary["en"].startswith("On 5 March 2024 the API returned errors")
    assert draft.impact.scope.startswith("About 30% of API requests failed")
    assert [a.text["en"] for a in draft.action_items] == [
        "Warm the cache before a restart.",
        "Add request coalescing for cache misses.",
    ]
    assert draft.lessons == {"en": "A cache is part of capacity, not only of speed."}
    assert {s.field for s in draft.sections} >= {"summary", "impact", "timeline", "root_cause", "action_items"}
    assert "database" in draft.components
    assert draft.sources[0].kind == "github" and draft.sources[0].archive.status == "pending"
    assert (draft.review.written_by, draft.review.reviewed_by, draft.review.reviewed_at) == (None, None, None)
    assert draft.origin.etag and draft.origin.sha256 and draft.origin.format == "markdown"
    assert validate(store).faults == []


def test_a_recrawl_of_unchanged_pages_downloads_and_writes_nothing(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    for n in range(3):
        site.pages[f"/pm{n}.md"] = Page.markdown(POSTMORTEM_MD.replace("Cache", f"Cache {n}"))
    register(root, *({"url": site.url(f"/pm{n}.md")} for n in range(3)))
    crawl(store, settings)
    files = {p: p.read_bytes() for p in store.files("draft")}

    again = crawl(store, settings)

    assert again.counts()["unchanged"] == 3
    assert (again.bodies, again.writes) == (0, 0)
    assert sum(site.bodies.values()) == 3
    assert {p: p.read_bytes() for p in store.files("draft")} == files


def test_a_changed_page_updates_its_draft_but_keeps_what_a_person_wrote(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site, draft_id = crawled_postmortem(farm, store, settings, root)
    store.update_draft(
        draft_id, lambda d: d.model_copy(update={"summary": {"en": "A writer's summary.", "ko": "작성자의 요약."}})
    )

    site.pages["/pm.md"] = Page.markdown(
        POSTMORTEM_MD.replace("A cache is part of capacity", "A cold cache is part of capacity").replace(
            "On 5 March 2024 the API", "On 5 March 2024 the public API"
        )
    )
    report = crawl(store, settings)

    assert report.counts()["updated"] == 1
    draft = store.read_draft(draft_id)
    assert draft.summary == {"en": "A writer's summary.", "ko": "작성자의 요약."}, "the person's edit is kept"
    assert draft.lessons == {"en": "A cold cache is part of capacity, not only of speed."}, "machine text refreshed"
    assert "the public API" in (draft.text or "")


def test_failures_are_recorded_on_their_draft_and_the_rest_go_on(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    good, bad = farm.add_site("good"), farm.add_site("bad")
    good.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    bad.pages["/gone"] = Page(status=410)
    bad.pages["/blocked"] = Page(status=403)
    bad.pages["/binary"] = Page(bytes(range(256)) * 10, content_type="text/html")
    bad.pages["/empty"] = Page.html("<html><body></body></html>")
    bad.pages["/loop"] = Page.redirect("/loop")
    entries = register(
        root,
        {"url": good.url("/pm.md")},
        *({"url": bad.url(p)} for p in ("/gone", "/blocked", "/binary", "/empty", "/loop")),
    )

    report = crawl(store, settings)

    assert report.counts() == {"new": 1, "updated": 0, "unchanged": 0, "failed": 5, "deferred": 0, "skipped": 0}
    assert report.failures() == {
        "http-410": 1,
        "http-403": 1,
        "extract-unsupported": 1,
        "extract-empty": 1,
        "redirect-loop": 1,
    }
    reasons = {e.url: store.read_draft(draft_id_for(e.url)).origin.failure for e in entries}
    assert reasons[good.url("/pm.md")] is None
    gone = reasons[bad.url("/gone")]
    assert gone is not None and gone.reason == "http-410"
    binary = reasons[bad.url("/binary")]
    assert binary is not None and "binary content served as text/html" in binary.message
    assert validate(store).faults == []


def test_counts_mean_what_they_say_a_failure_writes_no_draft_and_a_first_text_is_new(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/a.md"] = Page(status=503)
    site.pages["/b.md"] = Page(status=404)
    register(root, {"url": site.url("/a.md")}, {"url": site.url("/b.md")})
    failed = crawl(store, settings)
    assert failed.counts()["failed"] == 2 and failed.writes == 0, "both failed: no draft written"
    assert all(s.wrote for s in failed.sources), "the failure is kept on each draft all the same"

    # The first good crawl of a source that failed before gives its draft its first text: new, not updated.
    site.pages["/a.md"] = Page.markdown(POSTMORTEM_MD)
    first = crawl(store, settings)
    assert [(s.url, s.outcome) for s in first.sources if s.outcome != "failed"] == [(site.url("/a.md"), "new")]
    assert first.writes == 1
    site.pages["/a.md"] = Page.markdown(POSTMORTEM_MD + "\nOne more line.\n")
    assert crawl(store, settings).counts()["updated"] == 1


def test_a_draft_a_person_broke_by_hand_is_not_overwritten(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    (entry,) = register(root, {"url": site.url("/pm.md")})
    path = store.path("draft", draft_id_for(entry.url))
    path.write_text('{"id": "half-edited",')
    report = crawl(store, settings)
    assert [(s.outcome, s.reason) for s in report.sources] == [("failed", "invalid-draft")]
    assert path.read_text() == '{"id": "half-edited",'


def test_a_draft_an_earlier_version_named_keeps_its_id_and_is_crawled_into(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    url = site.url("/pm.md").replace("127.0.0.1", "2130706433")  # 127.0.0.1 spelt as one number
    (entry,) = register(root, {"url": url})
    # 0.1.0 wrote no address one way: its canonical URL was the URL, and the id its hash's.
    earlier = f"2130706433-pm-{hashlib.sha256(url.encode()).hexdigest()[:8]}"
    assert draft_id_for(url) != earlier
    store.write_draft(new_draft(entry).model_copy(update={"id": earlier}))

    report = crawl(store, settings)

    assert [(s.draft_id, s.outcome) for s in report.sources] == [(earlier, "updated")]
    assert store.ids("draft") == [earlier], "no second draft of the page"
    assert store.read_draft(earlier).title == {"en": "Cache stampede took the API down"}
    assert [str(w) for w in validate(store).warnings] == [
        f"drafts/{earlier}.json: id: {url} gives the id {draft_id_for(url)} now; "
        "this draft keeps its id, and the crawl updates it"
    ]
    assert validate(store).faults == []


def test_hosts_stay_whole_in_one_share_and_shares_balance() -> None:
    entries = [SourceEntry(url=f"https://a.example/{n}") for n in range(6)]
    entries += [SourceEntry(url=f"https://b.example/{n}") for n in range(3)]
    entries += [SourceEntry(url=f"https://github.com/o{n}/r/blob/main/x.md") for n in range(3)]
    shares = host_groups(entries, 3)
    hosts = [{e.url.split("/")[2] for e in share} for share in shares]
    assert sorted(len(s) for s in shares) == [3, 3, 6]
    assert all(len(h) == 1 for h in hosts), "all GitHub blobs share raw.githubusercontent.com"


def test_spellings_of_one_host_stay_in_one_share() -> None:
    # The Fetcher keeps a host's turns by host and port; a share per spelling would let two
    # Fetchers each crawl the same server at the per-host limit.
    urls = ["https://a.example/1", "https://A.example:443/2", "https://0x7f.0.0.1/3", "https://127.0.0.1/4"]
    urls += ["http://a.example:80/5", "https://a.example:8443/6"]
    shares = host_groups([SourceEntry(url=url) for url in urls], 6)
    assert sorted(sorted(e.url[-1] for e in share) for share in shares) == [["1", "2"], ["3", "4"], ["5"], ["6"]]


def test_extract_one_fetches_without_writing(farm: SiteFarm, settings: Settings, store: Store) -> None:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    draft = extract_one(settings, site.url("/pm.md"), org="Acme")
    assert draft.title == {"en": "Cache stampede took the API down"} and draft.org == "Acme"
    assert store.ids("draft") == []
    with pytest.raises(FetchError, match=r"/missing: answered HTTP 404: not found"):
        extract_one(settings, site.url("/missing"))


def test_a_source_registered_twice_is_crawled_once(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    register(root, {"url": site.url("/pm.md")}, {"url": site.url("/pm.md") + "#again"})
    report = crawl(store, settings)
    assert [s.outcome for s in report.sources] == ["new"]
    assert site.requests["/pm.md"] == 1


def test_a_field_a_person_emptied_stays_empty(farm: SiteFarm, store: Store, settings: Settings, root: Path) -> None:
    site, draft_id = crawled_postmortem(farm, store, settings, root)
    store.update_draft(draft_id, lambda d: d.model_copy(update={"components": [], "lessons": None}))
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD + "\nOne more line about the database cache.\n")
    assert crawl(store, settings).counts()["updated"] == 1
    draft = store.read_draft(draft_id)
    assert (draft.components, draft.lessons) == ([], None)
    assert "One more line" in (draft.text or "")


def test_a_draft_being_reviewed_keeps_its_fields_and_sees_the_new_text(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site, draft_id = crawled_postmortem(farm, store, settings, root)
    store.update_draft(draft_id, lambda d: d.model_copy(update={"state": DraftState.IN_REVIEW}))
    before = store.read_draft(draft_id)
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD.replace("A cache is part", "A warm cache is part"))
    crawl(store, settings)
    after = store.read_draft(draft_id)
    assert after.lessons == before.lessons
    assert "A warm cache is part" in (after.text or "") and after.origin.sha256 != before.origin.sha256


def test_a_normalised_value_is_still_recognised_as_the_extractors() -> None:
    from pipeline.draft import _merge, new_draft

    draft = _merge(new_draft(SourceEntry(url="https://example.org/a")), {"org": "  Acme Corp  "}, {})
    assert draft.org == "Acme Corp"
    assert _merge(draft, {"org": "Acme Corporation"}, {}).org == "Acme Corporation"


def test_odd_inputs_fail_their_own_source_and_nothing_else(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("odd")
    site.pages["/good.md"] = Page.markdown(POSTMORTEM_MD)
    site.pages["/bad-gzip"] = Page(b"garbage", headers={"Content-Encoding": "gzip"})
    site.pages["/odd-date.md"] = Page.markdown(
        "---\ntitle: Odd\ndate: March 3, 2024\n---\n\nThe queue stalled for an hour.\n"
    )
    register(
        root,
        {"url": site.url("/good.md")},
        {"url": site.url("/bad-gzip")},
        {"url": site.url("/odd-date.md")},
        {"url": "http://a..b/x"},
    )
    report = crawl(store, settings.model_copy(update={"allow_private_hosts": False}))
    outcomes = {s.url: (s.outcome, s.reason) for s in report.sources}
    assert outcomes[site.url("/good.md")][1] == "private-address", "loopback refused when not allowed"
    report = crawl(store, settings)
    outcomes = {s.url: (s.outcome, s.reason) for s in report.sources}
    # Each one's first text, after a crawl that failed them all: new (issue 24), not updated.
    assert outcomes[site.url("/good.md")] == ("new", None)
    assert outcomes[site.url("/bad-gzip")] == ("failed", "bad-response")
    assert outcomes[site.url("/odd-date.md")] == ("new", None)
    assert store.read_draft(draft_id_for(site.url("/odd-date.md"))).date == "2024-03-03"
    assert outcomes["http://a..b/x"][0] == "failed"
    assert report.errors == []


def test_a_host_asking_to_wait_an_hour_is_deferred_and_its_drafts_left_as_they_were(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("busy")
    site.pages["/pm1.md"] = Page.markdown(POSTMORTEM_MD)
    site.pages["/pm2.md"] = Page.markdown(POSTMORTEM_MD.replace("Cache", "Cold cache"))
    register(root, {"url": site.url("/pm1.md")}, {"url": site.url("/pm2.md")})
    crawl(store, settings)
    files = {p: p.read_bytes() for p in store.files("draft")}

    site.pages["/pm1.md"] = Page(status=429, headers={"Retry-After": "3600"})
    site.pages["/pm2.md"] = Page.markdown(POSTMORTEM_MD + "\nChanged since.\n")
    site.pages["/pm3.md"] = Page.markdown(POSTMORTEM_MD)
    register(root, *({"url": site.url(f"/pm{n}.md")} for n in (1, 2, 3)))
    report = crawl(store, settings)

    assert report.counts() == {"new": 0, "updated": 0, "unchanged": 0, "failed": 0, "deferred": 3, "skipped": 0}
    assert {s.reason for s in report.sources} == {"deferred"}
    assert [site.requests[f"/pm{n}.md"] for n in (1, 2, 3)] == [2, 1, 0], "only the request told to wait"
    assert {p: p.read_bytes() for p in store.files("draft")} == files, "drafts untouched, none made"
    assert report.writes == 0


def test_a_hostile_site_drafts_its_good_pages_and_fails_every_other_with_its_reason(
    farm: SiteFarm, store: Store, root: Path
) -> None:
    hostile = add_hostile_sites(farm, drip_interval_s=0.1, huge_bytes=3 << 20, bomb_bytes=64 << 20)
    register(root, *({"url": h.url} for h in hostile))
    quick = Settings(
        root=root,
        allow_private_hosts="127.0.0.0/8",
        per_host_delay_s=0.0,
        read_timeout_s=0.5,
        total_timeout_s=1.5,
        retry_backoff_s=0.01,
        max_retries=1,
        max_body_bytes=2_000_000,
    )
    report = crawl(store, quick)
    outcomes = {s.url: (s.outcome, s.reason) for s in report.sources}
    assert {h.kind: outcomes[h.url] for h in hostile} == {h.kind: (h.outcome, h.reason) for h in hostile}
    for page in hostile:
        if page.words:
            assert page.words in (store.read_draft(draft_id_for(page.url)).text or ""), page.kind
    assert validate(store).faults == []


LOGBOOK_MD = """# Storage logbook

What went wrong with our storage cluster this quarter, one incident a section.

## Outage 1: 2024-02-03 metadata servers full

The metadata servers ran out of disk and every write failed for 40 minutes.
A full log volume caused it. We rotated the logs and restarted the servers.

## Outage 2: 2024-03-09 network partition

A switch firmware upgrade split the cluster in two and reads timed out for 20 minutes.
We rolled back the firmware and the cluster healed.
"""


def test_a_page_whose_headings_separate_incidents_gets_one_draft_for_each(
    farm: SiteFarm, store: Store, settings: Settings, root: Path
) -> None:
    site = farm.add_site("acme")
    site.pages["/logbook.md"] = Page.markdown(LOGBOOK_MD)
    (entry,) = register(root, {"url": site.url("/logbook.md"), "title": "Storage logbook", "date": "2024-04-01"})
    page_id = draft_id_for(entry.url)

    report = crawl(store, settings)

    parts = [f"{page_id}-part-1", f"{page_id}-part-2"]
    assert report.sources[0].parts == parts
    page = store.read_draft(page_id)
    assert [(i.heading, i.draft_id) for i in page.incidents] == [
        ("Outage 1: 2024-02-03 metadata servers full", parts[0]),
        ("Outage 2: 2024-03-09 network partition", parts[1]),
    ]
    first, second = (store.read_draft(p) for p in parts)
    assert first.part_of == second.part_of == page_id
    assert first.title == {"en": "Storage logbook: Outage 1: 2024-02-03 metadata servers full"}
    assert (first.date, second.date) == ("2024-02-03", "2024-03-09"), "the heading's date, not the registry's"
    assert first.text is not None and "switch firmware" not in first.text and "metadata servers" in first.text
    assert first.sources[0].url == entry.url and first.origin.url == entry.url
    assert all(first.text[e.start : e.end] == e.quote for e in first.evidence), "evidence points into its own text"
    assert validate(store).faults == [] and not validate(store).warnings

    # A person's edit of a part is kept; a rejected part is left alone; an unchanged page writes nothing.
    store.update_draft(parts[0], lambda d: d.model_copy(update={"severity": "critical"}))
    store.update_draft(parts[1], lambda d: d.model_copy(update={"state": DraftState.REJECTED}))
    changed = LOGBOOK_MD.replace("40 minutes", "45 minutes").replace("20 minutes", "25 minutes")
    site.pages["/logbook.md"] = Page.markdown(changed)
    crawl(store, settings)
    assert store.read_draft(parts[0]).severity == "critical"
    assert "45 minutes" in (store.read_draft(parts[0]).text or "")
    assert store.read_draft(parts[1]).state == DraftState.REJECTED and "45" not in (
        store.read_draft(parts[1]).text or ""
    )

    # A crash between the page's draft and its parts' leaves a part unwritten: the next crawl,
    # of the same bytes, writes it.
    store.path("draft", parts[0]).unlink()
    report = crawl(store, settings)
    assert report.sources[0].outcome == "unchanged" and store.exists("draft", parts[0])
    whole = store.read_draft(page_id).text or ""
    assert store.read_draft(parts[0]).text == whole[page.incidents[0].start : page.incidents[1].start].strip()


def test_after_a_crawl_new_drafts_are_captured_and_new_or_updated_ones_checked_and_asked_about() -> None:
    report = CrawlReport(
        [
            SourceReport("https://example.org/a", "a-1", "new", parts=["a-2"]),
            SourceReport("https://example.org/b", "b-1", "updated"),
            SourceReport("https://example.org/c", "c-1", "unchanged"),
            SourceReport("https://example.org/d", "d-1", "failed"),
        ]
    )
    plain = Settings(root=Path("/nowhere"))
    then = after_crawl(report, plain)
    assert (then.archive, then.duplicates, then.assist, then.warning) == (
        ["a-1", "a-2"],
        ["a-1", "a-2", "b-1"],
        [],
        None,
    )
    assert after_crawl(report, plain, archive_new=False).archive == []
    asking = plain.model_copy(update={"assist_after_crawl": True})
    assert after_crawl(report, asking).assist == [] and "no model" in (after_crawl(report, asking).warning or "")
    model = asking.model_copy(update={"llm_url": "http://127.0.0.1:9/v1", "llm_model": "m"})
    assert after_crawl(report, model).assist == ["a-1", "a-2", "b-1"] and after_crawl(report, model).warning is None
