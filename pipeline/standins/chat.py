"""A local stand-in for an OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp).

It serves, on 127.0.0.1, what the writer assist asks of such a server:

    POST /v1/chat/completions   a scripted answer: a chat.completion object, or an error status
    GET  /v1/models             the one model it reports (`model`, "stand-in" by default)

so that tests drive the real `openai` client over real HTTP and assert what it really did:
every request is recorded (`requests`: time, method, path, headers with lower-case names, the
parsed JSON body), retries and their `x-stainless-retry-count` headers included.

    with ChatStandIn(script=[Reply.status(429, {"retry-after-ms": "5"}), Reply.json({"summary": "…"})]) as chat:
        client = OpenAI(base_url=chat.url, api_key="unused", max_retries=2)
        completion = client.chat.completions.create(model=chat.model, messages=[…])
        assert len(chat.requests) == 2

Answers come from `script` (a list of `Reply`, one per completion request, the last repeated)
or from `responder` (a function from the request body to a `Reply`, for a stand-in that answers
from the prompt). A `Reply` is a completion (`Reply.json`, `Reply.content`, `Reply.length`), an
error status with an OpenAI-shaped error body (`Reply.status`), or either of those after a wait
(`Reply.slow`). The wait ends early when the stand-in closes, and the request is then left
unanswered: closing never waits for a sleeping handler.

What it checks before the script is consulted, as the real servers do (none of these uses a
scripted answer): with `api_key` set, a request without `Authorization: Bearer <api_key>` gets
401 (`invalid_api_key`); a body that is not a JSON object with `model` and a list of `messages`
gets 400; a model other than `model` gets 404 (`model_not_found`); any other path, 404.

Token counts: a completion's usage is the scripted one, or else estimated at four characters a
token (the prompt from the messages' text, the answer from its content); an answer cut off by
its length limit (`finish_reason` "length") without a scripted usage spent the request's
`max_tokens` (or `max_completion_tokens`).

The key is compared and never kept anywhere else: it is not in `repr`, in the stand-in's log
(logger `pipeline.standins.chat`, DEBUG: one line a request) or in an error body. A recorded
request holds the Authorization header the client sent (that is what a test asserts), but its
`repr` masks it.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from pipeline.standins.server import QuietServer

__all__ = ["ChatStandIn", "Reply", "Request", "quoting_answer"]

log = logging.getLogger(__name__)

COMPLETIONS = "/v1/chat/completions"
MODELS = "/v1/models"

# Error bodies by status: the type and code api.openai.com gives; its messages, shortened (the
# real 401 quotes the key it was sent, masked: this one never does).
_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("We could not parse the JSON body of your request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    404: ("The requested resource does not exist.", "invalid_request_error", None),
    429: ("Rate limit reached for requests.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
    503: ("The server is overloaded or not ready yet.", "server_error", None),
}


def error_body(status: int, message: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped error body: `{"error": {"message", "type", "param", "code"}}`."""
    fallback = ("The server had an error.", "server_error", None)
    if status < 500:
        fallback = ("The request could not be served.", "invalid_request_error", None)
    default_message, kind, default_code = _ERRORS.get(status, fallback)
    return {"error": {"message": message or default_message, "type": kind, "param": None, "code": code or default_code}}


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods; the fields are what they set."""

    status_code: int = 200
    text: str | None = ""  # the message's content
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); None: estimated
    refusal: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    error: Mapping[str, Any] | str | None = None  # an error status's body: JSON, or text as it is
    delay: float = 0.0  # seconds to wait before answering
    drip: float = 0.0  # seconds between the body's bytes: a server that never stops answering, slowly
    raw: bytes | None = None  # a body sent as it is, whatever it is (a web page where the API should be)

    @classmethod
    def json(cls, obj: Any, *, usage: tuple[int, int] | None = None) -> Reply:
        """A completion whose content is `json.dumps(obj)`, finish_reason "stop"."""
        return cls(text=json.dumps(obj), usage=usage)

    @classmethod
    def content(
        cls,
        text: str | None,
        finish_reason: str = "stop",
        *,
        usage: tuple[int, int] | None = None,
        refusal: str | None = None,
    ) -> Reply:
        """A completion with this content as it is: invalid JSON, fenced JSON, "" or None."""
        return cls(text=text, finish_reason=finish_reason, usage=usage, refusal=refusal)

    @classmethod
    def length(cls, partial_text: str, *, usage: tuple[int, int] | None = None) -> Reply:
        """An answer cut off by its length limit: finish_reason "length"; without `usage`, the
        completion spent the request's max_tokens (or max_completion_tokens) when it gave one."""
        return cls(text=partial_text, finish_reason="length", usage=usage)

    @classmethod
    def status(
        cls, code: int, headers: Mapping[str, str] | None = None, body: Mapping[str, Any] | str | None = None
    ) -> Reply:
        """An error status (429, 500, 400, …) with an OpenAI-shaped error body unless `body` is given;
        `headers` such as `{"Retry-After": "1"}` or `{"retry-after-ms": "5"}` are sent as they are."""
        if code < 400:
            raise ValueError(f"Reply.status is for error statuses, not {code}")
        return cls(status_code=code, text=None, headers=dict(headers or {}), error=body or error_body(code))

    @classmethod
    def dripping(cls, interval: float, then: Reply | None = None) -> Reply:
        """`then` sent a byte every `interval` seconds: each read comes in time, the whole answer never does."""
        then = then if then is not None else cls.json({})
        return replace(then, drip=interval)

    @classmethod
    def page(cls, body: bytes, content_type: str = "text/html; charset=utf-8") -> Reply:
        """A 200 whose body is `body` as it is: not a chat completion (a wrong base URL, a proxy's page)."""
        return cls(raw=body, headers={"Content-Type": content_type})

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        """`then` (by default an empty JSON object), answered after `seconds`; unanswered if the
        stand-in closes meanwhile."""
        then = then if then is not None else cls.json({})
        return replace(then, delay=then.delay + seconds)


@dataclass(frozen=True)
class Request:
    """One request as the stand-in saw it."""

    at: float  # time.monotonic() of its arrival
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # the parsed JSON; the text when it was not JSON; None without a body

    @property
    def retry_count(self) -> int | None:
        """The openai client's `x-stainless-retry-count`: 0 for a first try, 1, 2… for its retries."""
        value = self.headers.get("x-stainless-retry-count")
        return int(value) if value is not None and value.isdigit() else None

    def __repr__(self) -> str:
        headers = {k: ("<masked>" if k == "authorization" else v) for k, v in self.headers.items()}
        return f"Request(at={self.at!r}, method={self.method!r}, path={self.path!r}, headers={headers!r}, body=…)"


class _Server(QuietServer):
    standin: ChatStandIn

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()
        self.handlers: set[threading.Thread] = set()  # one a connection, until it closes
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:  # socketserver's signature
        # ThreadingMixIn's, but each thread is known from its start, so that closing can wait for it.
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), name="chat-handler", daemon=True
        )
        with self.connections_lock:
            self.connections.add(request)
            self.handlers.add(thread)
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.discard(request)
                self.handlers.discard(threading.current_thread())

    def hang_up(self, timeout: float) -> None:
        """Close every open connection (a handler waiting for a kept-alive client's next request
        ends) and wait for the handlers to end."""
        with self.connections_lock:
            connections, handlers = list(self.connections), list(self.handlers)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        for thread in handlers:
            thread.join(max(0.0, deadline - time.monotonic()))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet: the stand-in logs for itself
        pass

    def do_GET(self) -> None:  # http.server's name
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        standin = self.server.standin
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else b""
        if standin._closing.is_set():  # a kept-alive connection used after close: hung up on
            self._hang_up()
            return
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = Request(time.monotonic(), method, self.path, headers, body)
        reply = standin._reply_to(request)
        if reply.delay and standin._closing.wait(reply.delay):
            log.debug("%s %s: closed while waiting, unanswered", method, self.path)
            self._hang_up()
            return
        if reply.raw is not None:
            status, payload, content_type = 200, reply.raw, reply.headers.get("Content-Type", "text/html")
        else:
            status, payload, content_type = standin._render(reply, request)
        log.debug("%s %s -> %d (retry %s)", method, self.path, status, request.retry_count)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("x-request-id", f"req_standin_{standin._next_id()}")
            for name, value in reply.headers.items():
                if name.lower() != "content-type":
                    self.send_header(name, value)
            self.end_headers()
            if not reply.drip:
                self.wfile.write(payload)
            for index in range(len(payload) if reply.drip else 0):
                if standin._closing.wait(reply.drip):
                    self._hang_up()
                    return
                self.wfile.write(payload[index : index + 1])
                self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client gave up (its timeout) and hung up

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _prompt_text(body: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": …}, …]
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


# Words that mark the sentence a field would quote, for `quoting_answer`.
_CUES = {
    "summary": (),
    "symptoms_text": ("error", "fail", "unavailable", "slow", "timeout", "hang"),
    "trigger": ("after", "deploy", "change", "upgrade", "release", "migration"),
    "detection": ("alert", "alarm", "noticed", "detected", "paged", "reported"),
    "impact": ("users", "customers", "affected", "minutes", "hours", "requests"),
    "root_cause": ("root cause", "caused by", "because", "due to"),
    "lessons": ("learn", "lesson", "should", "in future"),
    "remediation": ("fixed", "restored", "rolled back", "added", "will "),
}
_CAUSES = (("config", "configuration-error"), ("bug", "software-bug"), ("capacity", "capacity-exhaustion"))


def quoting_answer(body: Mapping[str, Any]) -> Reply:
    """An answer made from the question without a model: each field wanted gets the first sentence of the
    text that holds one of its cue words (the summary, the first two), quoted as both the proposal and its
    passage; a translation question gets no translation. For the offline demo of the machinery (and
    `bench/assist.py --stand-in`), never a measure of what a model writes."""
    try:
        question = json.loads(body["messages"][-1]["content"])
    except (KeyError, IndexError, TypeError, ValueError):
        return Reply.json({"proposals": []})
    fields = question.get("fields") or []
    if fields and isinstance(fields[0], dict):  # the translate prompt's: paths and English texts
        return Reply.json({"translations": []})
    text = str(question.get("text") or "")
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n{2,}", text) if 40 <= len(s.strip()) <= 300]
    proposals = []
    for field_name in fields:
        cues = _CUES.get(field_name, ())
        chosen = sentences[:2] if not cues else [s for s in sentences if any(c in s.lower() for c in cues)][:1]
        if not chosen:
            continue
        term = None
        if field_name == "root_cause":
            term = next((t for word, t in _CAUSES if word in chosen[0].lower()), None)
            if term is None:
                continue
        proposals.append({"field": field_name, "text": " ".join(chosen), "term": term, "passages": chosen})
    return Reply.json({"proposals": proposals})


class ChatStandIn:
    """Start with `with ChatStandIn(...) as chat:`; `chat.url` is the base URL (ending in /v1)."""

    def __init__(
        self,
        script: list[Reply] | None = None,
        *,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
        model: str = "stand-in",
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        if script is not None and responder is not None:
            raise ValueError("give a script or a responder, not both")
        if script is not None and not script:
            raise ValueError("a script needs at least one reply")
        self.script: list[Reply] = list(script) if script is not None else [Reply.json({})]
        self.responder = responder
        self.model = model
        self._api_key = api_key
        self.requests: list[Request] = []
        self.answered = 0  # completion requests that took a scripted (or responder's) reply
        self._ids = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.server = _Server(("127.0.0.1", port), _Handler)
        self.server.standin = self
        self.port: int = self.server.server_address[1]
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        keyed = ", api_key=<set>" if self._api_key is not None else ""
        return f"ChatStandIn(url={self.url!r}, model={self.model!r}{keyed}, requests={len(self.requests)})"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def completions(self) -> list[Request]:
        """The requests to /v1/chat/completions, in order."""
        with self._lock:
            return [r for r in self.requests if r.path == COMPLETIONS]

    def __enter__(self) -> ChatStandIn:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name="chat", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop at once: waiting replies end unanswered, open connections are hung up on, and
        every handler has ended when this returns (nothing is recorded or logged after)."""
        self._closing.set()
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=10)
        self.server.server_close()
        self.server.hang_up(timeout=10)

    # ------------------------------------------------------------ answers

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _reply_to(self, request: Request) -> Reply:
        """Record the request and choose its reply: a check's error, or the script's next answer."""
        with self._lock:
            self.requests.append(request)
        if self._api_key is not None and not self._authorised(request.headers.get("authorization")):
            return Reply.status(401)
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path == MODELS:
            return Reply(text=None)  # rendered as the model list
        if request.method != "POST" or path != COMPLETIONS:
            return Reply.status(404, body=error_body(404, f"Invalid URL ({request.method} {path})"))
        body = request.body
        if not isinstance(body, dict):
            return Reply.status(400)
        if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
            missing = "model" if not isinstance(body.get("model"), str) else "messages"
            message = f"Missing required parameter: '{missing}'."
            return Reply.status(400, body=error_body(400, message, "missing_required_parameter"))
        if body["model"] != self.model:
            message = f"The model `{body['model']}` does not exist or you do not have access to it."
            return Reply.status(404, body=error_body(404, message, "model_not_found"))
        if self.responder is not None:
            reply = self.responder(body)
            with self._lock:
                self.answered += 1
            return reply
        with self._lock:
            reply = self.script[min(self.answered, len(self.script) - 1)]
            self.answered += 1
        return reply

    def _authorised(self, authorization: str | None) -> bool:
        assert self._api_key is not None
        expected = f"Bearer {self._api_key}".encode()
        return hmac.compare_digest((authorization or "").encode(), expected)

    def _render(self, reply: Reply, request: Request) -> tuple[int, bytes, str]:
        """The status, body and Content-Type of a reply to this request."""
        if reply.status_code >= 400:
            if isinstance(reply.error, str):
                return reply.status_code, reply.error.encode(), "text/plain; charset=utf-8"
            error = reply.error or error_body(reply.status_code)
            return reply.status_code, json.dumps(error).encode(), "application/json"
        if request.method == "GET":
            owned = {"id": self.model, "object": "model", "created": 0, "owned_by": "stand-in"}
            return 200, json.dumps({"object": "list", "data": [owned]}).encode(), "application/json"
        body: dict[str, Any] = request.body
        if reply.usage is not None:
            prompt_tokens, completion_tokens = reply.usage
        else:
            prompt_tokens = _tokens(_prompt_text(body))
            completion_tokens = _tokens(reply.text or "")
            limit = body.get("max_tokens", body.get("max_completion_tokens"))
            if reply.finish_reason == "length" and isinstance(limit, int):
                completion_tokens = limit
        completion = {
            "id": f"chatcmpl-standin-{self._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": reply.text,
                        "refusal": reply.refusal,
                        "annotations": [],
                    },
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": None,
        }
        return 200, json.dumps(completion).encode(), "application/json"
