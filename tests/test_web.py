"""The reviewer's web page, through the ASGI test client: sign-in, the queue, a draft, the review's moves."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers import CASE_FIXTURE, HOSTILE, case_fields, case_page_lacks, reviewable_draft

from pipeline.candidates import candidates
from pipeline.case_view import case_rows
from pipeline.errors import SettingsError
from pipeline.evidence import Span, evidence_for
from pipeline.ids import candidate_id, draft_id_for, same_page_key
from pipeline.models import (
    Candidate,
    Case,
    Draft,
    DraftState,
    LinkState,
    LinkStatus,
    MachineTranslation,
    Proposal,
    Review,
    Section,
)
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.sources import registered_by_page
from pipeline.standins.chat import ChatStandIn, Reply
from pipeline.store import Store
from pipeline.web import SESSION_COOKIE, create_app
from pipeline.web.forms import as_text, by_language, word_diff
from pipeline.web.security import Throttle as _Throttle

pytestmark = pytest.mark.runs_long(45)  # seconds in all: such modules start first (conftest.py)

PASSWORD = "correct horse battery"
DRAFT_ID = "example-org-outage-00000001"


def questions(chat: ChatStandIn) -> list[dict[str, Any]]:
    """What each request to the model asked: its user message, parsed (the fields wanted, the text or the English)."""
    return [json.loads(r.body["messages"][-1]["content"].split("\n\nAnswer with JSON")[0]) for r in chat.completions]


def a_draft(case_json: dict[str, Any], **changes: Any) -> Draft:
    return reviewable_draft(case_json, DRAFT_ID, **changes)


@pytest.fixture
def site(root: Path, store: Store, case_json: dict[str, Any]) -> TestClient:
    """The page on a data root holding one draft, with two reviewers, ann and bob."""
    store.write_draft(a_draft(case_json))
    add_reviewer(store, "ann", PASSWORD)
    add_reviewer(store, "bob", PASSWORD)
    return TestClient(create_app(Settings(root=root)), follow_redirects=False)


def csrf(client: TestClient, path: str = "/login") -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert match, f"no CSRF token on {path}"
    return match.group(1)


def sign_in(client: TestClient, name: str) -> None:
    answer = client.post("/login", data={"name": name, "password": PASSWORD, "csrf_token": csrf(client)})
    assert answer.status_code == 303, answer.text


def form_of(client: TestClient, draft_id: str = DRAFT_ID) -> dict[str, Any]:
    """The draft page's form as a browser would send it unchanged."""
    page = client.get(f"/drafts/{draft_id}").text
    form = page[page.index('id="draft-form"') : page.index("</form>", page.index('id="draft-form"'))]
    data: dict[str, Any] = {}
    for name, value in re.findall(r'<input(?![^>]*type="checkbox")[^>]* name="([^"]+)" value="([^"]*)"', form):
        data[name] = _unescape(value)
    for name, value in re.findall(r'<textarea name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.S):
        data[name] = _unescape(value)
    for name, body in re.findall(r'<select name="([^"]+)">(.*?)</select>', form, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected', body)
        data[name] = chosen.group(1) if chosen else ""
    for name, value in re.findall(r'<input type="checkbox" name="([^"]+)" value="([^"]+)" checked>', form):
        data.setdefault(name, []).append(value)
    return data


def move(client: TestClient, action: str, **data: str) -> Any:
    """A review move from the draft's page, as the page sends it: with the version it shows."""
    page = client.get(f"/drafts/{DRAFT_ID}").text
    version = re.search(r'name="version" value="([^"]+)"', page)
    assert version, "no version on the draft page"
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    return client.post(
        f"/drafts/{DRAFT_ID}/{action}", data={"csrf_token": token.group(1), "version": version.group(1), **data}
    )


def _unescape(text: str) -> str:
    return (
        text.replace("&#34;", '"').replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )


def test_a_signed_out_request_is_sent_to_sign_in_and_a_post_is_refused(site: TestClient) -> None:
    answer = site.get(f"/drafts/{DRAFT_ID}")
    assert answer.status_code == 303 and answer.headers["location"] == f"/login?next=%2Fdrafts%2F{DRAFT_ID}"
    assert site.post(f"/drafts/{DRAFT_ID}/approve", data={"csrf_token": "x"}).status_code == 401


def test_sign_in_sets_a_signed_http_only_cookie_and_a_wrong_password_is_refused(site: TestClient) -> None:
    wrong = site.post("/login", data={"name": "ann", "password": "nope", "csrf_token": csrf(site)})
    assert wrong.status_code == 401 and "wrong name or password" in wrong.text
    unknown = site.post("/login", data={"name": "zed", "password": PASSWORD, "csrf_token": csrf(site)})
    assert unknown.status_code == 401 and "wrong name or password" in unknown.text, "names are not told apart"
    answer = site.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": csrf(site), "next": "/cases"})
    assert answer.status_code == 303 and answer.headers["location"] == "/cases"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Secure" not in cookie, "Secure only over HTTPS"
    assert "signed in as <b>ann</b>" in site.get("/").text


def test_sign_in_never_sends_a_person_to_another_site(site: TestClient) -> None:
    answer = site.post(
        "/login", data={"name": "ann", "password": PASSWORD, "csrf_token": csrf(site), "next": "//evil.example/x"}
    )
    assert answer.headers["location"] == "/"


def test_a_post_without_the_csrf_token_is_refused(site: TestClient) -> None:
    sign_in(site, "ann")
    assert site.post(f"/drafts/{DRAFT_ID}/write", data={}).status_code == 403
    assert site.post(f"/drafts/{DRAFT_ID}/write", data={"csrf_token": "forged"}).status_code == 403
    assert site.post("/login", data={"name": "ann", "password": PASSWORD}).status_code == 403


def test_crawled_markup_is_shown_as_text_and_no_inline_script_may_run(site: TestClient) -> None:
    sign_in(site, "ann")
    answer = site.get(f"/drafts/{DRAFT_ID}")
    assert answer.status_code == 200
    assert "<script>alert" not in answer.text and "<img src=x" not in answer.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in answer.text
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy


def test_the_queue_counts_filters_and_searches(site: TestClient, store: Store, case_json: dict[str, Any]) -> None:
    other = a_draft(
        case_json, id="example-org-other-00000002", state="written", title={"en": "Disk full on the build farm"}
    )
    store.write_draft(other.model_copy(update={"review": other.review.model_copy(update={"written_by": "carol"})}))
    sign_in(site, "ann")
    page = site.get("/").text
    assert "extracted <b>1</b>" in page and "written <b>1</b>" in page and "2 drafts" in page
    assert "1 draft," not in site.get("/?state=written").text and "Disk full" in site.get("/?state=written").text
    assert "Disk full" not in site.get("/?state=extracted").text
    searched = site.get("/?q=build+farm").text
    assert "Disk full" in searched and DRAFT_ID not in searched
    assert "Disk full" in site.get("/?writer=Carol").text and "Disk full" not in site.get("/?writer=ann").text
    assert "unknown state" in site.get("/?state=nonsense").text
    # The page's links keep the filters it shows: each state's count, the next page.
    filtered = site.get("/?writer=Carol&older_than=0").text
    assert 'href="/?state=written&amp;older_than=0&amp;writer=Carol&amp;sort=state"' in filtered
    assert 'name="writer" value="Carol"' in filtered and 'name="older_than" value="0"' in filtered


def test_a_claim_says_who_is_on_a_draft_and_holds_others_off(site: TestClient) -> None:
    sign_in(site, "ann")
    token = csrf(site, "/")
    answer = site.post(f"/drafts/{DRAFT_ID}/claim", headers={"X-CSRF-Token": token})
    assert answer.status_code == 200 and "on it: <b>ann</b>" in answer.text
    other = TestClient(site.app, follow_redirects=False)
    sign_in(other, "bob")
    refused = other.post(f"/drafts/{DRAFT_ID}/claim", headers={"X-CSRF-Token": csrf(other, "/")})
    assert "ann is on this draft" in refused.text
    assert "on it: <b>ann</b>" in other.get("/").text
    site.post(f"/drafts/{DRAFT_ID}/unclaim", headers={"X-CSRF-Token": token})
    assert "on it:" not in other.get("/").text


def test_an_edit_is_saved_with_its_diff_and_the_writer_cannot_approve_it(site: TestClient, store: Store) -> None:
    sign_in(site, "ann")
    form = form_of(site)
    form["summary.en"] = form["summary.en"].replace("hung", "stalled", 1) + " It took two hours."
    form["components"] = [*form.get("components", []), "dns"]
    saved = site.post(f"/drafts/{DRAFT_ID}/save", data=form)
    assert saved.status_code == 303, saved.text
    draft = store.read_draft(DRAFT_ID)
    assert draft.summary and draft.summary["en"].endswith("It took two hours.") and "dns" in draft.components
    last = draft.history[-1]
    assert last.by == "ann" and {"summary.en", "components"} <= set(last.changed)
    assert move(site, "write").status_code == 303
    refused = move(site, "approve")
    assert refused.status_code == 409 and "ann wrote or edited this draft and cannot approve it" in refused.text

    reviewer = TestClient(site.app, follow_redirects=False)
    sign_in(reviewer, "bob")
    page = reviewer.get(f"/drafts/{DRAFT_ID}").text
    assert "<ins> It took two hours.</ins>" in page or "<ins>It took two hours.</ins>" in page
    approved = move(reviewer, "approve")
    assert approved.status_code == 303
    assert store.read_draft(DRAFT_ID).state == DraftState.APPROVED
    assert store.read_draft(DRAFT_ID).review.reviewed_by == "bob"


def _form_bob_saved_over(site: TestClient) -> dict[str, Any]:
    """The draft's form as ann loaded it, made stale by bob saving a change of his meanwhile."""
    sign_in(site, "ann")
    stale = form_of(site)
    other = TestClient(site.app, follow_redirects=False)
    sign_in(other, "bob")
    theirs = form_of(other)
    theirs["impact.users"] = "all API users"
    assert other.post(f"/drafts/{DRAFT_ID}/save", data=theirs).status_code == 303
    return stale


def test_a_stale_save_is_refused_and_shows_the_other_change(site: TestClient, store: Store) -> None:
    stale = _form_bob_saved_over(site)
    stale["lessons.en"] = "Mine."
    answer = site.post(f"/drafts/{DRAFT_ID}/save", data=stale)
    assert answer.status_code == 409
    assert "someone changed this draft after you opened it" in answer.text
    their = answer.text[answer.text.index("Their change") :]
    assert "bob" in their and "<code>impact.users</code>" in their and "users</ins>" in their
    assert "Mine." in their, "what the person typed is listed, to copy back"
    assert 'value="all API users"' in answer.text, "the form shows the draft as it is now"
    assert store.read_draft(DRAFT_ID).lessons != {"en": "Mine."}


def test_a_field_the_record_format_refuses_is_named_and_nothing_is_saved(site: TestClient, store: Store) -> None:
    sign_in(site, "ann")
    form = form_of(site)
    form["date"] = "sometime in March"
    before = store.read_draft(DRAFT_ID)
    answer = site.post(f"/drafts/{DRAFT_ID}/save", data=form)
    assert answer.status_code == 422 and "<code>date</code>" in answer.text
    assert store.read_draft(DRAFT_ID) == before


def test_what_a_draft_lacks_follows_the_form_as_it_is_typed(site: TestClient) -> None:
    sign_in(site, "ann")
    form = form_of(site)
    form["summary.en"] = ""
    answer = site.post(f"/drafts/{DRAFT_ID}/lacks", data=form)
    assert answer.status_code == 200 and "Still lacks for publication:</b> summary" in answer.text


def test_cases_say_which_cite_a_broken_link(site: TestClient, store: Store, make_case: Any) -> None:
    case = make_case("IL-0001")
    store.write_case(case)
    url = case.sources[0].url
    store.state.update_links({url: LinkState(url=url, status=LinkStatus.GONE, checked_at="2026-11-20T10:00:00Z")})
    sign_in(site, "ann")
    page = site.get("/cases").text
    assert "1 case; 1 cite a broken link" in page and f"broken: {case.sources[0].url}" in page
    assert site.get("/cases/IL-0001").status_code == 200 and site.get("/cases/IL-9999").status_code == 404


def test_behind_a_proxy_the_trusted_header_names_the_person(root: Path, store: Store, case_json: dict) -> None:
    store.write_draft(a_draft(case_json))
    settings = Settings(root=root, web_user_header="X-Forwarded-User", web_trusted_proxies=["testclient"])
    client = TestClient(create_app(settings), follow_redirects=False)
    assert client.get("/").status_code == 303, "without the header, nobody"
    assert "signed in as <b>carol</b>" in client.get("/", headers={"X-Forwarded-User": "carol"}).text
    twice = client.get("/", headers=[("X-Forwarded-User", "carol"), ("X-Forwarded-User", "mallory")])
    assert twice.status_code == 303, "a header sent twice names nobody"
    elsewhere = TestClient(create_app(settings.model_copy(update={"web_trusted_proxies": ["127.0.0.1"]})))
    answer = elsewhere.get("/", headers={"X-Forwarded-User": "carol"}, follow_redirects=False)
    assert answer.status_code == 303, "only a trusted proxy's header counts"


def test_failed_sign_ins_hold_off_the_next_ones() -> None:
    throttle = _Throttle()
    assert throttle.wait_s("name:ann") == 0
    for _ in range(3):
        throttle.failed("name:ann", "addr:1")
    assert 0.5 < throttle.wait_s("name:ann") <= 1.0 and 0.5 < throttle.wait_s("addr:1", "name:bob") <= 1.0
    throttle.failed("name:ann")
    assert 1.5 < throttle.wait_s("name:ann") <= 2.0
    throttle.passed("name:ann")
    assert throttle.wait_s("name:ann") == 0


def test_a_sign_in_too_soon_after_failures_is_answered_at_once_with_429(site: TestClient) -> None:
    for _ in range(3):
        site.post("/login", data={"name": "ann", "password": "wrong-password", "csrf_token": csrf(site)})
    answer = site.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": csrf(site)})
    assert answer.status_code == 429 and answer.headers["retry-after"] == "1"
    assert "too many failed sign-ins" in answer.text


def test_a_removed_reviewer_or_a_changed_password_ends_the_session(site: TestClient, store: Store) -> None:
    from pipeline.reviewers import remove_reviewer, set_password

    sign_in(site, "ann")
    assert site.get("/").status_code == 200
    set_password(store, "ann", "another long password")
    assert site.get("/").status_code == 303, "a new password signs every session out"
    other = TestClient(site.app, follow_redirects=False)
    sign_in(other, "bob")
    remove_reviewer(store, "bob")
    assert other.get("/").status_code == 303


def test_an_approval_is_of_the_version_the_reviewer_read(site: TestClient, store: Store) -> None:
    sign_in(site, "ann")
    assert move(site, "write").status_code == 303
    reviewer = TestClient(site.app, follow_redirects=False)
    sign_in(reviewer, "bob")
    page = reviewer.get(f"/drafts/{DRAFT_ID}").text
    seen = re.search(r'name="version" value="([^"]+)"', page)
    assert seen
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"trigger": {"en": "Changed meanwhile."}}))
    answer = reviewer.post(
        f"/drafts/{DRAFT_ID}/approve", data={"csrf_token": csrf(reviewer, "/"), "version": seen.group(1)}
    )
    assert answer.status_code == 409 and "the draft changed after you opened it" in answer.text
    assert store.read_draft(DRAFT_ID).state == DraftState.WRITTEN


def test_a_body_too_large_for_a_form_and_a_short_signing_key_are_refused(
    site: TestClient, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = site.post(
        "/login", content=b"x" * (2 << 20), headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert answer.status_code == 413
    monkeypatch.setenv("INCIDENTLIB_WEB_SECRET", "short")
    with pytest.raises(SettingsError, match="shorter than 32 characters"):
        create_app(Settings(root=root))
    assert answer.headers["cache-control"] == "no-store"


def test_the_queue_sees_a_draft_written_or_changed_after_it_was_first_shown(
    site: TestClient, store: Store, case_json: dict[str, Any]
) -> None:
    sign_in(site, "ann")
    assert "extracted <b>1</b>" in site.get("/").text
    store.write_draft(a_draft(case_json, id="example-org-later-00000003", title={"en": "A later outage"}))
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"state": DraftState.REJECTED}))
    page = site.get("/").text
    assert "A later outage" in page and "rejected <b>1</b>" in page and "extracted <b>1</b>" in page


def test_a_draft_that_is_not_there_or_an_id_that_names_none_is_one_line_not_a_server_error(site: TestClient) -> None:
    sign_in(site, "ann")
    token = csrf(site, "/")
    for path in ("/drafts/nope-1/save", "/drafts/nope-1/approve", "/drafts/nope-1/lacks"):
        answer = site.post(path, data={"csrf_token": token})
        assert answer.status_code == 404 and "No draft nope-1 here." in answer.text, path
    answer = site.post("/drafts/UPPER/save", data={"csrf_token": token})
    assert answer.status_code == 422 and "invalid draft id" in answer.text
    assert site.get("/cases/il-1").status_code == 422 and site.get("/drafts/a.b").status_code == 422


# ---------------------------------------------------------------- candidates the feeds proposed

FEEDS_YAML = """\
- url: https://status.example.org/history.atom
  kind: statuspage
  name: example-status
  org: Example
- url: https://blog.example.org/feed.atom
  kind: atom
  name: example-blog
  org: Example
  include: [outage]
"""
STATUS_FEED, BLOG_FEED = "https://status.example.org/history.atom", "https://blog.example.org/feed.atom"
POSTMORTEM = """# Database failover took the API down

## Summary

On 2 March 2026 a database failover left the API without a primary for 34 minutes. Requests
failed with 503 until the new primary was promoted by hand.

## Root cause

The failover script waited for a replica that had been removed the week before.
"""


def a_candidate(url: str, feed: str = BLOG_FEED, **changes: Any) -> Candidate:
    data: dict[str, Any] = {
        "id": candidate_id(url),
        "url": url,
        "feed": feed,
        "title": "An outage",
        "date": "2026-03-02",
        "org": "Example",
        "why": "'outage' in the title (include 'outage')",
        "found_at": "2026-03-03T08:00:00Z",
    }
    return Candidate.model_validate({**data, **changes})


@pytest.fixture
def proposed(store: Store) -> tuple[Candidate, Candidate]:
    """Two open candidates, as discover leaves them: a status page's incident whose feed carries its
    postmortem (the newer), and a blog post."""
    (store.sources_dir / "feeds.yaml").write_text(FEEDS_YAML, encoding="utf-8")
    status = a_candidate(
        "https://status.example.org/incidents/abc123",
        STATUS_FEED,
        title="Database failover took the API down",
        date="2026-03-02",
        why="it has a postmortem",
        feed_text=True,
    )
    blog = a_candidate("https://blog.example.org/2026/02/cdn-outage", title="The CDN outage", date="2026-02-20")
    # As one run over two feeds writes them: feed after feed, the older first here.
    store.write_candidates([blog, status])
    store.state.keep_feed_text(status.id, POSTMORTEM)
    return status, blog


def candidate_action(client: TestClient, action: str, **data: Any) -> Any:
    """An accept or a dismiss as the candidates page sends it: with the token the page shows."""
    return client.post(f"/candidates/{action}", data={"csrf_token": csrf(client, "/candidates"), **data})


def test_the_candidates_are_listed_newest_first_with_their_feed_and_why(
    site: TestClient, store: Store, proposed: tuple[Candidate, Candidate]
) -> None:
    status, blog = proposed
    sign_in(site, "ann")
    assert '<a href="/candidates">Candidates</a>' in site.get("/").text, "in the navigation"
    page = site.get("/candidates").text
    assert "2 waiting" in page
    assert page.index(status.id) < page.index(blog.id), "newest first"
    assert (
        f'<a class="title" href="{status.url}" rel="noopener noreferrer">Database failover took the API down</a>'
        in (page)
    )
    row = page[page.index(f'id="candidate-{status.id}"') : page.index(f'id="candidate-{blog.id}"')]
    assert "2026-03-02" in row and "Example" in row and "example-status" in row and "it has a postmortem" in row
    assert "the feed carries its text" in row
    assert "&#39;outage&#39; in the title" in page and "the feed carries its text" not in page[page.index(blog.id) :]
    assert 'value="accept"' not in page and page.count('action="/candidates/accept"') == 2
    assert page.count('action="/candidates/dismiss"') == 2 and page.count('name="reason"') == 2

    later = a_candidate(
        "https://blog.example.org/2025/11/old-outage", date="2025-11-01", found_at="2026-03-04T08:00:00Z"
    )
    store.write_candidates([*proposed[::-1], later])
    order = site.get("/candidates").text
    assert order.index(later.id) < order.index(status.id) < order.index(blog.id), "the latest run's finds on top"

    only_blog = site.get("/candidates?feed=example-blog").text
    assert "2 waiting from example-blog" in only_blog and blog.id in only_blog and status.id not in only_blog
    assert "Accept all 2 from example-blog" in only_blog
    unknown = site.get("/candidates?feed=nope")
    assert unknown.status_code == 200 and "no feed named &#39;nope&#39;" in unknown.text


def test_accepting_registers_the_candidate_and_drafts_it_from_its_feeds_text(
    site: TestClient, store: Store, proposed: tuple[Candidate, Candidate]
) -> None:
    status, blog = proposed
    sign_in(site, "ann")
    answer = candidate_action(site, "accept", id=status.id)
    assert answer.status_code == 200, answer.text
    draft_id = draft_id_for(status.url)
    assert "Accepted 1 candidate." in answer.text and "in <code>sources/discovered.yaml</code>" in answer.text
    assert f'drafted from its feed\'s text: <a class="draft" href="/drafts/{draft_id}">{draft_id}</a>' in (
        answer.text.replace("&#39;", "'")
    )
    assert store.read_draft(draft_id).title, "the draft was written from the postmortem"
    registered = registered_by_page(store)
    assert same_page_key(status.url) in registered
    assert registered[same_page_key(status.url)].entry.discovered_from == STATUS_FEED
    assert status.id not in answer.text.split("Accepted 1 candidate.")[1].split("</div>")[1], "no longer listed"
    assert "1 waiting" in answer.text

    later = candidate_action(site, "accept", all_from="example-blog", feed="example-blog")
    assert later.status_code == 200 and "the next crawl drafts it" in later.text
    assert f'registered <a href="{blog.url}" rel="noopener noreferrer">The CDN outage</a>' in later.text
    assert "0 waiting from example-blog" in later.text
    assert [c.id for c in candidates(store)] == []


def test_dismissing_with_a_reason_keeps_it_among_the_dismissed(
    site: TestClient, store: Store, proposed: tuple[Candidate, Candidate]
) -> None:
    status, blog = proposed
    sign_in(site, "ann")
    answer = candidate_action(site, "dismiss", id=blog.id, reason="a product launch, not an outage")
    assert answer.status_code == 200, answer.text
    assert "Dismissed 1 candidate." in answer.text and "a product launch, not an outage" in answer.text
    assert "1 waiting" in answer.text
    (gone,) = candidates(store, dismissed=True)
    assert gone.id == blog.id and gone.reason == "a product launch, not an outage"
    assert same_page_key(blog.url) not in registered_by_page(store)
    shown = site.get("/candidates?dismissed=1").text
    assert "1 dismissed" in shown and blog.id in shown and status.id not in shown
    assert ": a product launch, not an outage" in shown and 'action="/candidates/accept"' not in shown
    assert candidate_action(site, "dismiss", id=status.id).status_code == 200
    reasons = {c.id: c.reason for c in candidates(store, dismissed=True)}
    assert reasons == {status.id: None, blog.id: "a product launch, not an outage"}, "the reason is optional"


def test_an_unknown_or_dismissed_candidate_is_one_line_not_a_server_error(
    site: TestClient, store: Store, proposed: tuple[Candidate, Candidate]
) -> None:
    status, blog = proposed
    sign_in(site, "ann")
    unknown = candidate_action(site, "accept", id="c-0000000000")
    assert unknown.status_code == 409 and "accept: sources/candidates.yaml: no candidate c-0000000000" in unknown.text
    assert candidate_action(site, "dismiss", id=blog.id, reason="not ours").status_code == 200
    again = candidate_action(site, "accept", id=blog.id)
    assert again.status_code == 409 and f"{blog.id} was dismissed (not ours)" in again.text
    assert candidate_action(site, "dismiss", id="../../etc/passwd").status_code == 409
    assert candidate_action(site, "accept").status_code == 422
    assert [c.id for c in candidates(store)] == [status.id], "nothing else changed"
    assert same_page_key(blog.url) not in registered_by_page(store)


def test_a_candidate_action_needs_the_csrf_token_and_someone_signed_in(
    site: TestClient, store: Store, proposed: tuple[Candidate, Candidate]
) -> None:
    status, _ = proposed
    answer = site.get("/candidates?feed=example-blog")
    assert answer.status_code == 303 and answer.headers["location"] == "/login?next=%2Fcandidates%3Ffeed%3Dexample-blog"
    assert site.post("/candidates/accept", data={"csrf_token": csrf(site), "id": status.id}).status_code == 401
    sign_in(site, "ann")
    assert site.post("/candidates/accept", data={"id": status.id}).status_code == 403
    assert site.post("/candidates/dismiss", data={"id": status.id, "csrf_token": "forged"}).status_code == 403
    assert site.post("/candidates/accept", data={"id": status.id}, headers={"X-CSRF-Token": "x"}).status_code == 403
    assert [c.id for c in candidates(store)] == [c.id for c in proposed]
    assert registered_by_page(store) == {}


def test_a_hostile_title_is_shown_as_text(site: TestClient, store: Store) -> None:
    url = 'https://blog.example.org/p"onmouseover="alert(1)'
    store.write_candidates([a_candidate(url, title=HOSTILE, why=f"{HOSTILE!r} in the title")])
    sign_in(site, "ann")
    page = site.get("/candidates").text
    assert "<script>alert" not in page and "<img src=x" not in page and 'p"onmouseover' not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert 'href="https://blog.example.org/p&#34;onmouseover=&#34;alert(1)" rel="noopener noreferrer"' in page
    answer = candidate_action(site, "dismiss", id=candidate_id(url), reason='<b onclick="x()">no</b>')
    assert "<b onclick" not in answer.text and "&lt;b onclick=&#34;x()&#34;&gt;no&lt;/b&gt;" in answer.text


# ---------------------------------------------------------------- the writer assist

MODEL = "stand-in-7b"


def assisted_site(root: Path, chat: ChatStandIn) -> TestClient:
    """The page with the assist configured against the scripted server (no retries, no spacing)."""
    settings = Settings(
        root=root,
        llm_url=chat.url,
        llm_model=MODEL,
        llm_max_retries=0,
        llm_requests_per_minute=60000,
        llm_timeout_s=10,
    )
    return TestClient(create_app(settings), follow_redirects=False)


def propose(*items: dict[str, Any]) -> Reply:
    """The model's answer to the propose prompt: each item a field, its text, term and passages."""
    return Reply.json({"proposals": [{"term": None, "passages": [], **item} for item in items]})


def page_ask(client: TestClient, value: str, draft_id: str = DRAFT_ID, **options: Any) -> Any:
    """A click of an "Ask the model" button: the value it sends, with the page's token."""
    return client.post(f"/drafts/{draft_id}/ask", data={"csrf_token": csrf(client, "/"), "ask": value}, **options)


def page_accept(client: TestClient, path: str, draft_id: str = DRAFT_ID) -> Any:
    """A click of a proposal's Accept button, with the version the page showed."""
    page = client.get(f"/drafts/{draft_id}").text
    form = page[page.index('id="assist-accept"') :]
    version = re.search(r'name="version" value="([^"]+)"', form)
    assert version, "no accept form on the page"
    return client.post(
        f"/drafts/{draft_id}/accept", data={"csrf_token": csrf(client, "/"), "version": version.group(1), "path": path}
    )


def buttons(page: str, form: str) -> list[str]:
    """The values of the page's buttons that send `form` (assist-ask: the fields' buttons, not the draft's)."""
    found = re.findall(rf'<button type="submit" form="{form}" name="[a-z]+" value="([^"]+)"', page)
    return [value for value in found if value != "all"]


def lacking_trigger(case_json: dict[str, Any], **changes: Any) -> Draft:
    """The suite's draft without its trigger (English and Korean) and without a Korean summary."""
    return a_draft(case_json, **{"trigger": None, "summary": {"en": case_json["summary"]["en"]}, **changes})


def test_without_a_model_the_page_shows_nothing_of_the_assist(
    site: TestClient, store: Store, case_json: dict[str, Any]
) -> None:
    sign_in(site, "ann")
    before = site.get(f"/drafts/{DRAFT_ID}").text
    with_material = lacking_trigger(case_json)
    store.write_draft(a_draft(case_json))
    proposal = Proposal(
        path="summary.ko",
        language="ko",
        text="요약",
        translated_from=case_json["summary"]["en"],
        model=MODEL,
        prompt="translate-ko/2",
        made_at="2026-11-30T10:00:00Z",
        text_sha="0" * 64,
    )
    made = MachineTranslation(
        model=MODEL, prompt="translate-ko/2", english="Old.", accepted_by="ann", accepted_at="2026-11-30T10:00:00Z"
    )
    store.update_draft(
        DRAFT_ID,
        lambda d: d.model_copy(update={"proposals": [proposal], "machine_translated": {"title.ko": made}}),
    )
    after = site.get(f"/drafts/{DRAFT_ID}").text

    def unversioned(page: str) -> str:
        return re.sub(r'name="version" value="[^"]+"', "", page)

    assert unversioned(after) == unversioned(before), "the same page, to the byte, but for the version"
    for word in ("assist", "model", "propos", "machine translation", MODEL):
        assert word not in after.lower(), word
    assert with_material.trigger is None
    assert site.post(f"/drafts/{DRAFT_ID}/ask", data={"csrf_token": csrf(site, "/"), "ask": "all"}).status_code == 404


def test_with_a_model_each_field_it_can_fill_has_its_button(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    with ChatStandIn([propose()], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        page = client.get(f"/drafts/{DRAFT_ID}").text
        assert sorted(buttons(page, "assist-ask")) == ["summary:ko", "trigger:en"]
        assert 'form="assist-ask" name="ask" value="all">Ask for everything it lacks</button>' in page
        assert f"<code>{MODEL}</code>" in page and "waits for its answer" in page
        fieldset = page[page.index('id="field-trigger"') : page.index("</fieldset>", page.index('id="field-trigger"'))]
        assert ">Ask the model</button>" in fieldset
        assert chat.completions == [], "showing the page asks nothing"


def test_asking_shows_the_proposal_beside_its_field_and_accepting_makes_it_the_persons_edit(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    answer = propose({"field": "trigger", "text": "A failing API, as the text says.", "passages": ["The API failed."]})
    with ChatStandIn([answer], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        asked = page_ask(client, "trigger:en")
        assert asked.status_code == 303, asked.text
        assert (
            asked.headers["location"]
            == f"/drafts/{DRAFT_ID}?asked=proposed&ask=trigger%3Aen&n=1&dropped=0#field-trigger"
        )
        (question,) = questions(chat)
        assert question["fields"] == ["trigger"], "that one field, in English"
        page = client.get(asked.headers["location"].split("#")[0]).text
        fieldset = page[page.index('id="field-trigger"') : page.index("</fieldset>", page.index('id="field-trigger"'))]
        assert "The model proposed 1" in fieldset
        assert "A failing API, as the text says." in fieldset
        assert f"by <b>{MODEL}</b> · propose/2 ·" in fieldset and " UTC" in fieldset
        mark = re.search(r'<a href="#mark-(\d+)" class="mark-ref">\[\d+\]</a> “The API failed.”', fieldset)
        assert mark, "the passage it rests on, linked into the text"
        n = mark.group(1)
        marked = f'<mark class="proposed" id="mark-{n}" title="a passage a proposal of the model rests on">'
        assert f"{marked}The API failed.<sup>{n}</sup></mark>" in page, "marked in the text pane"
        assert 'form="assist-accept" name="path" value="trigger.en"' in fieldset
        assert "trigger:en" not in buttons(page, "assist-ask"), "no asking again while a proposal waits"
        assert store.read_draft(DRAFT_ID).trigger is None, "nothing changes until a person accepts"

        accepted = page_accept(client, "trigger.en")
        assert accepted.status_code == 303, accepted.text
        assert accepted.headers["location"] == f"/drafts/{DRAFT_ID}?accepted=trigger.en#field-trigger"
        draft = store.read_draft(DRAFT_ID)
        assert draft.trigger == {"en": "A failing API, as the text says."} and draft.proposals == []
        last = draft.history[-1]
        assert last.by == "ann" and last.changed == ["trigger"]
        assert last.comment and last.comment.startswith(f"edited: accepted the proposal of {MODEL} (propose/2, ")
        assert [(e.field, e.quote) for e in draft.evidence if e.rule.startswith("assist.")] == [
            ("trigger.en", "The API failed.")
        ]
        page = client.get(f"/drafts/{DRAFT_ID}?accepted=trigger.en").text
        assert "Accepted the proposal for <code>trigger.en</code> as your edit." in page
        assert ">A failing API, as the text says.</textarea>" in page
        assert f"accepted the proposal of {MODEL} (propose/2," in page[page.index('class="history"') :]


def test_an_accept_of_a_version_the_page_did_not_show_is_refused(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    answer = propose({"field": "trigger", "text": "A failing API.", "passages": ["The API failed."]})
    with ChatStandIn([answer], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        assert page_ask(client, "trigger:en").status_code == 303
        page = client.get(f"/drafts/{DRAFT_ID}").text
        version = re.search(r'name="version" value="([^"]+)"', page[page.index('id="assist-accept"') :])
        assert version
        store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"lessons": {"en": "Changed meanwhile."}}))
        refused = client.post(
            f"/drafts/{DRAFT_ID}/accept",
            data={"csrf_token": csrf(client, "/"), "version": version.group(1), "path": "trigger.en"},
        )
        assert refused.status_code == 409 and "accept: not done: the draft changed after you opened it" in refused.text
        assert store.read_draft(DRAFT_ID).trigger is None
        unknown = page_accept(client, "summary.ko")
        assert (
            unknown.status_code == 409 and "accept: " in unknown.text and "no proposal for summary.ko" in unknown.text
        )


def test_a_translation_accepted_is_marked_as_the_machines_and_flagged_when_its_english_changes(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json, trigger={"en": "A maintenance window."}))
    add_reviewer(store, "ann", PASSWORD)
    answer = Reply.json({"translations": [{"path": "summary.ko", "text": "한 노드의 체크포인트 쓰기가 멈췄다."}]})
    with ChatStandIn([answer], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        assert sorted(buttons(client.get(f"/drafts/{DRAFT_ID}").text, "assist-ask")) == ["summary:ko", "trigger:ko"]
        assert page_ask(client, "summary:ko").status_code == 303
        (question,) = questions(chat)
        assert [f["path"] for f in question["fields"]] == ["summary.ko"], "that one text, to Korean"
        page = client.get(f"/drafts/{DRAFT_ID}").text
        assert "translates: “A training run on 64 nodes" in page
        assert page_accept(client, "summary.ko").status_code == 303
        page = client.get(f"/drafts/{DRAFT_ID}").text
        assert f"<code>summary.ko</code>: machine translation by {MODEL} (translate-ko/2), accepted by ann" in page
        assert "its English has changed since" not in page

        form = form_of(client)
        form["summary.en"] = "A rewritten summary."
        assert client.post(f"/drafts/{DRAFT_ID}/save", data=form).status_code == 303
        page = client.get(f"/drafts/{DRAFT_ID}").text
        assert "machine translation by" in page
        assert "<strong>its English has changed since: ask again</strong>" in page
        assert "summary:ko" in buttons(page, "assist-ask"), "asking again is offered"


def test_proposed_text_and_passages_are_shown_as_text(root: Path, store: Store, case_json: dict[str, Any]) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    hostile = 'Deploy. <script>alert("p")</script><img src=x onerror="alert(1)">'
    answer = propose({"field": "trigger", "text": hostile, "passages": ['<script>alert("x")</script>']})
    with ChatStandIn([answer], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        assert page_ask(client, "trigger:en").status_code == 303
        page = client.get(f"/drafts/{DRAFT_ID}").text
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "Deploy. &lt;script&gt;alert(&#34;p&#34;)&lt;/script&gt;&lt;img src=x onerror=" in page
        assert "“&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;”" in page


def test_a_failure_and_the_proposals_dropped_are_shown_in_one_line(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    invented = propose({"field": "trigger", "text": "A cosmic ray.", "passages": ["A cosmic ray flipped a bit."]})
    with ChatStandIn([Reply.status(500), invented], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        failed = page_ask(client, "trigger:en")
        assert failed.status_code == 303 and "asked=failed" in failed.headers["location"]
        page = client.get(failed.headers["location"].split("#")[0]).text
        assert "Asking failed: llm-server-error: propose: answered HTTP 500" in page
        assert "failed: llm-server-error: answered HTTP 500, after the retries allowed" in page

        dropped = page_ask(client, "trigger:en")
        assert dropped.status_code == 303 and "asked=nothing" in dropped.headers["location"]
        page = client.get(dropped.headers["location"].split("#")[0]).text
        assert "Nothing the model proposed stood: 1 dropped" in page
        assert "0 kept, 1 dropped" in page
        assert (
            "dropped <code>trigger.en</code>: a passage not in the text: &#39;A cosmic ray flipped a bit.&#39;" in page
        )

        again = page_ask(client, "trigger:en")
        assert "asked=unchanged" in again.headers["location"] and len(chat.completions) == 2, "the same text: not asked"
        page = client.get(again.headers["location"].split("#")[0]).text
        assert "not asked again" in page and 'value="trigger:en:again" class="small">Ask again anyway' in page
        assert (
            "asked=nothing" in page_ask(client, "trigger:en:again").headers["location"] and len(chat.completions) == 3
        )

        for value, said in [("nope:en", "the assist knows the fields"), ("title:en", "not of title"), ("", "ask for")]:
            answer = page_ask(client, value)
            assert answer.status_code == 422 and "ask: " in answer.text and said in answer.text, value
        assert page_ask(client, "all", draft_id="nope-1").status_code == 404
        assert len(chat.completions) == 3


def test_asking_and_accepting_need_the_csrf_token_and_someone_signed_in(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    with ChatStandIn([propose()], model="stand-in-7b") as chat:
        client = assisted_site(root, chat)
        assert (
            client.post(f"/drafts/{DRAFT_ID}/ask", data={"csrf_token": csrf(client), "ask": "all"}).status_code == 401
        )
        sign_in(client, "ann")
        assert client.post(f"/drafts/{DRAFT_ID}/ask", data={"ask": "all"}).status_code == 403
        assert client.post(f"/drafts/{DRAFT_ID}/ask", data={"ask": "all", "csrf_token": "forged"}).status_code == 403
        assert client.post(f"/drafts/{DRAFT_ID}/accept", data={"path": "trigger.en"}).status_code == 403
        assert chat.completions == []


def test_a_second_ask_while_the_model_answers_the_first_is_one_line(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    store.write_draft(lacking_trigger(case_json))
    add_reviewer(store, "ann", PASSWORD)
    slow = propose({"field": "trigger", "text": "A failing API.", "passages": ["The API failed."]})
    slow = Reply.slow(1.5, then=slow)
    with ChatStandIn([slow], model="stand-in-7b") as chat, ThreadPoolExecutor(1) as pool:
        client = assisted_site(root, chat)
        sign_in(client, "ann")
        first = pool.submit(page_ask, client, "trigger:en")
        deadline = time.monotonic() + 10
        while not chat.completions and time.monotonic() < deadline:
            time.sleep(0.02)  # until the model is being asked
        second = page_ask(client, "all", headers={"HX-Request": "true"})
        assert second.status_code == 200, "to htmx a 200, which it swaps in"
        assert "ask: the model is being asked about this draft already" in second.text
        assert first.result().status_code == 303 and len(chat.completions) == 1
        assert [p.path for p in store.read_draft(DRAFT_ID).proposals] == ["trigger.en"]


# ---------------------------------------------------------------- the first hour: what a newcomer meets


def test_the_case_page_shows_every_field_of_the_record_labelled(site: TestClient, store: Store) -> None:
    case = Case.model_validate_json(CASE_FIXTURE.read_text(encoding="utf-8"))
    case = case.model_copy(update={"machine_translations": ["summary.ko"]})  # left out of the fixture when empty
    fields = case_fields(case)
    assert set(fields) >= {"summary", "impact.scope", "timeline.resolved_after", "review.reviewed_at", "docs"}
    assert all(fields.values()), "the suite's case fills every field"
    store.write_case(case)
    sign_in(site, "ann")
    page = site.get(f"/cases/{case.id}").text
    assert case_page_lacks(page, case) == []
    row = page[page.index('data-field="root_cause"') :]
    assert row.index("Failure of a dependency") < row.index("<code>dependency-failure</code>") < row.index("</div>")
    assert '<a href="/cases/IL-0427">IL-0427</a>' in page, "a case it names is a link to that case"
    assert '<time datetime="PT41M">41 minutes</time>' in page
    assert '<div class="text md" lang="ko"><b class="lang">ko</b> 노드 64대에서' in page


def test_the_case_page_follows_the_model_not_a_list(make_case: Any) -> None:
    class Wider(Case):
        postmortem_owner: str | None = None

    wider = Wider.model_validate({**make_case().model_dump(mode="json"), "postmortem_owner": "the storage team"})
    rows = {row.path: row for row in case_rows(wider)}
    assert list(rows)[-1] == "postmortem_owner" and rows["postmortem_owner"].label == "Postmortem owner"
    assert [[v.text for v in item] for item in rows["postmortem_owner"].items] == [["the storage team"]]


def test_a_stale_save_lists_what_was_typed_as_text_language_by_language(site: TestClient, store: Store) -> None:
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"symptoms_text": None}))
    stale = _form_bob_saved_over(site)
    stale["symptoms_text.en"] = "Default NCCL timeout"
    stale["symptoms_text.ko"] = "기본 NCCL 타임아웃"
    answer = site.post(f"/drafts/{DRAFT_ID}/save", data=stale)
    assert answer.status_code == 409
    yours = answer.text[answer.text.index('<ul class="yours">') :]
    yours = yours[: yours.index("</ul>")]
    assert "{" not in yours and "[" not in yours, yours
    assert (
        '<li><code>symptoms_text</code>: <b class="lang">en</b> <span class="typed" lang="en">Default NCCL timeout'
        '</span> <b class="lang">ko</b> <span class="typed" lang="ko">기본 NCCL 타임아웃</span></li>'
    ) in yours


def test_the_word_diff_keeps_deleted_and_inserted_words_apart_and_shows_values_as_text() -> None:
    assert word_diff("requests timed out", "requests stalled out") == [
        ("same", "requests "),
        ("del", "timed"),
        ("same", " "),
        ("ins", "stalled"),
        ("same", " out"),
    ]
    shown = "".join(words for _, words in word_diff(None, {"en": "Default NCCL timeout", "ko": "기본"}))
    assert shown == "en: Default NCCL timeout · ko: 기본"
    assert as_text([{"text": {"en": "Restart"}}, {"text": {"en": "Alert"}}]) == "en: Restart; en: Alert"
    assert by_language([{"text": {"en": "Restart", "ko": "재시작"}}, {"text": {"en": "Alert"}}]) == [
        ("en", "Restart\nAlert"),
        ("ko", "재시작"),
    ]


def test_an_edit_in_the_history_shows_the_words_replaced_apart(site: TestClient) -> None:
    sign_in(site, "ann")
    form = form_of(site)
    form["summary.en"] = form["summary.en"].replace("hung", "stalled", 1)
    assert site.post(f"/drafts/{DRAFT_ID}/save", data=form).status_code == 303
    history = site.get(f"/drafts/{DRAFT_ID}").text
    assert "storage <del>hung.</del> <ins>stalled.</ins> The other" in history[history.index('class="history"') :]


def test_marking_a_draft_written_ends_the_writers_claim_and_the_page_says_a_reviewer_acts_next(
    site: TestClient,
) -> None:
    sign_in(site, "ann")
    token = csrf(site, "/")
    assert "on it: <b>ann</b>" in site.post(f"/drafts/{DRAFT_ID}/claim", headers={"X-CSRF-Token": token}).text
    page = site.get(f"/drafts/{DRAFT_ID}").text
    assert "on it: <b>ann</b>" in page and "<b>Next:</b> a writer: mark it written" in page
    form = form_of(site)
    form["lessons.en"] = "Checkpoints leave the critical path."
    assert site.post(f"/drafts/{DRAFT_ID}/save", data=form).status_code == 303
    assert "on it: <b>ann</b>" in site.get(f"/drafts/{DRAFT_ID}").text, "an edit is no hand-over"

    assert move(site, "write").status_code == 303
    page = site.get(f"/drafts/{DRAFT_ID}").text
    assert "on it:" not in page
    assert "<b>Next:</b> a reviewer other than ann: approve it or request changes" in page
    reviewer = TestClient(site.app, follow_redirects=False)
    sign_in(reviewer, "bob")
    claimed = reviewer.post(f"/drafts/{DRAFT_ID}/claim", headers={"X-CSRF-Token": csrf(reviewer, "/")})
    assert "on it: <b>bob</b>" in claimed.text and "is on this draft" not in claimed.text
    assert "on it: <b>bob</b>" in reviewer.get("/").text


def test_impact_scope_is_a_box_of_several_lines_the_short_parts_one_line(site: TestClient) -> None:
    sign_in(site, "ann")
    page = site.get(f"/drafts/{DRAFT_ID}").text
    assert re.search(r'<textarea name="impact.scope" rows="3" aria-label="impact.scope">One 512-GPU pre-training', page)
    assert '<input name="impact.users" value="the pre-training team" aria-label="impact.users">' in page


def test_a_published_draft_shows_its_review_and_no_empty_heading(site: TestClient, store: Store) -> None:
    reviewed = Review(written_by="ann", reviewed_by="bob", reviewed_at=datetime(2026, 3, 2, 9, 15, tzinfo=UTC))
    store.update_draft(
        DRAFT_ID,
        lambda d: d.model_copy(update={"state": DraftState.PUBLISHED, "case_id": "IL-0001", "review": reviewed}),
    )
    sign_in(site, "ann")
    page = site.get(f"/drafts/{DRAFT_ID}").text
    review = page[page.index("<h2>Review</h2>") : page.index("</section>", page.index("<h2>Review</h2>"))]
    assert "Written by <b>ann</b>, approved by <b>bob</b> at 2026-03-02 09:15 UTC." in review
    assert "<button" not in review
    assert "<b>Next:</b> nobody: it is published" in page
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"review": Review()}))
    assert "<h2>Review</h2>" not in site.get(f"/drafts/{DRAFT_ID}").text


def test_the_texts_headings_are_headings_and_every_page_names_its_icon(site: TestClient, store: Store) -> None:
    text = "Summary\n\nThe API failed.\n\nRoot cause\n\nA bad config."
    sections = [Section(heading="Summary", text="The API failed."), Section(heading="Root cause", text="A bad config.")]
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"text": text, "sections": sections}))
    login = site.get("/login").text
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in login
    icon = site.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    sign_in(site, "ann")
    page = site.get(f"/drafts/{DRAFT_ID}").text
    pane = page[page.index('<div class="text" lang="en">') :]
    # The finder's reading of each sentence aside (a mark of its own, its field named after it).
    pane = re.sub(r'<mark class="likely"[^>]*>(.*?)<sup>[a-z_]+</sup></mark>', r"\1", pane)
    heading = '<span class="heading" role="heading" aria-level="3">'
    assert pane.startswith(f'<div class="text" lang="en">{heading}Summary</span>\n\nThe API failed.\n\n{heading}Root')


SUGGESTED_TEXT = "The cache emptied at noon.\n\nA probe would have detected the empty cache within a minute.\n"


def a_suggested_draft(case_json: dict[str, Any]) -> Draft:
    """The suite's draft with its detection empty and one passage suggested for it."""
    quote = "A probe would have detected the empty cache within a minute."
    offered = evidence_for("detection", SUGGESTED_TEXT, "cue.detection+modal", Span(quote), confidence=0.35)
    return a_draft(case_json, text=SUGGESTED_TEXT, detection=None, suggestions=[offered.model_dump(mode="json")])


def take_form(client: TestClient) -> tuple[dict[str, str], str]:
    """The take form's hidden fields as the page sends them, and the index its one button sends."""
    page = client.get(f"/drafts/{DRAFT_ID}").text
    form = page[page.index('id="take-suggestion"') : page.index("</form>", page.index('id="take-suggestion"'))]
    data = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    button = re.search(r'<button type="submit" form="take-suggestion" name="index" value="(\d+)"', page)
    assert button, "no take button beside the suggestion"
    return data, button.group(1)


def test_a_suggestion_is_taken_into_its_field_as_the_persons_edit(
    site: TestClient, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(a_suggested_draft(case_json))
    sign_in(site, "ann")
    data, index = take_form(site)
    answer = site.post(f"/drafts/{DRAFT_ID}/take", data={**data, "index": index})
    assert answer.status_code == 303 and answer.headers["location"].endswith("?took=detection#field-detection")
    draft = store.read_draft(DRAFT_ID)
    assert draft.detection == {"en": "A probe would have detected the empty cache within a minute."}
    assert not draft.suggestions and "detection" in {e.field for e in draft.evidence}
    assert (draft.history[-1].by, draft.history[-1].changed) == ("ann", ["detection"])
    page = site.get(answer.headers["location"]).text
    assert "Took the suggestion into detection as your edit." in page
    assert 'form="take-suggestion"' not in page, "nothing left to take"


def test_a_take_of_a_stale_page_is_refused_and_shows_the_other_change(
    site: TestClient, store: Store, case_json: dict[str, Any]
) -> None:
    store.write_draft(a_suggested_draft(case_json))
    sign_in(site, "ann")
    data, index = take_form(site)
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"lessons": {"en": "Changed meanwhile."}}))
    answer = site.post(f"/drafts/{DRAFT_ID}/take", data={**data, "index": index})
    assert answer.status_code == 409 and "take: not done: the draft changed after you opened it" in answer.text
    assert store.read_draft(DRAFT_ID).detection is None
    wrong = site.post(f"/drafts/{DRAFT_ID}/take", data={**take_form(site)[0], "index": "7"})
    assert wrong.status_code == 409 and f"take: {DRAFT_ID}: no suggestion 7: the draft has 1 (0 to 0)" in wrong.text


def test_a_published_draft_offers_no_claim_and_the_others_keep_theirs(
    site: TestClient, store: Store, case_json: dict[str, Any]
) -> None:
    """A claim is for a draft on its way through review: the published one's page and queue row offered
    a claim button all the same, and a claim was taken."""
    other = "example-org-other-00000002"
    store.write_draft(reviewable_draft(case_json, other))
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"state": DraftState.PUBLISHED, "case_id": "IL-0001"}))
    sign_in(site, "ann")
    claim_of = 'hx-post="/drafts/{}/claim"'.format
    published = site.get(f"/drafts/{DRAFT_ID}").text
    assert "<b>Next:</b> nobody: it is published" in published
    assert claim_of(DRAFT_ID) not in published and f'id="claim-{DRAFT_ID}"' not in published
    assert claim_of(other) in site.get(f"/drafts/{other}").text
    queue = site.get("/", params={"sort": "id"}).text
    rows = {draft_id: queue[queue.index(f"<small>{draft_id}") :].split("</tr>")[0] for draft_id in (DRAFT_ID, other)}
    assert claim_of(DRAFT_ID) not in rows[DRAFT_ID] and "published" in rows[DRAFT_ID]
    assert claim_of(other) in rows[other]
    token = csrf(site, "/")
    refused = site.post(f"/drafts/{DRAFT_ID}/claim", headers={"X-CSRF-Token": token})
    assert refused.status_code == 200 and "a published draft is no one&#39;s to claim" in refused.text
    assert "on it:" not in refused.text
    taken = site.post(f"/drafts/{other}/claim", headers={"X-CSRF-Token": token})
    assert "on it: <b>ann</b>" in taken.text
    assert list(json.loads((store.state.path("claims.json")).read_text(encoding="utf-8"))) == [other]


def test_a_complete_draft_s_page_says_the_sign_offs_it_awaits_not_that_nothing_lacks(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    """The break: an extracted draft with every field filled said "Complete: nothing lacks for publication"."""
    store.write_draft(reviewable_draft(case_json, "example-org-whole-00000001"))
    add_reviewer(store, "ann", PASSWORD)
    client = TestClient(create_app(Settings(root=root)), follow_redirects=False)
    sign_in(client, "ann")
    page = client.get("/drafts/example-org-whole-00000001").text
    assert "Still lacks for publication:</b> the writer&#39;s sign-off, a reviewer&#39;s approval" in page
    assert "nothing lacks" not in page


def test_the_review_page_shows_a_title_rendered_and_a_source_url_decoded_but_linked_as_written(
    site: TestClient, store: Store, make_case: Any, case_json: dict[str, Any]
) -> None:
    encoded = "https://example.org/pm/PM2019-009%20-%20%ED%95%9C%20IP.md"
    sources = [{**case_json["sources"][0], "url": encoded}, *case_json["sources"][1:]]
    case = make_case("IL-0431", sources=sources, title={"en": "`train_step` hung", "ko": "`train_step` 멈춤"})
    store.write_case(case)
    sign_in(site, "ann")
    page = site.get(f"/cases/{case.id}").text
    assert "<code>train_step</code> hung" in page and "`train_step`" not in page  # the title as the site shows it
    assert f'href="{encoded}"' in page
    assert ">https://example.org/pm/PM2019-009 - 한 IP.md</a>" in page
