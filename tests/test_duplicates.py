"""The duplicate check the crawl runs on the drafts it writes (pipeline.duplicates), as a reviewer meets it:
both drafts of one post served twice name each other, `show` and `queue` say so, a merge ends it for good,
a dismissal on either side keeps the pair apart; and `incidentlib similar`, suggestions that write nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_similar import CACHE_POST, RELATED_POST, about, html, markdown

from pipeline.changes import Act
from pipeline.crawl import CrawlRun
from pipeline.draft import new_draft
from pipeline.duplicates import flag_duplicates, similar_to
from pipeline.ids import draft_id_for
from pipeline.merge import dismiss
from pipeline.models import Case, Draft, DraftState, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

# A third story of a cold cache, told in other words: related to the two of test_similar, a copy of neither.
WARMUP_POST = [
    "Checkout errors while the cache warmed",
    "A deploy replaced every node of the product cache in ap-south at once. The new nodes started cold, and"
    " the catalogue database took the whole read load and ran short of connections.",
    "Checkout pages timed out for a quarter of an hour until the cache held the popular items again; we now"
    " replace cache nodes in small batches and keep a warm standby.",
]
TERMS: dict[str, Any] = {
    "root_cause": "capacity-exhaustion",
    "components": ["storage", "nccl"],
    "symptoms": ["training-hang"],
}


@pytest.fixture
def crawl_env(monkeypatch: pytest.MonkeyPatch, wayback: WaybackStandIn, prefect_api: None) -> None:
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    monkeypatch.setenv("INCIDENTLIB_PER_HOST_DELAY_S", "0")
    monkeypatch.setenv("INCIDENTLIB_MAX_RETRIES", "0")
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_URL", wayback.url)  # the new drafts' captures, looked up only
    monkeypatch.setenv("INCIDENTLIB_CDX_PER_MINUTE", "6000")


def served_twice(root: Path, farm: SiteFarm) -> tuple[str, str]:
    """One post served as Markdown and as HTML, each URL a source of its own: (the Markdown's, the HTML's)."""
    site = farm.add_site("acme")
    site.pages["/blog/cache.md"] = Page.markdown(markdown(CACHE_POST).decode())
    site.pages["/blog/cache.html"] = Page(html(CACHE_POST))
    urls = site.url("/blog/cache.md"), site.url("/blog/cache.html")
    (root / "sources" / "acme.yaml").write_text("".join(f"- url: {u}\n  org: Acme\n" for u in urls))
    return urls


def crawled(root: Path) -> CrawlRun:
    from pipeline.flows import crawl_flow_for, run

    return run(crawl_flow_for(Settings(root=root)), CrawlRun, root=str(root))


def records(root: Path) -> dict[str, bytes]:
    """Every record file of the data root, byte for byte (the index's cache in the state left out)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for folder in ("sources", "drafts", "cases")
        for p in sorted((root / folder).rglob("*"))
        if p.is_file()
    }


def without_duplicates(data: bytes) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(data)
    record.pop("possible_duplicates", None)
    return record


def draft_of(url: str, title: str, text: str, **fields: object) -> Draft:
    """A draft as a reviewer left it: a narrative, the library's terms, the page's text."""
    return new_draft(SourceEntry(url=url)).model_copy(
        update={"org": "Acme", "org_slug": "acme", "title": {"en": title}, "summary": {"en": text}, **fields}
    )


# ---------------------------------------------------------------- the crawl flags both sides


def test_a_post_served_twice_is_flagged_on_both_drafts_and_a_merge_ends_it(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None, cli: Callable
) -> None:
    md_url, html_url = served_twice(root, farm)
    a, b = draft_id_for(md_url), draft_id_for(html_url)

    first = crawled(root)

    assert first.counts()["new"] == 2
    assert first.duplicates is not None
    assert first.duplicates.flagged == {a: [b], b: [a]} or first.duplicates.flagged == {b: [a], a: [b]}
    assert sorted(first.duplicates.written) == sorted([a, b])
    for this, other in ((a, b), (b, a)):
        (match,) = store.read_draft(this).possible_duplicates
        assert match.id == other and match.score >= 0.95
        assert match.reasons and match.reasons[0].startswith("same text: ")
        assert match.passage and "cache" in match.passage
    assert first.to_dict()["duplicates"]["flagged"] == first.duplicates.flagged

    shown = cli("show", b, "--root", str(root))
    assert shown.exit_code == 0, shown.output
    assert f"Possible duplicates (1: incidentlib merge {b} --into ID, or incidentlib dismiss {b} ID" in shown.stdout
    assert f"- {a}  score " in shown.stdout and "same text: " in shown.stdout
    assert "shared passage: \u201c" in shown.stdout
    listing = cli("queue", "--root", str(root))
    assert listing.stdout.count("[1 possible duplicate]") == 2, listing.stdout
    entries = {e["id"]: e["duplicates"] for e in json.loads(cli("queue", "--root", str(root), "--json").stdout)}
    assert entries == {a: 1, b: 1}

    merged = cli("merge", b, "--into", a, "--by", "bob", "--root", str(root))
    assert merged.exit_code == 0, merged.output
    gone = store.path("draft", b).read_bytes()
    assert store.read_draft(a).possible_duplicates == [], "the survivor forgets the merged draft"
    farm.sites["acme"].pages["/blog/cache.html"] = Page(html([*CACHE_POST, "An update: the runbook is public."]))

    second = crawled(root)

    (skipped,) = [s for s in second.report.sources if s.url == html_url]
    assert (skipped.outcome, skipped.reason, skipped.wrote) == ("skipped", "merged", False)
    assert store.path("draft", b).read_bytes() == gone, "nothing drafted for the merged draft's page"
    assert store.read_draft(b).state == DraftState.MERGED and store.read_draft(b).merged_into == a
    assert store.ids("draft") == sorted([a, b])
    assert store.read_draft(a).possible_duplicates == []


def test_the_crawl_s_check_writes_nothing_but_the_drafts_possible_duplicates(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None, make_case: Callable[..., Case]
) -> None:
    md_url, html_url = served_twice(root, farm)
    (root / "sources" / "acme.yaml").write_text(f"- url: {md_url}\n  org: Acme\n")
    store.write_case(about(make_case, "IL-0001", RELATED_POST, org="Beta", org_slug="beta", **TERMS))
    store.write_case(
        about(make_case, "IL-0002", WARMUP_POST, org="Beta", org_slug="beta", related=["IL-0001"], **TERMS)
    )
    crawled(root)
    a, b = draft_id_for(md_url), draft_id_for(html_url)
    (root / "sources" / "acme.yaml").write_text(f"- url: {md_url}\n  org: Acme\n- url: {html_url}\n  org: Acme\n")
    before = records(root)

    run = crawled(root)

    assert run.duplicates is not None and run.duplicates.flagged.keys() == {a, b}
    after = records(root)
    changed = {name for name in after if before.get(name) != after[name]}
    assert changed == {f"drafts/{a}.json", f"drafts/{b}.json"}
    # The older draft, left alone by the crawl (unchanged), was written by the check alone: its duplicates.
    assert without_duplicates(after[f"drafts/{a}.json"]) == without_duplicates(before[f"drafts/{a}.json"])
    for name in (a, b):
        draft = store.read_draft(name)
        assert (draft.related, draft.recurrence_of, draft.dismissed) == ([], None, [])
        assert [p.id for p in draft.possible_duplicates] == [b if name == a else a]


def test_a_draft_that_no_longer_matches_leaves_the_other_side_too(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None
) -> None:
    md_url, html_url = served_twice(root, farm)
    a, b = draft_id_for(md_url), draft_id_for(html_url)
    crawled(root)
    farm.sites["acme"].pages["/blog/cache.html"] = Page(html(RELATED_POST))  # the page now tells another story

    run = crawled(root)

    assert run.counts()["updated"] == 1
    assert run.duplicates is not None and run.duplicates.flagged == {}
    assert store.read_draft(b).possible_duplicates == []
    assert store.read_draft(a).possible_duplicates == [], "the older draft no longer names it either"


def test_the_discover_flow_checks_the_drafts_it_crawled(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None, cli: Callable
) -> None:
    md_url, html_url = served_twice(root, farm)
    (root / "sources" / "acme.yaml").unlink()
    site = farm.sites["acme"]
    entries = "".join(
        f'<entry><title>{CACHE_POST[0]}</title><link href="{url}"/><id>{url}</id>'
        "<updated>2024-03-06T00:00:00Z</updated></entry>"
        for url in (md_url, html_url)
    )
    site.pages["/feed.xml"] = Page(
        (
            '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>'
            f"<id>urn:acme</id><updated>2024-03-06T00:00:00Z</updated>{entries}</feed>"
        ).encode(),
        content_type="application/atom+xml",
    )
    feeds = f"- url: {site.url('/feed.xml')}\n  kind: atom\n  auto_accept: true\n"
    (root / "sources" / "feeds.yaml").write_text(feeds)

    found = cli("discover", "--root", str(root), "--json")

    assert found.exit_code == 0, found.output
    a, b = draft_id_for(md_url), draft_id_for(html_url)
    assert json.loads(found.stdout)["duplicates"]["flagged"] == {a: [b], b: [a]}
    assert [p.id for p in store.read_draft(a).possible_duplicates] == [b]
    assert [p.id for p in store.read_draft(b).possible_duplicates] == [a]


def test_a_crawl_indexes_only_the_drafts_it_changed_not_the_whole_library(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None
) -> None:
    md_url, html_url = served_twice(root, farm)
    site = farm.sites["acme"]
    others = [site.url(f"/blog/other-{n}.md") for n in range(2)]
    for n, post in enumerate((RELATED_POST, WARMUP_POST)):
        site.pages[f"/blog/other-{n}.md"] = Page.markdown(markdown(post).decode())
    urls = [md_url, html_url, *others]
    (root / "sources" / "acme.yaml").write_text("".join(f"- url: {u}\n  org: Acme\n" for u in urls))
    first = crawled(root)
    assert first.duplicates is not None
    assert first.duplicates.indexed == sorted(draft_id_for(u) for u in urls), "the first check builds the index"
    changed = draft_id_for(others[0])
    site.pages["/blog/other-0.md"] = Page.markdown(markdown([*RELATED_POST, "A section added later."]).decode())

    run = crawled(root)

    assert run.counts()["updated"] == 1
    # The pair flagged by the first check was rewritten by it (its possible duplicates) and read again, but
    # its documents are the same: the index took in the one draft the crawl changed, every other row kept.
    assert run.duplicates is not None and run.duplicates.indexed == [changed]
    assert run.duplicates.checked == [changed]
    assert [p.id for p in store.read_draft(draft_id_for(md_url)).possible_duplicates] == [draft_id_for(html_url)]


# ---------------------------------------------------------------- dismissals


def test_a_pair_dismissed_on_one_side_is_never_flagged_again_on_either(
    farm: SiteFarm, root: Path, store: Store, crawl_env: None, cli: Callable
) -> None:
    md_url, html_url = served_twice(root, farm)
    a, b = draft_id_for(md_url), draft_id_for(html_url)
    crawled(root)
    assert [p.id for p in store.read_draft(b).possible_duplicates] == [a]

    said = cli("dismiss", a, b, "--as", "duplicate", "--by", "bob", "--root", str(root))

    assert said.exit_code == 0, said.output
    assert store.read_draft(a).possible_duplicates == []
    assert store.read_draft(b).possible_duplicates == []  # the other side forgets it at once
    # A's page changes: the crawl checks A, and B too (A dismissed it), and flags neither.
    site = farm.sites["acme"]
    site.pages["/blog/cache.md"] = Page.markdown(markdown([*CACHE_POST, "The runbook is public now."]).decode())
    changed = crawled(root)

    assert changed.counts()["updated"] == 1
    assert changed.duplicates is not None and changed.duplicates.flagged == {}
    assert sorted(changed.duplicates.checked) == sorted([a, b]) and changed.duplicates.written == []
    assert store.read_draft(a).possible_duplicates == store.read_draft(b).possible_duplicates == []
    report = flag_duplicates(store, [b, a])
    assert (sorted(report.checked), report.flagged, report.written) == (sorted([a, b]), {}, [])

    # Both pages change: the crawl checks both drafts again, and flags neither.
    site.pages["/blog/cache.md"] = Page.markdown(markdown([*CACHE_POST, "The runbook is public."]).decode())
    site.pages["/blog/cache.html"] = Page(html([*CACHE_POST, "The runbook is public."]))
    again = crawled(root)

    assert again.counts()["updated"] == 2
    assert again.duplicates is not None and again.duplicates.flagged == {}
    assert store.read_draft(a).possible_duplicates == store.read_draft(b).possible_duplicates == []
    assert [(d.kind, d.id, d.by) for d in store.read_draft(a).dismissed] == [("duplicate", b, "bob")]


def test_a_dismissal_on_a_case_s_draft_keeps_the_case_out_too(
    store: Store, make_case: Callable[..., Case], cli: Callable, root: Path
) -> None:
    page = draft_of("https://acme.example/blog/cache.html", CACHE_POST[0], " ".join(CACHE_POST[1:]))
    page = page.model_copy(update={"text": " ".join(CACHE_POST[1:])})
    store.write_case(about(make_case, "IL-0001", CACHE_POST, org="Acme", org_slug="acme"))
    published = page.model_copy(update={"state": DraftState.PUBLISHED, "case_id": "IL-0001"})
    store.write_draft(published)
    copy = draft_of("https://digest.example/acme-cache", CACHE_POST[0], " ".join(CACHE_POST[1:]))
    copy = copy.model_copy(update={"text": "Republished. " + " ".join(CACHE_POST[1:])})
    store.write_draft(copy)
    assert flag_duplicates(store, [copy.id]).flagged == {copy.id: ["IL-0001"]}
    assert store.read_draft(published.id).possible_duplicates == [], "a published draft is never written"

    dismiss(store, "IL-0001", copy.id, "duplicate", Act("bob"))  # on the case's side: its draft keeps it

    assert flag_duplicates(store, [copy.id]).flagged == {}
    assert store.read_draft(copy.id).possible_duplicates == []


# ---------------------------------------------------------------- incidentlib similar


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case]) -> Draft:
    """Two cases of other orgs sharing the root cause and parts, and a draft of a third story that shares them."""
    store.write_case(about(make_case, "IL-0001", CACHE_POST, org="Beta", org_slug="beta", date="2023-01-10", **TERMS))
    store.write_case(
        about(make_case, "IL-0002", RELATED_POST, org="Gamma", org_slug="gamma", date="2024-05-01", **TERMS)
    )
    draft = draft_of(
        "https://acme.example/blog/warmup", WARMUP_POST[0], " ".join(WARMUP_POST[1:]), date="2025-02-01", **TERMS
    )
    store.write_draft(draft)
    return draft


def test_similar_lists_a_draft_s_related_cases_with_reasons(
    library: Draft, root: Path, store: Store, cli: Callable
) -> None:
    shown = cli("similar", library.id, "--root", str(root))

    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "duplicates (suggested)" and lines[1] == "  none"
    start = lines.index("related (suggested)")
    listed = [line.split()[0] for line in lines[start + 1 :] if line.startswith("  IL-")]
    assert sorted(listed) == ["IL-0001", "IL-0002"]
    assert (
        "components: nccl, storage; symptoms: training-hang; root cause: capacity-exhaustion; text 0." in shown.stdout
    )
    assert (
        f"  accept: incidentlib relate {library.id} ID --as related; dismiss: incidentlib dismiss {library.id} ID"
        in (shown.stdout)
    )
    assert lines[-2:] == ["recurrences (suggested)", "  none"]

    data = json.loads(cli("similar", library.id, "--json", "--root", str(root)).stdout)
    assert (data["asked"], data["id"], data["duplicates"], data["recurrences"]) == (library.id, library.id, [], [])
    assert sorted(m["id"] for m in data["related"]) == ["IL-0001", "IL-0002"]
    first = data["related"][0]
    assert first["kind"] == "related" and 0 < first["score"] <= 1 and first["reasons"][0].startswith("components: ")
    one = json.loads(cli("similar", library.id, "--limit", "1", "--json", "--root", str(root)).stdout)
    assert [m["id"] for m in one["related"]] == [first["id"]]


def test_similar_for_a_case_and_what_it_leaves_out(library: Draft, root: Path, store: Store, cli: Callable) -> None:
    case = json.loads(cli("similar", "IL-0002", "--json", "--root", str(root)).stdout)
    assert [m["id"] for m in case["related"]] == ["IL-0001"]
    assert case["related"][0]["reasons"][0].startswith("components: nccl, storage; symptoms: training-hang; ")
    text = cli("similar", "IL-0002", "--root", str(root)).stdout
    assert "  IL-0001  0." in text

    # Dismissed on the draft, or related already: left out.
    assert cli("dismiss", library.id, "IL-0001", "--as", "related", "--by", "bob", "--root", str(root)).exit_code == 0
    data = json.loads(cli("similar", library.id, "--json", "--root", str(root)).stdout)
    assert [m["id"] for m in data["related"]] == ["IL-0002"]
    assert cli("relate", library.id, "IL-0002", "--as", "related", "--by", "bob", "--root", str(root)).exit_code == 0
    data = json.loads(cli("similar", library.id, "--json", "--root", str(root)).stdout)
    assert data["related"] == []
    assert "related (suggested)\n  none" in cli("similar", library.id, "--root", str(root)).stdout
    # A case that names another in `related` is not shown it again.
    store.write_case(store.read_case("IL-0002").model_copy(update={"related": ["IL-0001"]}))
    assert json.loads(cli("similar", "IL-0002", "--json", "--root", str(root)).stdout)["related"] == []


def test_similar_of_a_merged_draft_is_its_survivor_s(
    library: Draft, root: Path, store: Store, cli: Callable, make_draft: Callable[..., Draft]
) -> None:
    other = make_draft("https://acme.example/blog/warmup-again")
    store.write_draft(other)
    assert cli("merge", other.id, "--into", library.id, "--by", "bob", "--root", str(root)).exit_code == 0

    shown = cli("similar", other.id, "--root", str(root))

    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == f"{other.id} was merged into {library.id}: the suggestions of {library.id}"
    assert shown.stdout.split("\n", 1)[1] == cli("similar", library.id, "--root", str(root)).stdout
    data = json.loads(cli("similar", other.id, "--json", "--root", str(root)).stdout)
    assert (data["asked"], data["id"]) == (other.id, library.id)
    assert sorted(m["id"] for m in data["related"]) == ["IL-0001", "IL-0002"]
    assert similar_to(store, other.id).id == library.id


@pytest.mark.parametrize("unknown", ["nobody-00000000", "IL-0999"])
def test_similar_of_an_unknown_id_is_a_one_line_error(unknown: str, root: Path, cli: Callable) -> None:
    refused = cli("similar", unknown, "--root", str(root))
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert refused.stderr == f"Error: {unknown} is neither a draft in drafts/ nor a case in cases/\n"


# ---------------------------------------------------------------- suggestions, never relations


def test_flag_duplicates_and_similar_write_no_relation(
    library: Draft, root: Path, store: Store, make_case: Callable[..., Case], cli: Callable
) -> None:
    copy = draft_of("https://digest.example/warmup", WARMUP_POST[0], " ".join(WARMUP_POST[1:]), **TERMS)
    store.write_draft(copy.model_copy(update={"text": "Republished. " + " ".join(WARMUP_POST[1:])}))
    store.write_draft(library.model_copy(update={"text": " ".join(WARMUP_POST[1:])}))
    store.write_draft(
        draft_of("https://acme.example/other", "Other", "Nothing alike.").model_copy(update={"text": "x"})
    )
    ids = store.ids("draft")
    before = records(root)

    report = flag_duplicates(store, ids)

    assert report.flagged == {library.id: [copy.id], copy.id: [library.id]}
    after = records(root)
    changed = {name for name in after if before[name] != after[name]}
    assert changed == {f"drafts/{library.id}.json", f"drafts/{copy.id}.json"}, "the cases are never written"
    for name in changed:
        assert without_duplicates(after[name]) == without_duplicates(before[name]), "only possible_duplicates"
    assert flag_duplicates(store, ids).written == [] and records(root) == after, "a second check writes nothing"

    for record_id in [*store.ids("case"), *ids]:
        assert cli("similar", record_id, "--root", str(root)).exit_code == 0
        assert cli("similar", record_id, "--json", "--root", str(root)).exit_code == 0
        similar_to(store, record_id)
    assert records(root) == after, "similar writes nothing"
    for record_id in ids:
        draft = store.read_draft(record_id)
        assert (draft.related, draft.recurrence_of) == ([], None)


def test_a_draft_whose_review_is_over_is_left_alone(store: Store, make_draft: Callable[..., Draft]) -> None:
    post = " ".join(CACHE_POST[1:])
    kept = draft_of("https://acme.example/a", CACHE_POST[0], post).model_copy(update={"text": post})
    done = draft_of("https://acme.example/b", CACHE_POST[0], post).model_copy(
        update={"text": post, "state": DraftState.REJECTED}
    )
    store.write_draft(kept)
    store.write_draft(done)
    file = store.path("draft", done.id).read_bytes()

    report = flag_duplicates(store, [done.id, kept.id, "nobody-00000000"])

    assert (report.checked, report.flagged) == ([kept.id], {})
    assert store.path("draft", done.id).read_bytes() == file


def test_a_dismissal_of_a_draft_holds_for_the_case_it_becomes(
    store: Store, make_case: Callable[..., Case], root: Path
) -> None:
    from test_similar import drafted, published

    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    store.write_draft(md)
    store.write_draft(page)
    assert flag_duplicates(store, [md.id]).flagged == {md.id: [page.id], page.id: [md.id]}
    dismiss(store, md.id, page.id, "duplicate", Act("bob"))
    # The page's draft is published as IL-0001: the index knows it by the case's id now.
    published(store, about(make_case, "IL-0001", CACHE_POST, org="Acme", org_slug="acme"), store.read_draft(page.id))

    assert flag_duplicates(store, [md.id]).flagged == {}
    assert store.read_draft(md.id).possible_duplicates == []
    assert similar_to(store, md.id).suggestions.duplicates == []
