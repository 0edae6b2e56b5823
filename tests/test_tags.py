"""Tags with their reasons, ML terms only for texts about ML, data loss only with words of loss."""

from __future__ import annotations

from pipeline.extract.tags import (
    Suggestion,
    about_ml,
    suggest_tag_reasons,
    suggest_tags,
    suggest_term_reasons,
    suggest_terms,
)
from pipeline.vocabulary import Kind

WEB = (
    "The deploy job hangs after the upgrade and the proxy pods get stuck. Requests hit a timeout at the load "
    "balancer, then another timeout, and the page is down for an hour while we roll back the chart."
)
TRAINING = (
    "The training run on 384 GPUs hangs at iteration 1200: NCCL reports a collective operation timeout and "
    "the job is stuck until the watchdog kills it. We resume from the last checkpoint; the lm loss and the "
    "tokens per second are back to normal after the restart of the training."
)


def test_a_suggestion_keeps_the_words_that_suggested_it_and_where() -> None:
    text = "Users saw a 503 and then the API was Unavailable; the site was down."
    (first, *_) = suggest_term_reasons("symptoms", text)
    assert first == Suggestion(
        "service-unavailable", ("503", "Unavailable", "down"), first.spans, "two signals: '503', 'unavailable'"
    )
    assert [text[a:b] for a, b in first.spans] == ["503", "Unavailable", "down"] and first.hits == 3


def test_offsets_hold_when_lower_casing_changes_the_length() -> None:
    text = "İstanbul region: DNS failed, then DNS again."
    (dns,) = [s for s in suggest_term_reasons("components", text) if s.term == "dns"]
    assert [text[a:b] for a, b in dns.spans] == ["DNS", "DNS"]


def test_ml_terms_only_for_a_text_about_training_or_inference() -> None:
    assert not about_ml(WEB) and about_ml(TRAINING)
    assert not {"training-hang", "nccl-timeout"} & set(suggest_terms("symptoms", WEB))
    assert {"training-hang", "nccl-timeout"} <= set(suggest_terms("symptoms", TRAINING))
    # one word of the trade in a long text is not enough
    assert not about_ml(WEB + " Investigate the training of new staff.")


def test_data_loss_needs_words_of_loss() -> None:
    deleted = "We deleted the pods, deleted the old nodes and deleted the cache; nothing else changed."
    lost = "The writes of that hour were lost: the volume is unrecoverable."
    assert "data-loss" not in suggest_terms("symptoms", deleted)
    (loss,) = [s for s in suggest_term_reasons("symptoms", lost) if s.term == "data-loss"]
    assert loss.words == ("lost", "unrecoverable")


def test_one_pass_for_several_vocabularies_agrees_with_one_each() -> None:
    kinds: tuple[Kind, ...] = ("domains", "components", "symptoms")
    for text in (WEB, TRAINING):
        together = suggest_tag_reasons(kinds, text, min_hits=1)
        assert together == {kind: suggest_term_reasons(kind, text, min_hits=1) for kind in kinds}
        assert suggest_tags(kinds, text, min_hits=1) == {k: [s.term for s in v] for k, v in together.items()}


def test_one_common_word_however_often_suggests_nothing() -> None:
    # Each word alone is a term's word ("policy", "dependency", "down"), said three times: no signal beside it.
    text = "The policy changed, the policy held, the policy again. A dependency, a dependency, a dependency."
    assert suggest_term_reasons("components", text) == []
    assert suggest_term_reasons("contributing", text) == []
    assert suggest_term_reasons("symptoms", "It went down, came back, went down, and down again.") == []


def test_a_term_phrase_or_two_signals_suggest_a_term_with_its_reason() -> None:
    (phrase,) = suggest_term_reasons("components", "The admission controller rejected every pod.")
    assert (phrase.term, phrase.reason) == ("admission-control", "term phrase 'admission controller'")
    (two,) = suggest_term_reasons("components", "An admission rule in the webhook rejected every pod.")
    assert (two.term, two.reason) == ("admission-control", "two signals: 'admission', 'webhook'")


def test_two_forms_of_one_word_are_one_signal() -> None:
    text = "We upgraded the proxy. The upgrade went fine, and after the upgrade the proxy was upgraded again."
    assert "version-upgrade" not in suggest_terms("contributing", text)
    both = "We upgraded the proxy to a new version."
    (found,) = [s for s in suggest_term_reasons("contributing", both) if s.term == "version-upgrade"]
    assert found.reason == "term phrase 'new version'" and found.how == "phrase"
    signals = "The certificate expired; nobody had rotated it."
    (found,) = suggest_term_reasons("contributing", signals, min_hits=1)
    assert (found.term, found.how) == ("expired-credential", "two-signals")


def test_one_word_is_a_reason_only_when_asked_for_and_then_the_weakest() -> None:
    text = "A job dependency changed and the build waited on the dependency."
    assert suggest_term_reasons("contributing", text, min_hits=1) == []
    (found,) = suggest_term_reasons("contributing", text, min_hits=1, one_word=True)
    assert (found.term, found.how, found.reason) == ("dependency-outage", "one-word", "one word 'dependency'")
    # "only one" is any count, not a single point of failure
    assert suggest_terms("contributing", "Only one customer noticed; only one ticket came in.", min_hits=1) == []
