"""Programs the store tests run as real, separate processes.

    python tests/workers.py update ROOT DRAFT_ID WORKER COUNT
        append COUNT history entries to one draft, each a read-modify-write
    python tests/workers.py publish ROOT COUNT
        publish COUNT cases, printing each id allocated
    python tests/workers.py rewrite ROOT DRAFT_ID
        write two versions of one draft in turn, forever, printing a line after each write
    python tests/workers.py archive ROOT
        archive every draft's sources (settings from INCIDENTLIB_* variables), printing
        a line as each source is done
    python tests/workers.py promote ROOT
        promote every approved draft, printing each draft's outcome and case id
    python tests/workers.py stall ROOT DRAFT_ID STAGE
        write a new version of one draft, but stop at STAGE of the atomic write
        (file-synced: temporary file written, before its fsync; renamed: before the
        rename; dir-synced: after the rename, before the folder's fsync), print
        "stalled" and wait there to be killed

Each prints "ready" once set up and waits for a line on stdin, so that the test can
start all its workers at the same moment without sleeping.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.models import Case, Transition
from pipeline.store import Store

CASE = Path(__file__).resolve().parent / "fixtures" / "case.json"


def _start() -> None:
    print("ready", flush=True)
    sys.stdin.readline()


def update(root: str, draft_id: str, worker: str, count: str) -> None:
    store = Store(root)
    _start()
    for n in range(int(count)):

        def append(draft, n=n):
            entry = Transition(at=datetime.now(UTC), by=f"worker-{worker}", to_state="extracted", comment=str(n))
            return draft.model_copy(update={"history": [*draft.history, entry]})

        store.update_draft(draft_id, append)


def publish(root: str, count: str, example: str = str(CASE)) -> None:
    store = Store(root)
    # The suite's own case, standing alone: without its links to other cases.
    template = {**json.loads(Path(example).read_text(encoding="utf-8")), "related": [], "recurrence_of": None}
    _start()
    for _ in range(int(count)):
        case = store.publish_case(lambda new_id: Case.model_validate({**template, "id": new_id}))
        print(case.id, flush=True)


def rewrite(root: str, draft_id: str) -> None:
    store = Store(root)
    first = store.read_draft(draft_id)
    versions = [first, first.model_copy(update={"text": "x" * 2_000_000})]
    _start()
    n = 0
    while True:
        store.write_draft(versions[n % 2])
        print(n, flush=True)
        n += 1


def promote(root: str) -> None:
    from pipeline.publish import promote as promote_drafts
    from pipeline.settings import Settings

    store = Store(root)
    _start()
    for entry in promote_drafts(store, Settings(root=root)).drafts:
        print(entry.draft_id, entry.outcome, entry.case_id, flush=True)


def archive(root: str) -> None:
    from pipeline.archive import archive as archive_sources
    from pipeline.settings import Settings

    settings = Settings(root=root)
    _start()
    archive_sources(Store(root), settings, on_source=lambda source: print(source.outcome, source.url, flush=True))


def stall(root: str, draft_id: str, stage: str) -> None:
    import os

    store = Store(root)
    draft = store.read_draft(draft_id)
    calls = {"fsync": 0}
    real_fsync, real_replace = os.fsync, os.replace

    def wait_to_be_killed() -> None:
        print("stalled", flush=True)
        sys.stdin.readline()
        raise SystemExit("not killed")

    def fsync(fd: Any) -> None:
        calls["fsync"] += 1
        if (stage, calls["fsync"]) in (("file-synced", 1), ("dir-synced", 2)):
            wait_to_be_killed()
        real_fsync(fd)

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        if stage == "renamed":
            wait_to_be_killed()
        real_replace(src, dst)

    os.fsync, os.replace = fsync, replace
    store.write_draft(draft.model_copy(update={"text": "the new version"}))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    programs: dict[str, Callable[..., None]] = {
        "update": update,
        "publish": publish,
        "rewrite": rewrite,
        "stall": stall,
        "archive": archive,
        "promote": promote,
    }
    programs[command](*args)
