"""Learning from reviews (pipeline.learn, `incidentlib learn`) and dismissing a suggestion, which is what
it learns a wrong passage from. Real files in a data root, the command as a person types it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from test_drafting import GATED, URL, draft_of
from test_finder import story

from pipeline.crawl import crawl_async
from pipeline.draft import apply_extraction
from pipeline.errors import StoreError
from pipeline.extract import extract
from pipeline.finder.labels import right
from pipeline.learn import _worse, finder_in_use, library_documents
from pipeline.models import Case, Draft, DraftState, Origin, Section, SourceEntry
from pipeline.settings import Settings
from pipeline.store import Store


def _publish(store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Draft], n: int) -> None:
    """A published case told by story `n`, its draft keeping the text a writer chose its passages from."""
    text, passages = story(n)
    url = f"https://publisher-{n % 3}.example/postmortems/{n}"
    case_id = f"IL-{n + 1:04d}"
    case = make_case(
        case_id,
        trigger={"en": passages["trigger"]},
        detection={"en": passages["detection"]},
        impact={"scope": passages["impact"], "users": "customers", "region": "unknown"},
        remediation=[{"text": {"en": passages["remediation"]}}],
        sources=[{**make_case().sources[0].model_dump(mode="json"), "url": url}],
    )
    store.write_case(case)
    draft = make_draft(
        url=url,
        text=text,
        sections=[Section(heading="What happened", text=text)],
        case_id=case_id,
        state=DraftState.PUBLISHED,
    )
    store.write_draft(draft)


def test_published_cases_label_the_sentences_their_fields_hold(
    store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Draft]
) -> None:
    _publish(store, make_case, make_draft, 3)
    [doc] = library_documents(store)
    assert doc.group == "publisher-0.example"
    _, passages = story(3)
    detection = [c.text for c, y in zip(doc.candidates, doc.labels("detection"), strict=True) if y]
    assert detection == [passages["detection"]]
    # A field the case leaves empty is one the document states none of: every sentence a negative.
    assert not doc.labels("lessons").any() or doc.passages["lessons"]


def test_learn_keeps_a_model_no_worse_than_the_one_in_use_and_the_crawl_then_uses_it(
    root: Any,
    store: Store,
    make_case: Callable[..., Case],
    make_draft: Callable[..., Draft],
    cli: Callable[..., Any],
) -> None:
    for n in range(12):
        _publish(store, make_case, make_draft, n)
    settings = Settings(root=root)
    assert finder_in_use(store, settings).name.startswith("corpus-")  # type: ignore[union-attr]
    result = cli("learn", "--root", str(root), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0, result.output
    assert report["kept"] and report["new"].startswith("library-")
    assert report["documents"] == 12 and report["publishers"] == 3
    assert report["figures"]["detection"]["hit3"] is not None
    assert report["baseline"]["detection"]["hit3"] is not None  # the model in use, on the same folds
    in_use = finder_in_use(store, settings)
    assert in_use is not None and in_use.name == report["new"]
    saved = json.loads(store.state.path("finder.json").read_text())
    assert saved["trained"]["from"] == "library" and saved["trained"]["prior"].startswith("corpus-")
    # Switched off, the crawl drafts with the rules alone.
    assert finder_in_use(store, settings.model_copy(update={"draft_finder": False})) is None


def test_learn_refuses_with_too_few_reviews_and_keeps_the_model_in_use(root: Any, cli: Callable[..., Any]) -> None:
    result = cli("learn", "--root", str(root))
    assert result.exit_code == 1
    assert "refused the new model: too few reviewed cases to learn from: 0 published cases" in result.output
    assert not (root / ".incidentlib" / "finder.json").exists()


def test_a_model_worse_on_any_figure_is_refused() -> None:
    old = {"detection": {"documents": 10, "hit3": 0.8, "precision": 0.7, "calibration_error": 0.05}}
    assert _worse(old, old) == []
    assert _worse({"detection": {**old["detection"], "hit3": 0.7}}, old) == [
        "it ranks worse: mean hit@3 0.7 against 0.8"
    ]
    assert _worse({"detection": {**old["detection"], "precision": 0.6}}, old) == [
        "detection: it writes less precisely (0.6 against 0.7)"
    ]
    assert _worse({"detection": {**old["detection"], "calibration_error": 0.2}}, old) == [
        "detection: its confidence is calibrated worse (error 0.2 against 0.05)"
    ]


def test_a_broken_model_file_is_one_line_naming_it(root: Any, store: Store) -> None:
    store.state.keep_finder_model('{"format": 1}')
    with pytest.raises(StoreError) as caught:
        finder_in_use(store, Settings(root=root))
    said = str(caught.value)
    assert said.startswith(".incidentlib/finder.json: not a finder model") and "\n" not in said
    assert "incidentlib learn" in said
    # A crawl reads it once before it fetches anything: the same line, no source touched.
    with pytest.raises(StoreError, match=r"finder\.json: not a finder model: name: Field required"):
        asyncio.run(crawl_async(store, Settings(root=root), [SourceEntry(url="https://127.0.0.1:9/never.md")]))


def test_a_dismissed_suggestion_leaves_the_draft_and_is_not_offered_again(
    root: Any, store: Store, cli: Callable[..., Any]
) -> None:
    draft = draft_of(GATED)
    store.write_draft(draft)
    index = next(i for i, s in enumerate(draft.suggestions) if s.field == "detection")
    offered = draft.suggestions[index]
    result = cli(
        "dismiss-suggestion",
        draft.id,
        str(index),
        "-m",
        "a plan, not what happened",
        "--by",
        "dana",
        "--root",
        str(root),
    )
    assert result.exit_code == 0, result.output
    after = store.read_draft(draft.id)
    assert offered not in after.suggestions and after.dismissed_passages == [offered]
    last = after.history[-1]
    assert (last.by, last.action, last.from_state, last.to_state) == ("dana", "dismiss", draft.state, draft.state)
    assert last.comment is not None and last.comment.endswith(": a plan, not what happened")
    shown = cli("show", draft.id, "--root", str(root)).stdout
    assert "dismissed passages (wrong for their field" in shown and f"- detection ({offered.rule})" in shown
    # A re-crawl of the same page does not offer it again.
    entry = SourceEntry(url=URL)
    extraction = extract(GATED, URL, None)
    again = apply_extraction(after, entry, extraction, Origin(url=URL, canonical_url=URL, final_url=URL))
    assert all(not (s.field == "detection" and right(s.quote, [offered.quote])) for s in again.suggestions)
    missing = cli("dismiss-suggestion", draft.id, "99", "--by", "dana", "--root", str(root))
    assert missing.exit_code != 0 and "no suggestion 99" in missing.output
