"""How well and how fast the extractor reads real pages, against a corpus with ground truth.

    python bench/extraction.py --format scrapinghub ../shared/corpus/scrapinghub-articles
    python bench/extraction.py --format wcxb ../shared/corpus/wcxb-dev
    python bench/extraction.py --format postmortems ../shared/corpus/postmortems

Prints one JSON line. Text scores are token-level (words, case-folded): precision and
recall per page, averaged over pages, and `text_f1` the harmonic mean of those two
averages (the convention of Scrapinghub's article-extraction benchmark), with
`text_f1_per_page` the mean of per-page F1 beside it. A title is right when it equals
the ground truth ignoring case, punctuation and spacing (postmortems: any of the
acceptable titles); a date when it equals the ground truth's day (postmortems: any of
the acceptable dates). `heading_field_accuracy` is the share of the index's headings
whose section got the case field the index names; `headings_unknown` counts the headings
(of `headings` read) that name no case field, by their words or their section's.

Speed is pages per second of `extract()` alone (no decompression, no scoring), pinned to
one core, as a long-running crawler sees it: the first pass over the corpus (scored, and
reported as `first_pass_pages_per_s`) pays for what libraries import and cache on
first use; then `--repeat` more passes are timed, each page's median counts, and
`pages_per_s` is the page count over the sum of those medians. Whole passes rather than
one page several times in a row, so no page finds itself in the CPU's caches; medians
so that a moment of a busy neighbour on a shared machine does not count.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import ExtractError
from pipeline.extract import Extraction, extract


@dataclass
class Page:
    body: bytes
    url: str
    content_type: str | None
    text: str | None = None
    titles: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    headings: list[dict] = field(default_factory=list)


def scrapinghub(folder: Path) -> Iterator[Page]:
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    for key, item in sorted(truth.items()):
        body = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes())
        yield Page(body, item.get("url") or f"https://example.org/{key}", "text/html", text=item["articleBody"])


def wcxb(folder: Path) -> Iterator[Page]:
    for path in sorted((folder / "ground-truth").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        truth = record["ground_truth"]
        body = gzip.decompress((folder / "html" / f"{path.stem}.html.gz").read_bytes())
        yield Page(
            body,
            record["url"],
            "text/html",
            text=truth.get("main_content"),
            titles=[truth["title"]] if truth.get("title") else [],
            dates=[truth["publish_date"][:10]] if truth.get("publish_date") else [],
        )


def postmortems(folder: Path) -> Iterator[Page]:
    for item in json.loads((folder / "index.json").read_text(encoding="utf-8")):
        # Served raw: the URL, not a content type, says how to read the bytes.
        yield Page(
            (folder / item["file"]).read_bytes(),
            item["source_url"],
            None,
            titles=item["titles"],
            dates=item["dates"],
            headings=item["headings"],
        )


CORPORA = {"scrapinghub": scrapinghub, "wcxb": wcxb, "postmortems": postmortems}


def words(text: str | None) -> Counter[str]:
    return Counter(re.findall(r"\w+", (text or "").casefold()))


def normal(text: str | None) -> str:
    return " ".join(re.findall(r"\w+", (text or "").casefold()))


def harmonic(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def passes(value: str) -> int:
    count = int(value)
    if count < 1:
        raise argparse.ArgumentTypeError(f"{value}: at least one timed pass")
    return count


def _heading_counts(result: Extraction | None) -> tuple[int, int]:
    """The headings a page's sections hold, and how many of them name no case field."""
    if result is None:
        return 0, 0
    return sum(1 for s in result.sections if s.heading), result.headings_unknown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=sorted(CORPORA), required=True)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--favor", choices=["precision", "balanced", "recall"], default="balanced")
    parser.add_argument("--repeat", type=passes, default=3, help="timed passes after the first (default 3)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    pages = list(CORPORA[args.format](args.folder))
    precisions, recalls, f1s = [], [], []
    titles_right = titles_total = dates_right = dates_total = fields_right = fields_total = failures = 0
    headings_seen = headings_unknown = 0
    first_pass = 0.0
    for page in pages:
        start = time.perf_counter()
        try:
            result = extract(page.body, page.url, page.content_type, favor=args.favor)
        except ExtractError:
            result = None
            failures += 1
        first_pass += time.perf_counter() - start

        if page.text is not None:
            got, want = words(result.text if result else ""), words(page.text)
            common = sum((got & want).values())
            p = common / sum(got.values()) if got else 0.0
            r = common / sum(want.values()) if want else 0.0
            precisions.append(p)
            recalls.append(r)
            f1s.append(harmonic(p, r))
        if page.titles:
            titles_total += 1
            titles_right += result is not None and normal(result.title) in {normal(t) for t in page.titles}
        if page.dates:
            dates_total += 1
            dates_right += result is not None and result.date in page.dates
        seen, unknown = _heading_counts(result)
        headings_seen, headings_unknown = headings_seen + seen, headings_unknown + unknown
        for heading in page.headings:
            fields_total += 1
            section = next((s for s in result.sections if s.heading == heading["heading"]), None) if result else None
            fields_right += section is not None and section.field == heading["field"]

    figures: dict[str, object] = {"corpus": args.format, "pages": len(pages), "failures": failures}
    if precisions:
        p, r = statistics.fmean(precisions), statistics.fmean(recalls)
        figures |= {
            "text_precision": round(p, 4),
            "text_recall": round(r, 4),
            "text_f1": round(harmonic(p, r), 4),
            "text_f1_per_page": round(statistics.fmean(f1s), 4),
        }
    if titles_total:
        figures["title_accuracy"] = round(titles_right / titles_total, 4)
    if dates_total:
        figures |= {"date_accuracy": round(dates_right / dates_total, 4), "pages_with_date": dates_total}
    if fields_total:
        figures["heading_field_accuracy"] = round(fields_right / fields_total, 4)
    # Headings that name no case field (kept as the document's own sections), of all headings read.
    figures |= {"headings": headings_seen, "headings_unknown": headings_unknown}
    timings: list[list[float]] = [[] for _ in pages]
    for _ in range(args.repeat):
        for page, times in zip(pages, timings, strict=False):
            start = time.perf_counter()
            try:
                extract(page.body, page.url, page.content_type, favor=args.favor)
            except ExtractError:
                pass
            times.append(time.perf_counter() - start)
    figures["pages_per_s"] = round(len(pages) / sum(statistics.median(t) for t in timings), 1)
    figures |= {"first_pass_pages_per_s": round(len(pages) / first_pass, 1), "timed_passes": args.repeat}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
