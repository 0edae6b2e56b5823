"""The offline demo, as the README's main job: the whole pipeline, true cases, something left to
review, archived links that open while it runs, and nothing left running."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.candidates import candidates
from pipeline.demo import DemoMismatch, DemoReport, _samples, closing_lines, mismatch, run_demo
from pipeline.ids import candidate_id, draft_id_for
from pipeline.models import DraftState
from pipeline.store import LAYOUT, Store
from pipeline.store.state import STATE_DIR
from pipeline.validate import validate

# What the demo sets for its own run, and must put back.
DEMO_VARIABLES = (
    "INCIDENTLIB_ALLOW_PRIVATE_HOSTS",
    "INCIDENTLIB_STAND_IN_HOSTS",
    "INCIDENTLIB_WAYBACK_URL",
    "INCIDENTLIB_WAYBACK_PUBLIC_URL",
)
SAMPLES = _samples()
PIPELINE = Path(sys.modules["pipeline"].__file__ or "").parent
STORE_PACKAGE = PIPELINE / "store"
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# While the demo runs: each write under its library's data folders, with the pipeline's files that led to it.
_WATCHED: list[Path] = []
_WRITES: list[tuple[str, list[str]]] = []


def _writers() -> list[str]:
    """The pipeline's source files on the stack, innermost first (the standard library's frames left out)."""
    frame = sys._getframe(2)
    found: list[str] = []
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(str(PIPELINE)):
            found.append(name)
        frame = frame.f_back  # type: ignore[assignment]
    return found


def _watch_writes(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook (the interpreter's own: every open, rename and removal raises an event), inert unless
    a data root is watched. Installed once: a hook cannot be removed."""
    if not _WATCHED:
        return
    if event == "open":
        path, _mode, flags = args
        if isinstance(path, int) or not isinstance(flags, int) or not flags & _WRITING:
            return
    elif event in ("os.rename", "os.remove", "os.mkdir", "os.rmdir"):
        path = args[1] if event == "os.rename" else args[0]
        if isinstance(path, int):
            return
    else:
        return
    where = Path(os.path.abspath(os.fsdecode(path)))
    if any(where.is_relative_to(folder) for folder in _WATCHED):
        _WRITES.append((str(where), _writers()))


sys.addaudithook(_watch_writes)


@dataclass
class Run:
    report: DemoReport
    store: Store
    said: list[str]
    # While the demo still served (its `hold`): each archived link of the library, and what it answered.
    opened: dict[str, tuple[int, str]] = field(default_factory=dict)
    environment: dict[str, str | None] = field(default_factory=dict)  # the demo's variables after it
    leftover_threads: set[str] = field(default_factory=set)


@pytest.fixture(scope="module")
def demo(prefect_harness: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One run of the demo, with no INCIDENTLIB_* setting of anyone's, looked at by every test here."""
    library = tmp_path_factory.mktemp("demo") / "library"
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("INCIDENTLIB_")]:
            patch.delenv(name)
        patch.setenv("PREFECT_API_URL", prefect_harness)
        threads_before = {t.name for t in threading.enumerate()}
        said: list[str] = []
        opened: dict[str, tuple[int, str]] = {}

        def open_links(report: DemoReport) -> None:
            store = Store(report.root)
            links = [s.archived for c in store.cases() for s in c.sources]
            links += [s.archived for d in store.drafts() for s in d.sources]
            with httpx.Client(timeout=10) as client:
                for link in filter(None, links):
                    answer = client.get(link)
                    opened[link] = (answer.status_code, answer.text)

        _WATCHED.extend(library / folder for folder in ("sources", "drafts", "cases"))
        try:
            report = run_demo(library, say=said.append, hold=open_links)
        finally:
            _WATCHED.clear()
        environment = {name: os.environ.get(name) for name in DEMO_VARIABLES}
        leftover = {t.name for t in threading.enumerate()} - threads_before
        yield Run(report, Store(library), said, opened, environment, leftover)


def by_ending(ends: str) -> list[dict[str, str]]:
    return [s for s in SAMPLES if s["ends"] == ends]


def test_the_demo_s_cases_carry_the_samples_org_title_date_and_kind(demo: Run) -> None:
    cases = {case.sources[0].url: case for case in demo.store.cases()}
    assert sorted(cases) == sorted(s["url"] for s in by_ending("published"))
    for sample in by_ending("published"):
        case = cases[sample["url"]]
        assert (case.org, case.title.get("en"), case.date, case.sources[0].kind) == (
            sample["org"],
            sample["title"],
            sample["date"],
            sample["kind"],
        ), case.id
    for sample in by_ending("written") + by_ending("extracted"):  # what a person will review next
        assert mismatch(demo.store.read_draft(draft_id_for(sample["url"])), sample) is None


def test_the_demo_leaves_a_draft_written_one_extracted_and_a_candidate_waiting(demo: Run) -> None:
    report, store = demo.report, demo.store
    assert report.cases == ["IL-0001", "IL-0002"]
    states = {d.id: d.state for d in store.drafts()}
    (written,), (extracted,), (waiting,) = by_ending("written"), by_ending("extracted"), by_ending("candidate")
    assert states == {
        **{draft_id_for(s["url"]): DraftState.PUBLISHED for s in by_ending("published")},
        draft_id_for(written["url"]): DraftState.WRITTEN,
        draft_id_for(extracted["url"]): DraftState.EXTRACTED,
    }
    assert [c.id for c in candidates(store)] == [candidate_id(waiting["url"])]
    assert report.left == {
        "written": [draft_id_for(written["url"])],
        "extracted": [draft_id_for(extracted["url"])],
        "candidates": [candidate_id(waiting["url"])],
    }
    lines = closing_lines(report, kept=True)
    assert lines[1] == (
        f"left to review: 1 draft written, awaiting a reviewer ({draft_id_for(written['url'])}); 1 extracted, "
        f"awaiting a writer ({draft_id_for(extracted['url'])}); 1 candidate waiting in sources/candidates.yaml "
        f"({candidate_id(waiting['url'])})"
    )
    assert f"look at them: incidentlib queue --root {report.root}; incidentlib candidates --root {report.root}" in lines


def test_the_demo_s_records_name_the_public_urls_and_no_local_port(demo: Run) -> None:
    """The same page gets the same draft in every run: its id comes from the public URL alone."""
    drafted = [s for s in SAMPLES if s["ends"] != "candidate"]
    assert sorted(demo.store.ids("draft")) == sorted(draft_id_for(s["url"]) for s in drafted)
    assert not any("127-0-0-1" in draft_id for draft_id in demo.store.ids("draft"))
    registered = sorted(s.entry.url for s in demo.store.read_sources()[0])
    assert registered == sorted(s["url"] for s in drafted), "the feed's ?utm_source dropped"
    for draft in demo.store.drafts():
        assert [s.url for s in draft.sources] == [draft.origin.url]
        assert draft.origin.url in registered


def test_the_demo_s_archived_links_open_its_stand_in_s_copies_while_it_runs(demo: Run) -> None:
    texts = {s["url"]: s["text"] for s in SAMPLES}
    assert demo.opened, "every drafted source is archived"
    for link, (status, body) in demo.opened.items():
        assert link.startswith(f"{demo.report.wayback}/web/"), link
        original = link.split("/web/", 1)[1].split("/", 1)[1]
        assert status == 200 and texts[original].splitlines()[0] in body, link
    assert closing_lines(demo.report, kept=True)[3].startswith(
        f"archived links: the records link to the Wayback stand-in's own copies ({demo.report.wayback}/web/...), "
        "gone now it has stopped; incidentlib demo --keep DIR --serve keeps them"
    )


def test_the_demo_runs_every_step_and_puts_everything_back(demo: Run) -> None:
    report = demo.report
    assert report.faults == 0 and validate(demo.store).faults == []
    assert [name for name, _ in report.steps] == [
        "discover",
        "accept",
        "crawl",
        "archive",
        "review",
        "promote",
        "refresh",
        "site",
        "validate",
    ]
    steps = dict(report.steps)
    # The site shows the published cases; the demo says where it is and how to open it.
    site = Path(report.site)
    assert site == demo.store.root / "site" and (site / "ko" / "index.html").is_file()
    listing = (site / "ko" / "index.html").read_text()
    assert "사례 2건" in listing and all(f'id="{case}"' in listing for case in report.cases)
    assert steps["discover"] == "6 entries, 5 candidates, 1 left"
    assert steps["crawl"] == "4 new" and steps["archive"] == "4 captured"
    assert "1 re-archived" in steps["refresh"]
    assert any("MIT" in line for line in demo.said), "the bundled pages' licences are shown"
    assert demo.environment == dict.fromkeys(DEMO_VARIABLES)
    assert not {n for n in demo.leftover_threads if n.startswith(("site-", "wayback"))}


def test_only_the_store_writes_the_data_folders_and_the_state_holds_only_its_layout(demo: Run) -> None:
    """Every write the demo made under sources/, drafts/ and cases/ (each file opened for writing, renamed
    or removed, as the interpreter's audit events tell) went through a method of `Store`: the pipeline's
    innermost frames on its stack are the store package's, `records.py` among them."""
    seen = {Path(path).relative_to(demo.store.root).parts[0] for path, _ in _WRITES}
    assert seen == {"sources", "drafts", "cases"}, "the demo wrote each data folder"
    strays = []
    for path, writers in _WRITES:
        inner = []
        for name in writers:
            if not Path(name).is_relative_to(STORE_PACKAGE):
                break
            inner.append(Path(name).name)
        if "records.py" not in inner:
            strays.append((path, writers[:3]))
    assert strays == []
    state = demo.store.root / STATE_DIR
    found = {p.name + ("/" if p.is_dir() else "") for p in state.iterdir()}
    assert found and found <= set(LAYOUT), f"{sorted(found - set(LAYOUT))}: not in the state's LAYOUT"


def test_a_draft_that_differs_from_its_sample_stops_the_demo_before_anything_is_approved(
    tmp_path: Path, prefect_api: None
) -> None:
    wrong = [dict(s) for s in SAMPLES]
    first = next(s for s in wrong if s["ends"] == "published")
    first["title"] = "A title the page does not have"

    with pytest.raises(DemoMismatch) as raised:
        run_demo(tmp_path / "library", say=lambda _: None, samples=wrong)

    assert str(raised.value) == (
        f"incidentlib demo: draft {draft_id_for(first['url'])}: title expected 'A title the page does not have', "
        f"got {SAMPLES[wrong.index(first)]['title']!r} (pipeline/demo/samples/samples.yaml)"
    )
    store = Store(tmp_path / "library")
    assert list(store.cases()) == [] and all(d.state == DraftState.EXTRACTED for d in store.drafts())


def test_a_mismatch_names_the_draft_the_field_what_was_expected_and_what_it_holds(demo: Run) -> None:
    sample = by_ending("extracted")[0]
    draft = demo.store.read_draft(draft_id_for(sample["url"]))
    assert mismatch(draft, {**sample, "kind": "blog"}) == (
        f"incidentlib demo: draft {draft.id}: kind expected 'blog', got 'github' (pipeline/demo/samples/samples.yaml)"
    )
    assert mismatch(draft.model_copy(update={"org": "127.0.0.1"}), sample) == (
        f"incidentlib demo: draft {draft.id}: org expected 'dfds', got '127.0.0.1' (pipeline/demo/samples/samples.yaml)"
    )


def test_the_demo_command_says_how_to_open_its_library_in_the_review_page(
    cli: Any, tmp_path: Path, prefect_api: None
) -> None:
    library = tmp_path / "library"
    result = cli("demo", "--keep", str(library))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == (
        f"review page: incidentlib reviewer add NAME --root {library}, then incidentlib web --root {library} "
        "and open http://127.0.0.1:8000/"
    )
    assert lines[-6].startswith(f"done: 2 cases published (IL-0001, IL-0002); the library it made is in {library}")
    assert lines[-5].startswith("left to review: 1 draft written, awaiting a reviewer")
    assert lines[-2].startswith(f"reader's site: python -m http.server -d {library / 'site'} 8001")


@pytest.mark.parametrize("content", ["a previous demo's library", "someone's files"])
def test_the_demo_refuses_to_keep_its_library_in_a_folder_that_is_not_empty(
    cli: Any, tmp_path: Path, content: str
) -> None:
    folder = tmp_path / "lib"
    (folder / "sources").mkdir(parents=True)
    (folder / "sources" / "notes.txt").write_text(content)

    result = cli("demo", "--keep", str(folder))

    assert result.exit_code == 2
    assert result.stderr == (
        f"incidentlib demo: {folder} is not empty; name a new or empty folder for --keep (or remove this one)\n"
    )
    assert result.stdout == ""
    assert sorted(p.name for p in folder.rglob("*")) == ["notes.txt", "sources"], "nothing written"
