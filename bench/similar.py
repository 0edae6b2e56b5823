"""How well and how fast pipeline.similar finds possible duplicates in a large library.

Generates a library of N published cases (default 10,000) from a seeded generator: orgs with their own
product words, incidents with their own words, posts and narratives in English and Korean. Among them,
known pairs that tell one incident twice, the drafts made by the real extractor where a page is read:

- `html_md`: one post served as HTML and as Markdown under two URLs (two drafts, or a case and a draft);
- `syndicated`: a copy of a case's post on another site, wrapped in that site's own boilerplate;
- `status_blog`: a status page's entry and the blog post about the same incident: same org, overlapping
  dates, other words;

and known pairs that do not: `unrelated`, two incidents of one org a few days apart. Half of each kind is
Korean. Then:

- `precision`, `recall`: of the full pass's flagged pairs (`SimilarIndex.duplicate_pairs`), against the
  known duplicate pairs; any other pair flagged counts against precision, not only the `unrelated` ones;
- `one_vs_10000_ms`: one new draft against the index (its Doc, its duplicates, related cases and
  recurrences), the median of `--queries`;
- `full_pass_s`: the index made from every Doc and its full pass, the median of `--runs`;
- `index_bytes`, `index_load_ms`: the index pickled, as the data root's state keeps it, and loaded;
- with `--store`, the library written into a data root (each case with the published draft its text
  comes from) and `library_index` over it: `store_cold_s` with no cache (every file read),
  `store_warm_s` with nothing changed, `store_one_changed_s` after one case's summary changed.

Prints one JSON line with the targets beside the figures: precision ≥ 0.95, recall ≥ 0.90, one draft
≤ 100 ms, a full pass ≤ 60 s. The thresholds in pipeline/similar/index.py were set on `--seed 28`; the
figures are measured on the default seed.

    python bench/similar.py [--cases N] [--runs K] [--queries Q] [--seed S] [--store]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pipeline.draft import apply_extraction, new_draft
from pipeline.extract import extract
from pipeline.ids import canonical_url
from pipeline.models import Case, Draft, Origin, SourceEntry
from pipeline.precedence import Hints, Said
from pipeline.similar import Doc, SimilarIndex, doc_of_case, doc_of_draft, library_index
from pipeline.store import Store
from pipeline.vocabulary import vocabulary

TARGETS = {"precision": 0.95, "recall": 0.90, "one_vs_10000_ms": 100.0, "full_pass_s": 60.0}
MEASURING_SEED = 428
DEVELOPMENT_SEED = 28  # what the thresholds were set on

_EN = (
    "the a of to and in was we our for on at that it this with from by as an were is had after when "
    "which not all but their then so be been no more than some one two hours minutes while during until "
    "request requests service services cluster node nodes server servers database cache queue traffic "
    "error errors latency deploy deployment change config configuration customers users team engineers "
    "alert alerts monitoring rollback restart restarted failed failure outage incident impact region "
    "load capacity network disk memory timeout timeouts retry retries root cause fix fixed"
).split()
_KO = (
    "그리고 하지만 그래서 때문에 이후 동안 모든 일부 우리는 우리의 고객 사용자 서비스 서버 요청 오류 지연 "
    "배포 변경 설정 장애 영향 복구 재시작 경보 모니터링 네트워크 디스크 메모리 트래픽 용량 원인 조치 팀은 "
    "엔지니어가 시간 분 동안 발생했다 확인했다 되돌렸다 늘렸다 멈췄다 실패했다 있었다 없었다 했다"
).split()
_PARTICLES = ("은", "는", "이", "가", "을", "를", "에서", "으로", "의", "에", "와", "")
_CONSONANTS = "bcdfghklmnprstvz"
_VOWELS = "aeiou"
_TERMS = vocabulary().terms


def _latin_word(rng: random.Random) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))


def _hangul_word(rng: random.Random) -> str:
    return "".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(rng.randint(2, 3)))


@dataclass(frozen=True)
class Org:
    name: str
    slug: str
    words: dict[str, list[str]]  # by language: its product's words, in all its posts


@dataclass(frozen=True)
class Incident:
    org: Org
    day: date
    words: dict[str, list[str]]  # by language: what this incident's posts name (parts, errors, steps)
    components: list[str]
    symptoms: list[str]
    root_cause: str


def _org(n: int, rng: random.Random) -> Org:
    return Org(
        f"Org {n:03d}",
        f"org-{n:03d}",
        {"en": [_latin_word(rng) for _ in range(15)], "ko": [_hangul_word(rng) for _ in range(15)]},
    )


def _incident(org: Org, rng: random.Random, day: date | None = None) -> Incident:
    return Incident(
        org,
        day or date(2015, 1, 1) + timedelta(days=rng.randrange(4000)),
        {"en": [_latin_word(rng) for _ in range(25)], "ko": [_hangul_word(rng) for _ in range(25)]},
        rng.sample(sorted(_TERMS["components"]), 2),
        rng.sample(sorted(_TERMS["symptoms"]), 2),
        rng.choice(sorted(t for t in _TERMS["root_causes"] if t != "unknown")),
    )


def _sentence(rng: random.Random, incident: Incident, lang: str) -> str:
    """A sentence of common words (half), the org's words (a sixth) and the incident's own (a third)."""
    common = _EN if lang == "en" else _KO
    words = []
    for _ in range(rng.randint(9, 16)):
        pick = rng.random()
        pool = common if pick < 0.5 else incident.org.words[lang] if pick < 0.67 else incident.words[lang]
        word = rng.choice(pool)
        words.append(word + rng.choice(_PARTICLES) if lang == "ko" and pool is not common else word)
    return " ".join(words).capitalize() + "."


def _paragraphs(rng: random.Random, incident: Incident, lang: str, count: int) -> list[str]:
    return [" ".join(_sentence(rng, incident, lang) for _ in range(rng.randint(2, 5))) for _ in range(count)]


def _texts(rng: random.Random, incident: Incident, sentences: int) -> dict[str, str]:
    return {lang: " ".join(_sentence(rng, incident, lang) for _ in range(sentences)) for lang in ("en", "ko")}


def generated_case(n: int, incident: Incident, rng: random.Random) -> Case:
    """A valid published case of the incident (as bench/site.py's generated_case), both languages."""
    case_id = f"IL-{n:05d}"
    return Case.model_validate(
        {
            "id": case_id,
            "org": incident.org.name,
            "org_slug": incident.org.slug,
            "date": incident.day.isoformat(),
            "date_kind": "incident",
            "title": {k: v[:120] for k, v in _texts(rng, incident, 1).items()},
            "domain": rng.sample(sorted(_TERMS["domains"]), 1),
            "severity": rng.choice(sorted(_TERMS["severities"])),
            "summary": _texts(rng, incident, 2),
            "symptoms_text": _texts(rng, incident, 1),
            "trigger": _texts(rng, incident, 1),
            "root_cause": incident.root_cause,
            "lessons": _texts(rng, incident, 1),
            "symptoms": incident.symptoms,
            "components": incident.components,
            "remediation": [{"text": _texts(rng, incident, 1)}],
            "sources": [{"url": f"https://{incident.org.slug}.example/postmortems/{n}", "kind": "blog"}],
            "updated_at": f"{incident.day + timedelta(days=30)}T00:00:00Z",
            "url": f"https://example.org/incidentlib/app/cases/{case_id}",
        }
    )


@dataclass(frozen=True)
class Post:
    title: str
    paragraphs: list[str]

    def markdown(self, url: str) -> bytes:
        body = [f"# {self.title}", ""]
        for n, text in enumerate(self.paragraphs):
            words = text.split(" ")
            if n % 3 == 1:  # a link and some emphasis, as a Markdown post has them
                words[1] = f"[{words[1]}]({url}#part-{n})"
                words[3] = f"**{words[3]}**"
            body += ["- " + " ".join(words) if n % 4 == 3 else " ".join(words), ""]
        return "\n".join(body).encode()

    def html(self, url: str, around: tuple[list[str], list[str]] = ([], [])) -> bytes:
        before, after = around
        parts = [f"<p>{p}</p>" for p in before]
        for n, text in enumerate(self.paragraphs):
            words = text.split(" ")
            if n % 3 == 1:
                words[1] = f'<a href="{url}#part-{n}">{words[1]}</a>'
                words[3] = f"<strong>{words[3]}</strong>"
            parts.append(f"<ul><li>{' '.join(words)}</li></ul>" if n % 4 == 3 else f"<p>{' '.join(words)}</p>")
        parts += [f"<p>{p}</p>" for p in after]
        return (
            f"<html><head><title>{self.title}</title></head><body><nav><a href='/'>Home</a> <a href='/blog'>Blog</a>"
            f"</nav><article><h1>{self.title}</h1>{''.join(parts)}</article><footer>Copyright</footer></body></html>"
        ).encode()


def _post(rng: random.Random, incident: Incident, lang: str, paragraphs: tuple[int, int] = (6, 14)) -> Post:
    title = _sentence(rng, incident, lang)[:80].rstrip(".")
    return Post(title, _paragraphs(rng, incident, lang, rng.randint(*paragraphs)))


def drafted(url: str, body: bytes, content_type: str, incident: Incident, day: date) -> Draft:
    """The draft the crawl makes of a page: the real extractor's reading, the org and date as the registry hints."""
    entry = SourceEntry(url=url, org=incident.org.name)
    extraction = extract(
        body,
        url,
        content_type,
        hints=Hints(registry=Said.hint(org=incident.org.name, date=day.isoformat())),
    )
    origin = Origin(url=url, canonical_url=canonical_url(url), final_url=url, format=extraction.format)
    return apply_extraction(new_draft(entry), entry, extraction, origin)


def status_entry(url: str, incident: Incident, lang: str, rng: random.Random) -> Draft:
    """A status page's entry for the incident: a few timed updates, dated by the incident."""
    updates = [f"{9 + n:02d}:{rng.randrange(60):02d} UTC. {_sentence(rng, incident, lang)}" for n in range(4)]
    text = "\n\n".join([_sentence(rng, incident, lang), *updates])
    draft = new_draft(SourceEntry(url=url, org=incident.org.name))
    return Draft.model_validate(
        {
            **draft.model_dump(mode="json"),
            "org": incident.org.name,
            "org_slug": incident.org.slug,
            "date": incident.day.isoformat(),
            "date_kind": "incident",
            "title": {lang: _sentence(rng, incident, lang)[:80]},
            "summary": {lang: updates[0]},
            "text": text,
        }
    )


_BOILERPLATE = {
    "en": (
        "This post first appeared on its author's engineering blog and is republished here with permission. "
        "Our weekly digest collects the best writing on running systems at scale, every Friday.",
        "Subscribe to the digest to get posts like this one in your inbox. We never share your address. "
        "Related reading: how teams run incident reviews, and what a good postmortem template holds.",
    ),
    "ko": (
        "이 글은 저자의 기술 블로그에 처음 실렸고 허락을 받아 다시 싣습니다. 주간 소식지는 대규모 시스템 운영에 관한 "
        "좋은 글을 매주 금요일에 모아 보냅니다.",
        "소식지를 구독하면 이런 글을 메일로 받을 수 있습니다. 주소는 누구와도 나누지 않습니다. 함께 읽을 글: 장애 "
        "회고를 하는 방법과 좋은 포스트모템 양식.",
    ),
}


@dataclass
class Library:
    cases: list[Case] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # a case's published draft's text
    drafts: list[Draft] = field(default_factory=list)
    duplicates: dict[str, set[frozenset[str]]] = field(default_factory=dict)  # by kind
    unrelated: set[frozenset[str]] = field(default_factory=set)

    def docs(self) -> list[Doc]:
        return [doc_of_case(c, self.texts.get(c.id)) for c in self.cases] + [doc_of_draft(d) for d in self.drafts]

    def add_case(self, incident: Incident, rng: random.Random, lang: str) -> Case:
        case = generated_case(len(self.cases) + 1, incident, rng)
        self.cases.append(case)
        self.texts[case.id] = "\n\n".join(_post(rng, incident, lang).paragraphs)
        return case

    def known(self, kind: str, a: str, b: str) -> None:
        self.duplicates.setdefault(kind, set()).add(frozenset((a, b)))


def _pairs(library: Library, orgs: list[Org], rng: random.Random, per_kind: int) -> None:
    """The known pairs, each kind half in English and half in Korean."""
    for n in range(per_kind):
        lang = "en" if n % 2 == 0 else "ko"
        org = rng.choice(orgs)
        base = f"https://{org.slug}.example/blog/{n}"
        # one post as HTML and as Markdown: two drafts, or (every other) a published case and a draft
        incident = _incident(org, rng)
        post = _post(rng, incident, lang)
        md = drafted(f"{base}/post.md", post.markdown(base), "text/markdown", incident, incident.day)
        library.drafts.append(md)
        if n % 4 < 2:
            html = drafted(f"{base}/post.html", post.html(base), "text/html", incident, incident.day)
            library.drafts.append(html)
            library.known("html_md", md.id, html.id)
        else:
            case = library.add_case(incident, rng, lang)
            library.texts[case.id] = drafted(base, post.html(base), "text/html", incident, incident.day).text or ""
            library.known("html_md", md.id, case.id)
        # a case's post syndicated elsewhere, in that site's boilerplate
        incident = _incident(org, rng)
        case = library.add_case(incident, rng, lang)
        post = Post("Reposted", library.texts[case.id].split("\n\n"))
        other = f"https://digest-{n}.example/reposts/{org.slug}"
        before, after = _BOILERPLATE[lang]
        copy = drafted(other, post.html(other, ([before], [after])), "text/html", incident, incident.day)
        library.drafts.append(copy)
        library.known("syndicated", copy.id, case.id)
        # a status page's entry and the blog post written days after
        incident = _incident(org, rng)
        status = status_entry(f"https://status.{org.slug}.example/incidents/{n}", incident, lang, rng)
        library.drafts.append(status)
        later = incident.day + timedelta(days=rng.randint(1, 12))
        blog = _post(rng, incident, lang)
        story = drafted(f"{base}/postmortem.html", blog.html(base), "text/html", incident, later)
        library.drafts.append(story)
        library.known("status_blog", status.id, story.id)
        # another incident of the same org days later: not a duplicate
        second = _incident(org, rng, incident.day + timedelta(days=rng.randint(0, 5)))
        entry = status_entry(f"https://status.{org.slug}.example/incidents/{n}-b", second, lang, rng)
        library.drafts.append(entry)
        library.unrelated.add(frozenset((entry.id, story.id)))


def make_library(count: int, seed: int = MEASURING_SEED) -> Library:
    rng = random.Random(seed)
    orgs = [_org(n, rng) for n in range(max(4, count // 50))]
    library = Library()
    _pairs(library, orgs, rng, max(4, count // 200))
    while len(library.cases) < count:
        library.add_case(_incident(rng.choice(orgs), rng), rng, "en" if rng.random() < 0.8 else "ko")
    return library


def figures(library: Library, index: SimilarIndex) -> dict[str, Any]:
    flagged = {frozenset((a, b)) for a, b, _match in index.duplicate_pairs()}
    known = set().union(*library.duplicates.values())
    found = flagged & known
    out: dict[str, Any] = {
        "precision": round(len(found) / len(flagged), 3) if flagged else 1.0,
        "recall": round(len(found) / len(known), 3) if known else 1.0,
        "flagged": len(flagged),
        "known": len(known),
        "unrelated_flagged": len(flagged & library.unrelated),
    }
    out |= {f"recall_{kind}": round(len(pairs & flagged) / len(pairs), 3) for kind, pairs in library.duplicates.items()}
    return out


def one_draft_ms(index: SimilarIndex, library: Library, queries: int, seed: int) -> float:
    """One new draft against the index: its Doc, duplicates, related cases and recurrences (median, ms)."""
    rng = random.Random(seed + 1)
    orgs = sorted({c.org_slug for c in library.cases})
    times = []
    for n in range(queries):
        case = library.cases[rng.randrange(len(library.cases))]
        org = Org(case.org, rng.choice(orgs), {"en": [_latin_word(rng)], "ko": [_hangul_word(rng)]})
        incident = _incident(org, rng)
        draft = status_entry(f"https://status.example/new/{n}", incident, "en", rng)
        draft = draft.model_copy(update={"text": library.texts[case.id], "root_cause": case.root_cause})
        start = time.perf_counter()
        doc = doc_of_draft(draft)
        index.duplicates(doc)
        index.related(doc)
        index.recurrences(doc)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def _published(case: Case, text: str) -> Draft:
    draft = new_draft(SourceEntry(url=case.sources[0].url, org=case.org))
    fields = {"org": case.org, "org_slug": case.org_slug, "date": case.date, "title": case.title}
    return Draft.model_validate(
        draft.model_dump(mode="json") | fields | {"state": "published", "case_id": case.id, "text": text}
    )


def store_seconds(library: Library) -> dict[str, float]:
    """`library_index` over the library written into a data root: cold, warm, and after one change."""
    with tempfile.TemporaryDirectory() as scratch:
        store = Store(Path(scratch))
        for case in library.cases:
            store.write_case(case)
            store.write_draft(_published(case, library.texts[case.id]))
        for draft in library.drafts:
            store.write_draft(draft)
        past = time.time_ns() - 3_600_000_000_000  # written well before, as a clone's files are
        for _kind, path in ((kind, path) for kind in ("draft", "case") for path in store.files(kind)):
            os.utime(path, ns=(past, past))
        out = {}
        for name in ("store_cold_s", "store_warm_s"):
            start = time.perf_counter()
            library_index(store)
            out[name] = round(time.perf_counter() - start, 2)
        case = library.cases[len(library.cases) // 2]
        store.write_case(case.model_copy(update={"summary": {**case.summary, "en": "Changed. " + case.summary["en"]}}))
        start = time.perf_counter()
        library_index(store)
        out["store_one_changed_s"] = round(time.perf_counter() - start, 2)
        return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=21)
    parser.add_argument("--seed", type=int, default=MEASURING_SEED)
    parser.add_argument("--store", action="store_true", help="also time library_index over a data root")
    args = parser.parse_args(argv)
    library = make_library(args.cases, args.seed)
    docs = library.docs()
    passes = []
    for _ in range(args.runs):
        start = time.perf_counter()
        index = SimilarIndex.of(docs)
        index.duplicate_pairs()
        passes.append(time.perf_counter() - start)
    data = pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL)
    start = time.perf_counter()
    pickle.loads(data)
    load_ms = (time.perf_counter() - start) * 1000
    result = {
        "cases": len(library.cases),
        "drafts": len(library.drafts),
        "seed": args.seed,
        **figures(library, index),
        "one_vs_10000_ms": one_draft_ms(index, library, args.queries, args.seed),
        "full_pass_s": round(statistics.median(passes), 2),
        "index_bytes": len(data),
        "index_load_ms": round(load_ms, 1),
        **(store_seconds(library) if args.store else {}),
        "targets": TARGETS,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
