"""The language model's API, through the `openai` client: the only code of the assist that touches the
network. A well-kept client does the protocol: retries after a timeout, 429 or 5xx (honouring Retry-After
up to two minutes), timeouts, the error statuses. This adds what it leaves to its caller: requests spaced
under a rate, the answer's length limit and finish reason checked, the answer validated against the
schema asked for, and every failure turned into one AssistError with a reason a draft can keep.

The key is given to the client and nowhere else: it is not logged, not put in a URL, not kept in an error
(openai's errors keep the request, whose headers hold it; only their class and status are read here).
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from pipeline import gate
from pipeline.errors import AssistError
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.wayback.limits import RateLimiter

__all__ = ["Answer", "ChatClient"]

M = TypeVar("M", bound=BaseModel)
# Some servers behind `json_object` wrap the JSON in a Markdown fence.
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


@dataclass
class Answer:
    """A validated answer and what it cost."""

    value: Any
    prompt_tokens: int
    completion_tokens: int


# Request starts to one API, for every client of this process: the runs of `serve`, the page's asks and
# a command share the rate, and the client's own retries count too. Spaced at the rate the operator set
# (no margin under it: the API's limits are not the archive's, whose windows the margin is for).
_LIMITERS: dict[tuple[str, float], RateLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def _limiter_for(url: str, per_minute: float) -> RateLimiter:
    with _LIMITERS_LOCK:
        return _LIMITERS.setdefault((url, per_minute), RateLimiter(per_minute, margin=1.0))


class ChatClient:
    """One OpenAI-compatible API, as the settings name it; one per run, used from one thread at a time."""

    def __init__(self, settings: Settings) -> None:
        assert settings.llm_url and settings.llm_model, "the assist is configured (Settings.assist_configured)"
        self.settings = settings
        self.model = settings.llm_model
        self._limiter = _limiter_for(settings.llm_url, settings.llm_requests_per_minute)
        self._json_schema = True  # until the server refuses it; then {"type": "json_object"}
        self.requests = 0  # HTTP requests sent, retries included
        self._client = self._new_client()
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="assist")

    def _new_client(self) -> Any:
        from openai import DefaultHttpxClient, OpenAI  # only when the assist is used: most runs never load it

        settings = self.settings
        # Never None: the client would then take OPENAI_API_KEY from the environment and send a key meant
        # for another service to whatever llm_url names. A local server wants none and ignores this one.
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
        # Every HTTP request, each retry among them, waits for its turn (the client retries on its own).
        http = DefaultHttpxClient(event_hooks={"request": [self._on_request]})
        return OpenAI(
            base_url=settings.llm_url,
            api_key=key,
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            http_client=http,
        )

    def _on_request(self, request: Any) -> None:
        wait = self._limiter.reserve()
        if wait > 0:
            time.sleep(wait)  # the rate the operator set: requests are spaced, not bunched
        self.requests += 1

    def close(self) -> None:
        self._client.close()
        self._worker.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _create(self, **request: Any) -> Any:
        """The client's call within one deadline for the whole question, retries included: its own timeout is
        per read, which a server sending a byte now and then never meets. Past the deadline the connection is
        closed under the call, and a new client serves the next question."""
        timeout = self.settings.llm_timeout_s
        deadline = timeout * (self.settings.llm_max_retries + 1) + min(5.0, timeout)  # and the backoffs
        future = self._worker.submit(self._client.chat.completions.create, **request)
        try:
            return future.result(timeout=deadline)
        except FutureTimeout:
            stuck = self._client
            self._worker.shutdown(wait=False, cancel_futures=True)
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="assist")
            self._client = self._new_client()
            stuck.close()
            raise AssistError(Reason.LLM_TIMEOUT, f"no whole answer in {deadline:g} s, retries included") from None

    def ask(self, messages: list[dict[str, str]], schema: type[M]) -> Answer:
        """The model's answer to `messages`, validated as `schema`; raises AssistError with the reason."""
        import openai

        format_: dict[str, Any] = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True},
        }
        settings = self.settings
        extra: dict[str, Any] = {settings.llm_token_limit_field: settings.llm_max_answer_tokens}
        if settings.llm_temperature is not None:
            extra["temperature"] = settings.llm_temperature
        for attempt in range(2):
            if not self._json_schema:
                format_ = {"type": "json_object"}
                messages = [*messages[:-1], _with_schema(messages[-1], schema)]
            try:
                completion = self._create(
                    model=self.model,
                    # Plain dicts, as the API takes them; the client's TypedDicts would add nothing here.
                    messages=cast(Any, messages),
                    response_format=cast(Any, format_),
                    extra_body=extra,
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                # An older server that knows no structured output says so; any other 400 is this question's.
                if self._json_schema and attempt == 0 and _names_the_format(exc):
                    self._json_schema = False
                    continue
                raise _failure(exc, settings) from None
            except openai.OpenAIError as exc:
                raise _failure(exc, settings) from None
            except ValueError as exc:  # a body that is not JSON (json.JSONDecodeError)
                raise AssistError(Reason.LLM_INVALID_ANSWER, f"the answer is not JSON ({type(exc).__name__})") from None
            break
        try:
            return self._read(completion, schema)
        except AssistError:
            raise
        except Exception as exc:  # whatever shape a server sends: this draft's failure, never the run's
            raise AssistError(Reason.LLM_INVALID_ANSWER, f"not a chat completion ({type(exc).__name__})") from None

    def _read(self, completion: Any, schema: type[M]) -> Answer:
        choice = completion.choices[0] if completion.choices else None
        usage = completion.usage
        prompt_tokens = _count(getattr(usage, "prompt_tokens", 0))
        completion_tokens = _count(getattr(usage, "completion_tokens", 0))
        if choice is None:
            raise AssistError(Reason.LLM_INVALID_ANSWER, "the answer held no choice")
        if choice.finish_reason == "length":
            limit = self.settings.llm_max_answer_tokens
            raise AssistError(Reason.LLM_CUT_OFF, f"the answer was cut off at its limit of {limit} tokens")
        if choice.message.refusal:
            raise AssistError(Reason.LLM_REFUSED, f"the model refused: {str(choice.message.refusal)[:200]}")
        content = choice.message.content or ""
        if not isinstance(content, str):
            raise AssistError(Reason.LLM_INVALID_ANSWER, "the answer's content is not text")
        fenced = _FENCE.match(content)
        try:
            data = json.loads(fenced.group(1) if fenced else content)
        except json.JSONDecodeError as exc:
            raise AssistError(Reason.LLM_INVALID_ANSWER, f"the answer: not valid JSON: {exc}") from None
        try:
            # A model's answer is text from outside: the gate (pipeline.gate) cleans it before it is read.
            value = schema.model_validate(gate.clean_tree(data)[0])
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in error["loc"])[:120] or "the answer"
            raise AssistError(Reason.LLM_INVALID_ANSWER, f"{where}: {error['msg']}") from None
        return Answer(value, prompt_tokens, completion_tokens)


def _count(value: Any) -> int:
    """A token count as reported: a non-negative int, or 0 (then the estimate is charged)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _with_schema(message: dict[str, str], schema: type[BaseModel]) -> dict[str, str]:
    hint = "\n\nAnswer with JSON that follows this JSON Schema:\n" + json.dumps(schema.model_json_schema())
    return {**message, "content": message["content"] + hint}


def _failure(exc: Exception, settings: Settings) -> AssistError:
    """An openai error as the reason a draft keeps, in words that hold neither the request nor the key."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return AssistError(Reason.LLM_TIMEOUT, "no answer in time, after the retries allowed")
    if isinstance(exc, openai.APIConnectionError):
        return AssistError(Reason.LLM_UNREACHABLE, f"could not connect to the API ({type(exc.__cause__).__name__})")
    if isinstance(exc, openai.RateLimitError):
        return AssistError(Reason.LLM_RATE_LIMITED, "answered 429 (too many requests), after the retries allowed")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500:
            return AssistError(Reason.LLM_SERVER_ERROR, f"answered HTTP {status}, after the retries allowed")
        if status in (401, 403):  # its message may quote the key (api.openai.com's does, masked)
            return AssistError(Reason.LLM_REFUSED, f"answered HTTP {status}: the key was refused")
        said = _error_message(exc)
        if settings.llm_api_key is not None:
            said = said.replace(settings.llm_api_key.get_secret_value(), "<key>")
        return AssistError(Reason.LLM_REFUSED, f"answered HTTP {status}: {said}")
    return AssistError(Reason.LLM_INVALID_ANSWER, f"{type(exc).__name__}")


def _names_the_format(exc: Any) -> bool:
    said = _error_message(exc).lower()
    return any(word in said for word in ("response_format", "json_schema", "json schema", "structured"))


def _error_message(exc: Any) -> str:
    """What an error body says, its message only (never the request)."""
    body = exc.body if isinstance(getattr(exc, "body", None), dict) else {}
    message = body.get("message") or (body.get("error") or {}).get("message") if isinstance(body, dict) else None
    return " ".join(str(message or "no message").split())[:200]
