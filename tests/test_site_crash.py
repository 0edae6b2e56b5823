"""An incremental build after what a second reader tried: a build that crashed before its caches were
written, files deleted by hand, settings and link states changed. Each rebuild must give what a build
from scratch gives."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_site_incremental import _backdate, _tree, write_library

from pipeline.models import Case, LinkState
from pipeline.settings import Settings
from pipeline.site.build import build_site
from pipeline.site.tree import SiteTree
from pipeline.store import Store


class Crash(Exception):
    pass


@pytest.fixture
def lib(store: Store, make_case: Callable[..., Case]) -> Store:
    return write_library(store, make_case, 12)


def _edit(store: Store, case_id: str, **fields: object) -> None:
    case = store.read_case(case_id)
    store.write_case(Case.model_validate({**case.model_dump(mode="json"), **fields}))
    _backdate(store)


def _assert_as_scratch(store: Store, settings: Settings, out: Path, tmp_path: Path, name: str) -> None:
    scratch = tmp_path / f"scratch-{name}"
    build_site(store, settings, scratch, workers=1)
    built, fresh = _tree(out), _tree(scratch)
    found = {
        "only in the rebuilt": sorted(set(built) - set(fresh)),
        "only from scratch": sorted(set(fresh) - set(built)),
        "differing": sorted(k for k in set(fresh) & set(built) if built[k] != fresh[k]),
    }
    assert found == {"only in the rebuilt": [], "only from scratch": [], "differing": []}, name


def _crash_on(monkeypatch: pytest.MonkeyPatch, cache_name: str) -> None:
    real = SiteTree.write_cache

    def crashing(self: SiteTree, name: str, data: bytes, durable: bool = False) -> None:
        if name.startswith(cache_name):
            raise Crash(name)
        real(self, name, data, durable)

    monkeypatch.setattr(SiteTree, "write_cache", crashing)


@pytest.mark.parametrize("cache_name", ["tree.pickle", "spans.pickle", "cards-"])
def test_a_crash_after_the_files_then_the_edit_undone(
    lib: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_name: str
) -> None:
    """Build; edit a case; the next build dies after writing the site's files but before writing one of
    its caches; the edit is undone (the file's bytes as they were); a rebuild must give the first site."""
    settings = Settings(root=lib.root)
    out = tmp_path / "site"
    build_site(lib, settings, out, workers=1)
    original = (lib.root / "cases" / "IL-0005.json").read_bytes()
    _edit(lib, "IL-0005", summary={"en": "Zebrafish quagmire.", "ko": "얼룩말 수렁."})
    with monkeypatch.context() as patch:
        _crash_on(patch, cache_name)
        with pytest.raises(Crash):
            build_site(lib, settings, out, workers=1)
    assert "Zebrafish" in (out / "en/cases/IL-0005/index.html").read_text()  # the crashed build wrote it
    path = lib.root / "cases" / "IL-0005.json"
    path.unlink()
    path.write_bytes(original)  # the edit undone (git checkout, an editor's undo): a new inode
    _backdate(lib)
    build_site(lib, settings, out, workers=1)
    _assert_as_scratch(lib, settings, out, tmp_path, cache_name)


def test_site_files_deleted_by_hand_are_made_again(lib: Store, tmp_path: Path) -> None:
    settings = Settings(root=lib.root)
    out = tmp_path / "site"
    build_site(lib, settings, out, workers=1)
    shard = next((out / "search" / "en" / "shards").iterdir())
    for path in (out / "en/cases/IL-0003/index.html", out / "api/v1/all.zip", out / "en/page/2/index.html", shard):
        path.unlink(missing_ok=True)
    _edit(lib, "IL-0004", summary={"en": "Another word: xylophone."})
    build_site(lib, settings, out, workers=1)
    _assert_as_scratch(lib, settings, out, tmp_path, "deleted")
    with zipfile.ZipFile(io.BytesIO((out / "api/v1/all.zip").read_bytes())) as archive:
        assert archive.testzip() is None and len(archive.namelist()) == 12


def test_settings_and_link_states_reach_an_incremental_build(lib: Store, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(lib, Settings(root=lib.root), out, workers=1)
    moved = Settings(root=lib.root, public_base_url="https://other.example/lib", site_note={"en": "A note."})
    build_site(lib, moved, out, workers=1)
    _assert_as_scratch(lib, moved, out, tmp_path, "settings")
    url = lib.read_case("IL-0002").sources[0].url
    state = LinkState(url=url, checked_at=datetime(2026, 1, 2, tzinfo=UTC), status="ok")
    lib.state.update_links({url: state})
    build_site(lib, moved, out, workers=1)
    _assert_as_scratch(lib, moved, out, tmp_path, "links")
    lib.state.path("links.json").unlink()
    build_site(lib, moved, out, workers=1)
    _assert_as_scratch(lib, moved, out, tmp_path, "links-gone")
    build_site(lib, Settings(root=lib.root), out, workers=1)
    _assert_as_scratch(lib, Settings(root=lib.root), out, tmp_path, "settings-back")
