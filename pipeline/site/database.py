"""`api/v1/cases.db`: the published cases as a SQLite database, for `datasette cases.db` and any SQL client.

    rows = case_rows(case, stems)              # pure: one case's rows of every table
    data = database_bytes([rows, ...])         # the whole file, the same bytes for the same rows
    made = Database(ctx, stems, read_cache)    # in a build: each unchanged case's rows from the last build's

The schema is read off the record format (`pipeline.models`, through `pipeline.fields.kind_of`), so a field
added to the format reaches the file with no change here:

- `cases`: one row a case. A localized text is two columns, `title_en` and `title_ko`; a list of actions
  the same, its actions a paragraph each; a field of parts a column a part (`impact_scope`); a vocabulary
  choice (`root_cause`, `severity`) its term; a list of plain values (`related`, `docs`) a JSON array;
  `stems_ko` the stems of the Korean texts' words (`pipeline.site.search.Stems`, the site search's
  analysis), so that the full-text search finds 장애 in 장애가.
- `sources`: each source, its archived copy beside it (the `Source` model's fields);
- `terms`: each vocabulary term a case carries (lists and choices), with its labels in both languages;
- `relations`: a case's related cases, recurrence, aliases and, for a merged case, the case it went into;
- `cases_fts`: FTS5 over the narrative columns in both languages and the stems (sqlite-utils `enable_fts`).

Which cases: every case of `cases/` but a merged one, whose id stands only in `relations` (its survivor's
`alias`, its own `merged_into`): a merged case is its survivor now, and its row would be a second copy. A
withdrawn case that was not merged keeps its row with its `withdrawn` columns set, as the JSON API keeps
its file: a tool holding its id learns that it was withdrawn and why (the manual's queries filter on
`withdrawn is null`).

Bytes. The file is made whole each time, in memory: the tables created, the rows inserted in a fixed order
(by case id, then by where they stand in their case), the full-text index built over them in one statement;
SQLite writes the same bytes for the same statements on the same version, so a rebuild gives a clean build's
bytes (tests/test_site_database.py). The build writes the bytes through `SiteTree` like any file (an atomic
replace, and only when they changed). What costs is turning each case into rows (and, in Python, moving
them), so a rebuild copies the rows of every case whose digest is unchanged from the file the last build made
(attached, table to table inside SQLite), once that file's bytes hash as the build's state (`CACHE`) says,
and turns only the changed cases into rows again.
"""

from __future__ import annotations

import hashlib
import html
import json
import pickle
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.fields import choices, kind_of, parts, term_lists
from pipeline.models import Case, Source
from pipeline.site.context import SiteContext
from pipeline.site.labels import FIELD_LABELS
from pipeline.site.search import Stems, analyser
from pipeline.site.tree import tree_hash
from pipeline.vocabulary import Kind

__all__ = [
    "CACHE",
    "FTS_COLUMNS",
    "KEY",
    "LANGS",
    "Column",
    "Database",
    "Rows",
    "case_rows",
    "database_bytes",
    "schema",
    "schema_markdown",
]

KEY = "api/v1/cases.db"
PAGE_SIZE = 16_384  # bytes a page of the file (`database_bytes`)
CACHE = "database.pickle"  # the last file's hash and its cases' digests, in the build's state (SiteTree.read_cache)
LANGS = ("en", "ko")  # a localized text's columns: what the record format's texts hold


class Column(NamedTuple):
    name: str
    type: str  # Python's type, as sqlite-utils maps it (str: TEXT, int: INTEGER)
    meaning: str


# What a row is: the values of a table's columns, in the schema's order.
Row = tuple[Any, ...]


class Rows(NamedTuple):
    """One case's rows of every table: its `cases` row (None for a merged case) and its others'."""

    case: Row | None
    sources: list[Row]
    terms: list[Row]
    relations: list[Row]


# ---------------------------------------------------------------- the schema, from the record format


def _label(path: str) -> str:
    label = FIELD_LABELS.get(path)
    return label["en"] if label else path.replace("_", " ").capitalize()


def _described(name: str, fallback: str) -> str:
    info = Case.model_fields.get(name)
    return info.description if info is not None and info.description else fallback


@cache
def _case_columns() -> tuple[tuple[Column, str, str | None], ...]:
    """The `cases` table's columns with where each value comes from: (column, field path, language)."""
    found: list[tuple[Column, str, str | None]] = []
    parted = parts(Case)
    for name, info in Case.model_fields.items():
        how, kind = kind_of(info)
        if how in ("narrative", "actions"):
            each = "its actions a paragraph each, " if how == "actions" else ""
            for lang in LANGS:
                found.append((Column(f"{name}_{lang}", "str", f"{_label(name)}, {each}in `{lang}`"), name, lang))
        elif how == "parts":
            for part in parted[name]:
                path = f"{name}.{part}"
                found.append((Column(f"{name}_{part}", "str", _label(path)), path, None))
        elif how == "choice":
            found.append((Column(name, "str", f"{_label(name)}: a term of `{kind}` (see `terms`)"), name, None))
        elif how in ("multiple", "records"):
            continue  # their own tables: terms, sources
        elif how == "lines":
            said = _described(name, _label(name))
            found.append((Column(name, "str", f"{said.rstrip('.')}: a JSON array"), name, None))
        else:
            found.append((Column(name, "str", _described(name, _label(name))), name, None))
    return tuple(found)


def _source_columns() -> list[Column]:
    named = {"url": "The source's address", "kind": "What kind of source it is (a term of `source_kinds`)"}
    return [
        Column(name, "str", info.description or named.get(name, name)) for name, info in Source.model_fields.items()
    ]


def schema() -> dict[str, list[Column]]:
    """Every table's columns, in order (the full-text index aside: `FTS_COLUMNS`)."""
    stems = Column("stems_ko", "str", "The Korean texts' words as stems, space-separated, for the full-text search")
    return {
        "cases": [column for column, _, _ in _case_columns()] + [stems],
        "sources": [
            Column("case_id", "str", "The case quoting it (`cases.id`)"),
            Column("position", "int", "Its place in the case's list of sources, from 0"),
            *_source_columns(),
        ],
        "terms": [
            Column("case_id", "str", "The case (`cases.id`)"),
            Column("field", "str", "The case's field that names it (`components`, `root_cause`, ...)"),
            Column("kind", "str", "The vocabulary it belongs to (`components`, `root_causes`, ...)"),
            Column("term", "str", "The term, as the record holds it"),
            *(Column(f"label_{lang}", "str", f"Its label in `{lang}`") for lang in LANGS),
        ],
        "relations": [
            Column("case_id", "str", "The case whose record says it (a merged case's id only here)"),
            Column("relation", "str", "`related`, `recurrence_of`, `alias` (merged into this case) or `merged_into`"),
            Column("other_id", "str", "The other case's id"),
        ],
    }


def _fts_columns() -> list[str]:
    narrative = [c.name for c, path, lang in _case_columns() if lang is not None]
    return [*narrative, "stems_ko"]


FTS_COLUMNS = _fts_columns()
_RELATIONS = ("related", "recurrence_of", "aliases", "merged_into")  # in this order; `aliases` named `alias`
_INDEXES = {"sources": [["case_id"]], "terms": [["kind", "term"], ["case_id"]], "relations": [["other_id"]]}


def _markdown(text: str) -> str:
    """A meaning as text in a Markdown table's cell: `<url>` shown, not taken for HTML; a `|` not a cell's end."""
    return html.escape(text, quote=False).replace("|", "\\|")


def schema_markdown() -> str:
    """The manual's table of the file's tables and columns (docs/sqlite.md, by pipeline.docs_reference)."""
    lines: list[str] = []
    for table, columns in schema().items():
        lines += [f"### {table}", "", "| column | type | what it holds |", "| --- | --- | --- |"]
        types = {"str": "text", "int": "integer"}
        lines += [f"| `{c.name}` | {types[c.type]} | {_markdown(c.meaning)} |" for c in columns]
        lines.append("")
    lines += [
        "### cases_fts",
        "",
        "FTS5 over `cases` (its `rowid`), the columns "
        + ", ".join(f"`{name}`" for name in FTS_COLUMNS)
        + ": `select * from cases where rowid in (select rowid from cases_fts where cases_fts match '...')`.",
        "",
    ]
    return "\n".join(lines).strip() + "\n"


# ---------------------------------------------------------------- a case's rows, pure


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _value(data: dict[str, Any], path: str, lang: str | None) -> Any:
    head, _, part = path.partition(".")
    value = data.get(head)
    if part:
        value = value.get(part) if isinstance(value, dict) else None
    if lang is not None:
        if isinstance(value, list):  # actions
            texts = [action["text"].get(lang) for action in value]
            return "\n\n".join(text for text in texts if text) or None
        return value.get(lang) if isinstance(value, dict) else None
    if isinstance(value, list):
        return _json_text(value)
    return value


def _stems(texts: Iterable[str], stems: Stems) -> str:
    from pipeline.site.search import _korean, _words  # the site search's own words

    words = dict.fromkeys(word for text in texts for word in _korean(_words(text)))  # each once, in order
    found: dict[str, None] = {}
    for word in words:
        for stem in stems.of(word):
            found[stem.lower()] = None
    return " ".join(found)


@cache
def _term_fields() -> tuple[tuple[str, Kind], ...]:
    """The record's fields that name vocabulary terms, and the vocabulary each names terms of."""
    kinds = {**choices(Case), **term_lists(Case)}
    return tuple((name, kinds[name]) for name in Case.model_fields if name in kinds)  # in the record's order


def case_rows(case: Case, stems: Stems) -> Rows:
    """The case's rows of every table, pure given `stems` (a merged case: its relations only)."""
    from pipeline.vocabulary import vocabulary

    data = case.model_dump(mode="json")
    columns = _case_columns()
    row = None
    if case.merged_into is None:
        values = [_value(data, path, lang) for _, path, lang in columns]
        korean = [value for (column, _, lang), value in zip(columns, values, strict=True) if lang == "ko" and value]
        row = (*values, _stems(korean, stems))
    source_fields = list(Source.model_fields)
    sources = [
        (case.id, n, *(_json_text(s[f]) if isinstance(s.get(f), list) else s.get(f) for f in source_fields))
        for n, s in enumerate(data.get("sources", []))
    ]
    terms: list[Row] = []
    known = vocabulary().terms
    for name, kind in _term_fields() if case.merged_into is None else ():
        value = data.get(name)
        for term in value if isinstance(value, list) else [value] if value else []:
            entry = known.get(kind, {}).get(str(term))
            labels = [entry.label_in(lang) if entry else str(term) for lang in LANGS]
            terms.append((case.id, name, kind, str(term), *labels))
    relations: list[Row] = []
    for name in _RELATIONS:
        value = data.get(name)
        for other in value if isinstance(value, list) else [value] if value else []:
            relations.append((case.id, "alias" if name == "aliases" else name, str(other)))
    return Rows(row, sources, terms, relations)


# ---------------------------------------------------------------- the file


def database_bytes(rows: Sequence[Rows], last: bytes | None = None, kept: Collection[str] = ()) -> bytes:
    """The database of `rows` as a file's bytes, made in memory, with the rows of the cases `kept` copied
    from `last` (a file this function made, by the same code): every table's rows in the order of their
    case's id, then of where they stand in their case (a clean build's order, whichever case they come
    from). Equal rows, equal bytes (on one SQLite version): the same statements in the same order."""
    # Imported here: a page worker imports this module (through pipeline.site.build) and never makes the file.
    import sqlite_utils

    connection = sqlite3.connect(":memory:")
    try:
        # Pages of 16 KB, not SQLite's 4 KB: a case's row is about 2 KB, and at one row a 4 KB page (they
        # fit one and a half) the file was 6.3 MB at 1,000 generated cases; 4.8 MB so (8 KB: 5.1, 64 KB: 5.4).
        connection.execute(f"pragma page_size = {PAGE_SIZE}")
        db = sqlite_utils.Database(connection)
        tables = schema()
        types = {"str": str, "int": int}
        for table, columns in tables.items():
            pk = "id" if table == "cases" else None
            db[table].create({c.name: types[c.type] for c in columns}, pk=pk)  # type: ignore[union-attr]
        fks = [("case_id", "cases", "id")]
        for table in ("sources", "terms"):
            db[table].add_foreign_key(*fks[0])  # type: ignore[union-attr]
        # What is copied comes from `last`, attached as `old`; what is new waits in temporary tables (in
        # their own database: the file's bytes never see them). Both reach the file's tables through the
        # same one statement a table, so a rebuild and a clean build write it alike.
        connection.execute("attach database ':memory:' as old")
        if last is not None and kept:
            connection.deserialize(last, name="old")
        else:
            for table, columns in tables.items():
                connection.execute(f"create table old.[{table}] ({', '.join(f'[{c.name}]' for c in columns)})")
        by_table: dict[str, list[Row]] = {table: [] for table in tables}
        for one in rows:
            if one.case is not None:
                by_table["cases"].append(one.case)
            by_table["sources"] += one.sources
            by_table["terms"] += one.terms
            by_table["relations"] += one.relations
        for table, columns in tables.items():
            names = ", ".join(f"[{c.name}]" for c in columns)
            connection.execute(f"create temp table [new_{table}] ({names})")
            # As many rows a statement as its values may number, not a statement a row: each statement
            # waits for Python's lock, which the build's other threads hold (60,000 rows at 10,000 cases
            # took seconds so).
            rows_at_once = max(1, connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(columns))
            marks = f"({', '.join('?' for _ in columns)})"
            given = by_table[table]
            for start in range(0, len(given), rows_at_once):
                batch = given[start : start + rows_at_once]
                connection.execute(
                    f"insert into temp.[new_{table}] values {', '.join(marks for _ in batch)}",
                    [value for row in batch for value in row],
                )
        # The kept ids as one JSON array: one value, not one a row.
        ids = json.dumps(sorted(kept))
        with connection:
            for table, columns in tables.items():
                names = ", ".join(f"[{c.name}]" for c in columns)
                case_id = "id" if table == "cases" else "case_id"
                connection.execute(
                    f"insert into main.[{table}] ({names}) select {names} from ("
                    f"select {names}, [{case_id}] as _case, rowid as _at from old.[{table}]"
                    f" where [{case_id}] in (select value from json_each(?))"
                    f" union all select {names}, [{case_id}], rowid from temp.[new_{table}]"
                    ") order by _case, _at",
                    (ids,),
                )
        connection.execute("detach database old")
        for table, indexes in _INDEXES.items():
            for index in indexes:
                db[table].create_index(index)  # type: ignore[union-attr]
        # The FTS5 table reads its text from `cases` (external content): no second copy of the texts.
        # Built once over every row, in one statement: its segments depend on the rows alone.
        db["cases"].enable_fts(FTS_COLUMNS, fts_version="FTS5", tokenize="unicode61", replace=True)  # type: ignore[union-attr]
        connection.commit()
        # No VACUUM, no FTS 'optimize': a database written once, in order, is compact already (they made
        # it 3% smaller at 10,000 cases, for 0.5 s of every build that makes it).
        return connection.serialize()
    finally:
        connection.close()


# ---------------------------------------------------------------- in a build


@cache
def _format() -> str:
    """What a case's rows in the last file depend on besides their case: this code, the libraries that make
    the file, the vocabulary (the terms' labels) and the Korean analyser."""
    here = Path(__file__)
    digest = hashlib.sha256(here.read_bytes())
    digest.update(here.parent.parent.joinpath("vocabulary.yaml").read_bytes())
    digest.update(f"{sqlite3.sqlite_version}:{version('sqlite-utils')}:{analyser()}".encode())
    return digest.hexdigest()


class Database:
    """cases.db in a build: its inputs (every case's digest and `_format`) and how it is made. The rows of a
    case whose digest is as when the last file was made are copied from that file (`last()`, the site's
    copy, used only when its bytes hash as `cached()` says: the last build's `cache()`, its cases' digests);
    only the other cases are turned into rows again."""

    def __init__(
        self, ctx: SiteContext, stems: Stems, cached: Callable[[], bytes | None], last: Callable[[], bytes | None]
    ) -> None:
        self.ctx = ctx
        self.stems = stems
        self.cards = sorted(ctx.cases, key=lambda card: card.id)
        self.inputs = "\x00".join([_format(), *(f"{card.id}:{card.digest}" for card in self.cards)])
        self.cached = cached  # read only when the file is made: a build with no case changed never reads it
        self.last = last
        self.kept: dict[str, Any] = {}
        self.made = 0  # cases turned into rows this time

    @staticmethod
    def _load(data: bytes | None) -> dict[str, Any]:
        try:
            found = pickle.loads(data) if data else {}
            if not isinstance(found, dict) or found.get("format") != _format():
                return {}
            return {"hash": bytes(found["hash"]), "digests": dict(found["digests"])}
        except Exception:  # whatever an unreadable cache raises, it is not used
            return {}

    def make(self) -> bytes:
        known = self._load(self.cached())
        last = self.last() if known else None
        if last is not None and tree_hash(last) != known["hash"]:
            last = None  # not the file the cache speaks of: nothing copied from it
        digests = known.get("digests", {}) if last is not None else {}
        kept = [card.id for card in self.cards if digests.get(card.id) == card.digest]
        copied = set(kept)
        rows = [case_rows(self.ctx.case(card.id), self.stems) for card in self.cards if card.id not in copied]
        self.made = len(rows)
        data = database_bytes(rows, last, kept)
        self.made_as(tree_hash(data))
        return data

    def made_as(self, digest: bytes) -> None:
        """The file made (here, or by a build's worker process), known by its hash: what `cache()` keeps."""
        self.kept = {"hash": digest, "digests": {card.id: card.digest for card in self.cards}}

    def cache(self) -> bytes:
        """What the next build needs to copy rows from the file `make` made: its hash and its cases' digests."""
        return pickle.dumps({"format": _format(), **self.kept}, protocol=pickle.HIGHEST_PROTOCOL)
