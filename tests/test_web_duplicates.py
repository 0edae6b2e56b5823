"""The draft page's duplicates and suggested relations: the possible duplicates shown with a merge and a
"not a duplicate" button, the related cases and recurrences loaded beside the review, each decision made
in the signed-in person's name on the version the page showed (four eyes as for any move), nothing
written into `related` but by a person's accepting."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers import complete_draft, related_case
from test_web import PASSWORD, csrf, sign_in

from pipeline.merge import record_duplicates
from pipeline.models import DraftState, PossibleDuplicate, Review
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web.app import create_app

PASSAGE = "A configuration push set the cache's time to live to zero on every node at once."


@pytest.fixture
def pair(store: Store, case_json: dict[str, Any]) -> tuple[str, str]:
    """Two drafts waiting for review, A written by alice and B by carol; B may duplicate A."""
    ids = []
    for n, by in ((1, "alice"), (2, "carol")):
        draft = complete_draft(case_json, n).model_copy(
            update={"state": DraftState.WRITTEN, "review": Review(written_by=by)}
        )
        store.write_draft(draft)
        ids.append(draft.id)
    first, second = ids
    match = PossibleDuplicate(id=first, score=0.93, reasons=["same text: 97% of its wording"], passage=PASSAGE)
    record_duplicates(store, second, [match])
    return first, second


@pytest.fixture
def client(root: Path, store: Store, pair: tuple[str, str]) -> TestClient:
    for name in ("bob", "carol"):
        add_reviewer(store, name, PASSWORD)
    return TestClient(create_app(Settings(root=root)), follow_redirects=False)


def _post(client: TestClient, draft_id: str, action: str, **data: str) -> Any:
    """A decision as the draft's page sends it: with the version and token it shows."""
    page = client.get(f"/drafts/{draft_id}").text
    version = re.search(r'name="version" value="([^"]+)"', page)
    assert version
    return client.post(
        f"/drafts/{draft_id}/{action}",
        data={"csrf_token": csrf(client, f"/drafts/{draft_id}"), "version": version.group(1), **data},
    )


def test_the_page_shows_a_possible_duplicate_with_its_passage_and_both_decisions(
    client: TestClient, pair: tuple[str, str]
) -> None:
    first, second = pair
    sign_in(client, "bob")
    page = client.get(f"/drafts/{second}").text
    box = page[page.index('class="duplicates"') : page.index("</section>", page.index('class="duplicates"'))]
    assert f'href="/drafts/{first}"' in box and "0.93" in box and "same text: 97% of its wording" in box
    assert "time to live to zero" in box
    assert f"Merge into {first}" in box and "Not a duplicate" in box
    assert f'hx-get="/drafts/{second}/similar"' in page  # the related cases, loaded beside the review


def test_a_merge_from_the_page_moves_the_sources_and_the_writer_may_not(
    client: TestClient, store: Store, pair: tuple[str, str]
) -> None:
    first, second = pair
    sources = [s.url for s in store.read_draft(second).sources]
    sign_in(client, "carol")  # wrote the draft: four eyes
    refused = _post(client, second, "merge", into=first)
    assert refused.status_code == 409 and "carol" in refused.text
    assert store.read_draft(second).state == DraftState.WRITTEN

    client.post("/logout", data={"csrf_token": csrf(client, f"/drafts/{second}")})
    sign_in(client, "bob")
    done = _post(client, second, "merge", into=first, comment="one outage, two posts")
    assert done.status_code == 303 and done.headers["location"] == f"/drafts/{second}?done=merge"
    merged, survivor = store.read_draft(second), store.read_draft(first)
    assert merged.state == DraftState.MERGED and merged.merged_into == first
    assert set(sources) <= {s.url for s in survivor.sources}
    assert merged.history[-1].by == "bob" and survivor.history[-1].by == "bob"
    page = client.get(done.headers["location"]).text
    assert "Done: merge." in page and f'<b>Merged into</b> <a href="/drafts/{first}">' in page
    assert f"<b>Not to be published itself:</b> its sources went to {first}." in page
    assert "lacks for publication" not in page
    assert 'class="duplicates"' not in page


def test_a_decision_on_a_version_the_page_did_not_show_is_not_made(
    client: TestClient, store: Store, pair: tuple[str, str]
) -> None:
    first, second = pair
    sign_in(client, "bob")
    stale = client.post(
        f"/drafts/{second}/dismiss",
        data={
            "csrf_token": csrf(client, f"/drafts/{second}"),
            "version": "0" * 64,
            "kind": "duplicate",
            "other": first,
        },
    )
    assert stale.status_code == 409 and "changed after you opened it" in stale.text
    assert store.read_draft(second).dismissed == []


def test_not_a_duplicate_is_kept_and_the_pair_stays_out(
    client: TestClient, store: Store, pair: tuple[str, str]
) -> None:
    first, second = pair
    sign_in(client, "bob")
    done = _post(client, second, "dismiss", kind="duplicate", other=first, comment="two outages")
    assert done.status_code == 303
    draft = store.read_draft(second)
    assert [(d.kind, d.id, d.by, d.comment) for d in draft.dismissed] == [("duplicate", first, "bob", "two outages")]
    assert draft.possible_duplicates == []
    again = PossibleDuplicate(id=first, score=0.95, reasons=["same text"], passage=PASSAGE)
    assert record_duplicates(store, second, [again]) is False  # a later check does not bring it back
    assert 'class="duplicates"' not in client.get(f"/drafts/{second}").text


def test_a_suggested_relation_is_written_only_when_a_person_accepts_it(
    client: TestClient, store: Store, root: Path, pair: tuple[str, str], make_case: Any
) -> None:
    first, _ = pair
    draft = store.read_draft(first)
    # A published case of another org sharing the draft's root cause and terms, told in other words.
    store.write_case(
        related_case(
            make_case,
            root_cause=draft.root_cause,
            components=list(draft.components),
            symptoms=list(draft.symptoms),
        )
    )
    sign_in(client, "bob")
    fragment = client.get(f"/drafts/{first}/similar")
    assert fragment.status_code == 200
    related = fragment.text[fragment.text.index('class="suggested-related"') :]
    assert 'href="/cases/IL-0900"' in related and "Add to related" in related
    assert store.read_draft(first).related == []  # shown, not written

    done = _post(client, first, "relate", kind="related", other="IL-0900")
    assert done.status_code == 303
    after = store.read_draft(first)
    assert after.related == ["IL-0900"] and after.history[-1].by == "bob"
    assert "IL-0900" not in client.get(f"/drafts/{first}/similar").text.split('class="suggested-related"')[-1]
