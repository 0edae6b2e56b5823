"""The store: layout on disk, atomic writes, no lost updates, unique case ids, contained ids."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import CASE_FIXTURE, pipes

from pipeline.errors import ConflictError, InvalidId, InvalidRecord, RecordNotFound
from pipeline.ids import canonical_url, draft_id_for
from pipeline.models import Case, Draft
from pipeline.records import dump_record
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.validate import validate

WORKERS = Path(__file__).with_name("workers.py")


def start_workers(*commands: list[str]) -> list[subprocess.Popen]:
    """Start worker processes, wait until each says it is ready, then release them together."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS), *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    for proc in procs:
        assert pipes(proc)[1].readline().strip() == "ready"
    for proc in procs:
        pipes(proc)[0].write("go\n")
        pipes(proc)[0].flush()
    return procs


def finish(procs: list[subprocess.Popen]) -> list[str]:
    outputs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        outputs.append(out)
    return outputs


# ------------------------------------------------------------------ layout


def test_a_draft_is_written_as_stable_pretty_json(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft(title={"ko": "제목", "en": "Title"})
    assert store.write_draft(draft) is True
    path = store.drafts_dir / f"{draft.id}.json"
    data = path.read_bytes()
    assert data == dump_record(draft)
    assert data.startswith(b'{\n  "id": ') and data.endswith(b"}\n")
    assert "제목".encode() in data
    assert store.read_draft(draft.id) == draft


def test_writing_the_same_record_again_touches_nothing(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    before = path.stat().st_mtime_ns
    assert store.write_draft(draft) is False
    assert path.stat().st_mtime_ns == before


def test_nothing_invalid_reaches_disk(
    store: Store, make_draft: Callable[..., Draft], make_case: Callable[..., Case]
) -> None:
    draft = make_draft()
    store.write_draft(draft)
    before = store.path("draft", draft.id).read_bytes()
    # model_copy(update=...) skips validation; the store validates again before writing.
    with pytest.raises(InvalidRecord, match=r"severity: unknown severity 'apocalyptic'"):
        store.write_draft(draft.model_copy(update={"severity": "apocalyptic"}))
    with pytest.raises(InvalidRecord, match=r"date: expected YYYY"):
        store.update_draft(draft.id, lambda d: d.model_copy(update={"date": "yesterday"}))
    assert store.path("draft", draft.id).read_bytes() == before
    case = make_case("IL-0001")
    case.components.append("warp-drive")  # mutating a list skips validation too
    with pytest.raises(InvalidRecord, match="unknown component 'warp-drive'"):
        store.write_case(case)
    assert not store.exists("case", "IL-0001")


def test_a_rewritten_record_keeps_its_file_mode(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    store.write_draft(draft.model_copy(update={"text": "new"}))
    assert path.stat().st_mode & 0o777 == 0o640


def test_replace_file_refuses_when_the_file_changed_since_it_was_read(
    store: Store, make_draft: Callable[..., Draft]
) -> None:
    draft = make_draft()
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    seen = path.read_bytes()
    store.update_draft(draft.id, lambda d: d.model_copy(update={"text": "a reviewer's edit"}))
    assert store.replace_file("draft", path, seen, b"{}\n") is False
    assert store.read_draft(draft.id).text == "a reviewer's edit"


def test_a_record_whose_id_is_not_its_file_name_is_refused(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    other = make_draft("https://example.org/other")
    store.path("draft", other.id).write_bytes(dump_record(draft))
    with pytest.raises(InvalidRecord, match="does not match the file name"):
        store.update_draft(other.id, lambda d: d)


def test_reading_a_missing_record_names_it(store: Store) -> None:
    with pytest.raises(RecordNotFound, match=r"drafts/example-org-gone-00000000\.json: no draft with id"):
        store.read_draft("example-org-gone-00000000")


@pytest.mark.parametrize(
    "bad", ["../escape", "a/b", "..", ".hidden", "x/../../etc", "IL-0001", "UPPER", "", "a" * 101, "draft\n"]
)
def test_draft_ids_cannot_escape_their_folder(store: Store, bad: str) -> None:
    with pytest.raises(InvalidId):
        store.path("draft", bad)


@pytest.mark.parametrize("bad", ["../IL-0001", "IL-0001/../../x", "IL-1", "il-0001", "IL-0001.json", "IL-0428\n"])
def test_case_ids_cannot_escape_their_folder(store: Store, bad: str) -> None:
    with pytest.raises(InvalidId):
        store.read_case(bad)


# ------------------------------------------------------------------ draft ids


def test_draft_id_is_stable_for_a_source() -> None:
    url = "https://github.com/dfds/postmortems/blob/master/PM2020-007%20-%20Unhealthy%20nodes.md"
    same = [
        url,
        url + "#timeline",
        url.replace("https://github.com", "https://GitHub.com:443"),
        url + "?utm_source=newsletter&utm_medium=email",
    ]
    assert {draft_id_for(u) for u in same} == {draft_id_for(url)}
    assert draft_id_for(url) == "dfds-pm2020-007-unhealthy-nodes-" + draft_id_for(url)[-8:]
    assert draft_id_for(url.replace("PM2020-007", "PM2020-008")) != draft_id_for(url)


def test_canonical_url_keeps_what_can_change_the_page() -> None:
    assert canonical_url("https://example.org/a/?b=2&a=1") == "https://example.org/a/?a=1&b=2"
    assert canonical_url("https://example.org/A") != canonical_url("https://example.org/a")
    assert canonical_url("http://example.org:8080/x") == "http://example.org:8080/x"
    assert canonical_url("https://example.org/a%2Fb") != canonical_url("https://example.org/a/b")
    assert canonical_url("https://example.org/x?q") == "https://example.org/x?q"
    assert canonical_url("http://[::1]:8080/x") == "http://[::1]:8080/x"


def test_canonical_url_merges_spellings_of_the_same_page() -> None:
    assert canonical_url("https://example.org/%7euser/a?UTM_Source=x") == "https://example.org/~user/a"
    assert canonical_url("https://example.org/caf%c3%a9") == canonical_url("https://example.org/café")
    assert canonical_url("https://GitHub.com/DFDS/PostMortems/blob/master/A.md") == (
        "https://github.com/dfds/postmortems/blob/master/A.md"
    )


def test_every_draft_id_is_a_valid_file_name(store: Store) -> None:
    for url in [
        "https://example.org/",
        "https://example.org/" + "very-long-segment-" * 20,
        "https://例え.jp/障害報告",
        "https://arxiv.org/pdf/2407.21783",
    ]:
        draft_id = draft_id_for(url)
        assert len(draft_id) <= 70
        assert store.path("draft", draft_id).parent == store.drafts_dir


# ------------------------------------------------------------------ concurrency


def test_concurrent_updates_from_processes_lose_nothing(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    store.write_draft(draft)
    procs = start_workers(*[["update", str(store.root), draft.id, str(w), "25"] for w in range(4)])
    finish(procs)
    history = store.read_draft(draft.id).history
    assert len(history) == 100
    for worker in range(4):
        assert [h.comment for h in history if h.by == f"worker-{worker}"] == [str(n) for n in range(25)]


def test_compare_and_swap_refuses_a_stale_write(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    store.write_draft(draft)
    mine, version = store.read_draft_versioned(draft.id)
    store.update_draft(draft.id, lambda d: d.model_copy(update={"text": "someone else's edit"}))
    with pytest.raises(ConflictError, match="changed by someone else"):
        store.write_draft(mine.model_copy(update={"text": "my edit"}), expected_version=version)
    assert store.read_draft(draft.id).text == "someone else's edit"
    fresh, version = store.read_draft_versioned(draft.id)
    assert store.write_draft(fresh.model_copy(update={"text": "my edit"}), expected_version=version)


def test_update_can_create_a_missing_draft(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    made = store.update_draft(draft.id, lambda d: d, create=lambda: draft)
    assert made == draft and store.exists("draft", draft.id)


@pytest.mark.parametrize(("stage", "survivor"), [("file-synced", "old"), ("renamed", "old"), ("dir-synced", "new")])
def test_a_writer_killed_at_each_stage_leaves_a_whole_record(
    store: Store, make_draft: Callable[..., Draft], stage: str, survivor: str
) -> None:
    draft = make_draft()
    store.write_draft(draft)
    old = dump_record(draft)
    new = dump_record(draft.model_copy(update={"text": "the new version"}))
    proc = subprocess.Popen(
        [sys.executable, str(WORKERS), "stall", str(store.root), draft.id, stage],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert pipes(proc)[1].readline().strip() == "stalled"
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert store.path("draft", draft.id).read_bytes() == (old if survivor == "old" else new)
    assert store.ids("draft") == [draft.id]
    assert validate(store).faults == []


def test_a_killed_writer_leaves_the_old_record_or_the_new(store: Store, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    store.write_draft(draft)
    small = dump_record(draft)
    large = dump_record(draft.model_copy(update={"text": "x" * 2_000_000}))
    path = store.path("draft", draft.id)
    for writes_before_kill in (1, 2, 3, 5, 8, 13):
        (proc,) = start_workers(["rewrite", str(store.root), draft.id])
        for _ in range(writes_before_kill):
            pipes(proc)[1].readline()
        proc.send_signal(signal.SIGKILL)  # lands somewhere inside the next write
        proc.communicate()
        assert path.read_bytes() in (small, large)
    # Temporary files a crash leaves behind are not records, and validation ignores them.
    assert store.ids("draft") == [draft.id]
    assert validate(store).faults == []


# ------------------------------------------------------------------ case ids


def test_case_ids_continue_the_numbering(store: Store, make_case: Callable[..., Case]) -> None:
    store.write_case(make_case("IL-0428"))
    store.write_case(make_case("IL-0125"))
    published = store.publish_case(lambda new_id: make_case(new_id))
    assert published.id == "IL-0429"
    assert store.read_case("IL-0429") == published


def test_case_id_prefix_and_start_are_settings(tmp_path: Path, make_case: Callable[..., Case]) -> None:
    store = Store.from_settings(Settings(root=tmp_path, case_id_prefix="PM", case_id_digits=5, case_id_start=100))
    assert store.publish_case(lambda new_id: make_case(new_id)).id == "PM-00100"
    assert store.publish_case(lambda new_id: make_case(new_id)).id == "PM-00101"


def test_processes_publishing_at_once_get_unique_consecutive_ids(store: Store, make_case: Callable[..., Case]) -> None:
    store.write_case(make_case("IL-0428"))
    procs = start_workers(*[["publish", str(store.root), "5", str(CASE_FIXTURE)] for _ in range(4)])
    ids = [line for out in finish(procs) for line in out.split()]
    assert sorted(ids) == [f"IL-{n:04d}" for n in range(429, 449)]
    assert store.ids("case") == ["IL-0428", *sorted(ids)]
    for case_id in ids:
        assert json.loads(store.path("case", case_id).read_text())["id"] == case_id


def test_the_lock_folder_stays_out_of_the_record_folders(store: Store, make_draft: Callable[..., Draft]) -> None:
    store.write_draft(make_draft())
    assert sorted(os.listdir(store.drafts_dir)) == [f"{make_draft().id}.json"]
    assert (store.root / ".incidentlib" / "locks").is_dir()
