"""Possible duplicates, related cases and recurrences (pipeline.similar) on real records in a real store."""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.draft import apply_extraction, new_draft
from pipeline.errors import RecordNotFound
from pipeline.extract import extract
from pipeline.ids import canonical_url
from pipeline.models import Case, Draft, DraftState, IncidentStart, Origin, SourceEntry
from pipeline.precedence import Hints, Said
from pipeline.similar import Doc, SimilarIndex, doc_of_case, doc_of_draft, load_library, suggestions
from pipeline.similar.library import CACHE_FILE
from pipeline.similar.text import PASSAGE_CHARS, passage, shingles
from pipeline.store import Store

CACHE_POST = [
    "Cache outage on 2 March",
    "On 2 March at 09:14 UTC the eu-west cache cluster restarted during a routine kernel upgrade and came back"
    " empty. Every request that the cache had answered went to the primary database at once, and the database"
    " ran out of connections within a minute.",
    "For forty minutes about a third of API requests failed with HTTP 503, and the dashboard showed the hit"
    " rate of the cluster at zero. The on-call engineer paged the storage team, who throttled the login"
    " endpoint to let the database recover.",
    "We now warm the cache from a snapshot before a restart, restart one shard at a time, and alert when the"
    " hit rate falls below half of its usual level. The upgrade runbook names each of these steps.",
]
RELATED_POST = [
    "Login slowdown after a cache restart",
    "A restart of the session cache cluster in us-east left it cold. Sign-in requests fell through to the"
    " accounts database, whose connection pool filled, and logins took up to twenty seconds.",
    "The hit rate alert fired after eight minutes. We shed load from the batch jobs, and the cache filled"
    " again within half an hour; we now restart cache nodes one at a time.",
]
STATUS_ENTRY = (
    "Investigating: elevated HTTP 503 errors on the API in eu-west. Identified: the eu-west cache cluster was"
    " restarted by a kernel upgrade and is empty; the primary database is out of connections. Monitoring: we"
    " throttled the login endpoint and the cache is warming; the hit rate is recovering. Resolved: API"
    " requests in eu-west succeed again."
)
CERTIFICATE_ENTRY = (
    "Investigating: customers cannot sign in with single sign-on. Identified: the certificate of our identity"
    " provider's SAML endpoint expired overnight and the renewal job had failed silently for a week."
    " Resolved: a new certificate was issued and installed; sign-in works again, and renewal failures now page."
)
KOREAN_POST = [
    "3월 2일 캐시 장애",
    "3월 2일 오전 9시 14분 유럽 서부 캐시 클러스터가 커널 업그레이드 중에 재시작되면서 비어 있는 상태로 올라왔다."
    " 캐시가 응답하던 모든 요청이 한꺼번에 주 데이터베이스로 몰렸고 데이터베이스는 1분 만에 연결이 바닥났다.",
    "40분 동안 API 요청의 약 3분의 1이 HTTP 503 오류로 실패했고 대시보드에는 클러스터의 적중률이 0으로 나타났다."
    " 당직 엔지니어가 스토리지 팀을 호출했고 팀은 로그인 엔드포인트를 제한해 데이터베이스가 회복되도록 했다.",
    "이제는 재시작 전에 스냅샷으로 캐시를 미리 채우고 샤드를 하나씩 재시작하며 적중률이 평소의 절반 아래로"
    " 떨어지면 경보를 보낸다.",
]
KOREAN_OTHER = [
    "인증서 만료로 인한 로그인 장애",
    "밤사이 신원 제공자의 SAML 엔드포인트 인증서가 만료되어 고객이 통합 로그인을 할 수 없었다. 갱신 작업은 일주일"
    " 동안 아무 알림 없이 실패하고 있었다.",
    "새 인증서를 발급해 설치한 뒤 로그인이 다시 되었고 이제 갱신이 실패하면 당직자에게 호출이 간다. 인증서의"
    " 만료일은 대시보드에 표시하고 30일 전부터 매일 경고를 보낸다.",
]
BOILERPLATE = (
    "<p>This post first appeared on the Acme engineering blog and is republished here with permission. The"
    " weekly reliability digest collects the best writing on running systems at scale.</p>",
    "<p>Subscribe to the digest to get posts like this one in your inbox every Friday. Related reading: how"
    " teams run incident reviews, and what a good postmortem template holds.</p>",
)


def markdown(post: list[str]) -> bytes:
    title, *paragraphs = post
    linked = paragraphs[0].replace("cache cluster", "[cache cluster](https://status.acme.example/cache)", 1)
    return "\n\n".join([f"# {title}", linked, *(f"- {p}" for p in paragraphs[1:])]).encode()


def html(post: list[str], around: tuple[str, str] = ("", "")) -> bytes:
    title, *paragraphs = post
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav>"
        f"<article><h1>{title}</h1>{around[0]}{body}{around[1]}</article><footer>Copyright Acme</footer></body></html>"
    ).encode()


def drafted(url: str, body: bytes, content_type: str, date: str = "2024-03-02", org: str = "Acme") -> Draft:
    """The draft the crawl makes of the page: the real extractor's reading, the registry's hints."""
    entry = SourceEntry(url=url, org=org)
    extraction = extract(body, url, content_type, hints=Hints(registry=Said.hint(org=org, date=date)))
    origin = Origin(url=url, canonical_url=canonical_url(url), final_url=url, format=extraction.format)
    return apply_extraction(new_draft(entry), entry, extraction, origin)


def status_draft(url: str, text: str, date: str, **fields: object) -> Draft:
    draft = new_draft(SourceEntry(url=url, org="Acme"))
    data = draft.model_dump(mode="json") | {"org": "Acme", "org_slug": "acme", "date": date, "date_kind": "incident"}
    return Draft.model_validate(data | {"title": {"en": text[:60]}, "summary": {"en": text}, "text": text, **fields})


NARRATIVE = ("title", "summary", "symptoms_text", "trigger", "detection", "lessons")


def about(make_case: Callable[..., Case], case_id: str, post: list[str], *, lang: str = "en", **fields: object) -> Case:
    """A case whose narrative is the post's (the fixture's own story replaced in every field)."""
    title, *paragraphs = post
    story = {name: {lang: paragraphs[n % len(paragraphs)]} for n, name in enumerate(NARRATIVE)}
    return make_case(
        case_id,
        **{**story, "title": {lang: title}},
        remediation=[{"text": {lang: paragraphs[-1]}}],
        action_items=[],
        **fields,
    )


def published(store: Store, case: Case, draft: Draft) -> None:
    """The case and the draft it was published from (the case's Doc carries the draft's text)."""
    store.write_case(case)
    store.write_draft(draft.model_copy(update={"state": DraftState.PUBLISHED, "case_id": case.id}))


def record_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def backdate(root: Path) -> None:
    """The record files as a clone's are: written well before the index looks (git's racy rule aside)."""
    past = time.time_ns() - 3_600_000_000_000
    for folder in ("drafts", "cases"):
        for path in (root / folder).glob("*.json"):
            os.utime(path, ns=(past, past))


# ---------------------------------------------------------------- the pure core


def test_html_and_markdown_renderings_share_their_shingles_and_a_passage() -> None:
    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    assert md.text and page.text and md.text != page.text  # the link and the list marks differ
    a, b = shingles(md.text), shingles(page.text)
    assert len(set(a.tolist()) & set(b.tolist())) / min(len(a), len(b)) > 0.95
    quote = passage(md.text, page.text)
    assert quote is not None and len(quote) <= PASSAGE_CHARS + 2
    assert quote.removesuffix(" …") in " ".join(md.text.split())


def test_korean_is_compared_by_letters_not_by_its_spacing() -> None:
    text = " ".join(KOREAN_POST[1:])
    respaced = text.replace("캐시 클러스터", "캐시클러스터").replace("주 데이터베이스", "주데이터베이스")
    a, b = shingles(text), shingles(respaced)
    assert len(set(a.tolist()) & set(b.tolist())) / min(len(a), len(b)) > 0.9
    other = shingles(" ".join(KOREAN_OTHER[1:]))
    assert len(set(a.tolist()) & set(other.tolist())) / min(len(a), len(other)) < 0.1


def test_an_index_is_picklable_and_updated_without_the_removed() -> None:
    docs = [
        doc_of_draft(drafted("https://acme.example/a.md", markdown(CACHE_POST), "text/markdown")),
        doc_of_draft(drafted("https://acme.example/a.html", html(CACHE_POST), "text/html")),
    ]
    index = SimilarIndex.of(docs)
    assert [m.id for m in pickle.loads(pickle.dumps(index)).duplicates(docs[0])] == [docs[1].id]
    assert index.updated(removed=[docs[1].id]).duplicates(docs[0]) == []
    assert [m.id for m in index.duplicates(docs[0])] == [docs[1].id]  # the first index is as it was


# ---------------------------------------------------------------- duplicates in a store


def test_an_html_and_a_markdown_rendering_are_flagged_with_a_passage(store: Store) -> None:
    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    store.write_draft(md)
    store.write_draft(page)
    found = suggestions(store, md.id).duplicates
    assert [m.id for m in found] == [page.id]
    assert found[0].kind == "duplicate" and found[0].score >= 0.95
    assert found[0].reasons[0].startswith("same text: ")
    assert found[0].passage and found[0].passage.removesuffix(" …") in " ".join((md.text or "").split())
    assert [m.id for m in suggestions(store, page.id).duplicates] == [md.id]


def test_a_syndicated_copy_in_other_boilerplate_is_flagged(store: Store, make_case: Callable[..., Case]) -> None:
    original = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    published(store, about(make_case, "IL-0001", CACHE_POST, org="Acme", org_slug="acme"), original)
    copy = drafted("https://digest.example/reposts/acme-cache", html(CACHE_POST, BOILERPLATE), "text/html")
    store.write_draft(copy)
    found = suggestions(store, copy.id).duplicates
    assert [m.id for m in found] == ["IL-0001"]
    assert "same text" in found[0].reasons[0] and found[0].passage
    # the case finds the copy too; its own published draft is the case, not a duplicate of it
    assert [m.id for m in suggestions(store, "IL-0001").duplicates] == [copy.id]


def test_a_status_entry_and_the_blog_post_of_one_incident_are_flagged_by_their_dates(
    store: Store, make_case: Callable[..., Case]
) -> None:
    blog = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html", date="2024-03-05")
    case = about(make_case, "IL-0001", CACHE_POST, org="Acme", org_slug="acme", date="2024-03-05")
    published(store, case.model_copy(update={"date_kind": "published"}), blog)
    status = status_draft("https://status.acme.example/incidents/1", STATUS_ENTRY, "2024-03-02")
    other = status_draft("https://status.acme.example/incidents/2", CERTIFICATE_ENTRY, "2024-03-03")
    store.write_draft(status)
    store.write_draft(other)
    found = suggestions(store, status.id).duplicates
    assert [m.id for m in found] == ["IL-0001"]
    assert found[0].passage is None
    assert found[0].reasons == (
        f"same org acme, dates overlap: 2024-03-02 and 2024-02-04..2024-03-05; text {found[0].score:.2f}",
    )
    # another incident of the same org, a day later, is not the same one
    assert suggestions(store, other.id).duplicates == []
    assert other.id not in [m.id for m in suggestions(store, "IL-0001").duplicates]


def test_a_korean_copy_is_flagged_and_unrelated_korean_text_is_not(store: Store) -> None:
    md = drafted("https://acme.example/ko/cache.md", markdown(KOREAN_POST), "text/markdown")
    page = drafted("https://acme.example/ko/cache.html", html(KOREAN_POST), "text/html")
    other = drafted("https://acme.example/ko/cert.html", html(KOREAN_OTHER), "text/html")
    for draft in (md, page, other):
        store.write_draft(draft)
    found = suggestions(store, md.id).duplicates
    assert [m.id for m in found] == [page.id]
    assert found[0].passage and "캐시" in found[0].passage
    assert suggestions(store, other.id).duplicates == []


# ---------------------------------------------------------------- related and recurrences


def test_related_cases_share_terms_and_close_text_and_name_them(store: Store, make_case: Callable[..., Case]) -> None:
    shared: dict[str, Any] = {
        "root_cause": "capacity-exhaustion",
        "components": ["storage", "nccl"],
        "symptoms": ["training-hang"],
    }
    store.write_case(about(make_case, "IL-0001", CACHE_POST, org="Acme", org_slug="acme", date="2023-01-10", **shared))
    store.write_case(
        about(make_case, "IL-0002", RELATED_POST, org="Beta", org_slug="beta", date="2024-05-01", **shared)
    )
    # the same terms, other text; and the same text, another root cause
    store.write_case(about(make_case, "IL-0003", KOREAN_OTHER, lang="ko", org="Gamma", org_slug="gamma", **shared))
    store.write_case(about(make_case, "IL-0004", CACHE_POST, org="Delta", org_slug="delta", root_cause="software-bug"))
    found = suggestions(store, "IL-0002")
    assert [m.id for m in found.related] == ["IL-0001"]
    line = found.related[0].reasons[0]
    assert line.startswith(
        "components: nccl, storage; symptoms: training-hang; root cause: capacity-exhaustion; text 0."
    )
    assert found.duplicates == [] and found.recurrences == []  # other orgs; dates apart


def test_recurrences_are_the_same_orgs_earlier_cases(store: Store, make_case: Callable[..., Case]) -> None:
    terms: dict[str, Any] = {
        "org": "Acme",
        "org_slug": "acme",
        "root_cause": "capacity-exhaustion",
        "components": ["storage"],
    }
    store.write_case(about(make_case, "IL-0001", CACHE_POST, date="2022-06", **terms))
    store.write_case(about(make_case, "IL-0002", KOREAN_OTHER, lang="ko", date="2024-03-02", **terms))
    store.write_case(about(make_case, "IL-0003", RELATED_POST, date="2025-01-01", **terms))  # later
    store.write_case(about(make_case, "IL-0004", CACHE_POST, **{**terms, "org_slug": "beta"}, date="2021-01-01"))
    found = suggestions(store, "IL-0002")
    assert [m.id for m in found.recurrences] == ["IL-0001"]
    assert (
        found.recurrences[0]
        .reasons[0]
        .startswith("earlier: 2022-06-01..2022-06-30; components: storage; root cause: capacity-exhaustion; text 0.")
    )
    # the later case has both earlier ones as recurrences; related leaves out what is a recurrence already
    later = suggestions(store, "IL-0003")
    assert [m.id for m in later.recurrences] == ["IL-0001", "IL-0002"]
    assert "IL-0001" not in [m.id for m in later.related]


def test_exclude_leaves_a_dismissed_pair_out(store: Store) -> None:
    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    store.write_draft(md)
    store.write_draft(page)
    assert suggestions(store, md.id, exclude=[("duplicate", page.id)]).duplicates == []
    assert [m.id for m in suggestions(store, md.id, exclude=[("related", page.id)]).duplicates] == [page.id]


def test_left_out_of_the_index_rejected_drafts_and_withdrawn_cases(
    store: Store, make_case: Callable[..., Case]
) -> None:
    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    store.write_draft(md)
    store.write_draft(page.model_copy(update={"state": DraftState.REJECTED}))
    withdrawn = about(
        make_case, "IL-0001", CACHE_POST, withdrawn="2024-04-01T00:00:00Z", withdrawn_reason="spam", withdrawn_by="ann"
    )
    store.write_case(withdrawn)
    assert load_library(store).index.row.keys() == {md.id}
    assert suggestions(store, md.id).duplicates == []


def test_an_unknown_id_is_a_one_line_error_naming_it(store: Store) -> None:
    with pytest.raises(RecordNotFound, match="no case with id 'IL-0999'"):
        suggestions(store, "IL-0999")
    with pytest.raises(RecordNotFound, match="no draft with id 'no-such-draft'"):
        suggestions(store, "no-such-draft")


# ---------------------------------------------------------------- the cache and the read-only promise


def _library(store: Store, make_case: Callable[..., Case]) -> None:
    for n, post in enumerate((CACHE_POST, KOREAN_POST, KOREAN_OTHER), start=1):
        store.write_case(
            about(make_case, f"IL-000{n}", post, lang="ko" if n > 1 else "en", org="Acme", org_slug="acme")
        )
    store.write_draft(drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown"))
    backdate(store.root)


def test_a_second_index_reads_only_the_file_that_changed(store: Store, make_case: Callable[..., Case]) -> None:
    _library(store, make_case)
    first = load_library(store)
    assert len(first.read) == 4 and len(first.index) == 4
    assert load_library(store).read == ()  # nothing changed: nothing read
    case = store.read_case("IL-0002")
    store.write_case(case.model_copy(update={"summary": {"ko": "요약을 고쳤다. " + case.summary["ko"]}}))
    again = load_library(store)
    assert again.read == ("case:IL-0002",)
    assert "요약을 고쳤다" in again.index.docs[again.index.row["IL-0002"]].narrative
    past = time.time_ns() - 3_600_000_000_000
    os.utime(store.path("case", "IL-0002"), ns=(past, past))  # read once more: its time changed
    assert load_library(store).read == ("case:IL-0002",)
    store.path("case", "IL-0003").unlink()
    gone = load_library(store)
    assert gone.read == () and "IL-0003" not in gone.index.row


def test_a_process_loads_the_index_from_the_state_once_until_another_writes_it(
    store: Store, make_case: Callable[..., Case]
) -> None:
    _library(store, make_case)
    first = load_library(store)
    assert load_library(store).index is first.index  # the same process: not read from the file again
    written = store.state.read(CACHE_FILE)
    assert written is not None
    store.state.write(CACHE_FILE, written)  # another process writes the cache: a new file
    again = load_library(store)
    assert again.index is not first.index and again.read == () and len(again.index) == len(first.index)


@pytest.mark.parametrize("cache", [b"not a pickle", pickle.dumps({"format": "other code", "looked": 0})])
def test_a_broken_cache_is_not_trusted(store: Store, make_case: Callable[..., Case], cache: bytes) -> None:
    _library(store, make_case)
    fresh = load_library(store).index
    store.state.path(CACHE_FILE).write_bytes(cache)
    again = load_library(store)
    assert len(again.read) == 4
    assert again.index.docs == fresh.docs


def test_suggestions_write_no_record(store: Store, make_case: Callable[..., Case]) -> None:
    _library(store, make_case)
    before = record_bytes(store.root)
    for record_id in [*store.ids("case"), *store.ids("draft")]:
        suggestions(store, record_id)
    after = record_bytes(store.root)
    records = [k for k in before if k.startswith(("drafts/", "cases/", "sources/"))]
    assert len(records) == 4 and {k: after.get(k) for k in records} == {k: before[k] for k in records}
    assert set(after) - set(before) == {".incidentlib/similar.pickle"}  # the index's cache, in the state


def test_a_doc_of_a_case_carries_its_drafts_text(make_case: Callable[..., Case]) -> None:
    case = about(make_case, "IL-0001", CACHE_POST, date="2024-03")
    doc: Doc = doc_of_case(case, "the extracted text")
    assert doc.text == "the extracted text" and "eu-west cache cluster" in doc.narrative
    assert doc.dates is not None and (doc.dates[0].isoformat(), doc.dates[1].isoformat()) == (
        "2024-03-01",
        "2024-03-31",
    )
    assert doc_of_case(case.model_copy(update={"root_cause": "unknown"})).root_cause is None


def test_a_page_and_the_incidents_cut_from_it_are_no_duplicates_of_each_other(store: Store) -> None:
    page = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown")
    part = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    # The second is one incident of the first page's (its text a slice of the page's).
    store.write_draft(
        page.model_copy(update={"incidents": [IncidentStart(heading="The cache", start=0, draft_id=part.id)]})
    )
    store.write_draft(part.model_copy(update={"part_of": page.id}))
    assert suggestions(store, part.id).duplicates == []
    assert suggestions(store, page.id).duplicates == []


@pytest.mark.parametrize("date", ["2024-00", "2024-03-00", "0000", "0001-01-10"])
def test_a_date_no_calendar_has_leaves_the_record_comparable_by_its_text(store: Store, date: str) -> None:
    md = drafted("https://acme.example/blog/cache.md", markdown(CACHE_POST), "text/markdown", date=date)
    md = md.model_copy(update={"date_kind": "published"})
    page = drafted("https://acme.example/blog/cache.html", html(CACHE_POST), "text/html")
    store.write_draft(md)
    store.write_draft(page)
    assert doc_of_draft(md).dates is None
    assert [m.id for m in suggestions(store, page.id).duplicates] == [md.id]


def test_a_library_of_near_copies_costs_each_draft_a_bounded_number_of_comparisons() -> None:
    """Templated posts (a status page's, the benchmarks' farm) are near-copies of each other: each new draft
    meets every one. It is compared with at most MAX_TEXT_CANDIDATES of them and keeps the five best, each
    with its shared passage; in a smaller library the bound changes nothing."""
    from pipeline.similar import index as similar_index

    def doc(n: int) -> Doc:
        steps = (f"at step {k} the runbook said the job queue on node {k} stopped draining" for k in range(30))
        text = " ".join([f"Incident {n} of the queue.", *steps])
        return Doc(f"bench-{n:04d}", "draft", "bench", None, frozenset(), frozenset(), None, text, text)

    many = SimilarIndex.of(doc(n) for n in range(400))
    few = SimilarIndex.of(doc(n) for n in range(similar_index.MAX_TEXT_CANDIDATES))

    found = many.duplicates(doc(7))
    assert len(found) == 5 and all(m.passage for m in found) and "bench-0007" not in [m.id for m in found]
    sets, bands, _ = many._query(doc(7))
    by_text, _ = many._candidates(doc(7), sets, bands)
    # 399 copies met; the bound's worth compared (less the draft's own row, when it is among them)
    assert similar_index.MAX_TEXT_CANDIDATES - 1 <= len(by_text) <= similar_index.MAX_TEXT_CANDIDATES
    # Under the bound, every copy is found, as the rules find them over every row.
    small = few.duplicates(doc(7), limit=100)
    assert {m.id for m in small} == {d.id for d in few.docs} - {"bench-0007"}
