"""From a crawled draft to a published case, through every state, by the commands a person types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import archive_settings
from documents import POSTMORTEM_MD

from pipeline.archive import archive
from pipeline.crawl import crawl
from pipeline.ids import draft_id_for
from pipeline.models import ArchiveState, Case, Draft, DraftSource, DraftState, Origin
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate

WORKERS = Path(__file__).with_name("workers.py")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`incidentlib ARGS` in a process of its own, as a person's shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.fixture
def crawled(farm: SiteFarm, root: Path, store: Store, wayback: WaybackStandIn) -> tuple[str, Settings]:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    (root / "sources" / "acme.yaml").write_text(f"- url: {site.url('/pm.md')}\n  org: Acme\n")
    settings = archive_settings(root, wayback)
    crawl(store, settings)
    return draft_id_for(site.url("/pm.md")), settings


def test_the_whole_path_from_draft_to_case_and_every_refusal(
    crawled: tuple[str, Settings],
    root: Path,
    store: Store,
    prefect_api: None,
    cli: Callable,
    tmp_path: Path,
    example_json: dict,
) -> None:
    draft_id, settings = crawled
    r = ["--root", str(root)]

    listed = json.loads(run("queue", *r, "--json").stdout)
    assert [(e["id"], e["state"]) for e in listed] == [(draft_id, "extracted")]
    assert any(m.startswith("sources.0.archived") for m in listed[0]["missing"])

    assert run("write", draft_id, "--by", "alice", *r).returncode == 0
    own = run("approve", draft_id, "--by", "Alice", *r)
    assert own.returncode == 1
    assert (
        own.stderr
        == f"Error: {draft_id}: Alice wrote or edited this draft and cannot approve it; another reviewer must\n"
    )
    unarchived = run("approve", draft_id, "--by", "bob", *r)
    assert unarchived.returncode == 1
    assert f"Error: {draft_id}: incomplete, cannot approve; missing sources.0.archived (pending)" in unarchived.stderr

    archive(store, settings)
    editor = tmp_path / "break.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('{\"id\": \"half')\n")
    before = store.path("draft", draft_id).read_bytes()
    broken = run("edit", draft_id, *r, env={"EDITOR": f"{sys.executable} {editor}"})
    assert broken.returncode == 1 and broken.stderr.startswith(
        f"Error: drafts/{draft_id}.json (as edited): -: not valid JSON"
    )
    assert store.path("draft", draft_id).read_bytes() == before
    sneaky = tmp_path / "approve.py"
    sneaky.write_text(
        "import json, sys\nd = json.load(open(sys.argv[1]))\nd['state'] = 'approved'\n"
        "d['review']['reviewed_by'] = 'bob'\njson.dump(d, open(sys.argv[1], 'w'))\n"
    )
    refused = run("edit", draft_id, *r, env={"EDITOR": f"{sys.executable} {sneaky}"})
    assert refused.returncode == 1 and "state is kept by the pipeline" in refused.stderr
    assert store.path("draft", draft_id).read_bytes() == before

    assert (
        run("set", draft_id, "summary.ko", "캐시가 비면서 API 가 40분 동안 실패했다.", "--by", "alice", *r).returncode
        == 0
    )
    bad = run("set", draft_id, "components", '["warp-drive"]', *r)
    assert bad.returncode == 1 and "unknown component 'warp-drive'" in bad.stderr
    assert run("approve", draft_id, "--by", "bob", "--comment", "clear and sourced", *r).returncode == 0
    approved = store.read_draft(draft_id)
    assert (approved.state, approved.review.written_by, approved.review.reviewed_by) == ("approved", "alice", "bob")
    assert approved.review.reviewed_at is not None

    published = cli("promote", *r)
    assert published.exit_code == 0, published.output
    assert f"{draft_id}: published as cases/IL-0001.json" in published.stdout
    case = store.read_case("IL-0001")
    assert case.url == "https://benchlet.com/incidentlib/app/cases/IL-0001"
    assert case.summary["ko"].startswith("캐시가") and case.review.reviewed_by == "bob"
    assert case.sources[0].archived.startswith("https://web.archive.org/web/")
    assert set(json.loads(store.path("case", "IL-0001").read_text())) == set(example_json), (
        "exactly the published format: no draft-only field"
    )
    assert store.read_draft(draft_id).case_id == "IL-0001"

    # An edit after publication sends the draft back to review; re-approved, it updates its case in place.
    assert run("set", draft_id, "lessons.en", "Warm caches before restarts.", "--by", "carol", *r).returncode == 0
    assert store.read_draft(draft_id).state == "in_review"
    assert store.read_draft(draft_id).review.reviewed_by is None
    assert cli("promote", *r).stdout.count("published as") == 0
    assert run("approve", draft_id, "--by", "carol", *r).returncode == 1, "carol edited it: another must approve"
    assert run("approve", draft_id, "--by", "bob", *r).returncode == 0
    again = cli("promote", *r, "--json")
    assert json.loads(again.stdout)["drafts"] == [
        {"draft_id": draft_id, "outcome": "updated", "case_id": "IL-0001", "missing": []}
    ]
    assert store.read_case("IL-0001").lessons == {"en": "Warm caches before restarts."}
    assert store.ids("case") == ["IL-0001"]
    assert validate(store).faults == []

    shown = run("show", draft_id, *r)
    assert shown.returncode == 0
    assert "Summary -> summary" in shown.stdout and "archive: captured" in shown.stdout
    history = [(h.from_state, h.to_state, h.by) for h in store.read_draft(draft_id).history]
    assert history == [
        ("extracted", "written", "alice"),
        ("written", "written", "alice"),
        ("written", "approved", "bob"),
        ("approved", "published", "incidentlib promote"),
        ("published", "in_review", "carol"),
        ("in_review", "approved", "bob"),
        ("approved", "published", "incidentlib promote"),
    ]


def test_changes_requested_rejected_and_reopened(
    crawled: tuple[str, Settings], root: Path, store: Store, farm: SiteFarm
) -> None:
    draft_id, settings = crawled
    r = ["--root", str(root)]
    assert run("write", draft_id, "--by", "alice", *r).returncode == 0
    assert run("request-changes", draft_id, "--by", "bob", "--comment", " ", *r).returncode == 1
    assert run("request-changes", draft_id, "--by", "bob", "--comment", "Name the cache product.", *r).returncode == 0
    assert run("write", draft_id, "--by", "alice", *r).returncode == 0
    rejected = run("reject", draft_id, "--by", "bob", "--reason", "A planned maintenance, not an incident.", *r)
    assert rejected.returncode == 0
    report = crawl(store, settings)
    assert [(s.outcome, s.reason) for s in report.sources] == [("skipped", "rejected")]
    assert farm.sites["acme"].requests["/pm.md"] == 1, "a rejected source is not fetched again"
    assert run("reopen", draft_id, "--by", "carol", *r).returncode == 0
    draft = store.read_draft(draft_id)
    assert draft.state == "extracted"
    assert [(h.to_state, h.comment) for h in draft.history] == [
        ("written", None),
        ("changes_requested", "Name the cache product."),
        ("written", None),
        ("rejected", "A planned maintenance, not an incident."),
        ("extracted", None),
    ]
    assert crawl(store, settings).sources[0].outcome in ("unchanged", "updated")


def test_the_queue_filters_and_says_what_is_missing(crawled: tuple[str, Settings], root: Path, store: Store) -> None:
    draft_id, _ = crawled
    r = ["--root", str(root)]
    assert json.loads(run("queue", "--state", "written", *r, "--json").stdout) == []
    assert [e["id"] for e in json.loads(run("queue", "--org", "acme", *r, "--json").stdout)] == [draft_id]
    assert json.loads(run("queue", "--component", "nccl", *r, "--json").stdout) == []
    assert json.loads(run("queue", "--older-than", "1", *r, "--json").stdout) == []
    table = run("queue", *r)
    assert draft_id in table.stdout and "sources.0.archived" in table.stdout
    assert run("queue", "--state", "pending", *r).stderr.startswith("Error: unknown state 'pending'; known: ")


def complete_draft(example_json: dict, n: int) -> Draft:
    url = f"https://example.org/postmortems/{n}"
    fields = {k: v for k, v in example_json.items() if k not in ("id", "url", "updated_at", "sources")}
    return Draft.model_validate(
        {
            **fields,
            "id": f"example-org-{n}-0000000{n % 10}",
            "state": DraftState.APPROVED,
            "review": {"written_by": "alice", "reviewed_by": "bob", "reviewed_at": "2026-11-20T10:00:00Z"},
            "origin": Origin(url=url, canonical_url=url).model_dump(mode="json"),
            "sources": [
                DraftSource(
                    url=url,
                    kind="blog",
                    archived=f"https://web.archive.org/web/20260101000000/{url}",
                    archive=ArchiveState(status="captured", confirmed=True),
                ).model_dump(mode="json")
            ],
        }
    )


def test_processes_promoting_at_once_publish_each_draft_once(store: Store, root: Path, example_json: dict) -> None:
    store.write_case(Case.model_validate(example_json))
    ids = []
    for n in range(12):
        draft = complete_draft(example_json, n)
        store.write_draft(draft)
        ids.append(draft.id)
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS), "promote", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    lines = [line.split() for proc in procs for line in proc.communicate(timeout=120)[0].splitlines()]
    published = [(d, c) for d, outcome, c in lines if outcome == "published"]
    assert sorted(d for d, _ in published) == sorted(ids), "each draft published exactly once"
    assert sorted(c for _, c in published) == [f"IL-{n:04d}" for n in range(429, 441)]
    assert all(store.read_draft(d).case_id == c for d, c in published)
    assert validate(store).faults == []


def test_a_promotion_cut_short_after_writing_the_case_is_finished_not_repeated(
    store: Store, root: Path, example_json: dict
) -> None:
    from pipeline.publish import case_from_draft, promote

    draft = complete_draft(example_json, 1)
    store.write_draft(draft)
    # A run wrote the case, then died before marking the draft published.
    store.publish_case(lambda new_id: case_from_draft(draft, new_id, "https://example.org/cases/"))
    report = promote(store, Settings(root=root))
    assert [(d.outcome, d.case_id) for d in report.drafts] == [("updated", "IL-0001")]
    assert store.ids("case") == ["IL-0001"]
    assert store.read_draft(draft.id).case_id == "IL-0001"
