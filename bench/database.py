"""What api/v1/cases.db costs the site build (pipeline/site/database.py).

Generates bench/site.py's library of N published cases (default 10,000, the same seeded cases), builds
the site once with `incidentlib site`'s library call, then measures, medians of `--runs`:

- `full_build_s`: the whole site from an empty folder, cases.db included;
- `db_full_s`: cases.db made from nothing (every case read and turned into rows, the file written), what a
  clean build spends on it; `db_share_of_full`: that over `full_build_s`;
- `db_rebuild_s`: cases.db made again with every case's rows copied from the last build's file (what a
  rebuild spends on it: one changed case's rows add milliseconds; in a build it is made on a thread of its
  own beside the pages), and `rebuild_s` the whole rebuild after one edit;
- `db_bytes`: the file, and `db_cache_bytes` what the build's state keeps of it (its hash, its cases' digests).

Prints one JSON line with the target beside the figures: cases.db under a tenth of a full build.

    python bench/database.py [--cases N] [--runs K]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pipeline.models import Case
from pipeline.records import dump_record
from pipeline.settings import Settings
from pipeline.site import database
from pipeline.site.build import _STEMS, build_site, site_context
from pipeline.site.search import Stems
from pipeline.site.tree import SiteTree
from pipeline.store import Store

TARGETS = {"db_share_of_full": 0.10}


def _site_bench() -> object:
    """bench/site.py, by its path (its name is the standard library's `site`)."""
    spec = importlib.util.spec_from_file_location("bench_site", Path(__file__).with_name("site.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(__file__).parent))  # it imports hugo_site beside it
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _timed(run: object) -> float:
    started = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bench_site = _site_bench()
    with tempfile.TemporaryDirectory(prefix="bench-database-") as scratch:
        root = Path(scratch) / "data"
        bench_site.make_library(root, args.cases)  # type: ignore[attr-defined]
        bench_site.backdate(root)  # type: ignore[attr-defined]
        store = Store(root)
        settings = Settings(root=root)
        fulls = []
        for n in range(args.runs):
            fulls.append(_timed(lambda n=n: build_site(store, settings, Path(scratch) / f"site-{n}")))
        out = Path(scratch) / "site-0"
        ctx = site_context(store, settings)
        stems = Stems.load(store.state.read(_STEMS))
        db_fulls, db_rebuilds, rebuilds = [], [], []
        cached = SiteTree(store.state, out).read_cache(database.CACHE)
        last = (out / database.KEY).read_bytes()
        for _ in range(args.runs):
            fresh = database.Database(ctx, stems, lambda: None, lambda: None)
            db_fulls.append(_timed(fresh.make))
            again = database.Database(ctx, stems, lambda: cached, lambda: last)
            db_rebuilds.append(_timed(again.make))
        for n in range(args.runs):
            path = root / "cases" / "IL-00001.json"
            case = Case.model_validate_json(path.read_bytes())
            edited = case.model_copy(update={"lessons": {"en": f"Edited {n}.", "ko": f"고친 {n}."}})
            path.write_bytes(dump_record(edited))
            bench_site.backdate(root)  # type: ignore[attr-defined]
            rebuilds.append(_timed(lambda: build_site(store, settings, out)))
        full = statistics.median(fulls)
        db_full = statistics.median(db_fulls)
        figures = {
            "cases": args.cases,
            "full_build_s": round(full, 2),
            "db_full_s": round(db_full, 2),
            "db_share_of_full": round(db_full / full, 3),
            "db_rebuild_s": round(statistics.median(db_rebuilds), 2),
            "rebuild_s": round(statistics.median(rebuilds), 2),
            "db_bytes": (out / database.KEY).stat().st_size,
            "db_cache_bytes": len(cached or b""),
            "targets": TARGETS,
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
