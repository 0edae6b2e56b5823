"""bench/similar.py on a small generated library: its one JSON line, with sane figures."""

from __future__ import annotations

import json

import pytest
from helpers import load_bench

from pipeline.models import Case, Draft

similar = load_bench("similar")


def test_the_generated_library_holds_valid_records_and_known_pairs() -> None:
    library = similar.make_library(200, seed=similar.DEVELOPMENT_SEED)
    assert len(library.cases) == 200
    assert all(isinstance(c, Case) for c in library.cases) and all(isinstance(d, Draft) for d in library.drafts)
    # valid as written: each record reads back as itself
    assert Case.model_validate(library.cases[0].model_dump(mode="json")) == library.cases[0]
    assert Draft.model_validate(library.drafts[0].model_dump(mode="json")) == library.drafts[0]
    assert set(library.duplicates) == {"html_md", "syndicated", "status_blog"}
    ids = {c.id for c in library.cases} | {d.id for d in library.drafts}
    pairs = set().union(*library.duplicates.values()) | library.unrelated
    assert all(len(pair) == 2 and pair <= ids for pair in pairs)
    # the same seed, the same library
    again = similar.make_library(200, seed=similar.DEVELOPMENT_SEED)
    assert [d.id for d in again.drafts] == [d.id for d in library.drafts]


def test_the_bench_prints_one_json_line_of_figures_and_targets(capsys: pytest.CaptureFixture[str]) -> None:
    similar.main(["--cases", "300", "--runs", "1", "--queries", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    figures = json.loads(lines[0])
    assert figures["targets"] == similar.TARGETS
    for key in ("precision", "recall", "one_vs_10000_ms", "full_pass_s", "index_bytes", "index_load_ms"):
        assert key in figures
    assert figures["cases"] == 300 and figures["known"] > 0
    assert 0.95 <= figures["precision"] <= 1 and 0.9 <= figures["recall"] <= 1
    assert figures["unrelated_flagged"] == 0
    assert 0 < figures["one_vs_10000_ms"] < 1000 and 0 < figures["full_pass_s"] < 60
