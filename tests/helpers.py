"""Helpers the tests import: where the suite's own fixtures lie, settings for the local stand-ins."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, cast

from pipeline.draft import new_draft
from pipeline.models import ArchiveState, Case, Draft, DraftSource, DraftState, Origin, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

if TYPE_CHECKING:
    import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
# The suite's own published case, every field of the format filled.
CASE_FIXTURE = TESTS / "fixtures" / "case.json"
# The read-only reference material lies beside a checkout (../shared), but the suite must pass
# without it: the few tests that read it say so in one line and are skipped when it is absent.
SHARED = Path(os.environ.get("INCIDENTLIB_SHARED", REPO.parent / "shared"))


def ago(hours: float = 0.0, *, seconds: float = 0.0) -> str:
    """An index timestamp (YYYYMMDDhhmmss, UTC) of that long ago: of a capture a test puts in the archive."""
    return (datetime.now(UTC) - timedelta(hours=hours, seconds=seconds)).strftime("%Y%m%d%H%M%S")


def pipes(process: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """The stdin and stdout of a process started with both piped."""
    assert process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


def artifact_text(key: str) -> str:
    """The data of the newest Prefect artifact under `key` (the test fails if there is none)."""
    from prefect.artifacts import Artifact

    # Called from sync code, Prefect's dispatcher runs the sync variant, not a coroutine.
    artifact = cast(Artifact | None, Artifact.get(key))
    assert artifact is not None, f"no artifact {key!r}"
    return str(artifact.data)


def archive_settings(root: Path, wayback: WaybackStandIn, **changes: object) -> Settings:
    """Settings pointing at the stand-in, fast: tests wait on nothing real."""
    base: dict[str, Any] = {
        "root": root,
        "allow_private_hosts": True,
        "per_host_delay_s": 0.0,
        "wayback_url": wayback.url,
        "wayback_access_key": "test-access",
        "wayback_secret_key": "test-secret",
        "captures_per_minute": 6000,
        "cdx_per_minute": 6000,
        "status_polls_per_minute": 60000,
        "poll_interval_s": 0.01,
        "poll_max_interval_s": 0.05,
        "poll_timeout_s": 2.0,
        "breaker_backoff_s": 0.05,
        "reuse_capture_within_s": 0,
    }
    return Settings(**{**base, **changes})


def settings_env(settings: Settings) -> dict[str, str]:
    """The same settings as INCIDENTLIB_* variables, for a process of its own."""
    env = {}
    for name, value in settings.model_dump(mode="json").items():
        if name == "root":
            continue
        secret = getattr(settings, name)
        if hasattr(secret, "get_secret_value"):
            value = secret.get_secret_value()
        if value is not None:
            env[f"INCIDENTLIB_{name.upper()}"] = json.dumps(value) if isinstance(value, list) else str(value)
    return env


@dataclass(frozen=True)
class ArchiveRoot:
    """A data root (`root`, its `store`) and the Wayback stand-in its sources are captured into: what
    the archive's tests take together (the `archive_root` fixture)."""

    root: Path
    store: Store
    wayback: WaybackStandIn


@dataclass(frozen=True)
class ArchiveCommands(ArchiveRoot):
    """An archive root and the command line run in-process on it (`cli`), reporting to the session's
    Prefect server, in the environment a test sets (`monkeypatch`): the `archive_commands` fixture."""

    cli: Callable[..., Any]
    monkeypatch: pytest.MonkeyPatch

    def use(self, settings: Settings) -> None:
        """Name `settings` in the environment, as an operator does, for the commands to read."""
        for name, value in settings_env(settings).items():
            self.monkeypatch.setenv(name, value)


def captured_source(url: str) -> dict[str, Any]:
    """A draft's source whose capture is confirmed, as JSON."""
    archived = f"https://web.archive.org/web/20260101000000/{url}"
    source = DraftSource(
        url=url, kind="blog", archived=archived, archive=ArchiveState(status="captured", confirmed=True)
    )
    return source.model_dump(mode="json")


def complete_draft(case_json: dict[str, Any], n: int) -> Draft:
    """An approved draft with every field filled and its source captured: ready to be published."""
    url = f"https://example.org/postmortems/{n}"
    fields = {k: v for k, v in case_json.items() if k not in ("id", "url", "updated_at", "sources")}
    return Draft.model_validate(
        {
            **fields,
            "id": f"example-org-{n}-0000000{n % 10}",
            "state": DraftState.APPROVED,
            "review": {"written_by": "alice", "reviewed_by": "bob", "reviewed_at": "2026-11-20T10:00:00Z"},
            "origin": Origin(url=url, canonical_url=url).model_dump(mode="json"),
            "sources": [captured_source(url)],
        }
    )


def drafts_for(store: Store, *urls: str, archive_state: ArchiveState | None = None) -> list[str]:
    """One new draft citing each URL, written; their ids. `archive_state`: each source's, as left
    by an earlier run (or an earlier version)."""
    ids = []
    for url in urls:
        draft = new_draft(SourceEntry(url=url))
        if archive_state is not None:
            draft.sources[0].archive = archive_state
        store.write_draft(draft)
        ids.append(draft.id)
    return ids


# Crawled text holding markup a page must show as text, never run.
HOSTILE = 'The API failed. <script>alert("x")</script> <img src=x onerror="alert(1)"> Users waited.'


def reviewable_draft(case_json: dict[str, Any], draft_id: str = "example-org-outage-00000001", **changes: Any) -> Draft:
    """A draft a writer can sign and a reviewer approve: every narrative field filled (the suite's
    case), its source captured, its crawled text and section holding markup (HOSTILE)."""
    url = "https://example.org/postmortems/outage"
    fields = {k: v for k, v in case_json.items() if k not in ("id", "url", "updated_at", "sources", "review")}
    data = {
        **fields,
        "id": draft_id,
        "state": "extracted",
        "origin": Origin(url=url, canonical_url=url, format="markdown").model_dump(mode="json"),
        "sources": [captured_source(url)],
        "text": HOSTILE,
        "sections": [{"heading": "Summary", "field": "summary", "text": HOSTILE}],
    }
    return Draft.model_validate({**data, **changes})


def sample_drafts() -> list[Draft]:
    """The demo's first three bundled postmortems (pipeline/demo/samples: DFDS, mybinder.org, the Rust
    Project) drafted as the crawl drafts them, from their public URLs, with their sources captured as
    the demo's archive step leaves them."""
    from pipeline.demo import _samples
    from pipeline.draft import apply_extraction
    from pipeline.extract import extract
    from pipeline.ids import canonical_url
    from pipeline.precedence import Hints, Said

    drafts = []
    for sample in _samples()[:3]:
        url = sample["url"]
        entry = SourceEntry(url=url, org=sample["org"], kind=sample["kind"])
        extraction = extract(
            sample["text"].encode(),
            url,
            "text/markdown; charset=utf-8",
            hints=Hints(registry=Said.hint(org=sample["org"])),
        )
        origin = Origin(url=url, canonical_url=canonical_url(url), final_url=url, format=extraction.format)
        draft = apply_extraction(new_draft(entry), entry, extraction, origin)
        source = DraftSource.model_validate({**captured_source(url), "kind": sample["kind"]})
        drafts.append(draft.model_copy(update={"sources": [source]}))
    return drafts


# ---------------------------------------------------------------- what the web page shows


def _leaves(value: Any) -> list[str]:
    """Every value of a field, as JSON, one by one: a text's languages, a list's items, a record's fields."""
    if value is None or value == "":
        return []
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [str(value)]


def case_fields(case: Any) -> dict[str, list[str]]:
    """Every field of a case's record as the page must show it, read off the model: each field's path
    (a field of parts part by part: `impact.scope`) with its values as JSON."""
    from pydantic import BaseModel

    data = case.model_dump(mode="json")
    out: dict[str, list[str]] = {}
    for name in type(case).model_fields:
        if name not in data:  # left out of the record while unset (a case's withdrawal): nothing to show
            continue
        value = getattr(case, name)
        if isinstance(value, BaseModel):
            out |= {f"{name}.{part}": _leaves(data[name][part]) for part in type(value).model_fields}
        else:
            out[name] = _leaves(data.get(name, []))  # a field left out when empty (exclude_if) shows nothing
    return out


def case_page_lacks(html: str, case: Any) -> list[str]:
    """What the case page (`/cases/ID`, as HTML) does not show of the case: a field without its row
    (`data-field`) or label, or a value of a field not in its row (as text, or as a `<time datetime>`)."""
    import lxml.html

    from pipeline.case_view import label_of

    page = lxml.html.fromstring(html)
    lacks: list[str] = []
    for path, values in case_fields(case).items():
        rows = page.cssselect(f'[data-field="{path}"]')
        if len(rows) != 1:
            lacks.append(f"{path}: {len(rows)} rows")
            continue
        label = " ".join(rows[0].cssselect("dt")[0].text_content().split())
        if label_of(path) not in label or path not in label:
            lacks.append(f"{path}: labelled {label!r}")
        shown = " ".join(rows[0].text_content().split())
        times = {t.get("datetime") for t in rows[0].cssselect("time")}
        lacks += [
            f"{path}: {v!r}"
            for v in values
            if " ".join(v.split()) not in shown and _rendered(v) not in shown and v not in times
        ]
    return lacks


def _rendered(text: str) -> str:
    """A text as its Markdown shows it (pipeline.render): its words without the marks, spaced as read."""
    import lxml.html

    from pipeline.render import markdown

    return " ".join(lxml.html.fragment_fromstring(str(markdown(text)), create_parent="div").text_content().split())


def make_prefect_db(folder: Path, into: Path) -> None:
    """A Prefect database with every migration applied, made by a server started (API only) on a data
    root in `folder` as any command starts one, then stopped; written to `into` whole (a consistent
    copy, whatever the server left in its write-ahead log)."""
    from pipeline import server as prefect_server

    root = folder / "data"
    for name in ("sources", "drafts", "cases"):
        (root / name).mkdir(parents=True, exist_ok=True)
    store = Store(root)
    _, process = prefect_server._start(store, Settings(root=root, _env_file=None), full=False, port=0)
    prefect_server._stop(process)
    made = prefect_server.prefect_home(store) / "prefect.db"
    with sqlite3.connect(made) as source, sqlite3.connect(into) as copy:
        source.backup(copy)


def seed_prefect_db(root: Path, migrated: Path) -> None:
    """Give data root `root` a migrated Prefect database (the `migrated_prefect_db` fixture's), where the
    first server a command or `serve` starts on it would make one: that server then skips the schema's
    migrations, seconds of work each time (several times that with the suite's workers beside). For
    tests of what a server does, not of how its database is made; those start from nothing."""
    folder = root / ".incidentlib" / "prefect"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated, folder / "prefect.db")


@contextmanager
def shared_stems(root: Path, shared: Path) -> Iterator[None]:
    """Lend data root `root` the Korean stems other tests' builds analysed (the `stems_cache` fixture's
    file), and give back what its build analysed. Each build of a fresh data root otherwise starts the
    analyser anew, 2.4-3.4 s of processor time for its model alone, and the page tests built 26 sites
    so; with the stems lent, only words no build met before are analysed. For tests of what the pages
    show; the tests of the analysis itself (test_site_search) start from nothing."""
    from filelock import FileLock

    from pipeline.lookup import STEMS_FILE
    from pipeline.site.search import Stems

    lock = FileLock(f"{shared}.lock")
    with lock:
        lent = shared.read_bytes() if shared.exists() else None
    if lent is not None:
        Store(root).state.write(STEMS_FILE, lent, durable=False)
    yield
    made = Store(root).state.read(STEMS_FILE)
    if made is None or made == lent:
        return
    with lock:
        known = json.loads(shared.read_bytes())["words"] if shared.exists() else {}
        mine = json.loads(made)
        if mine["words"].keys() <= known.keys():
            return
        merged = Stems.load(json.dumps({"analyser": mine["analyser"], "words": known | mine["words"]}).encode())
        part = shared.with_name(f"{shared.name}.{os.getpid()}.part")
        part.write_bytes(merged.dump())
        part.replace(shared)


def archive_states(store: Store) -> dict[str, ArchiveState]:
    """Each source's archive state, by URL, over every draft."""
    return {s.url: s.archive for d in store.drafts() for s in d.sources}


def load_bench(name: str) -> ModuleType:
    """A script of bench/ loaded by its path (bench/ is no package), as `bench_<name>`."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def related_case(make_case: Callable[..., Case], case_id: str = "IL-0900", **terms: object) -> Case:
    """A published case of another org telling, in other words, an incident like the suite's case (a
    checkpoint stall on shared storage): for a related-case suggestion, never a duplicate. `terms`: the
    root cause, components, symptoms to share."""
    return make_case(
        case_id,
        org="Other Org",
        org_slug="other-org",
        date="2024-05-01",
        title={"en": "Checkpoint stall on shared storage hangs a training job"},
        summary={
            "en": "A training job hung for an hour when checkpoint writes to shared storage stalled; "
            "the NCCL watchdog timed out and the job was restarted."
        },
        trigger={"en": "A file system upgrade slowed metadata operations."},
        detection={"en": "An alert on stalled training throughput."},
        lessons={"en": "Write checkpoints asynchronously."},
        symptoms_text={"en": "Every rank stopped at the same step."},
        remediation=[],
        action_items=[],
        **terms,
    )


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """`folder` served over loopback while the block runs, as a static host serves a built site; its
    address, `http://127.0.0.1:PORT` (no trailing slash)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietFiles, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


def site_page(site: Path, key: str) -> Any:
    """A built site's page, parsed (its bytes read as the UTF-8 every page declares)."""
    import lxml.html

    return lxml.html.fromstring((site / key).read_bytes().decode())


def page_text(element: Any) -> str:
    """An element's text as a reader reads it: its words, one space between them."""
    return " ".join(element.text_content().split())
