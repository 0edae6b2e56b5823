"""The reader's site, composed and written: `build_files(ctx)` (pure) and `build_site(...)` (its I/O shell).

    files = build_files(ctx)                      # every file of the site, site-relative path -> bytes
    report = build_site(store, settings)          # into the data root's site/ (or `out`): only what changed

A rebuild writes only the files whose bytes changed and removes the files no longer made (a case's
pages never: a published id always resolves). Case pages, most of a large site, are rendered only when
their inputs changed: the build keeps a hash of each one's inputs (`pages.case_inputs`) in the
folder's `.build-cache.json`, and a page whose inputs hash the same and whose file is there is left
as it is, unread. Every other file is made anew and compared byte for byte.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline.models import utc_now
from pipeline.settings import Settings
from pipeline.site import api, feeds, pages, search
from pipeline.site.context import SiteContext
from pipeline.store import Store, write_atomic

__all__ = ["KEEP", "PARTS", "BuildReport", "build_files", "build_site", "site_context", "static_assets"]


def static_assets(ctx: SiteContext) -> dict[str, bytes]:
    """The package's static files (pipeline/site/static/: the style sheet, the facet script) under assets/."""
    folder = resources.files("pipeline.site").joinpath("static")
    return {f"assets/{item.name}": item.read_bytes() for item in folder.iterdir() if item.is_file()}


# The parts of the site besides the pages, each a pure `render(ctx) -> dict[str, bytes]`, composed in this
# order after the pages (a later part's file replaces an earlier one's of the same path). The pages come
# from `pages.plan`, which says what each is made of, so that a rebuild renders only those whose inputs
# changed. The search index (search/) is made from the cases with the files (`search.index_files`).
PARTS: tuple[Callable[[SiteContext], dict[str, bytes]], ...] = (static_assets, api.render, feeds.render)

# Korean words' stems between builds, so a rebuild analyses only new words; kept beside the site's files.
_STEM_CACHE = ".search-stems.json"
# Never removed from a site folder: the case pages (permalinks; a case whose record left cases/ keeps
# its page) and the Korean words' stems the search index keeps between builds (pipeline.site.search.Stems).
KEEP = ("cases/*", "*/cases/*", _STEM_CACHE)


def build_files(ctx: SiteContext, stems: search.Stems | None = None) -> dict[str, bytes]:
    """Every file of the site, by site-relative path (the search index's Korean stems from `stems`)."""
    files = pages.render(ctx)
    for part in PARTS:
        files.update(part(ctx))
    files.update(search.index_files(search.search_docs(ctx.cases, stems or search.Stems())))
    return files


@dataclass
class BuildReport:
    folder: str
    cases: int
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    rendered: int = 0  # pages made this time; the others' inputs were as the last build's
    search: dict[str, Any] | None = None  # the search index: pages indexed per language
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        return {"written": len(self.written), "unchanged": self.unchanged, "removed": len(self.removed)}

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "counts": self.counts()}


def site_context(store: Store, settings: Settings) -> SiteContext:
    """What the site is built from: the data root's cases, the site's base, its links' states, now."""
    return SiteContext.of(
        store.cases(), base_url=settings.public_base_url, built_at=utc_now(), links=store.read_links()
    )


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_site(store: Store, settings: Settings, out: Path | None = None) -> BuildReport:
    """Build the site from the data root's cases into `out` (default: the data root's site/), writing
    only what changed; see the module's docstring."""
    started = time.perf_counter()
    folder = (out or store.site_dir).resolve()
    ctx = site_context(store, settings)
    before = store.read_tree_cache(folder).get("inputs", {})
    inputs: dict[str, str] = {}
    files: dict[str, bytes] = {}
    present: list[str] = []
    planned_pages = pages.plan(ctx)
    for key, planned in planned_pages.items():
        if planned.inputs is not None:
            inputs[key] = _hash(planned.inputs)
            if before.get(key) == inputs[key]:
                present.append(key)  # sync_tree checks that it is still there
                continue
        files[key] = planned.make()
    for part in PARTS:
        files.update(part(ctx))
        present = [key for key in present if key not in files]
    stems = search.Stems.load(_read_stems(folder))
    rendered = len(files)  # the index is made whole each time (the coordinator's incremental build updates it)
    docs = search.search_docs(ctx.cases, stems)
    files.update(search.index_files(docs))
    synced = store.sync_tree(folder, files, present=present, protect=KEEP, inputs=inputs)
    if synced.missing:  # pages of the last build deleted since: made again
        again = {key: planned_pages[key].make() for key in synced.missing}
        rest = [key for key in present if key not in again]
        redone = store.sync_tree(folder, {**files, **again}, present=rest, protect=KEEP, inputs=inputs)
        synced.written += redone.written
        files.update(again)
    if stems.changed:
        write_atomic(folder / _STEM_CACHE, stems.dump(), durable=False)
    indexed = {"pages": {lang: sum(d.lang == lang for d in docs) for lang in ctx.langs}, "analyser": search.analyser()}
    return BuildReport(
        folder=str(folder),
        cases=len(ctx.cases),
        written=synced.written,
        unchanged=len(synced.unchanged),
        removed=synced.removed,
        rendered=rendered + len(synced.missing),
        search=indexed,
        seconds=round(time.perf_counter() - started, 3),
    )


def _read_stems(folder: Path) -> bytes | None:
    try:
        return (folder / _STEM_CACHE).read_bytes()
    except OSError:
        return None
