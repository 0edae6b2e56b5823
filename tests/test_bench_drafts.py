"""bench/drafts.py's figures on a corpus written here: precision, false fills, symptoms, logbook splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from documents import POSTMORTEM_MD
from helpers import load_bench

from pipeline.draft import new_draft
from pipeline.models import Action, SourceEntry

drafts = load_bench("drafts")

KEY = {
    "org_slug_ok": ["acme"],
    "incidents": 1,
    "ai_training": False,
    "severity_stated": None,
    "detected_after": None,
    "resolved_after": None,
    "trigger": None,
    "detection": None,
    "impact": "About 30% of API requests failed with HTTP 503 for 40 minutes.",
    "root_cause": "The restart emptied the cache at once, so the database got every request.",
    "remediation": [],
    "action_items": ["Warm the cache before a restart."],
    "summary_must_mention": ["cache cluster restarted"],
    "summary_must_not": [],
}


def test_covered_share_counts_shared_runs_not_chance_words() -> None:
    passage = "The restart emptied the cache at once, so the database got every request."
    assert drafts.covered_share("the restart emptied the cache at once", [passage]) == 1.0
    # Words the passage also has, but no run of three in order: nothing belongs.
    assert drafts.covered_share("the database the cache every", [passage]) == 0.0
    half = drafts.covered_share("The restart emptied the cache. Users saw slow pages for hours.", [passage])
    assert half == pytest.approx(5 / 11)
    assert drafts.covered_share("", [passage]) == 0.0
    # A key passage shorter than the run counts whole.
    assert drafts.covered_share("Disk full", ["disk full"]) == 1.0


def test_figures_report_precision_false_fills_symptoms_and_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cache.md").write_text(POSTMORTEM_MD, encoding="utf-8")
    url = "https://github.com/acme/postmortems/blob/main/2024-03-05-cache.md"
    (tmp_path / "index.json").write_text(json.dumps([{"file": "cache.md", "source_url": url, "kind": None}]))
    (tmp_path / "fields.json").write_text(json.dumps({"cache.md": KEY}))
    details = tmp_path / "details.jsonl"
    drafts.main([str(tmp_path), "--details", str(details)])
    out = json.loads(capsys.readouterr().out)
    row = json.loads(details.read_text())
    # The impact section is the key's passage word for word.
    assert out["passage_precision_impact"] == 1.0
    assert out["passage_precision"] is not None and 0 < out["passage_precision"] <= 1
    # The key has no trigger, detection or remediation: each drafted one is a false fill.
    for name in ("trigger", "detection", "remediation"):
        assert out[f"false_fills_{name}"] == float(name in row["false_fills"])
    assert out["false_fills_impact"] is None and out["false_fills_root_cause"] is None
    assert out["false_fills"] == round(len(row["false_fills"]) / 3, 3)
    assert out["symptoms_drafted"] == float(row["symptoms_drafted"])
    # One incident told, not split; no document of several, so no split share.
    assert (out["single_split"], out["incidents_split"], out["incidents_exact"]) == (0.0, None, None)
    assert row["incidents"] == [0, 1]


def test_precision_scores_split_scored_fields_from_false_fills() -> None:
    draft = new_draft(SourceEntry(url="https://example.org/postmortem"))
    draft = draft.model_copy(
        update={
            "trigger": {"en": "A config push at 10:02 restarted the cache cluster. We are sorry."},
            "detection": {"en": "An error rate alert fired."},
            "remediation": [Action(text={"en": "Rate limiting restored service."})],
        }
    )
    key = {**KEY, "trigger": "A config push at 10:02 restarted the cache cluster.", "impact": None}
    precision, false_fill = drafts.precision_scores(draft, key)
    # Ten of the trigger's thirteen words are the key's passage; the apology is not.
    assert precision == {"trigger": pytest.approx(10 / 13)}
    # Detection and remediation drafted where the key has none; impact left empty where it has none.
    assert false_fill == {"detection": True, "impact": False, "remediation": True}
