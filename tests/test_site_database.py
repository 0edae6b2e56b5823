"""api/v1/cases.db: a built site's SQLite file holds every published case as its record says (texts in both
languages, terms, sources with their archived copies, relations), its full-text search finds an English word
and a Korean stem, a draft is not in it, and a rebuild gives a clean build's bytes. With datasette installed,
datasette serves it and answers queries over its JSON API."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import manual
import pytest

from pipeline.fields import ACTION_LISTS, NARRATIVE, PARTS, TERM_LISTS, choices
from pipeline.models import Case, Draft, Source
from pipeline.settings import Settings
from pipeline.site import database, search
from pipeline.site.build import build_site, site_context
from pipeline.store import Store
from pipeline.vocabulary import vocabulary

WITHDRAWN = "2026-11-30T10:00:00Z"


def _source(n: int, kind: str = "blog") -> dict[str, str]:
    url = f"https://example.org/postmortems/{n}"
    return {"url": url, "kind": kind, "archived": f"https://web.archive.org/web/20250701120000/{url}"}


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Draft]) -> Store:
    """Four cases: one survivor of a merge with a Korean text whose words carry particles, another case of
    other terms and sources, the merged case, a withdrawn one; and a draft with a word no case has."""
    store.write_case(
        make_case(
            "IL-0001",
            aliases=["IL-0003"],
            recurrence_of="IL-0002",
            sources=[_source(1), _source(2, "github")],
            summary={
                "en": "The certificate of the ingress expired overnight.",
                "ko": "인그레스의 인증서가 밤사이 만료되어 접속이 끊겼다.",
            },
        )
    )
    store.write_case(
        make_case(
            "IL-0002",
            # Text from outside, held as text: bound as a value, never spliced into the SQL.
            title={"en": "Outage'); drop table cases; -- <script>alert(1)</script>", "ko": '장애 "따옴표" [괄호]'},
            components=["dns"],
            symptoms=["service-unavailable"],
            root_cause="configuration-error",
            sources=[_source(3, "status-page")],
            related=["IL-0001"],
            recurrence_of=None,
        )
    )
    store.write_case(make_case("IL-0003", withdrawn=WITHDRAWN, withdrawn_reason="A duplicate.", merged_into="IL-0001"))
    store.write_case(make_case("IL-0004", withdrawn=WITHDRAWN, withdrawn_reason="Not an incident."))
    draft = make_draft(title={"en": "Zanzibarian outage", "ko": "잔지바르 장애"})
    store.write_draft(draft)
    return store


def _build(store: Store, out: Path) -> Path:
    build_site(store, Settings(root=store.root), out, workers=1)
    return out / database.KEY


def _rows(path: Path, sql: str, *args: object) -> list[dict[str, Any]]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql, args)]
    finally:
        connection.close()


def _joined(actions: list[Any], lang: str) -> str | None:
    return "\n\n".join(a.text[lang] for a in actions if lang in a.text) or None


def test_its_rows_are_the_records(library: Store, tmp_path: Path) -> None:
    db = _build(library, tmp_path / "site")
    cases = {case_id: library.read_case(case_id) for case_id in ("IL-0001", "IL-0002", "IL-0003", "IL-0004")}
    rows = {row["id"]: row for row in _rows(db, "select * from cases")}
    assert sorted(rows) == ["IL-0001", "IL-0002", "IL-0004"]  # the merged case only as relations
    for case_id, row in rows.items():
        case = cases[case_id]
        data = case.model_dump(mode="json")
        for name in NARRATIVE:
            for lang in ("en", "ko"):
                assert row[f"{name}_{lang}"] == (data.get(name) or {}).get(lang), (case_id, name, lang)
        for name in ACTION_LISTS:
            for lang in ("en", "ko"):
                assert row[f"{name}_{lang}"] == _joined(getattr(case, name), lang), (case_id, name)
        for name in PARTS:
            for part, value in data[name].items():
                assert row[f"{name}_{part}"] == value, (case_id, name, part)
        for name in choices(Case):
            assert row[name] == data[name]
        for name in ("org", "org_slug", "date", "url", "updated_at", "withdrawn", "withdrawn_reason", "merged_into"):
            assert row[name] == data.get(name), (case_id, name)
        assert json.loads(row["related"]) == data["related"] and json.loads(row["docs"]) == data["docs"]
    assert rows["IL-0004"]["withdrawn"] == WITHDRAWN and rows["IL-0004"]["withdrawn_reason"] == "Not an incident."
    assert rows["IL-0001"]["withdrawn"] is None
    assert rows["IL-0002"]["title_en"] == "Outage'); drop table cases; -- <script>alert(1)</script>"

    sources = _rows(db, "select case_id, position, url, kind, archived from sources order by case_id, position")
    expected_sources = [
        {"case_id": i, "position": n, **s.model_dump(mode="json")}
        for i, case in sorted(cases.items())
        for n, s in enumerate(case.sources)
    ]
    assert sources == expected_sources and all(s["archived"].startswith("https://web.archive.org/") for s in sources)

    terms = _rows(db, "select case_id, field, kind, term, label_en, label_ko from terms")
    expected_terms = []
    known = vocabulary().terms
    for i, case in sorted(cases.items()):
        if case.merged_into:
            continue
        for name, kind in {**TERM_LISTS, **choices(Case)}.items():
            value = getattr(case, name)
            for term in value if isinstance(value, list) else [value]:
                labels = known[kind][term]
                expected_terms.append((i, name, kind, term, labels.label_in("en"), labels.label_in("ko")))
    assert sorted(tuple(t.values()) for t in terms) == sorted(expected_terms)
    assert ("IL-0002", "components", "components", "dns") in {tuple(t.values())[:4] for t in terms}

    relations = {tuple(r.values()) for r in _rows(db, "select case_id, relation, other_id from relations")}
    assert ("IL-0001", "alias", "IL-0003") in relations and ("IL-0003", "merged_into", "IL-0001") in relations
    assert ("IL-0002", "related", "IL-0001") in relations and ("IL-0001", "recurrence_of", "IL-0002") in relations


def _search(db: Path, query: str) -> list[str]:
    sql = "select id from cases where rowid in (select rowid from cases_fts where cases_fts match ?) order by id"
    return [row["id"] for row in _rows(db, sql, query)]


def test_the_full_text_search_finds_an_english_word_and_a_korean_stem_and_no_draft(
    library: Store, tmp_path: Path
) -> None:
    db = _build(library, tmp_path / "site")
    assert _search(db, "certificate") == ["IL-0001"]
    assert _search(db, "인그레스의") == ["IL-0001"]  # the word as written
    # The words are 인증서가 and 끊겼다: their stems, as the site's search analyses them, are found.
    assert _search(db, "인증서") == ["IL-0001"]
    stems = _rows(db, "select stems_ko from cases where id = 'IL-0001'")[0]["stems_ko"].split()
    assert "인증서" in stems and "인그레스" in stems
    assert _search(db, "checkpoint") == ["IL-0001", "IL-0002", "IL-0004"]  # the fixture's title: every case not merged
    assert _search(db, "zanzibarian") == [] and _search(db, "잔지바르") == []  # the draft's words
    every = json.dumps(_rows(db, "select * from cases"), ensure_ascii=False)
    assert "Zanzibarian" not in every and "IL-0003" not in [row["id"] for row in _rows(db, "select id from cases")]


def test_a_rebuild_gives_the_bytes_of_a_clean_build(library: Store, tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = _build(library, out).read_bytes()
    assert _build(library, tmp_path / "again").read_bytes() == first  # two clean builds
    case = library.read_case("IL-0002")
    library.write_case(
        case.model_copy(update={"lessons": {"en": "Stage DNS changes.", "ko": "DNS 변경은 단계적으로."}})
    )
    rebuilt = _build(library, out).read_bytes()
    assert rebuilt != first and _search(out / database.KEY, "stage") == ["IL-0002"]
    assert rebuilt == _build(library, tmp_path / "clean").read_bytes()
    (library.root / "cases" / "IL-0004.json").unlink()
    assert _build(library, out).read_bytes() == _build(library, tmp_path / "clean-2").read_bytes()
    assert [row["id"] for row in _rows(out / database.KEY, "select id from cases")] == ["IL-0001", "IL-0002"]


def test_a_rebuild_copies_the_unchanged_cases_rows_from_the_last_file_it_can_trust(library: Store) -> None:
    """Only a changed case is turned into rows again; a last file whose bytes are not those the cache speaks
    of (edited by hand, or half written) is not copied from. Each time, the bytes of a clean build."""
    stems = search.Stems()

    def made(cached: bytes | None, last: bytes | None) -> tuple[database.Database, bytes]:
        db = database.Database(site_context(library, Settings(root=library.root)), stems, lambda: cached, lambda: last)
        return db, db.make()

    clean, first = made(None, None)
    assert clean.made == 4  # the merged case too: its relations
    again, data = made(clean.cache(), first)
    assert again.made == 0 and data == first
    case = library.read_case("IL-0002")
    library.write_case(
        case.model_copy(update={"lessons": {"en": "Stage DNS changes.", "ko": "DNS 변경은 단계적으로."}})
    )
    changed, data = made(again.cache(), first)
    assert changed.made == 1 and data == made(None, None)[1] != first
    tampered = data.replace(b"Stage DNS changes.", b"Stage DNS changez.")
    assert tampered != data
    distrusted, data_again = made(changed.cache(), tampered)
    assert distrusted.made == 4 and data_again == data


def test_the_manuals_three_queries_find_what_they_say(library: Store, tmp_path: Path) -> None:
    db = _build(library, tmp_path / "site")
    blocks = re.findall(r"```sql\n(.*?)```", manual.page("sqlite.md"), re.S)
    assert len(blocks) == 3
    by_year, korean, archived = (_rows(db, sql) for sql in blocks)
    standing = [library.read_case(i) for i in ("IL-0001", "IL-0002")]  # IL-0004 withdrawn, IL-0003 merged
    counts: dict[tuple[str, str], int] = {}
    for case in standing:
        for component in case.components:
            counts[(case.date[:4], component)] = counts.get((case.date[:4], component), 0) + 1
    assert {(r["year"], r["component"]): r["count"] for r in by_year} == counts
    assert [r["id"] for r in korean] == ["IL-0001"] and "인증서가" in korean[0]["summary_ko"]
    assert [(r["id"], r["source"], r["archived"]) for r in archived] == [
        (case.id, s.url, s.archived) for case in standing for s in case.sources
    ]


def test_the_schema_follows_the_record_format() -> None:
    columns = {c.name for c in database.schema()["cases"]}
    for name in NARRATIVE:
        assert {f"{name}_en", f"{name}_ko"} <= columns
    assert {"impact_scope", "timeline_detected_after", "root_cause", "severity", "withdrawn", "aliases"} <= columns
    assert not columns & set(TERM_LISTS) and "sources" not in columns
    assert [c.name for c in database.schema()["sources"]][2:] == list(Source.model_fields)


# ---------------------------------------------------------------- served by datasette


@pytest.fixture
def datasette(library: Store, tmp_path: Path) -> Iterator[str]:
    """datasette serving the built cases.db on a loopback port it chose (`-p 0`), read from what it prints."""
    if not _module("datasette"):  # run as `python -m datasette`, by this interpreter
        pytest.skip("datasette is not installed (pip install datasette)")
    db = _build(library, tmp_path / "site")
    command = [sys.executable, "-m", "datasette", "serve", "-i", str(db), "-h", "127.0.0.1", "-p", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout or ():
            if "Uvicorn running on " in line:
                found.append(line.split("Uvicorn running on ", 1)[1].split()[0])
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(60) and found, "datasette did not say where it listens"
        yield found[0].rstrip("/")
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout:
            process.stdout.close()


def _module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_datasette_serves_it_and_answers_a_query_over_its_json_api(datasette: str) -> None:
    tables = {table["name"] for table in _get(f"{datasette}/cases.json")["tables"]}
    assert {"cases", "sources", "terms", "relations", "cases_fts"} <= tables
    sql = (
        "select cases.id, sources.archived from cases join sources on sources.case_id = cases.id "
        "where cases.rowid in (select rowid from cases_fts where cases_fts match :q) order by sources.position"
    )
    query = urllib.parse.urlencode({"sql": sql, "q": "인증서", "_shape": "array"})
    found = _get(f"{datasette}/cases.json?{query}")
    assert [row["id"] for row in found] == ["IL-0001", "IL-0001"]
    assert found[0]["archived"] == _source(1)["archived"]
    # The table's own search, which datasette offers for a table with a full-text index.
    searched = _get(f"{datasette}/cases/cases.json?_search=certificate&_shape=array")
    assert [row["id"] for row in searched] == ["IL-0001"]
