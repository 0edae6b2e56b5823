"""The chat-completions stand-in, driven by the real `openai` client over loopback HTTP.

Each test starts a stand-in on 127.0.0.1 and asserts both what the client made of its answers and
what the stand-in saw (requests, retries, headers). Retries are kept fast with `retry-after-ms`,
timeouts with small client timeouts; the only real waits are the client's own.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from pipeline.standins.chat import ChatStandIn, Reply

SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string"}, "passages": {"type": "array", "items": {"type": "string"}}},
    "required": ["summary", "passages"],
    "additionalProperties": False,
}
RESPONSE_FORMAT: Any = {"type": "json_schema", "json_schema": {"name": "Proposal", "schema": SCHEMA, "strict": True}}
MESSAGES: Any = [
    {"role": "system", "content": "Propose the draft's fields as JSON."},
    {"role": "user", "content": "The gateway failed for an hour after a deploy."},
]
PROPOSAL = {"summary": "A deploy broke the gateway for an hour.", "passages": ["The gateway failed for an hour"]}
FAST_429 = Reply.status(429, {"retry-after-ms": "5"})


@pytest.fixture(autouse=True)
def _no_ambient_client_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client reads OPENAI_* variables, and httpx2 the proxy ones (loopback included): none of them here."""
    for name in list(os.environ):
        if name.startswith("OPENAI_") or name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name)


@pytest.fixture
def clients() -> Iterator[list[OpenAI]]:
    opened: list[OpenAI] = []
    yield opened
    for client in opened:
        client.close()


def connect(
    clients: list[OpenAI], chat: ChatStandIn, *, api_key: str = "unused", max_retries: int = 0, timeout: float = 5.0
) -> OpenAI:
    client = OpenAI(base_url=chat.url, api_key=api_key, max_retries=max_retries, timeout=timeout)
    clients.append(client)
    return client


def ask(client: OpenAI, chat: ChatStandIn, **extra: Any) -> Any:
    return client.chat.completions.create(
        model=chat.model, messages=MESSAGES, response_format=RESPONSE_FORMAT, max_tokens=100, **extra
    )


# ------------------------------------------------------------ answers


def test_a_good_answer_is_parsed_with_its_usage(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.json(PROPOSAL, usage=(120, 40))]) as chat:
        completion = ask(connect(clients, chat), chat)

    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.refusal is None
    assert choice.message.content is not None
    assert completion.model == "stand-in"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (120, 40)
    assert completion.usage.total_tokens == 160
    assert json.loads(choice.message.content) == PROPOSAL

    # What the client really sent.
    [seen] = chat.requests
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == "Bearer unused"
    assert seen.headers["content-type"] == "application/json"
    assert seen.retry_count == 0
    assert seen.body["model"] == "stand-in"
    assert seen.body["messages"] == MESSAGES
    assert seen.body["max_tokens"] == 100
    assert seen.body["response_format"] == RESPONSE_FORMAT


def test_usage_is_estimated_when_not_scripted(clients: list[OpenAI]) -> None:
    with ChatStandIn() as chat:  # no script: an empty JSON object
        completion = ask(connect(clients, chat), chat)
    assert completion.choices[0].message.content == "{}"
    prompt = "\n".join(m["content"] for m in MESSAGES)
    assert completion.usage.prompt_tokens == -(-len(prompt) // 4)
    assert completion.usage.completion_tokens == 1


@pytest.mark.parametrize(
    "content",
    ['{"summary": "A deploy broke the gate', '```json\n{"summary": "x", "passages": []}\n```', "", '{"wrong": [1]}'],
    ids=["invalid-json", "fenced", "empty", "schema-violation"],
)
def test_content_is_returned_as_it_is(clients: list[OpenAI], content: str) -> None:
    with ChatStandIn(script=[Reply.content(content)]) as chat:
        completion = ask(connect(clients, chat), chat)
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.content == content


def test_a_refusal_reaches_the_client() -> None:
    with ChatStandIn(script=[Reply.content(None, refusal="I can't help with that.")]) as chat:
        with OpenAI(base_url=chat.url, api_key="unused", max_retries=0, timeout=5.0) as client:
            message = ask(client, chat).choices[0].message
    assert message.content is None
    assert message.refusal == "I can't help with that."


def test_an_answer_cut_off_by_its_length_limit(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.length('{"summary": "A deploy br')]) as chat:
        completion = ask(connect(clients, chat), chat)  # create() raises nothing: the caller must look
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == '{"summary": "A deploy br'
    assert completion.usage.completion_tokens == 100  # the request's max_tokens, spent


def test_a_responder_answers_from_the_prompt(clients: list[OpenAI]) -> None:
    def echo(body: dict[str, Any]) -> Reply:
        return Reply.json({"summary": body["messages"][-1]["content"].upper(), "passages": []})

    with ChatStandIn(responder=echo, model="qwen2.5:7b") as chat:
        client = connect(clients, chat)
        assert [m.id for m in client.models.list()] == ["qwen2.5:7b"]
        completion = ask(client, chat)
    assert "THE GATEWAY FAILED" in (completion.choices[0].message.content or "")
    assert [r.path for r in chat.requests] == ["/v1/models", "/v1/chat/completions"]
    assert len(chat.completions) == 1


def test_an_unknown_model_or_a_bad_body_is_refused_without_using_the_script(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.json(PROPOSAL)]) as chat:
        client = connect(clients, chat, max_retries=2)
        with pytest.raises(openai.NotFoundError) as missing:
            client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model=chat.model, messages="not a list")  # type: ignore[arg-type]
        assert ask(client, chat).choices[0].message.content is not None
    assert missing.value.code == "model_not_found"
    assert len(chat.requests) == 3  # 404 and 400 are not retried
    assert chat.answered == 1


# ------------------------------------------------------------ retries


def test_429_with_retry_after_ms_is_retried_until_the_client_gives_up(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[FAST_429]) as chat:  # the last reply repeats
        client = connect(clients, chat, max_retries=2)
        started = time.monotonic()
        with pytest.raises(openai.RateLimitError) as caught:
            ask(client, chat)
        elapsed = time.monotonic() - started

    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_standin_")
    assert [r.retry_count for r in chat.requests] == [0, 1, 2]
    assert elapsed < 1.0  # 5 ms waits, not the 0.5 s backoff


def test_429_then_200_succeeds(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[FAST_429, Reply.json(PROPOSAL)]) as chat:
        completion = ask(connect(clients, chat, max_retries=2), chat)
    assert completion.choices[0].message.content is not None
    assert [r.retry_count for r in chat.requests] == [0, 1]
    assert chat.requests[0].body == chat.requests[1].body  # the same request again


def test_429_without_retry_after_is_retried_after_a_backoff(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.status(429), Reply.json(PROPOSAL)]) as chat:
        ask(connect(clients, chat, max_retries=1), chat)
    first, second = chat.requests
    assert 0.3 < second.at - first.at < 3.0  # the client's own backoff: 0.5 s less up to 25 %


def test_a_retry_after_over_two_minutes_is_not_retried(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.status(429, {"Retry-After": "500"})]) as chat:
        with pytest.raises(openai.RateLimitError):
            ask(connect(clients, chat, max_retries=2), chat)
    assert len(chat.requests) == 1


def test_500_is_retried_then_raised(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.status(500, {"retry-after-ms": "5"})]) as chat:
        with pytest.raises(openai.InternalServerError) as caught:
            ask(connect(clients, chat, max_retries=2), chat)
    assert caught.value.status_code == 500
    assert caught.value.type == "server_error"
    assert [r.retry_count for r in chat.requests] == [0, 1, 2]


def test_400_is_not_retried(clients: list[OpenAI]) -> None:
    body = {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}
    with ChatStandIn(script=[Reply.status(400, body=body)]) as chat:
        with pytest.raises(openai.BadRequestError) as caught:
            ask(connect(clients, chat, max_retries=2), chat)
    assert caught.value.message == "Error code: 400 - response_format json_schema is not supported"
    assert len(chat.requests) == 1


# ------------------------------------------------------------ timeouts


def test_a_slow_reply_times_the_client_out_and_the_stand_in_still_closes_at_once(clients: list[OpenAI]) -> None:
    chat = ChatStandIn(script=[Reply.slow(30, then=Reply.json(PROPOSAL))])
    chat.start()
    try:
        client = connect(clients, chat, max_retries=1, timeout=0.2)
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            ask(client, chat)
        elapsed = time.monotonic() - started
    finally:
        closing = time.monotonic()
        chat.close()  # both handlers are still waiting out their 30 s
        closed_in = time.monotonic() - closing

    assert [r.retry_count for r in chat.requests] == [0, 1]  # a timeout is retried like a 500
    assert 0.4 < elapsed < 3.0  # two timeouts and a backoff between them
    assert closed_in < 1.0
    assert not chat.server.handlers  # woken, not abandoned: no handler outlives the stand-in


def test_a_slow_reply_within_the_timeout_is_answered(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.slow(0.05, then=Reply.json(PROPOSAL))]) as chat:
        completion = ask(connect(clients, chat, timeout=5.0), chat)
    assert completion.choices[0].message.content is not None


# ------------------------------------------------------------ the key


def test_a_request_without_the_right_key_gets_401(clients: list[OpenAI]) -> None:
    with ChatStandIn(script=[Reply.json(PROPOSAL)], api_key="sk-local-123") as chat:
        with pytest.raises(openai.AuthenticationError) as wrong:
            ask(connect(clients, chat, api_key="sk-other", max_retries=2), chat)
        with pytest.raises(openai.AuthenticationError):
            ask(connect(clients, chat), chat, extra_headers={"Authorization": openai.Omit()})
        completion = ask(connect(clients, chat, api_key="sk-local-123"), chat)

    assert wrong.value.code == "invalid_api_key"
    assert completion.choices[0].message.content is not None
    assert [r.headers.get("authorization") for r in chat.requests] == [
        "Bearer sk-other",  # 401 is not retried
        None,
        "Bearer sk-local-123",
    ]
    assert chat.answered == 1


def test_the_key_is_not_in_the_stand_ins_logs_or_repr(clients: list[OpenAI], caplog: pytest.LogCaptureFixture) -> None:
    key = "sk-local-secret-0451"
    caplog.set_level(logging.DEBUG, logger="pipeline.standins.chat")
    with ChatStandIn(script=[FAST_429, Reply.json(PROPOSAL)], api_key=key) as chat:
        with pytest.raises(openai.AuthenticationError) as refused:
            ask(connect(clients, chat, api_key="sk-wrong"), chat)
        ask(connect(clients, chat, api_key=key, max_retries=1), chat)
        shown = [repr(chat), str(chat), repr(chat.requests), *(repr(r) for r in chat.requests)]

    assert [r.headers["authorization"] for r in chat.requests] == ["Bearer sk-wrong", f"Bearer {key}", f"Bearer {key}"]
    standin_log = [r for r in caplog.records if r.name == "pipeline.standins.chat"]
    assert len(standin_log) == 3
    assert all(key not in r.getMessage() for r in standin_log)
    assert all(key not in text and "sk-wrong" not in text for text in shown)
    assert "sk-wrong" not in str(refused.value.body)  # the 401 body does not echo the key sent


def test_the_quoting_answer_quotes_cue_sentences_of_the_text_and_translates_nothing() -> None:
    from pipeline.standins.chat import quoting_answer

    text = (
        "The queue stopped for forty minutes after a deploy of the workers.\n\n"
        "We restored the pool size and added a check."
    )
    question = {"fields": ["trigger", "remediation", "lessons"], "text": text}
    body = {"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": json.dumps(question)}]}
    answer = json.loads(quoting_answer(body).text or "")
    assert [p["field"] for p in answer["proposals"]] == ["trigger", "remediation"]
    assert all(p["passages"] == [p["text"]] and p["text"] in text for p in answer["proposals"])
    translate = {"fields": [{"path": "summary.ko", "text": "English"}]}
    body["messages"][1]["content"] = json.dumps(translate)
    assert json.loads(quoting_answer(body).text or "") == {"translations": []}
