"""The assist's I/O shell: a draft read, the model asked (unless nothing changed since it last was), the
proposals checked and written beside the draft's fields, under its lock.

    one = assist(store, settings, "acme-outage-1a2b3c4d")                      # English, then Korean
    report = assist_drafts(store, settings, ids)                               # after a crawl: a run

Two prompts, each asked once per draft and run at most: `propose` for the English fields the draft lacks,
then `translate-ko` for its English texts that have no Korean (or a machine translation gone stale). A
prompt is not asked again while the draft's text (or the English to translate), the prompt's version and
the model are those it answered: an unchanged source costs nothing. A run and each draft have a token
budget; a question that would pass either is not asked (`llm-budget`). A slow or failing API costs the
draft its proposals, never the run: the failure is kept on the draft (`assist.<prompt>.failure`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pipeline.assist.answers import Prompt, ProposeAnswer, TranslateAnswer, load_prompt
from pipeline.assist.client import ChatClient
from pipeline.assist.propose import (
    Asked,
    check_fields,
    checked_proposals,
    checked_translations,
    english_texts,
    lacking,
    propose_messages,
    sha,
    translate_messages,
    untranslated,
    with_proposals,
)
from pipeline.batch import Report
from pipeline.errors import AssistError, RecordError, ReviewError, SettingsError
from pipeline.models import AssistFailure, AssistRun, Draft, DraftState, DroppedProposal, Proposal, utc_now
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = ["Ask", "AssistReport", "DraftAssist", "assist", "assist_drafts"]

_log = logging.getLogger("incidentlib")
Outcome = Literal["proposed", "unchanged", "nothing", "failed", "skipped"]
# About four characters a token for English prose; a question's cost is judged before it is asked.
_CHARS_PER_TOKEN = 3.5
# Drafts in a row that a silent or unreachable API may cost before the run stops asking it.
_BREAKER = 3


@dataclass
class DraftAssist:
    """What the assist did for one draft."""

    draft_id: str
    # unchanged: asked before about the same text; nothing: the draft lacks nothing, or no proposal stood
    outcome: Outcome
    proposed: list[str] = field(default_factory=list)  # the paths of the proposals kept
    asked: int = 0  # questions asked
    cached: int = 0  # questions not asked: the model answered them about the same text before
    dropped: int = 0  # proposals refused (a passage not in the text, ...)
    tokens: int = 0
    reason: Reason | None = None
    message: str | None = None

    def said(self) -> list[str]:
        """What came of it, in a line or three, as the command says it."""
        lines = [
            {
                "proposed": f"{len(self.proposed)} proposals: {', '.join(self.proposed)}",
                "unchanged": "asked before about the same text: nothing asked (--again asks anyway)",
                "nothing": "nothing to propose" if not self.dropped else "no proposal stood",
                "skipped": "not asked: the draft is published, rejected, merged or has no text",
                "failed": f"{self.reason}: {self.message}",
            }[self.outcome]
        ]
        if self.dropped:
            lines.append(f"{self.dropped} proposals dropped (incidentlib show {self.draft_id} says why)")
        if self.tokens:
            lines.append(f"{self.tokens} tokens")
        return [f"{self.draft_id}: {line}" for line in lines]


@dataclass
class AssistReport(Report):
    ITEMS, OUTCOMES = "drafts", Outcome
    SHOWN = ("counts", "tokens", "requests", "drafts", "errors")

    drafts: list[DraftAssist] = field(default_factory=list)
    tokens: int = 0
    requests: int = 0
    errors: list[Exception] = field(default_factory=list, repr=False)  # the bugs met: raise_unexpected


@dataclass
class _Budget:
    run_left: int

    def allows(self, draft_left: int, tokens: int) -> bool:
        return tokens <= min(self.run_left, draft_left)


# Chinese, Japanese and Korean characters cost about a token each, not a third of one.
_WIDE = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7a3\uf900-\ufaff]")


def _estimate(messages: list[dict[str, str]], settings: Settings) -> int:
    text = "".join(m["content"] for m in messages)
    wide = len(_WIDE.findall(text))
    return int((len(text) - wide) / _CHARS_PER_TOKEN) + wide + settings.llm_max_answer_tokens


@dataclass(frozen=True)
class Ask:
    """What to ask the model about a draft: the fields (None: every field it lacks), the languages (en:
    propose what it lacks; ko: translate its English), and whether to ask `again` though nothing changed."""

    fields: Sequence[str] | None = None
    languages: Sequence[str] = ("en", "ko")
    again: bool = False


def assist(store: Store, settings: Settings, draft_id: str, ask: Ask = Ask()) -> DraftAssist:
    """Ask the model about one draft (see the module's text). Raises RecordNotFound or InvalidRecord for a
    draft that is not there to ask about."""
    store.read_draft(draft_id)
    return assist_drafts(store, settings, [draft_id], ask).drafts[0]


def assist_drafts(
    store: Store,
    settings: Settings,
    draft_ids: Sequence[str],
    ask: Ask = Ask(),
    on_draft: Callable[[DraftAssist], None] | None = None,
) -> AssistReport:
    """Ask about each draft in turn, within the run's token budget; one draft's failure is its own."""
    fields, languages, again = ask.fields, ask.languages, ask.again
    if not settings.assist_configured:
        raise SettingsError(
            "the assist needs INCIDENTLIB_LLM_URL and INCIDENTLIB_LLM_MODEL (an OpenAI-compatible API)",
            name="INCIDENTLIB_LLM_URL",
        )
    if fields is not None:
        try:
            fields = check_fields(fields)
        except ValueError as exc:
            raise ReviewError(str(exc)) from None
    report = AssistReport()
    budget = _Budget(settings.llm_tokens_per_run)
    errors: list[Exception] = []
    down = 0  # drafts in a row the API did not answer at all
    with ChatClient(settings) as client:
        asker = _Asker(store, settings, client, budget)
        for draft_id in draft_ids:
            if down >= _BREAKER:
                done = DraftAssist(draft_id, "skipped", reason=Reason.LLM_UNREACHABLE)
                done.message = f"not asked: the API failed the {_BREAKER} drafts before it; asked next run"
                report.drafts.append(done)
                if on_draft is not None:
                    on_draft(done)
                continue
            try:
                done = asker.one(draft_id, fields, languages, again)
            except RecordError as exc:  # removed or broken since the run began: validate names it
                done = DraftAssist(draft_id, "skipped", reason=Reason.INVALID_DRAFT, message=str(exc)[:300])
            except Exception as exc:  # a bug, or a record gone or broken: this draft's, the others go on
                _log.error("assist %s: unexpected error", draft_id, exc_info=exc)
                errors.append(exc)
                done = DraftAssist(draft_id, "failed", reason=Reason.INTERNAL_ERROR, message=repr(exc)[:300])
            down = down + 1 if done.reason in (Reason.LLM_TIMEOUT, Reason.LLM_UNREACHABLE) else 0
            report.drafts.append(done)
            report.tokens += done.tokens
            if on_draft is not None:
                on_draft(done)
        report.requests = client.requests
    report.errors = errors
    return report


@dataclass
class _Question:
    """One question to the model, as `_Asker.ask` puts it and what it makes of the answer."""

    prompt: Prompt
    messages: list[dict[str, str]]
    estimate: int  # tokens, the answer's allowance included, judged before asking
    fields: list[str]
    text_sha: str
    schema: type[ProposeAnswer] | type[TranslateAnswer]
    check: Callable[[Draft, Any, datetime], tuple[list[Proposal], list[DroppedProposal]]]
    still_same: Callable[[Draft], bool]  # the draft still says what was asked about
    hashes: dict[str, str] = field(default_factory=dict)  # translate-ko: kept if answered
    hashes_before: dict[str, str] = field(default_factory=dict)  # translate-ko: kept if not


@dataclass
class _Asker:
    """What one run asks with: the store, the settings, the API's client and the run's budget."""

    store: Store
    settings: Settings
    client: ChatClient
    budget: _Budget

    def one(self, draft_id: str, fields: Sequence[str] | None, languages: Sequence[str], again: bool) -> DraftAssist:
        done = DraftAssist(draft_id, "nothing")
        draft = self.store.read_draft(draft_id)
        if draft.state in (DraftState.PUBLISHED, DraftState.REJECTED, DraftState.MERGED) or not draft.text:
            done.outcome = "skipped"
            return done
        draft_left = self.settings.llm_tokens_per_draft
        if "en" in languages:
            wanted = lacking(draft, fields)
            if wanted:
                draft_left = self.english(draft, wanted, again, done, draft_left)
                draft = self.store.read_draft(draft_id)
        if "ko" in languages and done.outcome != "failed":
            english = untranslated(draft, "ko", fields)
            if english:
                self.korean(draft, english, again, done, draft_left)
        if done.outcome != "failed":
            done.outcome = "proposed" if done.proposed else "unchanged" if done.cached and not done.asked else "nothing"
        return done

    def english(self, draft: Draft, wanted: list[str], again: bool, done: DraftAssist, draft_left: int) -> int:
        prompt = load_prompt("propose")
        text_sha = sha(draft.text or "")
        if not again and _asked_before(draft, prompt, self.client.model, text_sha, wanted):
            done.cached += 1
            return draft_left
        # The text is cut to what the draft's budget leaves beside the prompt and the answer (the run's
        # leftover does not cut it: an answer to a cut text is cached); the question is JSON, whose escapes
        # make it longer than the text, so the cut is made again, shorter, until it fits.
        answer_tokens = self.settings.llm_max_answer_tokens
        text_limit = len(draft.text or "")
        messages = propose_messages(draft, wanted, prompt, text_limit)
        estimate = _estimate(messages, self.settings)
        for _ in range(4):
            if estimate <= draft_left:
                break
            room, over = draft_left - answer_tokens, estimate - answer_tokens
            text_limit = max(0, int(text_limit * room / over * 0.95)) if room > 0 and over > 0 else 0
            messages = propose_messages(draft, wanted, prompt, text_limit)
            estimate = _estimate(messages, self.settings)
        model = self.client.model
        question = _Question(
            prompt,
            messages,
            estimate,
            wanted,
            text_sha,
            ProposeAnswer,
            lambda current, answer, made_at: checked_proposals(current, answer, wanted, Asked(model, prompt, made_at)),
            still_same=lambda current: sha(current.text or "") == text_sha,
        )
        return self.ask(draft, question, done, draft_left)

    def korean(self, draft: Draft, english: dict[str, str], again: bool, done: DraftAssist, draft_left: int) -> int:
        prompt = load_prompt("translate-ko")
        model = self.client.model
        last = draft.assist.get(prompt.name)
        # Each path is remembered with the hash of its English: only the ones not answered about the same
        # English, under this prompt and model, are asked.
        known = last.hashes if last and (last.prompt, last.model) == (prompt.id, model) else {}
        if not again:
            english = {path: text for path, text in english.items() if known.get(path) != sha(text)}
            if not english:
                done.cached += 1
                return draft_left
        messages = translate_messages(english, prompt)
        question = _Question(
            prompt,
            messages,
            _estimate(messages, self.settings),
            list(english),
            sha(json.dumps(english, sort_keys=True, ensure_ascii=False)),
            TranslateAnswer,
            lambda current, answer, made_at: checked_translations(
                current, answer, english, Asked(model, prompt, made_at)
            ),
            still_same=lambda current: all(
                english_texts(current).get(path.rsplit(".", 1)[0]) == text for path, text in english.items()
            ),
            hashes={**known, **{path: sha(text) for path, text in english.items()}},
            hashes_before=known,
        )
        return self.ask(draft, question, done, draft_left)

    def ask(self, draft: Draft, question: _Question, done: DraftAssist, draft_left: int) -> int:
        """One question to the model and what comes of it, written to the draft; the draft's budget left."""
        prompt, estimate, budget = question.prompt, question.estimate, self.budget
        run = AssistRun(
            asked_at=utc_now(),
            model=self.client.model,
            prompt=prompt.id,
            text_sha=question.text_sha,
            fields=question.fields,
            hashes=question.hashes_before,
        )
        if not budget.allows(draft_left, estimate):
            left = min(draft_left, budget.run_left)
            done.outcome, done.reason = "failed", Reason.LLM_BUDGET
            done.message = f"{prompt.name}: would cost about {estimate} tokens, {left} left of the budget"
            self.keep_failure(draft.id, prompt, run, done)
            return draft_left
        done.asked += 1
        try:
            answer = self.client.ask(question.messages, question.schema)
        except AssistError as exc:
            budget.run_left -= estimate  # an answer that came and failed its checks cost tokens too; unknown how many
            done.outcome, done.reason, done.message = "failed", exc.reason, f"{prompt.name}: {exc.detail}"
            self.keep_failure(draft.id, prompt, run, done)
            return draft_left - estimate
        spent = answer.prompt_tokens + answer.completion_tokens or estimate
        budget.run_left -= spent
        done.tokens += spent
        run = run.model_copy(
            update={
                "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens,
                "hashes": question.hashes,
            }
        )
        kept: list[str] = []
        dropped_here: list[DroppedProposal] = []

        def change(current: Draft) -> Draft | None:
            if not question.still_same(current):
                return None  # crawled or edited meanwhile: what was asked is not what the draft says now
            proposals, dropped = question.check(current, answer.value, run.asked_at)
            kept[:] = [p.path for p in proposals]
            dropped_here[:] = dropped
            made = run.model_copy(update={"proposed": len(proposals), "dropped": dropped})
            return with_proposals(current, proposals, made, prompt.name)

        self.store.update_draft(draft.id, change)
        done.proposed += kept
        done.dropped += len(dropped_here)
        return draft_left - spent

    def keep_failure(self, draft_id: str, prompt: Prompt, run: AssistRun, done: DraftAssist) -> None:
        failure = AssistFailure(reason=done.reason or Reason.INTERNAL_ERROR, message=done.message or "")
        failed = run.model_copy(update={"failure": failure})
        self.store.update_draft(draft_id, lambda d: d.model_copy(update={"assist": {**d.assist, prompt.name: failed}}))


def _asked_before(draft: Draft, prompt: Prompt, model: str, text_sha: str, fields: list[str]) -> bool:
    last = draft.assist.get(prompt.name)
    return (
        last is not None
        and last.failure is None
        and (last.prompt, last.model, last.text_sha) == (prompt.id, model, text_sha)
        and set(fields) <= set(last.fields)
    )
