"""Duplicates, merges and relations, as a reviewer meets them: a draft's possible duplicates shown by `show`
and `queue`, a merge (its sources moved with their captures, both histories, four eyes, the crawl and
discovery leaving the merged draft alone, a published one's case withdrawn into the survivor's), dismissals
that stay dismissed, and `relate`, the one way into `related` and `recurrence_of`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from documents import POSTMORTEM_MD
from helpers import complete_draft

from pipeline import review
from pipeline.changes import Act
from pipeline.crawl import crawl
from pipeline.discover import discover
from pipeline.errors import RecordError, ReviewError
from pipeline.ids import draft_id_for
from pipeline.merge import dismiss, dismissed, merge, record_duplicates, relate, resolve
from pipeline.models import ArchiveState, Draft, DraftSource, DraftState, PossibleDuplicate, Review
from pipeline.publish import promote
from pipeline.records import dump_record
from pipeline.review import ReviewAction
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

PASSAGE = "A configuration push set the cache's time to live to zero on every node at once."


def written(case_json: dict[str, Any], n: int, by: str = "alice") -> Draft:
    """A complete draft, signed as written by `by` and waiting for review, its source captured."""
    return complete_draft(case_json, n).model_copy(
        update={"state": DraftState.WRITTEN, "review": Review(written_by=by)}
    )


def a_match(other: str, score: float = 0.93) -> PossibleDuplicate:
    return PossibleDuplicate(id=other, score=score, reasons=["they share a passage"], passage=PASSAGE)


def links(draft: Draft) -> tuple[list[str], str | None]:
    return draft.related, draft.recurrence_of


@pytest.fixture
def pair(store: Store, case_json: dict[str, Any]) -> tuple[str, str]:
    """Two drafts waiting for review: A written by alice, B by carol."""
    first, second = written(case_json, 1), written(case_json, 2, by="carol")
    store.write_draft(first)
    store.write_draft(second)
    return first.id, second.id


@pytest.fixture
def published(store: Store, root: Path, case_json: dict[str, Any]) -> dict[str, str]:
    """Two drafts published: each draft's id by its case's (written by alice, approved by bob)."""
    for n in (1, 2):
        store.write_draft(complete_draft(case_json, n))
    report = promote(store, Settings(root=root))
    return {p.case_id or "": p.draft_id for p in report.drafts}


# ---------------------------------------------------------------- possible duplicates


def test_a_possible_duplicate_is_shown_by_show_and_queue_and_is_no_edit(
    store: Store, root: Path, pair: tuple[str, str], cli: Callable
) -> None:
    first, second = pair
    before = store.read_draft(second)

    assert record_duplicates(store, second, [a_match(first)]) is True

    after = store.read_draft(second)
    assert after.possible_duplicates == [a_match(first)]
    assert after.model_copy(update={"possible_duplicates": []}) == before, "nothing else changed: no history, no edit"
    assert review.writers(after) == {"carol"}
    file = store.path("draft", second)
    written_once = file.read_bytes()
    assert record_duplicates(store, second, [a_match(first)]) is False
    assert file.read_bytes() == written_once, "the same list again writes nothing"

    shown = cli("show", second, "--root", str(root))
    assert shown.exit_code == 0, shown.output
    assert "Possible duplicates (1: incidentlib merge" in shown.stdout
    assert f"- {first}  score 0.93: they share a passage" in shown.stdout
    assert (
        "shared passage: \u201cA configuration push set the cache's time to live to zero on every node" in shown.stdout
    )
    listing = cli("queue", "--root", str(root))
    assert "[1 possible duplicate]" in listing.stdout
    entries = {e["id"]: e for e in json.loads(cli("queue", "--root", str(root), "--json").stdout)}
    assert (entries[second]["duplicates"], entries[first]["duplicates"]) == (1, 0)


def test_the_list_is_replaced_best_first_without_the_draft_itself_or_what_is_gone(
    store: Store, pair: tuple[str, str], case_json: dict[str, Any]
) -> None:
    first, second = pair
    third = written(case_json, 3)
    store.write_draft(third)
    found = [a_match(first, 0.5), a_match(third.id, 0.9), a_match(second, 1.0), a_match("gone-00000000", 0.99)]
    found.append(a_match(first, 0.4))

    record_duplicates(store, second, found)

    assert [(p.id, p.score) for p in store.read_draft(second).possible_duplicates] == [(third.id, 0.9), (first, 0.5)]
    record_duplicates(store, second, [a_match(first, 0.7)])
    assert [(p.id, p.score) for p in store.read_draft(second).possible_duplicates] == [(first, 0.7)]


def test_a_draft_file_without_the_new_fields_is_written_as_it_was(make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    data = json.loads(dump_record(draft))
    assert not {"possible_duplicates", "dismissed", "merged_into"} & set(data)
    stepped = review.write(draft.model_copy(update={"title": {"en": "T"}, "summary": {"en": "S"}}), "alice", ["en"])
    assert "action" not in json.loads(dump_record(stepped))["history"][0]


# ---------------------------------------------------------------- merging drafts


def test_a_merge_moves_the_sources_with_their_captures_and_is_in_both_histories(
    store: Store, root: Path, pair: tuple[str, str], cli: Callable
) -> None:
    first, second = pair
    kept = ArchiveState(status="captured", confirmed=True, attempts=2, job_id=None, reused=True)
    store.update_draft(
        second, lambda d: d.model_copy(update={"sources": [d.sources[0].model_copy(update={"archive": kept})]})
    )
    record_duplicates(store, second, [a_match(first)])
    record_duplicates(store, first, [a_match(second)])
    moved: DraftSource = store.read_draft(second).sources[0]
    relations = links(store.read_draft(first)), links(store.read_draft(second))

    done = cli("merge", second, "--into", first, "--by", "bob", "--comment", "the same outage", "--root", str(root))

    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[:2] == [
        f"{second}: merged into {first}, now merged",
        f"{first}: took 1 source with its capture, now written",
    ]
    survivor, gone = store.read_draft(first), store.read_draft(second)
    assert survivor.sources[-1] == moved and survivor.sources[-1].archive == kept, "the capture and its state moved"
    assert len(survivor.sources) == 2 and survivor.possible_duplicates == []
    assert (gone.state, gone.merged_into, gone.sources, gone.possible_duplicates) == (DraftState.MERGED, first, [], [])
    took, went = survivor.history[-1], gone.history[-1]
    assert (took.by, took.action, took.changed, took.from_state, took.to_state) == (
        "bob",
        "merge",
        ["sources"],
        DraftState.WRITTEN,
        DraftState.WRITTEN,
    )
    assert took.comment == f"took the sources of {second} (merged into it): {moved.url}: the same outage"
    assert (went.by, went.action, went.from_state, went.to_state) == (
        "bob",
        "merge",
        DraftState.WRITTEN,
        DraftState.MERGED,
    )
    assert went.comment == f"merged into {first}; its sources moved there: {moved.url}: the same outage"
    assert (links(survivor), links(gone)) == relations, "a merge writes no relation"
    # The sources bob took into the survivor are content: four eyes, another reviewer approves them.
    assert review.writers(survivor) == {"alice", "bob"}
    with pytest.raises(ReviewError, match="bob"):
        review.approve(survivor, "bob", ["en"])
    assert review.approve(survivor, "erin", ["en"]).state == DraftState.APPROVED

    shown = cli("show", second, "--root", str(root))
    assert shown.stdout.splitlines()[1] == f"Merged into {first}"
    queue = json.loads(cli("queue", "--root", str(root), "--json").stdout)
    assert [e["id"] for e in queue] == [first], "a merged draft leaves the work list"
    merged = json.loads(cli("queue", "--state", "merged", "--root", str(root), "--json").stdout)
    assert [e["id"] for e in merged] == [second]
    assert resolve(store, second) == first


def test_whoever_wrote_or_edited_the_merged_draft_cannot_merge_it(
    store: Store, root: Path, pair: tuple[str, str], cli: Callable
) -> None:
    first, second = pair
    store.update_draft(second, lambda d: review.edited(d, d.model_copy(update={"lessons": {"en": "Stagger."}}), "dave"))
    files = {name: store.path("draft", name).read_bytes() for name in pair}

    for who in ("carol", "Dave"):
        refused = cli("merge", second, "--into", first, "--by", who, "--root", str(root))
        assert refused.exit_code == 1
        assert refused.stderr.strip() == (
            f"Error: {second}: {who} wrote or edited this draft and cannot merge it; another reviewer must"
        )
    assert {name: store.path("draft", name).read_bytes() for name in pair} == files, "nothing was written"


def test_a_merge_is_refused_in_one_line_naming_the_ids(
    store: Store, pair: tuple[str, str], case_json: dict[str, Any], make_case: Callable, cli: Callable
) -> None:
    first, second = pair
    root = store.root  # the data root the commands are given
    third, fourth = written(case_json, 3), written(case_json, 4).model_copy(update={"state": DraftState.REJECTED})
    store.write_draft(third)
    store.write_draft(fourth)
    merge(store, third.id, first, Act("bob"))  # third is merged now, into first
    store.write_case(make_case("IL-0009"))  # a case made by hand: no draft
    store.write_case(
        make_case("IL-0010", withdrawn="2026-12-01T09:00:00Z", withdrawn_reason="dup", merged_into="IL-0009")
    )
    store.write_case(make_case("IL-0011", withdrawn="2026-12-01T09:00:00Z", withdrawn_reason="retracted"))

    refusals = {
        second: f"{second} cannot be merged into itself",
        "nobody-00000000": "nobody-00000000 is neither a draft in drafts/ nor a case in cases/: name the survivor",
        third.id: f"{third.id} was merged into {first}: merge {second} into {first}",
        "IL-0010": f"IL-0010 was merged into IL-0009: merge {second} into IL-0009",
        "IL-0011": "IL-0011 is withdrawn",
        "IL-0009": f"IL-0009 has no draft in drafts/ (a case made by hand): {second}'s sources have nowhere to go",
        fourth.id: f"{fourth.id} is rejected: reopen it first, or merge it into {second} instead",
    }
    for into, said in refusals.items():
        refused = cli("merge", second, "--into", into, "--by", "bob", "--root", str(root))
        assert (refused.exit_code, refused.stderr) == (1, f"Error: {said}\n"), into
    unknown = cli("merge", "nobody-00000000", "--into", first, "--by", "bob", "--root", str(root))
    assert unknown.stderr == "Error: nobody-00000000 is neither a draft in drafts/ nor a case in cases/\n"
    again = cli("merge", third.id, "--into", second, "--by", "bob", "--root", str(root))
    assert again.stderr == f"Error: {third.id} was merged into {first} already\n"
    assert store.read_draft(second).state == DraftState.WRITTEN


def test_a_merged_draft_moves_no_further(store: Store, pair: tuple[str, str]) -> None:
    first, second = pair
    merge(store, second, first, Act("bob"))
    gone = store.read_draft(second)
    for action in (ReviewAction.WRITE, ReviewAction.REOPEN, ReviewAction.REJECT, ReviewAction.MERGE):
        with pytest.raises(ReviewError, match="a draft that is merged"):
            review.allowed(gone, action, "erin")
    assert review.next_turn(gone) == f"nobody: it was merged into {first}"


# ---------------------------------------------------------------- the crawl and discovery leave it alone


def farm_pair(root: Path, farm: SiteFarm) -> tuple[str, str]:
    site = farm.add_site("blog")
    for name in ("cache", "cache-again"):
        site.pages[f"/{name}.md"] = Page.markdown(POSTMORTEM_MD)
    urls = site.url("/cache.md"), site.url("/cache-again.md")
    (root / "sources" / "blog.yaml").write_text("".join(f"- url: {u}\n  org: Farm\n" for u in urls))
    return urls


@pytest.mark.usefixtures("prefect_api")
def test_a_recrawl_of_a_merged_draft_s_source_drafts_nothing_and_says_why(
    farm: SiteFarm, root: Path, store: Store, monkeypatch: pytest.MonkeyPatch, wayback: WaybackStandIn
) -> None:
    from pipeline.crawl import CrawlRun
    from pipeline.flows import crawl_flow_for, run

    for name, value in {
        "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",
        "INCIDENTLIB_PER_HOST_DELAY_S": "0",
        "INCIDENTLIB_MAX_RETRIES": "0",
        "INCIDENTLIB_WAYBACK_URL": wayback.url,
        "INCIDENTLIB_CDX_PER_MINUTE": "6000",
    }.items():
        monkeypatch.setenv(name, value)
    kept, again = farm_pair(root, farm)
    first = run(crawl_flow_for(Settings(root=root)), CrawlRun, root=str(root))
    assert first.counts()["new"] == 2
    merged_id, survivor_id = draft_id_for(again), draft_id_for(kept)
    merge(store, merged_id, survivor_id, Act("bob"))
    file = store.path("draft", merged_id).read_bytes()
    farm.sites["blog"].pages["/cache-again.md"] = Page.markdown(POSTMORTEM_MD.replace("stampede", "storm"))

    second = run(crawl_flow_for(Settings(root=root)), CrawlRun, root=str(root))

    (skipped,) = [s for s in second.report.sources if s.url == again]
    assert (skipped.outcome, skipped.reason, skipped.message, skipped.wrote) == (
        "skipped",
        "merged",
        f"merged into {survivor_id}",
        False,
    )
    assert store.path("draft", merged_id).read_bytes() == file, "the merged draft was not drafted again"
    assert store.ids("draft") == sorted([merged_id, survivor_id])
    assert again in [s.url for s in store.read_draft(survivor_id).sources]


def test_discovery_does_not_propose_a_merged_draft_s_page_again(
    farm: SiteFarm, root: Path, store: Store, make_draft: Callable[..., Draft]
) -> None:
    settings = Settings(root=root, allow_private_hosts=True, per_host_delay_s=0.0, max_retries=0, total_timeout_s=5.0)
    kept, again = farm_pair(root, farm)
    crawl(store, settings)
    merge(store, draft_id_for(again), draft_id_for(kept), Act("bob"))
    merged_file = store.path("draft", draft_id_for(again)).read_bytes()
    site = farm.sites["blog"]
    entry = {"url": again, "title": "Cache stampede", "updated": "2024-03-06T00:00:00Z"}
    site.pages["/feed.xml"] = Page(atom(entry), content_type="application/atom+xml")
    feeds = [{"url": site.url("/feed.xml"), "kind": "atom", "auto_accept": True}]
    (root / "sources" / "feeds.yaml").write_text(yaml.safe_dump(feeds))

    found = discover(store, settings)
    site.pages["/feed.xml"] = Page(
        atom({**entry, "updated": "2024-03-09T00:00:00Z"}), content_type="application/atom+xml"
    )
    changed = discover(store, settings)

    assert (found.feeds[0].known, found.feeds[0].candidates, found.feeds[0].registered) == (1, [], [])
    assert not store.candidates_path.exists(), "never proposed"
    recrawl = crawl(store, settings, changed.recrawl)
    assert [(s.outcome, s.reason) for s in recrawl.sources] == [("skipped", "merged")]
    assert store.path("draft", draft_id_for(again)).read_bytes() == merged_file


def atom(entry: dict[str, str]) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>'
        f"<id>urn:blog</id><updated>{entry['updated']}</updated><entry><title>{entry['title']}</title>"
        f'<link href="{entry["url"]}"/><id>{entry["url"]}</id><updated>{entry["updated"]}</updated></entry></feed>'
    ).encode()


# ---------------------------------------------------------------- merging a published draft


def test_a_published_draft_merged_into_a_case_withdraws_its_case_there(
    store: Store, root: Path, published: dict[str, str], cli: Callable
) -> None:
    survivor_id, merged_id = published["IL-0001"], published["IL-0002"]
    moved = store.read_draft(merged_id).sources[0]

    done = cli("merge", merged_id, "--into", "IL-0001", "--by", "dave", "--root", str(root), "--json")

    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {
        "draft": merged_id,
        "into": "IL-0001",
        "survivor": survivor_id,
        "survivor_state": "in_review",
        "sources": [moved.url],
        "withdrawn": "IL-0002",
    }
    old = store.read_case("IL-0002")
    assert (old.merged_into, old.withdrawn_by) == ("IL-0001", "dave") and old.withdrawn is not None
    assert old.withdrawn_reason == f"a duplicate of IL-0001: its draft {merged_id} was merged into {survivor_id}"
    assert resolve(store, "IL-0002") == resolve(store, merged_id) == "IL-0001"
    shown = cli("show", "IL-0002", "--root", str(root))
    assert shown.stdout.splitlines()[1] == "Merged into IL-0001"
    # The case cites the new source only once a second person has approved its draft again and it is promoted.
    assert [s.url for s in store.read_case("IL-0001").sources] != [s.url for s in store.read_draft(survivor_id).sources]
    approved = store.update_draft(survivor_id, lambda d: review.approve(d, "erin", ["en"]))
    assert approved.state == DraftState.APPROVED
    assert store.read_case("IL-0001").aliases == ["IL-0002"], "the survivor is known by the merged id"
    promote(store, Settings(root=root))
    assert moved.url in [s.url for s in store.read_case("IL-0001").sources]
    assert store.read_case("IL-0001").withdrawn is None
    assert store.read_case("IL-0001").aliases == ["IL-0002"], "kept by the promotion"


def test_a_published_draft_goes_only_into_a_published_one(
    store: Store, published: dict[str, str], case_json: dict[str, Any]
) -> None:
    draft = written(case_json, 5)
    store.write_draft(draft)
    with pytest.raises(RecordError, match=rf"is published as IL-0002 and {draft.id} is not published"):
        merge(store, published["IL-0002"], draft.id, Act("dave"))
    assert store.read_draft(draft.id) == draft


def test_a_merge_cut_short_before_the_withdrawal_is_finished_by_running_it_again(
    store: Store, published: dict[str, str]
) -> None:
    """As a crash leaves it: the survivor took the sources and the draft is merged, its case not yet withdrawn."""
    survivor, gone = store.read_draft(published["IL-0001"]), store.read_draft(published["IL-0002"])
    store.write_draft(review.take_sources(survivor, gone, "dave"))
    store.write_draft(review.merge(gone, "IL-0001", "dave"))
    assert store.read_case("IL-0002").withdrawn is None

    done = merge(store, gone.id, "IL-0001", Act("dave"))

    assert (done.withdrawn, store.read_case("IL-0002").merged_into) == ("IL-0002", "IL-0001")
    assert store.read_case("IL-0001").aliases == ["IL-0002"]
    for into in ("IL-0001", survivor.id):  # done now: nothing is left to do, said so
        with pytest.raises(RecordError, match=f"^{gone.id} was merged into IL-0001 already$"):
            merge(store, gone.id, into, Act("dave"))


def test_a_merge_cut_short_before_the_survivor_named_its_case_is_finished_by_running_it_again(
    cli: Callable[..., Any], store: Store, published: dict[str, str], root: Path
) -> None:
    """As a crash leaves it: the merged draft's case withdrawn into the survivor's, which does not list it yet."""
    survivor, gone = store.read_draft(published["IL-0001"]), store.read_draft(published["IL-0002"])
    store.write_draft(review.take_sources(survivor, gone, "dave"))
    store.write_draft(review.merge(gone, "IL-0001", "dave"))
    at = store.read_case("IL-0002").updated_at
    store.update_case(
        "IL-0002",
        lambda c: c.model_copy(update={"withdrawn": at, "withdrawn_reason": "dup", "merged_into": "IL-0001"}),
    )
    found = cli("validate", "--root", str(root))
    assert "a merge into IL-0001 cut short (merged, but IL-0001 does not list IL-0002)" in found.stdout

    done = merge(store, gone.id, "IL-0001", Act("dave"))

    assert done.withdrawn == "IL-0002" and store.read_case("IL-0001").aliases == ["IL-0002"]
    assert "cut short" not in cli("validate", "--root", str(root)).stdout
    with pytest.raises(RecordError, match=f"^{gone.id} was merged into IL-0001 already$"):
        merge(store, gone.id, "IL-0001", Act("dave"))


# ---------------------------------------------------------------- dismissals and relations


def test_a_dismissed_duplicate_stays_dismissed(
    store: Store, root: Path, pair: tuple[str, str], case_json: dict[str, Any], cli: Callable
) -> None:
    first, second = pair
    third = written(case_json, 3)
    store.write_draft(third)
    record_duplicates(store, second, [a_match(first)])
    relations = links(store.read_draft(second))

    refused = cli("dismiss", second, first, "--as", "duplicate", "--by", "carol", "--root", str(root))
    assert refused.exit_code == 1 and "carol wrote or edited" in refused.stderr, "four eyes: not its writer"
    said = cli(
        "dismiss", second, first, "--as", "duplicate", "--by", "bob", "--comment", "two outages", "--root", str(root)
    )

    assert said.exit_code == 0, said.output
    draft = store.read_draft(second)
    assert dismissed(draft) == {("duplicate", first)}
    assert (draft.dismissed[0].by, draft.dismissed[0].comment, draft.possible_duplicates) == ("bob", "two outages", [])
    note = draft.history[-1]
    assert (note.by, note.action, note.from_state, note.to_state, note.changed) == (
        "bob",
        "dismiss",
        DraftState.WRITTEN,
        DraftState.WRITTEN,
        [],
    )
    assert note.comment == f"dismissed the suggestion: duplicate {first}: two outages"
    assert links(draft) == relations and draft.state == DraftState.WRITTEN
    assert review.approve(draft, "bob", ["en"]).state == DraftState.APPROVED, "a dismissal makes nobody a writer"
    file = store.path("draft", second).read_bytes()

    assert record_duplicates(store, second, [a_match(first)]) is False
    assert store.path("draft", second).read_bytes() == file, "the dismissed pair does not come back"
    assert record_duplicates(store, second, [a_match(first), a_match(third.id, 0.8)]) is True
    assert [p.id for p in store.read_draft(second).possible_duplicates] == [third.id]
    file = store.path("draft", second).read_bytes()
    dismiss(store, second, first, "duplicate", Act("erin"))
    assert store.path("draft", second).read_bytes() == file, "dismissed once, not twice"
    shown = cli("show", second, "--root", str(root)).stdout
    assert f"- duplicate {first}: by bob at " in shown and ": two outages" in shown
    unknown = cli("dismiss", second, "nobody-00000000", "--as", "related", "--by", "bob", "--root", str(root))
    assert unknown.stderr == "Error: nobody-00000000 is neither a draft in drafts/ nor a case in cases/\n"


def test_relate_is_an_edit_of_the_case_s_draft_and_the_only_writer_of_relations(
    store: Store, root: Path, published: dict[str, str], case_json: dict[str, Any], cli: Callable
) -> None:
    first, second = written(case_json, 3).id, written(case_json, 4, by="carol").id
    store.write_draft(written(case_json, 3))
    store.write_draft(written(case_json, 4, by="carol"))
    before = {name: links(store.read_draft(name)) for name in (*published.values(), first, second)}
    record_duplicates(store, first, [a_match("IL-0001")])
    dismiss(store, first, "IL-0002", "related", Act("bob"))
    merge(store, second, first, Act("bob"))
    after = {name: links(store.read_draft(name)) for name in before}
    assert after == before, "record_duplicates, dismiss and merge write no relation"

    related = cli("relate", "IL-0002", "IL-0001", "--as", "related", "--by", "erin", "--root", str(root))
    recurrence = cli("relate", first, "IL-0001", "--as", "recurrence", "--by", "erin", "--root", str(root))

    assert related.exit_code == recurrence.exit_code == 0, related.output + recurrence.output
    assert related.stdout == f"{published['IL-0002']}: related IL-0001 (by erin), now in_review\n"
    draft = store.read_draft(published["IL-0002"])
    entry = draft.history[-1]
    assert (draft.related, entry.by, entry.action, entry.changed) == (["IL-0001"], "erin", "relate", ["related"])
    assert (entry.from_state, entry.to_state) == (DraftState.PUBLISHED, DraftState.IN_REVIEW)
    assert entry.comment == "edited after approval: accepted the suggestion: related IL-0001"
    assert "erin" in review.writers(draft), "accepting is an edit: erin cannot approve it too"
    assert store.read_case("IL-0002").related == [], "the case says so once approved again and promoted"
    assert store.read_draft(first).recurrence_of == "IL-0001"
    again = relate(store, "IL-0002", "IL-0001", "related", Act("erin"))
    assert again.history == draft.history, "a relation the draft has already is no move"

    for other, said in {
        first: f"{first} is not a case id: related names a published case (IL-0003); publish it first",
        "IL-0404": "IL-0404 is not a case in cases/",
        "IL-0002": f"{published['IL-0002']}: IL-0002 is this draft's own case: a case is not related to itself",
    }.items():
        refused = cli("relate", "IL-0002", other, "--as", "related", "--by", "erin", "--root", str(root))
        assert refused.stderr == f"Error: {said}\n", other
    gone = cli("relate", second, "IL-0001", "--as", "related", "--by", "erin", "--root", str(root))
    assert gone.stderr == f"Error: {second} was merged into {first}: relate {first} instead\n"


def test_validate_names_a_merged_draft_whose_survivor_is_not_there(
    store: Store, root: Path, pair: tuple[str, str], cli: Callable
) -> None:
    first, second = pair
    merge(store, second, first, Act("bob"))
    assert cli("validate", "--root", str(root)).exit_code == 0
    (root / "drafts" / f"{first}.json").unlink()  # the survivor's file gone by hand
    result = cli("validate", "--root", str(root))
    assert result.exit_code == 1
    assert f"drafts/{second}.json: merged_into: {first} is neither a draft in drafts/ nor a case in cases/" in (
        result.stdout
    )


def test_a_merge_whose_survivor_s_case_is_withdrawn_is_refused_before_anything_is_written(
    store: Store, published: dict[str, str]
) -> None:
    from pipeline.withdraw import withdraw

    draft, survivor = published["IL-0001"], published["IL-0002"]
    withdraw(store, "IL-0002", why="Not an incident.", by="bob")
    files = {name: store.path("draft", name).read_bytes() for name in (draft, survivor)}
    with pytest.raises(RecordError, match="IL-0002 is withdrawn"):
        merge(store, draft, survivor, Act("erin"))
    assert {name: store.path("draft", name).read_bytes() for name in (draft, survivor)} == files
    assert store.read_case("IL-0001").withdrawn is None
