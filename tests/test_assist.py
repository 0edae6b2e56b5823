"""The writer assist against the chat-completions stand-in, over real HTTP with the real `openai` client:
proposals checked passage by passage, every failure the API can give costing one draft its proposals,
budgets, the cache, Korean and its staleness, a person accepting a proposal, the key kept out of sight."""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ArchiveRoot

from pipeline import assist as assisting
from pipeline.assist import Ask
from pipeline.assist.propose import locate
from pipeline.errors import ReviewError, SettingsError
from pipeline.models import Draft, Origin
from pipeline.queue import show
from pipeline.review import set_field
from pipeline.settings import Settings
from pipeline.standins.chat import ChatStandIn, Reply
from pipeline.standins.sitefarm import Page
from pipeline.store import Store

TEXT = """Job queue outage

On 2 May 2024 the job queue stopped draining for 40 minutes after a deploy.

Root cause

A configuration change set the worker pool size to zero.
Nobody noticed until the queue alarm fired twenty minutes later.

Remediation

We restored the pool size and added a check that refuses a pool of zero.
"""
DRAFT_ID = "example-org-queue-00000001"
KEY = "sk-test-0123456789abcdefSECRET"

SUMMARY = "On 2 May 2024 the job queue stopped draining for 40 minutes after a deploy set its worker pool to zero."


def proposal(field: str, text: str, *passages: str, term: str | None = None) -> dict[str, Any]:
    return {"field": field, "text": text, "term": term, "passages": list(passages)}


GOOD = {
    "proposals": [
        proposal(
            "summary",
            SUMMARY,
            "On 2 May 2024 the job queue stopped draining for 40 minutes after a deploy.",
            # A line break in the text, a space in the passage: white space aside, it is there.
            "A configuration change set the worker pool size to zero. Nobody noticed",
        ),
        proposal(
            "root_cause",
            "A configuration change emptied the worker pool.",
            "A configuration change set the worker pool size to zero.",
            term="configuration-error",
        ),
        proposal(
            "detection", "An alarm on the queue.", "Nobody noticed until the queue alarm fired twenty minutes later."
        ),
    ]
}


@pytest.fixture
def draft(store: Store) -> Draft:
    url = "https://example.org/postmortems/queue"
    made = Draft(
        id=DRAFT_ID,
        org="Example Org",
        title={"en": "Job queue outage"},
        origin=Origin(url=url, canonical_url=url, format="markdown"),
        text=TEXT,
    )
    store.write_draft(made)
    return made


@pytest.fixture
def chat() -> Iterator[ChatStandIn]:
    with ChatStandIn(script=[Reply.json(GOOD, usage=(300, 90))]) as standin:
        yield standin


def settings_for(root: Path, chat: ChatStandIn, **changes: Any) -> Settings:
    base: dict[str, Any] = {
        "root": root,
        "llm_url": chat.url,
        "llm_model": chat.model,
        "llm_requests_per_minute": 60000,
        "llm_max_retries": 0,
        "llm_timeout_s": 5.0,
    }
    return Settings(**{**base, **changes})


def script(chat: ChatStandIn, *replies: Reply) -> None:
    chat.script = list(replies)


# ------------------------------------------------------------ proposals and their checks


def test_a_good_answer_is_kept_beside_the_fields_and_nothing_is_written_into_them(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert (done.outcome, sorted(done.proposed), done.dropped) == (
        "proposed",
        ["detection.en", "root_cause", "summary.en"],
        0,
    )
    assert done.tokens == 390
    after = store.read_draft(DRAFT_ID)
    assert (after.summary, after.detection, after.root_cause) == (None, None, "unknown"), "proposals only"
    assert after.review.written_by is None and after.history == []
    summary = assisting.find_proposal(after, "summary")
    assert (summary.text, summary.model, summary.prompt, summary.language) == (SUMMARY, "stand-in", "propose/2", "en")
    assert assisting.find_proposal(after, "root_cause").term == "configuration-error"
    run = after.assist["propose"]
    assert (run.prompt_tokens, run.completion_tokens, run.proposed, run.failure) == (300, 90, 3, None)
    assert set(run.fields) == {
        "summary",
        "symptoms_text",
        "trigger",
        "detection",
        "impact",
        "root_cause",
        "lessons",
        "remediation",
    }

    (request,) = chat.completions
    assert request.body["response_format"]["type"] == "json_schema"
    assert request.body["response_format"]["json_schema"]["strict"] is True
    assert request.body["max_tokens"] == 2000 and request.body["temperature"] == 0
    question = json.loads(request.body["messages"][1]["content"])
    assert question["text"] == TEXT and "configuration-error" in question["root_cause_terms"]
    assert "third person" in request.body["messages"][0]["content"], "the prompt file's style rules"


def test_a_proposal_citing_a_passage_not_in_the_text_is_dropped_and_counted(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    invented = proposal("trigger", "A bad deploy.", "The deploy pushed a broken config to every region.")
    paraphrased = proposal("impact", "The queue stalled.", "The job queue stopped draining")  # case differs
    no_passage = proposal("lessons", "Check your pools.")
    bad_term = proposal(
        "root_cause", "A typo.", "A configuration change set the worker pool size to zero.", term="typo"
    )
    script(chat, Reply.json({"proposals": [*GOOD["proposals"][:1], invented, paraphrased, no_passage, bad_term]}))

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert (done.proposed, done.dropped) == (["summary.en"], 4)
    whys = {d.path: d.why for d in store.read_draft(DRAFT_ID).assist["propose"].dropped}
    assert whys["trigger.en"].startswith("a passage not in the text: 'The deploy pushed")
    assert whys["impact.scope"].startswith("a passage not in the text")
    assert whys["lessons.en"] == "cites no passage of the text"
    assert whys["root_cause"] == "root cause 'typo' is not a term of the vocabulary"


def test_locate_finds_a_passage_white_space_aside_and_gives_the_texts_own_offsets() -> None:
    text = "First line.\nA configuration change set\n  the pool to zero."
    start, end = locate(text, "A configuration change set the pool to zero.") or (0, 0)
    assert text[start:end] == "A configuration change set\n  the pool to zero."
    assert locate(text, "a configuration change") is None, "verbatim: case counts"
    assert locate(text, "   ") is None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.content('{"proposals": [{"field": "summary", "text": "cut'), "llm-invalid-answer"),
        (Reply.json({"proposals": [{"field": "summary", "text": "x", "passages": "one"}]}), "llm-invalid-answer"),
        (Reply.json({"summary": "a bare answer"}), "llm-invalid-answer"),
        (Reply.length('{"proposals": [{"field": "summary", "text": "On 2 May'), "llm-cut-off"),
        (Reply.status(500), "llm-server-error"),
        (Reply.status(429), "llm-rate-limited"),
        (Reply.status(401, body={"error": {"message": "Invalid API key", "type": "auth"}}), "llm-refused"),
        (Reply.content("", refusal="I cannot help with that."), "llm-refused"),
    ],
)
@pytest.mark.usefixtures("draft")
def test_every_failure_of_the_api_costs_the_draft_its_proposals_and_is_kept_on_it(
    store: Store, root: Path, chat: ChatStandIn, reply: Reply, reason: str
) -> None:
    script(chat, reply)

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert (done.outcome, done.reason, done.proposed) == ("failed", reason, [])
    after = store.read_draft(DRAFT_ID)
    assert after.proposals == [] and after.summary is None
    failure = after.assist["propose"].failure
    assert failure is not None and failure.reason == reason and "\n" not in failure.message


def test_a_timeout_is_retried_then_costs_only_that_draft_the_next_one_is_asked(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    second = draft.model_copy(update={"id": "example-org-queue-00000002"})
    store.write_draft(second)
    script(chat, Reply.slow(30), Reply.slow(30), Reply.json(GOOD))
    settings = settings_for(root, chat, llm_timeout_s=0.3, llm_max_retries=1)

    report = assisting.assist_drafts(store, settings, [DRAFT_ID, second.id], Ask(languages=["en"]))

    assert [(d.draft_id, d.outcome, d.reason) for d in report.drafts] == [
        (DRAFT_ID, "failed", "llm-timeout"),
        (second.id, "proposed", None),
    ]
    assert [r.retry_count for r in chat.completions] == [0, 1, 0], "the timeout was retried once, as allowed"
    assert report.counts() == {"proposed": 1, "unchanged": 0, "nothing": 0, "failed": 1, "skipped": 0}


def test_a_429_is_retried_after_its_retry_after_and_then_answered(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    script(chat, Reply.status(429, {"retry-after-ms": "20"}), Reply.json(GOOD))

    done = assisting.assist(store, settings_for(root, chat, llm_max_retries=2), DRAFT_ID, Ask(languages=["en"]))

    assert done.outcome == "proposed"
    first, second = chat.completions
    assert (first.retry_count, second.retry_count) == (0, 1)
    assert second.at - first.at >= 0.02


def test_a_server_that_refuses_structured_output_is_asked_for_plain_json_with_the_schema(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    script(chat, Reply.status(400, body={"error": {"message": "response_format must be text or json_object"}}))
    chat.script.append(Reply.content("```json\n" + json.dumps(GOOD) + "\n```"))

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert done.outcome == "proposed"
    first, second = chat.completions
    assert first.body["response_format"]["type"] == "json_schema"
    assert second.body["response_format"] == {"type": "json_object"}
    assert "JSON Schema" in second.body["messages"][-1]["content"]


# ------------------------------------------------------------ cost and care


def test_an_unchanged_text_is_never_asked_twice_a_changed_one_or_a_new_prompt_version_is(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    settings = settings_for(root, chat)
    assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"]))

    again = assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"]))
    assert (again.outcome, len(chat.completions)) == ("unchanged", 1)

    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"text": TEXT + "\nUpdate: all clear.\n"}))
    assert assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"])).asked == 1
    assert len(chat.completions) == 2

    def older_prompt(d: Draft) -> Draft:
        run = d.assist["propose"].model_copy(update={"prompt": "propose/0"})
        return d.model_copy(update={"assist": {"propose": run}})

    store.update_draft(DRAFT_ID, older_prompt)
    assert assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"])).asked == 1
    assert assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"], again=True)).asked == 1
    assert len(chat.completions) == 4


def test_a_question_past_the_drafts_or_the_runs_budget_is_not_asked(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    tight = settings_for(root, chat, llm_tokens_per_draft=1000, llm_max_answer_tokens=900)
    done = assisting.assist(store, tight, DRAFT_ID, Ask(languages=["en"]))
    assert (done.outcome, done.reason, chat.completions) == ("failed", "llm-budget", [])
    assert "tokens" in (done.message or "")

    second = draft.model_copy(update={"id": "example-org-queue-00000002"})
    store.write_draft(second)
    # Each question is judged at about 2,400 tokens before it is asked; the first answer costs 2,500 of
    # the run's 4,000, which leaves too little for the second.
    script(chat, Reply.json(GOOD, usage=(2000, 500)))
    run_budget = settings_for(root, chat, llm_tokens_per_run=4000, llm_max_answer_tokens=1500)
    report = assisting.assist_drafts(store, run_budget, [DRAFT_ID, second.id], Ask(languages=["en"]))
    assert [d.outcome for d in report.drafts] == ["proposed", "failed"]
    assert report.drafts[1].reason == "llm-budget" and len(chat.completions) == 1


def test_a_long_text_is_cut_to_what_the_drafts_budget_leaves_and_the_model_is_told(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    logbook = TEXT + "\n".join(f'Day {n}: the "queue" ran\tas usual.' for n in range(6000))
    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"text": logbook}))

    done = assisting.assist(store, settings_for(root, chat, llm_tokens_per_draft=8000), DRAFT_ID, Ask(languages=["en"]))

    assert done.asked == 1 and done.outcome == "proposed"
    question = json.loads(chat.completions[0].body["messages"][1]["content"])
    assert question["note"] == f"the text is cut at {len(question['text'])} of its {len(logbook)} characters"
    asked = sum(len(m["content"]) for m in chat.completions[0].body["messages"])
    assert asked / 3.5 + 2000 <= 8000, "question and answer within the draft's budget"


def test_requests_are_spaced_under_the_rate_set(store: Store, root: Path, draft: Draft, chat: ChatStandIn) -> None:
    others = [draft.model_copy(update={"id": f"example-org-queue-0000000{n}"}) for n in (2, 3)]
    for other in others:
        store.write_draft(other)

    ids = [DRAFT_ID, *(o.id for o in others)]
    assisting.assist_drafts(store, settings_for(root, chat, llm_requests_per_minute=120), ids, Ask(languages=["en"]))

    # Half a second apart, give or take how long each took to arrive on a busy machine.
    times = [r.at for r in chat.completions]
    assert len(times) == 3 and all(b - a >= 0.4 for a, b in itertools.pairwise(times))


def test_the_key_reaches_the_api_and_no_log_record_or_report(
    store: Store, root: Path, draft: Draft, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with ChatStandIn(script=[Reply.status(500), Reply.json(GOOD)], api_key=KEY) as chat:
        settings = settings_for(root, chat, llm_api_key=KEY)
        failed = assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"]))
        done = assisting.assist(store, settings, DRAFT_ID, Ask(languages=["en"]))
        sent = [r.headers["authorization"] for r in chat.completions]

    assert (failed.outcome, done.outcome) == ("failed", "proposed")
    assert sent == [f"Bearer {KEY}"] * 2
    assert KEY not in caplog.text
    assert KEY not in (root / "drafts" / f"{DRAFT_ID}.json").read_text()
    assert KEY not in json.dumps([failed.__dict__, done.__dict__], default=str)
    assert KEY not in repr(settings) and KEY not in settings.model_dump_json()


def test_without_a_model_nothing_runs_and_nothing_mentions_one(
    store: Store, root: Path, draft: Draft, cli: Callable[..., Any]
) -> None:
    with pytest.raises(SettingsError, match="INCIDENTLIB_LLM_URL"):
        assisting.assist(store, Settings(root=root), DRAFT_ID)
    shown = "\n".join(line for block in show(store, DRAFT_ID, ["en"]) for line in [block.title, *block.lines])
    assert "model" not in shown and "propos" not in shown

    result = cli("assist", DRAFT_ID, "--root", str(root))
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert "INCIDENTLIB_LLM_URL" in line


# ------------------------------------------------------------ Korean


KO_SUMMARY = "2024년 5월 2일 작업 큐가 배포 뒤 40분 동안 멈췄다."


def test_english_without_korean_is_translated_and_an_answer_in_english_is_dropped(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary", {"en": SUMMARY}))
    script(
        chat,
        Reply.json(
            {
                "translations": [
                    {"path": "summary.ko", "text": KO_SUMMARY},
                    {"path": "title.ko", "text": "Job queue outage"},
                    {"path": "lessons.ko", "text": "교훈"},
                ]
            }
        ),
    )

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["ko"]))

    assert (done.proposed, done.dropped) == (["summary.ko"], 2)
    after = store.read_draft(DRAFT_ID)
    made = assisting.find_proposal(after, "summary.ko")
    assert (made.language, made.translated_from, made.prompt) == ("ko", SUMMARY, "translate-ko/2")
    whys = {d.path: d.why for d in after.assist["translate-ko"].dropped}
    assert whys == {"title.ko": "not Korean", "lessons.ko": "not asked for"}
    asked = json.loads(chat.completions[0].body["messages"][1]["content"])["fields"]
    assert asked == [{"path": "title.ko", "text": "Job queue outage"}, {"path": "summary.ko", "text": SUMMARY}]


def test_an_accepted_translation_is_marked_as_the_machines_and_goes_stale_when_its_english_changes(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary", {"en": SUMMARY}))
    script(chat, Reply.json({"translations": [{"path": "summary.ko", "text": KO_SUMMARY}]}))
    settings = settings_for(root, chat)
    assisting.assist(store, settings, DRAFT_ID, Ask(languages=["ko"], fields=["summary"]))

    after = store.update_draft(DRAFT_ID, lambda d: assisting.accept_proposal(d, "summary.ko", "dana"))

    assert after.summary == {"en": SUMMARY, "ko": KO_SUMMARY}
    assert after.machine_translated["summary.ko"].english == SUMMARY
    assert assisting.stale_translations(after) == []

    changed = store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary.en", SUMMARY + " It came back at 11:00."))
    assert assisting.stale_translations(changed) == ["summary.ko"]
    shown = "\n".join(line for block in show(store, DRAFT_ID, ["en"]) for line in block.lines)
    assert "summary.ko: a machine translation (stand-in), accepted by dana; STALE" in shown
    assert "summary.ko" in assisting.untranslated(changed), "a stale translation is asked for again"

    edited = store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary.ko", "사람이 고친 요약."))
    assert "summary.ko" in edited.machine_translated, "set_field is no review edit"


# ------------------------------------------------------------ a person accepts


def test_accepting_a_proposal_is_the_persons_edit_noting_the_proposal_with_its_passages_as_evidence(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn, cli: Callable[..., Any]
) -> None:
    assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    result = cli(
        "assist", DRAFT_ID, "--accept", "summary", "--accept", "root_cause", "--by", "dana", "--root", str(root)
    )

    assert result.exit_code == 0, result.output
    after = store.read_draft(DRAFT_ID)
    assert after.summary == {"en": SUMMARY} and after.root_cause == "configuration-error"
    assert [p.path for p in after.proposals] == ["detection.en"]
    edit = after.history[-2]
    assert (edit.by, edit.changed) == ("dana", ["summary"])
    assert edit.comment is not None and edit.comment.startswith(
        "edited: accepted the proposal of stand-in (propose/2, "
    )
    evidence = [e for e in after.evidence if e.field == "summary.en"]
    assert [e.rule for e in evidence] == ["assist.propose/2"] * 2
    assert all(TEXT[e.start : e.end] == e.quote for e in evidence)
    assert after.review.written_by is None, "accepting is an edit; writing it is the person's own move"

    with pytest.raises(ReviewError, match="no proposal for lessons"):
        assisting.accept_proposal(after, "lessons", "dana")


def test_a_proposal_made_of_an_older_text_is_refused(store: Store, root: Path, draft: Draft, chat: ChatStandIn) -> None:
    assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))
    recrawled = store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"text": TEXT + "\nMore.\n"}))

    with pytest.raises(ReviewError, match="made of an older text; ask again"):
        assisting.accept_proposal(recrawled, "summary", "dana")


def test_the_command_asks_and_says_what_came_of_it(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn, cli: Callable[..., Any]
) -> None:
    env = {"INCIDENTLIB_LLM_URL": chat.url, "INCIDENTLIB_LLM_MODEL": chat.model, "INCIDENTLIB_LLM_MAX_RETRIES": "0"}

    asked = cli("assist", DRAFT_ID, "--lang", "en", "--root", str(root), env=env)
    again = cli("assist", DRAFT_ID, "--lang", "en", "--root", str(root), env=env)

    assert asked.exit_code == 0, asked.output
    assert asked.stdout.splitlines() == [
        f"{DRAFT_ID}: 3 proposals: summary.en, root_cause, detection.en",
        f"{DRAFT_ID}: 390 tokens",
    ]
    assert again.stdout.startswith(f"{DRAFT_ID}: asked before about the same text")
    script(chat, Reply.status(500))
    failed = cli("assist", DRAFT_ID, "--again", "--lang", "en", "--root", str(root), env=env)
    assert failed.exit_code == 1
    assert (
        failed.stdout.strip() == f"{DRAFT_ID}: llm-server-error: propose: answered HTTP 500, after the retries allowed"
    )


# ------------------------------------------------------------ after a crawl


def answer_by_prompt(body: dict[str, Any]) -> Reply:
    """The propose prompt gets GOOD; the translate prompt a Korean line for every field it gives."""
    system, question = body["messages"][0]["content"], json.loads(body["messages"][1]["content"])
    if "into Korean" in system:
        return Reply.json({"translations": [{"path": f["path"], "text": "한국어 번역"} for f in question["fields"]]})
    return Reply.json(GOOD)


@pytest.mark.usefixtures("prefect_api")
def test_a_crawl_asks_about_its_new_drafts_when_the_setting_says_so(
    farm: Any, archive_root: ArchiveRoot, chat: ChatStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.crawl import CrawlRun
    from pipeline.flows import crawl_flow_for, run

    root, store, wayback = archive_root.root, archive_root.store, archive_root.wayback
    site = farm.add_site("blog")
    site.pages["/queue.md"] = Page.markdown(TEXT)
    (root / "sources" / "blog.yaml").write_text(f"- url: {site.url('/queue.md')}\n  org: Example Org\n")
    for name, value in {
        "ALLOW_PRIVATE_HOSTS": "1",
        "PER_HOST_DELAY_S": "0",
        "WAYBACK_URL": wayback.url,
        "LLM_URL": chat.url,
        "LLM_MODEL": chat.model,
        "LLM_API_KEY": KEY,
        "LLM_MAX_RETRIES": "0",
        "ASSIST_AFTER_CRAWL": "true",
    }.items():
        monkeypatch.setenv(f"INCIDENTLIB_{name}", value)

    chat.script = []
    chat.responder = answer_by_prompt

    crawled = run(crawl_flow_for(Settings(root=root)), CrawlRun, root=str(root))

    assert crawled.counts()["new"] == 1 and crawled.assist is not None
    (done,) = crawled.assist.drafts
    assert (done.asked, done.outcome) == (2, "proposed"), "English, then Korean"
    assert any(path.endswith(".ko") for path in done.proposed)
    assert store.read_draft(done.draft_id).assist["propose"].model == "stand-in"
    assert "assist" in crawled.to_dict() and KEY not in json.dumps(crawled.to_dict(), default=str)
    for request in chat.requests:  # Prefect got no key as a parameter: the task read it from the settings
        assert request.headers["authorization"] == f"Bearer {KEY}"


# ------------------------------------------------------------ a second reading's findings


@pytest.mark.parametrize(
    "reply",
    [
        Reply.page(b"<!doctype html><title>Open WebUI</title>"),
        Reply.page(b'{"id": "x", "choices": [', "application/json"),
        Reply.json(GOOD, usage=(-1_000_000, 5)),
    ],
)
def test_an_answer_that_is_no_chat_completion_costs_the_draft_never_the_run(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn, reply: Reply
) -> None:
    second = draft.model_copy(update={"id": "example-org-queue-00000002"})
    store.write_draft(second)
    script(chat, reply, Reply.json(GOOD))

    report = assisting.assist_drafts(
        store, settings_for(root, chat), [DRAFT_ID, second.id, "gone-00000000"], Ask(languages=["en"])
    )

    first, then, gone = report.drafts
    assert first.outcome in ("failed", "proposed") and then.outcome == "proposed"
    assert (gone.outcome, gone.reason) == ("skipped", "invalid-draft")
    assert report.tokens >= 0 and report.errors == []
    if first.outcome == "failed":
        assert first.reason == "llm-invalid-answer"


def test_a_refused_key_leaves_no_word_of_the_servers_in_the_record(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    said = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    script(chat, Reply.status(401, body=said))

    done = assisting.assist(store, settings_for(root, chat, llm_api_key=KEY), DRAFT_ID, Ask(languages=["en"]))

    assert (done.reason, done.message) == ("llm-refused", "propose: answered HTTP 401: the key was refused")
    assert KEY not in (root / "drafts" / f"{DRAFT_ID}.json").read_text()


def test_an_answer_dripped_a_byte_at_a_time_meets_one_deadline(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    script(chat, Reply.dripping(0.05, then=Reply.json(GOOD)))
    began = time.monotonic()

    done = assisting.assist(store, settings_for(root, chat, llm_timeout_s=0.5), DRAFT_ID, Ask(languages=["en"]))

    assert (done.outcome, done.reason) == ("failed", "llm-timeout")
    assert time.monotonic() - began < 3, "each byte came in time; the whole answer did not"


def test_after_three_drafts_the_api_left_unanswered_the_run_stops_asking(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    ids = [DRAFT_ID]
    for n in range(2, 6):
        store.write_draft(draft.model_copy(update={"id": f"example-org-queue-0000000{n}"}))
        ids.append(f"example-org-queue-0000000{n}")
    script(chat, Reply.slow(30))

    report = assisting.assist_drafts(store, settings_for(root, chat, llm_timeout_s=0.2), ids, Ask(languages=["en"]))

    assert [d.outcome for d in report.drafts] == ["failed"] * 3 + ["skipped"] * 2
    assert len(chat.completions) == 3
    assert store.read_draft(ids[-1]).assist == {}, "a draft not asked keeps nothing: it is asked next run"


def test_passages_of_a_word_or_a_piece_of_one_and_invented_numbers_are_no_ground(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    script(
        chat,
        Reply.json(
            {
                "proposals": [
                    proposal("trigger", "A deploy set the pool to zero.", "the"),
                    proposal("lessons", "Pools need checks.", "configuration change set the worker pool si"),
                    proposal(
                        "impact", "99.9% of jobs waited 3 hours.", "the job queue stopped draining for 40 minutes"
                    ),
                    GOOD["proposals"][2],
                ]
            }
        ),
    )

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert done.proposed == ["detection.en"]
    whys = {d.path: d.why for d in store.read_draft(DRAFT_ID).assist["propose"].dropped}
    assert whys["trigger.en"].startswith("a passage of a word or two is no ground")
    assert whys["lessons.en"].startswith("a passage not in the text"), "the middle of a word is not a passage"
    assert whys["impact.scope"] == "states '99.9', which the text does not hold"


def test_a_400_about_something_else_is_no_reason_to_drop_structured_output(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    script(chat, Reply.status(400, body={"error": {"message": "This model's maximum context length is 8192 tokens"}}))

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))

    assert (done.reason, len(chat.completions)) == ("llm-refused", 1)


def test_a_retry_waits_its_turn_under_the_rate_too(store: Store, root: Path, draft: Draft, chat: ChatStandIn) -> None:
    script(chat, Reply.status(500, {"retry-after-ms": "1"}), Reply.json(GOOD))

    done = assisting.assist(
        store, settings_for(root, chat, llm_max_retries=1, llm_requests_per_minute=120), DRAFT_ID, Ask(languages=["en"])
    )

    first, second = chat.completions
    assert done.outcome == "proposed" and second.at - first.at >= 0.4


def test_a_field_filled_meanwhile_gets_no_proposal_and_is_never_overwritten_by_one(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"]))
    written = store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary", {"en": "Written by hand."}))

    with pytest.raises(ReviewError, match=r"summary\.en has been filled since the proposal was made"):
        assisting.accept_proposal(written, "summary", "dana")

    store.update_draft(DRAFT_ID, lambda d: d.model_copy(update={"proposals": [], "assist": {}}))
    done = assisting.assist(
        store, settings_for(root, chat), DRAFT_ID, Ask(languages=["en"], fields=["summary", "detection"])
    )
    assert done.proposed == ["detection.en"], "summary is not lacking: not asked, and its proposal not kept"


def test_accepting_one_translation_does_not_ask_again_for_the_others(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    def english(d: Draft) -> Draft:
        return set_field(set_field(d, "summary", {"en": SUMMARY}), "lessons", {"en": "Pools need a floor."})

    store.update_draft(DRAFT_ID, english)
    answer = {
        "translations": [
            {"path": "title.ko", "text": "작업 큐 장애"},
            {"path": "summary.ko", "text": KO_SUMMARY},
            {"path": "lessons.ko", "text": "풀에는 하한이 필요하다."},
        ]
    }
    script(chat, Reply.json(answer))
    settings = settings_for(root, chat)
    assert assisting.assist(store, settings, DRAFT_ID, Ask(languages=["ko"])).asked == 1

    store.update_draft(DRAFT_ID, lambda d: assisting.accept_proposal(d, "summary.ko", "dana"))
    again = assisting.assist(store, settings, DRAFT_ID, Ask(languages=["ko"]))

    assert (again.outcome, again.asked, len(chat.completions)) == ("unchanged", 0, 1)


def test_english_with_a_hangul_syllable_is_no_translation(
    store: Store, root: Path, draft: Draft, chat: ChatStandIn
) -> None:
    store.update_draft(DRAFT_ID, lambda d: set_field(d, "summary", {"en": SUMMARY}))
    sneaky = "Ignore the English; see the fix at https://evil.example/fix 가"
    script(chat, Reply.json({"translations": [{"path": "summary.ko", "text": sneaky}]}))

    done = assisting.assist(store, settings_for(root, chat), DRAFT_ID, Ask(languages=["ko"], fields=["summary"]))

    assert done.proposed == [] and store.read_draft(DRAFT_ID).assist["translate-ko"].dropped[0].why == "not Korean"
