"""How fast `incidentlib validate` checks a large library, on one core.

Builds a data root of N records (half drafts with extracted text and sections, half
published cases made from the reference example), then runs the same library call the
command runs, several times, pinned to one CPU. Prints one JSON line:

    {"records": 10000, "runs": 5, "median_s": ..., "min_s": ..., "records_per_s": ...,
     "target_s": 10.0, "median_over_target": ...}

Usage: python bench/validate.py [--records N] [--runs K]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from pipeline.draft import new_draft
from pipeline.models import Case, Section, SourceEntry
from pipeline.records import dump_record
from pipeline.store import Store
from pipeline.validate import validate

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = Path(os.environ.get("INCIDENTLIB_SHARED", REPO.parent / "shared")) / "reference" / "example-case.json"
TARGET_S = 10.0


def build(root: Path, records: int) -> None:
    template = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    (root / "cases").mkdir(parents=True)
    (root / "drafts").mkdir()
    text = " ".join(template["summary"]["en"] for _ in range(4))
    for n in range(records // 2):
        case = Case.model_validate({**template, "id": f"IL-{n + 1:05d}"})
        (root / "cases" / f"{case.id}.json").write_bytes(dump_record(case))
        draft = new_draft(SourceEntry(url=f"https://example.org/postmortems/{n}", org="Example")).model_copy(
            update={
                "text": text,
                "sections": [
                    Section(heading=h, field=f, text=text[:800])
                    for h, f in [("Summary", "summary"), ("Impact", "impact"), ("Root cause", "root_cause")]
                ],
                "summary": template["summary"],
            }
        )
        (root / "drafts" / f"{draft.id}.json").write_bytes(dump_record(draft))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the target is for one core

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.records)
        store = Store(root)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            faults = validate(store).faults
            times.append(time.perf_counter() - start)
            assert not faults, faults[:3]
        count = len(store.files("draft")) + len(store.files("case"))

    median = statistics.median(times)
    print(
        json.dumps(
            {
                "records": count,
                "runs": args.runs,
                "median_s": round(median, 3),
                "min_s": round(min(times), 3),
                "records_per_s": round(count / median),
                "target_s": TARGET_S,
                "median_over_target": round(median / TARGET_S, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
