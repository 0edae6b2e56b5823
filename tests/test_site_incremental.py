"""The site's incremental build: whatever happened to cases/ since the last build, a rebuild gives the
bytes a build from scratch gives, reading only the cases that changed; what it keeps between builds lives
in the data root's state, and a cache it cannot trust is not used."""

from __future__ import annotations

import io
import os
import shutil
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.site import api, tree
from pipeline.site.assemble import assemble
from pipeline.site.build import build_site
from pipeline.site.context import LICENCE, SiteContext
from pipeline.site.tree import SiteTree, Wanted, tree_hash
from pipeline.store import Store

GONE = ("IL-0030", "IL-0022")
COMPONENTS = ["nccl", "pytorch", "kubelet", "dns", "ingress"]


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file of a built site, its search index's too."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


PAST = time.time_ns() - 3_600_000_000_000  # an hour before the tests


def _backdate(store: Store) -> None:
    """The case files as if written an hour ago: out of the racy window, so the cards' cache is trusted (a
    file the store rewrote since is a new file, a new inode: known as changed whatever its time)."""
    for path in (store.root / "cases").glob("*.json"):
        os.utime(path, ns=(PAST, PAST))


def write_library(store: Store, make_case: Callable[..., Case], count: int) -> Store:
    """`count` cases over ten years and five components, their files backdated."""
    for n in range(1, count + 1):
        store.write_case(
            make_case(
                f"IL-{n:04d}",
                date=f"20{15 + n % 10}-0{1 + n % 9}-1{n % 10}",
                components=[COMPONENTS[n % 5], COMPONENTS[(n + 2) % 5]],
                title={"en": f"Case {n}", "ko": f"사례 {n}"},
            )
        )
    _backdate(store)
    return store


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case]) -> Store:
    return write_library(store, make_case, 45)


def _same_as_from_scratch(store: Store, out: Path, tmp_path: Path, name: str) -> None:
    settings = Settings(root=store.root)
    build_site(store, settings, out)
    scratch = tmp_path / f"scratch-{name}"  # another folder: no cache of its own yet
    build_site(store, settings, scratch)
    built, fresh = _tree(out), _tree(scratch)
    # A case whose file went keeps its pages and its record's file (a published id always resolves).
    kept = {key for key in set(built) - set(fresh) if any(f"cases/{gone}" in key for gone in GONE)}
    assert set(built) - kept == set(fresh), name
    differing = [key for key in fresh if built[key] != fresh[key]]
    assert differing == [], name


def test_a_rebuild_gives_what_a_build_from_scratch_gives_whatever_changed(
    library: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(library, Settings(root=library.root), out)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("a summary", lambda: _edit(library, "IL-0007", summary={"en": "Edited."})),
        ("components", lambda: _edit(library, "IL-0011", components=["dns"])),
        ("a date: the case moves in the listing", lambda: _edit(library, "IL-0003", date="2031-01-01")),
        ("a new case", lambda: _write(library, make_case("IL-0100", date="2019-05-05", components=["nccl"]))),
        ("a relation", lambda: _edit(library, "IL-0012", related=["IL-0013"])),
        ("a withdrawal", lambda: _edit(library, "IL-0020", withdrawn="2026-11-30T10:00:00Z", withdrawn_reason="Dup.")),
        ("a case file gone", lambda: (library.root / "cases" / "IL-0030.json").unlink()),
        # What a rebuild plans again goes by the groups a changed case is shown in (then and now):
        ("a relation undone", lambda: _edit(library, "IL-0012", related=[])),
        ("a recurrence", lambda: _edit(library, "IL-0014", recurrence_of="IL-0004")),
        ("an org: its listing's heading", lambda: _edit(library, "IL-0005", org="Another Org", org_slug="another")),
        ("a merge", lambda: _edit(library, "IL-0021", withdrawn="2026-11-30T10:00:00Z", merged_into="IL-0022")),
        ("the survivor's file gone", lambda: (library.root / "cases" / "IL-0022.json").unlink()),
    ]
    for name, step in steps:
        step()
        _backdate(library)
        _same_as_from_scratch(library, out, tmp_path, name.split(":")[0].replace(" ", "-"))


def _write(store: Store, case: Case) -> None:
    store.write_case(case)


def _edit(store: Store, case_id: str, **fields: object) -> None:
    case = store.read_case(case_id)
    store.write_case(Case.model_validate({**case.model_dump(mode="json"), **fields}))


def test_a_rebuild_reads_only_the_cases_its_changed_pages_show(
    library: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    for n in range(46, 76):  # more cases than a feed holds (FEED_ENTRIES), so not every feed shows the edit
        library.write_case(make_case(f"IL-{n:04d}", date=f"20{15 + n % 10}-0{1 + n % 9}-1{n % 10}"))
    _backdate(library)
    settings = Settings(root=library.root)
    out = tmp_path / "site"
    first = build_site(library, settings, out)
    assert first.read == 75
    assert build_site(library, settings, out).read == 0  # nothing changed: no case file read, none written
    _edit(library, "IL-0070", lessons={"en": "A new lesson."})
    _backdate(library)
    after = build_site(library, settings, out)
    assert 0 < after.read < 75 and "en/cases/IL-0070/index.html" in after.written
    assert "A new lesson." in (out / "en/cases/IL-0070/index.html").read_text()


def test_a_file_changed_in_place_within_the_racy_window_is_read_again(library: Store, tmp_path: Path) -> None:
    """An edit that keeps the file's inode, size and times (an editor writing in place, a clock's coarse
    tick) is still seen: a file changed this close to the last build's look is not known by its stat."""
    settings = Settings(root=library.root)
    out = tmp_path / "site"
    path = library.root / "cases" / "IL-0005.json"
    os.utime(path)  # now: inside the window of the build that follows
    build_site(library, settings, out)
    stat = path.stat()
    data = path.read_bytes()
    edited = data.replace(b'"Case 5"', b'"Case X"')
    assert len(edited) == len(data) and edited != data
    with path.open("r+b") as handle:
        handle.write(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_ino == stat.st_ino and path.stat().st_size == stat.st_size
    build_site(library, settings, out)
    assert "Case X" in (out / "en/cases/IL-0005/index.html").read_text()


def test_what_a_build_keeps_lives_outside_the_site_and_a_bad_cache_is_not_used(library: Store, tmp_path: Path) -> None:
    settings = Settings(root=library.root)
    out = tmp_path / "site"
    out.mkdir()
    (out / ".build-cache.json").write_text("{}")  # where earlier builds kept their cache
    build_site(library, settings, out)
    assert not (out / ".build-cache.json").exists()
    assert [p.name for p in out.rglob(".*")] == []  # nothing hidden is published
    caches = SiteTree(library.state, out).cache_dir
    assert caches.is_relative_to(library.root / ".incidentlib") and sorted(p.name for p in caches.iterdir())
    assert (caches / "search" / "ko" / "live.json").is_file()  # the search's bookkeeping: kept, not published
    for cache in (path for path in caches.rglob("*") if path.is_file()):
        cache.write_bytes(b"\x80\x04not a pickle")
    _edit(library, "IL-0009", summary={"en": "After the caches broke."})
    _backdate(library)
    report = build_site(library, settings, out)
    assert report.read == 45  # every case read again: the cards' cache was not trusted
    assert "After the caches broke." in (out / "en/cases/IL-0009/index.html").read_text()
    scratch = tmp_path / "scratch"
    build_site(library, settings, scratch)
    assert _tree(out) == _tree(scratch)


def test_all_zip_is_a_zip_and_a_rebuild_compresses_only_the_changed_case(
    make_case: Callable[..., Case],
) -> None:
    from datetime import UTC, datetime

    cases = [make_case(f"IL-{n:04d}", title={"en": f"Case {n}", "ko": "사례"}) for n in range(1, 6)]
    ctx = SiteContext.of(cases, base_url="https://example.org/lib", built_at=datetime(2026, 12, 1, tzinfo=UTC))
    first = api.assembled(ctx, lambda key: None)["api/v1/all.zip"]
    with zipfile.ZipFile(io.BytesIO(first.data)) as archive:
        assert archive.testzip() is None
        assert archive.namelist() == [f"IL-{n:04d}.json" for n in range(1, 6)]
        assert archive.read("IL-0003.json") == ctx.raw("IL-0003")
    assert first.made == 5
    cases[2] = cases[2].model_copy(update={"title": {"en": "Changed", "ko": "바뀜"}})
    ctx = SiteContext.of(cases, base_url="https://example.org/lib", built_at=datetime(2026, 12, 1, tzinfo=UTC))
    again = api.assembled(ctx, lambda key: (first.data, first.spans) if key.endswith(".zip") else None)
    zipped = again["api/v1/all.zip"]
    assert zipped.made == 1 and zipped.data == api.assembled(ctx, lambda key: None)["api/v1/all.zip"].data
    with zipfile.ZipFile(io.BytesIO(zipped.data)) as archive:
        assert b'"Changed"' in archive.read("IL-0003.json")


def test_a_piece_is_copied_only_when_its_case_is_the_same() -> None:
    class Card:
        def __init__(self, id: str, digest: str) -> None:
            self.id, self.digest = id, digest

    made: list[str] = []

    def piece(case_id: str) -> bytes:
        made.append(case_id)
        return f"<{case_id}>".encode()

    first = assemble(b"H", [Card("a", "1"), Card("b", "1")], piece, lambda spans: b"T", None)
    assert first.data == b"H<a><b>T" and made == ["a", "b"]
    second = assemble(b"H", [Card("b", "1"), Card("a", "2")], piece, lambda spans: b"T", (first.data, first.spans))
    assert second.data == b"H<b><a>T" and made == ["a", "b", "a"]


def test_new_code_makes_every_file_again_and_writes_only_what_changed(
    library: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's inputs say what it shows, not the code that writes it: after an upgrade (a template, a label,
    the pages' modules: the site's code hash) every file is made again, as a clean build would make it, and
    only those whose bytes changed are written. Here the code's hash changes and the pages do not."""
    from pipeline.site import build

    settings = Settings(root=library.root)
    first = build_site(library, settings, tmp_path / "site")
    again = build_site(library, settings, tmp_path / "site")
    assert again.rendered < first.rendered / 4  # the same code: little is made
    monkeypatch.setattr(build, "_site_code", lambda: "the code of a later version")
    upgraded = build_site(library, settings, tmp_path / "site")
    assert upgraded.rendered == first.rendered and upgraded.written == []


def test_a_build_on_several_processes_gives_the_same_bytes(
    library: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large build makes its files on every core (spawned workers planning the site again from the
    cards, each writing its own files): the same bytes as one process makes, on a first build and on a
    rebuild, where a worker writes only the files whose bytes changed. The threshold is lowered so that 45
    cases reach it."""
    from pipeline.site import build

    monkeypatch.setattr(build, "PARALLEL_FROM", 1)
    monkeypatch.setattr(build, "WORKER_START", 0)  # an even share: a small library's would all stay here
    settings = Settings(root=library.root)
    for folder in ("alone", "shared"):  # a file no build made, in a folder no build knows: walked, removed
        (tmp_path / folder / "old").mkdir(parents=True)
        (tmp_path / folder / "old/stray.html").write_text("left by hand")
    alone = build_site(library, settings, tmp_path / "alone", workers=1)
    shared = build_site(library, settings, tmp_path / "shared", workers=2)
    assert alone.counts() == shared.counts() and shared.counts()["written"] > 300
    assert shared.removed == ["old/stray.html"] == alone.removed
    assert _tree(tmp_path / "alone") == _tree(tmp_path / "shared")
    _edit(library, "IL-0009", summary={"en": "Edited once, built on two processes.", "ko": "고친 요약."})
    alone = build_site(library, settings, tmp_path / "alone", workers=1)
    shared = build_site(library, settings, tmp_path / "shared", workers=2)
    assert alone.written == shared.written and 0 < len(shared.written) < 150 and shared.rendered == alone.rendered
    assert _tree(tmp_path / "alone") == _tree(tmp_path / "shared")
    assert "Edited once, built on two processes." in (tmp_path / "shared/en/cases/IL-0009/index.html").read_text()


def test_a_worker_that_read_other_cases_makes_nothing_and_the_build_makes_its_share(
    library: Store, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A worker reads the cases and plans the site itself while the build does (started first thing). A case
    written between the build's reading and the worker's would make pages of two versions: the worker
    compares what it planned from with what the build did, and makes nothing when they differ; the build
    makes its share itself."""
    from pipeline.site import build

    settings = Settings(root=library.root)
    workers = build._Workers(library, settings, tmp_path / "site", build.utc_now(), 2)
    cases = build._Cases(library)
    cards = [build.Card.of(cases.read(i), cases.raw(i)) for i in library.ids("case")]
    ctx = build._context(library, settings, cards, cases, workers.start_job.shown.built_at)  # read by the build
    _edit(library, "IL-0009", summary={"en": "Written before the worker read.", "ko": "워커가 읽기 전에 고친 요약."})
    with workers:
        workers.start(early=True)  # reads the edited case
        planned = build.plan(ctx)
        keys = sorted(planned)
        shares = workers.deal(ctx, planned, keys, {})
        assert shares.theirs and len(shares.mine) < len(keys)
        # as a worker killed mid-write would leave it, in a folder of its share: removed when it failed
        worker, part = shares.theirs[0]
        left = tmp_path / "site" / part[0].rpartition("/")[0] / f".index.html.{worker.process.pid}.1.tmp"
        left.parent.mkdir(parents=True, exist_ok=True)
        left.write_text("half")
        made, wrote = shares.others()
    assert not left.exists()
    theirs = sorted(set(keys) - set(shares.mine))
    assert wrote == {} and sorted(made) == theirs  # made here, none written by the worker
    assert made == {key: planned[key].make() for key in theirs}
    assert not any((tmp_path / "site").rglob("*.html"))
    assert "the cases or the site's settings changed while the site was built" in capfd.readouterr().err


@pytest.mark.parametrize("sync_each", [0, 512])  # one sync of the system at the end; each file synced
def test_a_sync_writes_a_file_whose_bytes_come_later_and_removes_a_file_whose_folder_went(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync_each: int
) -> None:
    monkeypatch.setattr(tree, "SYNC_EACH", sync_each)
    site = SiteTree(store.state, tmp_path / "out")
    asked: list[str] = []

    def made_aside() -> bytes:  # as a thread's result is taken
        asked.append("db")
        return b"made aside"

    report = site.sync(Wanted({"a/b/c.html": b"1", "x.html": b"2"}, later={"api/v1/cases.db": made_aside}))
    assert report.written == ["a/b/c.html", "api/v1/cases.db", "x.html"] and asked == ["db"]
    assert (tmp_path / "out/api/v1/cases.db").read_bytes() == b"made aside"
    assert site.last()["files"]["api/v1/cases.db"] == tree_hash(b"made aside") == report.hashes["api/v1/cases.db"]
    shutil.rmtree(tmp_path / "out/a")  # a file's folder gone before the next sync, which no longer wants it
    again = site.sync(Wanted({"x.html": b"2"}, later={"api/v1/cases.db": made_aside}))
    assert again.written == [] and sorted(again.unchanged) == ["api/v1/cases.db", "x.html"]
    assert again.removed == ["a/b/c.html"] and asked == ["db", "db"]
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "api/v1/cases.db",
        "x.html",
    ]


def test_a_worker_whose_build_is_gone_stops_before_its_next_file(library: Store, tmp_path: Path) -> None:
    """A worker writes its share into the site's folder itself; when its build is killed, the folder is the
    next build's, so the worker asks before each file whether its build is still there (its parent, in
    pipeline.site.worker) and stops."""
    from pipeline.site import build

    settings = Settings(root=library.root)
    site = tmp_path / "site"
    start = build.WorkerStart(library.root, build._Shown(settings.public_base_url, {}, LICENCE, build.utc_now()), site)
    ctx, planned = start.ready()
    keys = sorted(key for key in planned if key.endswith(".html"))[:10]
    share = build.WorkerShare(keys, {}, build._plan_mark(ctx), build._cards_mark(ctx.cases))
    asked: list[int] = []

    def alive() -> bool:  # the build is killed after the worker's third file (asked before making each, and
        asked.append(1)  # again before writing it)
        return len(asked) <= 6

    with pytest.raises(build.BuildGone):
        build.work(start, lambda: share, alive)
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == keys[:3]
    assert build.work(start, lambda: share).keys() == set(keys)  # a build that stays: its whole share
    # A build gone while a file was being made (cases.db takes seconds): the file is not written.
    answers = iter([True, False])
    late = tmp_path / "late"
    with pytest.raises(build.BuildGone):
        build._made_and_written(build.plan(ctx), keys[:1], late, {}, lambda: next(answers))
    assert not late.exists() or not any(late.rglob("*"))


def test_a_killed_builds_temporary_file_among_the_kept_pages_is_removed(library: Store, tmp_path: Path) -> None:
    """The case pages are kept when their case leaves (permalinks), but a write's temporary file a killed
    build left beside one is not a page: the next build, which walks the folder, removes it."""
    settings = Settings(root=library.root)
    left = tmp_path / "site/en/cases/IL-0001/.index.html.4242.17.tmp"
    left.parent.mkdir(parents=True)
    left.write_text("half written")
    report = build_site(library, settings, tmp_path / "site")
    assert not left.exists() and report.removed == ["en/cases/IL-0001/.index.html.4242.17.tmp"]
    assert (tmp_path / "site/en/cases/IL-0001/index.html").is_file()


def test_a_large_builds_files_are_dealt_out_so_that_its_processes_finish_together() -> None:
    from pipeline.site.build import _shares

    keys = [f"k{n}" for n in range(46_000)]
    mine, theirs = _shares(keys, 2, cases=10_000)  # this process also makes the search index and the API
    assert sorted(mine + theirs) == sorted(keys) and mine == sorted(mine, key=lambda key: int(key[1:]))
    assert len(theirs) > len(mine) > 0 and mine[:3] == ["k2", "k5", "k8"]  # spread over every kind of file
    # A worker started first thing is ready about when this process has planned (`start` in pages' worth);
    # one started then reads and plans the site first, and gets less.
    assert [len(part) for part in _shares(keys[:5_900], 2, cases=1_000, start=500)] == [2_450, 3_450]
    assert [len(part) for part in _shares(keys[:5_900], 2, cases=1_000, start=1_500)] == [2_950, 2_950]
    assert _shares(keys[:10], 2, cases=45) == [keys[:10], []]  # too few to share: no worker to start


def test_a_file_where_the_sites_folder_should_be_is_said_to_be_one_before_any_work(
    library: Store, tmp_path: Path
) -> None:
    """The command line refuses such an --out; the library call says so too, in a line, and leaves the file
    as it was (before, the build read and planned every case, then failed on a raw FileExistsError)."""
    from pipeline.errors import StoreError

    out = tmp_path / "site"
    out.write_text("not a folder")
    with pytest.raises(StoreError, match=r"site: the site's folder is a file$"):
        build_site(library, Settings(root=library.root), out)
    assert out.read_text() == "not a folder"


def test_a_page_deleted_by_hand_is_made_again_and_said_written_not_removed(library: Store, tmp_path: Path) -> None:
    """A folder holding anything (a static host's `CNAME`) is not an emptied one: what it holds is kept, and
    each page gone is made again and reported written, never removed as well."""
    settings, out = Settings(root=library.root), tmp_path / "site"
    build_site(library, settings, out)
    site = _tree(out)
    (out / "en" / "index.html").unlink()
    again = build_site(library, settings, out)
    assert again.written == ["en/index.html"] and again.removed == [] and _tree(out) == site
    shutil.rmtree(out)
    out.mkdir()
    (out / "CNAME").write_text("cases.example.org\n")
    kept = build_site(library, settings, out)
    assert len(kept.written) == len(site) and kept.removed == []
    assert _tree(out) == {**site, "CNAME": b"cases.example.org\n"}
