"""A scripted OpenAI-compatible chat-completions server for the tests: 127.0.0.1, a port of its own.

    with ChatServer([Reply.answer({"proposals": [...]}), Reply.error(500)]) as chat:
        settings = Settings(root=root, llm_url=chat.base_url, llm_model="stand-in-7b")
        ...
        chat.requests            # every request it saw: path and parsed JSON body

Each request takes the next scripted reply; when the script runs out the last one repeats. A stop-gap
for the web page's tests until `pipeline.standins.chat` (being written beside) is merged: then use it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "Reply", "Seen"]


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering

    @classmethod
    def answer(cls, value: Any, *, model: str = "stand-in-7b", delay_s: float = 0.0) -> Reply:
        """A chat.completion whose message is `value` as JSON (a string is sent as it is)."""
        content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        payload = {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
        }
        return cls(200, json.dumps(payload).encode(), {"Content-Type": "application/json"}, delay_s)

    @classmethod
    def error(cls, status: int, message: str = "scripted") -> Reply:
        body = json.dumps({"error": {"message": message, "type": "stand_in", "code": str(status)}}).encode()
        return cls(status, body, {"Content-Type": "application/json"})


@dataclass
class Seen:
    path: str
    body: Any


class ChatServer:
    def __init__(self, script: list[Reply]) -> None:
        assert script, "a script of one reply at least"
        self.script = list(script)
        self.requests: list[Seen] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with lock:
                    reply = outer.script[min(len(outer.requests), len(outer.script) - 1)]
                    outer.requests.append(Seen(self.path, body))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="chat-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def questions(self) -> list[dict[str, Any]]:
        """What each request asked: its user message, parsed (the fields wanted, the text or the English)."""
        return [
            json.loads(seen.body["messages"][-1]["content"].split("\n\nAnswer with JSON")[0]) for seen in self.requests
        ]

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
