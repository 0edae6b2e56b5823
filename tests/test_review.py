"""From a crawled draft to a published case, through every state, by the commands a person types."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from documents import POSTMORTEM_MD
from helpers import archive_settings, complete_draft, pipes

from pipeline.archive import archive
from pipeline.crawl import crawl
from pipeline.errors import ReviewError
from pipeline.fields import ACTION_LISTS, NARRATIVE
from pipeline.ids import draft_id_for
from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate

pytestmark = pytest.mark.runs_long(35)  # seconds in all: such modules start first (conftest.py)

WORKERS = Path(__file__).with_name("workers.py")


@pytest.fixture
def crawled(farm: SiteFarm, root: Path, store: Store, wayback: WaybackStandIn) -> tuple[str, Settings]:
    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    (root / "sources" / "acme.yaml").write_text(f"- url: {site.url('/pm.md')}\n  org: Acme\n")
    settings = archive_settings(root, wayback)
    crawl(store, settings)
    return draft_id_for(site.url("/pm.md")), settings


@pytest.fixture
def archived(crawled: tuple[str, Settings], store: Store) -> str:
    """The crawled draft with its source captured: complete but for the review."""
    draft_id, settings = crawled
    archive(store, settings)
    return draft_id


@pytest.fixture
def approved(archived: str, root: Path, cli: Callable) -> str:
    """Written by alice (with a Korean summary), approved by bob."""
    r = ["--root", str(root)]
    assert (
        cli("set", archived, "summary.ko", "캐시가 비면서 API 가 40분 동안 실패했다.", "--by", "alice", *r).exit_code
        == 0
    )
    assert cli("write", archived, "--by", "alice", *r).exit_code == 0
    assert cli("approve", archived, "--by", "bob", "--comment", "clear and sourced", *r).exit_code == 0
    return archived


def test_a_new_draft_waits_in_the_queue_for_its_writer(
    crawled: tuple[str, Settings], root: Path, cli: Callable
) -> None:
    draft_id, _ = crawled
    listed = json.loads(cli("queue", "--root", str(root), "--json").stdout)
    assert [(e["id"], e["state"]) for e in listed] == [(draft_id, "extracted")]
    assert any(m.startswith("sources.0.archived") for m in listed[0]["missing"])


def test_the_writer_cannot_approve_their_own_draft(archived: str, root: Path, cli: Callable) -> None:
    assert cli("write", archived, "--by", "alice", "--root", str(root)).exit_code == 0
    own = cli("approve", archived, "--by", "Alice", "--root", str(root))
    assert own.exit_code == 1
    assert (
        own.stderr
        == f"Error: {archived}: Alice wrote or edited this draft and cannot approve it; another reviewer must\n"
    )


def test_whoever_edited_a_draft_while_it_was_extracted_cannot_approve_it(
    archived: str, root: Path, store: Store, cli: Callable
) -> None:
    r = ["--root", str(root)]
    assert cli("set", archived, "summary.ko", "요약", "--by", "carol", *r).exit_code == 0
    assert cli("write", archived, "--by", "alice", *r).exit_code == 0
    refused = cli("approve", archived, "--by", "carol", *r)
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"Error: {archived}: carol wrote or edited this draft and cannot approve it; another reviewer must\n"
    )
    edit = store.read_draft(archived).history[0]
    assert (edit.by, edit.from_state, edit.to_state, edit.changed) == (
        "carol",
        "extracted",
        "extracted",
        ["summary.ko"],
    )
    assert cli("approve", archived, "--by", "bob", *r).exit_code == 0


def test_whoever_edited_a_draft_while_changes_were_requested_cannot_approve_it(
    archived: str, root: Path, cli: Callable
) -> None:
    r = ["--root", str(root)]
    assert cli("write", archived, "--by", "alice", *r).exit_code == 0
    assert cli("request-changes", archived, "--by", "bob", "--comment", "Name the cache.", *r).exit_code == 0
    assert cli("set", archived, "impact.scope", "The whole API.", "--by", "carol", *r).exit_code == 0
    assert cli("write", archived, "--by", "alice", *r).exit_code == 0
    assert cli("approve", archived, "--by", "carol", *r).exit_code == 1
    assert cli("approve", archived, "--by", "bob", *r).exit_code == 0


def test_changes_cannot_be_requested_on_an_approved_draft(approved: str, root: Path, cli: Callable) -> None:
    refused = cli("request-changes", approved, "--by", "carol", "--comment", "Too late?", "--root", str(root))
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"Error: {approved}: cannot request changes on a draft that is approved "
        "(only one that is written or in_review)\n"
    )


def test_a_draft_whose_source_is_not_archived_cannot_be_approved(
    crawled: tuple[str, Settings], root: Path, cli: Callable
) -> None:
    draft_id, _ = crawled
    assert cli("write", draft_id, "--by", "alice", "--root", str(root)).exit_code == 0
    unarchived = cli("approve", draft_id, "--by", "bob", "--root", str(root))
    assert unarchived.exit_code == 1
    assert f"Error: {draft_id}: incomplete, cannot approve; missing sources.0.archived (pending)" in unarchived.stderr


def editor(tmp_path: Path, name: str, body: str) -> dict[str, str]:
    """An $EDITOR that is a Python script run on the file, as a person's editor is; `body` sees `path`,
    the file, and `calls`, how many times it ran before."""
    script = tmp_path / f"{name}.py"
    script.write_text(
        "import json, sys\nfrom pathlib import Path\n"
        f"path = Path(sys.argv[1])\ncount = Path({str(tmp_path / (name + '.calls'))!r})\n"
        "calls = int(count.read_text()) if count.exists() else 0\ncount.write_text(str(calls + 1))\n" + body
    )
    return {"EDITOR": f"{sys.executable} {script}"}


def kept_edits(root: Path) -> list[Path]:
    folder = root / ".incidentlib" / "edits"
    return sorted(folder.iterdir()) if folder.exists() else []


# What a person would do: drop incidentlib's notes and work on the JSON.
READ_JSON = "d = json.loads(''.join(l for l in path.read_text().splitlines(True) if not l.startswith('#')))\n"


def test_a_broken_edit_given_up_is_kept_in_a_file_it_names(
    archived: str, root: Path, store: Store, cli: Callable, tmp_path: Path
) -> None:
    before = store.path("draft", archived).read_bytes()
    broken = cli(
        "edit", archived, "--root", str(root), env=editor(tmp_path, "break", 'path.write_text(\'{"id": "half\')\n')
    )
    assert broken.exit_code == 1
    [kept] = kept_edits(root)
    assert broken.stderr.startswith(f"Error: drafts/{archived}.json (as edited): -: not valid JSON: EOF while parsing")
    assert broken.stderr.endswith(f"; nothing saved, your text is kept in {kept}\n") and broken.stderr.count("\n") == 1
    assert kept.read_text() == '{"id": "half'
    assert (tmp_path / "break.calls").read_text() == "2", "reopened once; the same text again gives up"
    assert store.path("draft", archived).read_bytes() == before


def test_a_refused_edit_is_reopened_with_the_reason_on_top_until_it_is_fixed(
    archived: str, root: Path, store: Store, cli: Callable, tmp_path: Path
) -> None:
    fix = (
        "if calls == 0:\n"
        "    (path.parent / 'original').write_text(path.read_text())\n"
        "    d = json.loads(path.read_text())\n"
        "    d['components'] = ['warp-drive']\n"
        "    path.write_text(json.dumps(d))\n"
        "else:\n"
        "    Path(sys.argv[1] + '.seen').write_text(path.read_text())\n"
        "    d = json.loads((path.parent / 'original').read_text())\n"
        "    d['components'] = ['nccl']\n"
        "    path.write_text(json.dumps(d))\n"
    )
    fixed = cli("edit", archived, "--by", "alice", "--root", str(root), env=editor(tmp_path, "fix", fix))
    assert fixed.exit_code == 0, fixed.output
    assert fixed.stdout == f"{archived}: saved, now extracted\n"
    [seen] = [p for p in kept_edits(root) if p.name.endswith(".seen")]
    notes = [line for line in seen.read_text().splitlines() if line.startswith("#")]
    assert notes[0].startswith(
        f"# incidentlib: not saved: drafts/{archived}.json (as edited): components.0: unknown component 'warp-drive'"
    )
    assert notes[1].startswith("# Fix it and save to try again; lines starting with # are ignored.")
    draft = store.read_draft(archived)
    assert draft.components == ["nccl"] and draft.history[-1].changed == ["components"]


def test_an_edit_refused_by_the_review_is_kept_too(
    archived: str, root: Path, store: Store, cli: Callable, tmp_path: Path
) -> None:
    sneaky = READ_JSON + "d['state'] = 'approved'\nd['review']['reviewed_by'] = 'bob'\npath.write_text(json.dumps(d))\n"
    before = store.path("draft", archived).read_bytes()
    refused = cli("edit", archived, "--root", str(root), env=editor(tmp_path, "approve", sneaky))
    assert refused.exit_code == 1
    [kept] = kept_edits(root)
    assert refused.stderr == (
        f"Error: {archived}: state is kept by the pipeline and the review commands, not edited by hand; "
        f"nothing saved, your text is kept in {kept}\n"
    )
    assert json.loads(kept.read_text())["state"] == "approved"
    assert store.path("draft", archived).read_bytes() == before


def test_an_editor_quit_with_an_error_keeps_the_text(
    archived: str, root: Path, store: Store, cli: Callable, tmp_path: Path
) -> None:
    quits = READ_JSON + "d['org'] = 'Acme Corp'\npath.write_text(json.dumps(d))\nsys.exit(1)\n"
    quit_ = cli("edit", archived, "--root", str(root), env=editor(tmp_path, "quit", quits))
    assert quit_.exit_code == 1
    [kept] = kept_edits(root)
    assert quit_.stderr == f"Error: the editor exited with status 1; nothing saved, your text is kept in {kept}\n"
    assert json.loads(kept.read_text())["org"] == "Acme Corp"
    assert store.read_draft(archived).org == "Acme"


def test_an_edit_saved_leaves_no_file_behind(
    archived: str, root: Path, store: Store, cli: Callable, tmp_path: Path
) -> None:
    good = READ_JSON + "d['org'] = 'Acme Corp'\npath.write_text(json.dumps(d))\n"
    saved = cli("edit", archived, "--by", "alice", "--root", str(root), env=editor(tmp_path, "good", good))
    assert saved.exit_code == 0 and kept_edits(root) == []
    assert store.read_draft(archived).history[-1].changed == ["org"]


def test_a_missing_editor_is_one_line(archived: str, root: Path, cli: Callable, tmp_path: Path) -> None:
    missing = cli("edit", archived, "--root", str(root), env={"EDITOR": str(tmp_path / "no-such-editor"), "VISUAL": ""})
    assert missing.exit_code == 1
    assert missing.stderr == (
        f"Error: EDITOR={tmp_path / 'no-such-editor'}: cannot run it (No such file or directory); "
        "set EDITOR to your editor\n"
    )
    assert kept_edits(root) == []


def test_set_refuses_a_term_outside_the_vocabulary(archived: str, root: Path, cli: Callable) -> None:
    bad = cli("set", archived, "components", '["warp-drive"]', "--by", "alice", "--root", str(root))
    assert bad.exit_code == 1 and "unknown component 'warp-drive'" in bad.stderr


@pytest.mark.parametrize("path", [*NARRATIVE, *(f"{name}.0.text" for name in ACTION_LISTS)])
def test_set_on_a_localized_field_says_to_name_a_language(
    path: str, archived: str, root: Path, store: Store, cli: Callable
) -> None:
    """Every localized text, read off the models: plain text for it names the language to set, not
    pydantic's "Input should be a valid dictionary"."""
    if "." in path:  # an action's text: the list needs an item first
        name = path.split(".")[0]
        added = cli(
            "set", archived, name, '[{"text": {"en": "Warm the cache."}}]', "--by", "alice", "--root", str(root)
        )
        assert added.exit_code == 0, added.output
    before = store.path("draft", archived).read_bytes()
    refused = cli("set", archived, path, "Plain text.", "--by", "alice", "--root", str(root))
    assert refused.exit_code == 1
    assert f"{path} holds a text for each language: set one of them, as {path}.en" in refused.stderr
    assert "valid dictionary" not in refused.stderr
    assert store.path("draft", archived).read_bytes() == before
    assert cli("set", archived, f"{path}.en", "Plain text.", "--by", "alice", "--root", str(root)).exit_code == 0
    assert cli("set", archived, path, '{"en": "As JSON."}', "--by", "alice", "--root", str(root)).exit_code == 0


def test_an_approval_records_the_writer_and_the_reviewer(approved: str, store: Store) -> None:
    draft = store.read_draft(approved)
    assert (draft.state, draft.review.written_by, draft.review.reviewed_by) == ("approved", "alice", "bob")
    assert draft.review.reviewed_at is not None


@pytest.mark.usefixtures("prefect_api")
def test_promotion_publishes_exactly_the_published_format(
    approved: str, root: Path, store: Store, cli: Callable, case_json: dict
) -> None:
    published = cli("promote", "--root", str(root))
    assert published.exit_code == 0, published.output
    assert f"{approved}: published as cases/IL-0001.json" in published.stdout
    case = store.read_case("IL-0001")
    assert case.url == "https://benchlet.com/incidentlib/app/cases/IL-0001"
    assert case.summary["ko"].startswith("캐시가") and case.review.reviewed_by == "bob"
    assert case.sources[0].archived and case.sources[0].archived.startswith("https://web.archive.org/web/")
    # Every field of the format but none of a draft's, and `published`: the first promotion's time (2.2.0).
    published_fields = set(json.loads(store.path("case", "IL-0001").read_text()))
    assert published_fields == set(case_json) | {"published"}, "no draft-only field"
    assert store.read_draft(approved).case_id == "IL-0001"
    assert validate(store).faults == []


@pytest.mark.usefixtures("prefect_api")
def test_an_edit_after_publication_goes_back_to_review_and_updates_its_case(
    approved: str, root: Path, store: Store, cli: Callable
) -> None:
    r = ["--root", str(root)]
    assert cli("promote", *r).exit_code == 0
    assert cli("set", approved, "lessons.en", "Warm caches before restarts.", "--by", "carol", *r).exit_code == 0
    draft = store.read_draft(approved)
    assert (draft.state, draft.review.reviewed_by) == ("in_review", None)
    assert cli("promote", *r).stdout.count("published as") == 0
    assert cli("approve", approved, "--by", "carol", *r).exit_code == 1, "carol edited it: another must approve"
    assert cli("approve", approved, "--by", "bob", *r).exit_code == 0
    again = cli("promote", *r, "--json")
    assert json.loads(again.stdout)["drafts"] == [
        {"draft_id": approved, "outcome": "updated", "case_id": "IL-0001", "missing": []}
    ]
    assert store.read_case("IL-0001").lessons == {"en": "Warm caches before restarts."}
    assert store.ids("case") == ["IL-0001"]
    history = [(h.from_state, h.to_state, h.by) for h in store.read_draft(approved).history]
    assert history[-3:] == [
        ("published", "in_review", "carol"),
        ("in_review", "approved", "bob"),
        ("approved", "published", "incidentlib promote"),
    ]


def test_show_prints_the_draft_with_its_sections_and_archive_state(archived: str, root: Path, cli: Callable) -> None:
    shown = cli("show", archived, "--root", str(root))
    assert shown.exit_code == 0
    assert "Summary -> summary" in shown.stdout and "archive: captured" in shown.stdout


def test_changes_requested_rejected_and_reopened(
    crawled: tuple[str, Settings], root: Path, store: Store, farm: SiteFarm, cli: Callable
) -> None:
    draft_id, settings = crawled
    r = ["--root", str(root)]
    assert cli("write", draft_id, "--by", "alice", *r).exit_code == 0
    assert cli("request-changes", draft_id, "--by", "bob", "--comment", " ", *r).exit_code == 1
    assert cli("request-changes", draft_id, "--by", "bob", "--comment", "Name the cache product.", *r).exit_code == 0
    assert cli("write", draft_id, "--by", "alice", *r).exit_code == 0
    rejected = cli("reject", draft_id, "--by", "bob", "--reason", "A planned maintenance, not an incident.", *r)
    assert rejected.exit_code == 0
    report = crawl(store, settings)
    assert [(s.outcome, s.reason) for s in report.sources] == [("skipped", "rejected")]
    assert farm.sites["acme"].requests["/pm.md"] == 1, "a rejected source is not fetched again"
    assert cli("reopen", draft_id, "--by", "carol", *r).exit_code == 0
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


def test_the_queue_filters_and_says_what_is_missing(
    crawled: tuple[str, Settings], root: Path, store: Store, cli: Callable
) -> None:
    draft_id, _ = crawled
    r = ["--root", str(root)]
    assert json.loads(cli("queue", "--state", "written", *r, "--json").stdout) == []
    assert [e["id"] for e in json.loads(cli("queue", "--org", "acme", *r, "--json").stdout)] == [draft_id]
    assert json.loads(cli("queue", "--component", "nccl", *r, "--json").stdout) == []
    assert json.loads(cli("queue", "--older-than", "1", *r, "--json").stdout) == []
    table = cli("queue", *r)
    assert draft_id in table.stdout and "sources.0.archived" in table.stdout
    assert cli("queue", "--state", "pending", *r).stderr.startswith("Error: unknown state 'pending'; known: ")


def test_processes_promoting_at_once_publish_each_draft_once(store: Store, root: Path, case_json: dict) -> None:
    store.write_case(Case.model_validate(case_json))
    ids = []
    for n in range(12):
        draft = complete_draft(case_json, n)
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
        assert pipes(proc)[1].readline().strip() == "ready"
    for proc in procs:
        pipes(proc)[0].write("go\n")
        pipes(proc)[0].flush()
    lines = [line.split() for proc in procs for line in proc.communicate(timeout=120)[0].splitlines()]
    published = [(d, c) for d, outcome, c in lines if outcome == "published"]
    assert sorted(d for d, _ in published) == sorted(ids), "each draft published exactly once"
    assert sorted(c for _, c in published) == [f"IL-{n:04d}" for n in range(429, 441)]
    assert all(store.read_draft(d).case_id == c for d, c in published)
    assert validate(store).faults == []


def test_a_promotion_cut_short_after_writing_the_case_is_finished_not_repeated(
    store: Store, root: Path, case_json: dict
) -> None:
    from pipeline.publish import case_from_draft, promote

    draft = complete_draft(case_json, 1)
    store.write_draft(draft)
    # A run wrote the case, then died before marking the draft published.
    store.publish_case(lambda new_id: case_from_draft(draft, new_id, "https://example.org/cases/"))
    report = promote(store, Settings(root=root))
    assert [(d.outcome, d.case_id) for d in report.drafts] == [("updated", "IL-0001")]
    assert store.ids("case") == ["IL-0001"]
    assert store.read_draft(draft.id).case_id == "IL-0001"


@pytest.fixture
def outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside any repository, made the current one for the test."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", ["set", "edit"])
def test_an_edit_needs_a_persons_name(
    command: str, archived: str, root: Path, cli: Callable, outside_git: Path
) -> None:
    # No --by and no git user.name: an edit was recorded as made by "incidentlib set", a name the
    # four-eyes rule does not know, so its author could then approve the draft.
    home = outside_git  # with no global or system git config
    nameless = {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    before = Store(root).read_draft(archived)
    change = "d['org'] = 'Acme Corp'\npath.write_text(json.dumps(d))\n"
    args = ("summary.en", "Edited.") if command == "set" else ()
    refused = cli(command, archived, *args, "--root", str(root), env=nameless | editor(home, "org", READ_JSON + change))
    assert refused.exit_code == 1
    assert refused.stderr == "Error: say who you are with --by NAME (or set git's user.name)\n"
    assert Store(root).read_draft(archived) == before
    assert not (home / "org.calls").exists(), "the editor was not opened"


def test_the_queue_filters_by_writer_and_by_words_of_the_text(store: Store, make_draft: Any) -> None:
    from pipeline.models import Review
    from pipeline.queue import QueueFilter, queue

    store.write_draft(make_draft("https://example.org/a", text="The disk of the build farm filled up."))
    store.write_draft(make_draft("https://example.org/b", text="DNS failed.", review=Review(written_by="Carol")))
    a, b = draft_id_for("https://example.org/a"), draft_id_for("https://example.org/b")
    assert [e.id for e in queue(store, ["en"], QueueFilter(search="BUILD farm"))] == [a]
    assert [e.id for e in queue(store, ["en"], QueueFilter(writer="carol"))] == [b]
    assert queue(store, ["en"], QueueFilter(search="build dns")) == []


def test_a_queue_filter_is_read_from_a_query_string_and_written_back() -> None:
    from starlette.datastructures import QueryParams

    from pipeline.queue import QueueFilter

    given = QueryParams("state=written&state=in_review&org=Acme&component=&older_than=1.5&q=dns+down&sort=org")
    chosen = QueueFilter.from_query(given)
    assert chosen == QueueFilter(
        states=("written", "in_review"), org="Acme", older_than_days=1.5, search="dns down", sort="org"
    )
    assert QueueFilter.from_query(QueryParams(chosen.query_string())) == chosen
    assert chosen.query_string(state="extracted", page_number=2) == (
        "state=extracted&org=Acme&older_than=1.5&q=dns+down&sort=org&page_number=2"
    )
    assert QueueFilter.from_query({}, sort="state") == QueueFilter(sort="state")
    assert QueueFilter(sort="state").to_query() == {
        "state": "",
        "org": "",
        "component": "",
        "older_than": "",
        "writer": "",
        "q": "",
        "sort": "state",
    }
    with pytest.raises(ReviewError, match=r"^unknown state 'pending'; known: unreadable, written, in_review, "):
        QueueFilter.from_query({"state": "pending"})
    with pytest.raises(ReviewError, match=r"^--sort must be one of age, state, org, id, not 'size'$"):
        QueueFilter(sort="size")
    with pytest.raises(ValueError, match="could not convert string to float: 'soon'"):
        QueueFilter.from_query({"older_than": "soon"})


def test_a_complete_draft_lacks_the_sign_offs_it_still_awaits(root: Path, case_json: dict[str, Any]) -> None:
    """The queue said "nothing" for a draft whose text was complete but whose writer had not signed it:
    what a draft lacks is its content's gaps and then the moves of people it awaits, read off the
    review's table, until it is approved (then only `promote`, the pipeline's, is left)."""
    from helpers import reviewable_draft

    from pipeline import review
    from pipeline.queue import entry_for, show

    languages = ["en", "ko"]
    extracted = reviewable_draft(case_json)
    assert review.missing_for_publication(extracted, languages) == [], "the content is complete"
    awaiting_both = ["the writer's sign-off", "a reviewer's approval"]
    assert entry_for(extracted, languages).missing == awaiting_both
    written = review.write(extracted, "ann", languages)
    assert entry_for(written, languages).missing == ["a reviewer's approval"]
    sent_back = review.request_changes(written, "bob", "say when it began")
    assert entry_for(sent_back, languages).missing == awaiting_both
    approved = review.approve(written, "bob", languages)
    assert entry_for(approved, languages).missing == []
    rejected = review.reject(extracted, "bob", "not an incident")
    assert entry_for(rejected, languages).missing == ["reopening", *awaiting_both]
    gappy = extracted.model_copy(update={"summary": None})
    assert entry_for(gappy, languages).missing == ["summary", *awaiting_both], "the content's gaps first"
    Store(root).write_draft(extracted)
    header = show(Store(root), extracted.id, languages)[0].lines[0]
    assert header == "lacks: the writer's sign-off, a reviewer's approval"
