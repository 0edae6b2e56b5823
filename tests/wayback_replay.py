"""A loopback server that gives recorded Wayback Machine answers back, strictly in order.

A fixture (`tests/fixtures/wayback/*.json`) is one exchange or a few: the requests the client
is expected to make, in order, and what the service answered to each. The replay is as strict
as a cassette: a request that is not the next one expected (method, path, and each query
parameter the fixture names, compared decoded and whole) gets HTTP 418 and is kept in
`unexpected`, so a test sees both a client that asks something else and one that stops early
(`left`).

A fixture file:

    {
      "provenance": {"repository": ..., "commit": ..., "path": ..., "licence": ..., "written": ...},
      "answers": [
        {"method": "GET", "path": "/cdx/search/cdx", "params": {"resumeKey": "..."},
         "params_like": {"_t": "[0-9]{13}"},   # parameters whose value varies: a regular expression
         "status": 200, "headers": {"Content-Type": "application/json"},
         "json": [...] | "body": "text"}
      ],
      "expect": {...}   # what the test reads from the client's answer; the test says how
    }

Every fixture says where its answer comes from in `provenance`: the public record (a
repository, commit, path and licence) whose answer it stands for. See
`tests/fixtures/wayback/README.md` for why the bytes are written here.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pipeline.standins.server import QuietServer

__all__ = ["FIXTURES", "Answer", "Fixture", "Replay", "fixtures", "load"]

FIXTURES = Path(__file__).parent / "fixtures" / "wayback"


@dataclass(frozen=True)
class Answer:
    method: str
    path: str
    params: dict[str, str]
    status: int
    headers: dict[str, str]
    body: bytes
    params_like: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, data: dict[str, Any]) -> Answer:
        if "json" in data:
            body = json.dumps(data["json"]).encode()
            headers = {"Content-Type": "application/json", **data.get("headers", {})}
        else:
            body = str(data.get("body", "")).encode()
            headers = dict(data.get("headers", {}))
        return cls(
            method=str(data.get("method", "GET")),
            path=str(data["path"]),
            params={str(k): str(v) for k, v in data.get("params", {}).items()},
            status=int(data.get("status", 200)),
            headers=headers,
            body=body,
            params_like={str(k): str(v) for k, v in data.get("params_like", {}).items()},
        )

    def matches(self, method: str, target: str) -> bool:
        parts = urlsplit(target)
        if method != self.method or parts.path != self.path:
            return False
        sent = dict(parse_qsl(parts.query, keep_blank_values=True))
        if not all(re.fullmatch(pattern, sent.get(name, "")) for name, pattern in self.params_like.items()):
            return False
        return all(sent.get(name) == value for name, value in self.params.items())


@dataclass(frozen=True)
class Fixture:
    name: str
    provenance: dict[str, str]
    answers: tuple[Answer, ...]
    expect: dict[str, Any]


def load(name: str) -> Fixture:
    """The fixture `tests/fixtures/wayback/<name>.json`."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return Fixture(
        name=name,
        provenance=dict(data["provenance"]),
        answers=tuple(Answer.read(a) for a in data["answers"]),
        expect=dict(data.get("expect", {})),
    )


def fixtures() -> list[str]:
    """The names of every fixture, for parametrising."""
    return sorted(path.stem for path in FIXTURES.glob("*.json"))


@dataclass
class Replay:
    """Serves one fixture's answers on 127.0.0.1; `with Replay(fixture) as replay: replay.url`."""

    fixture: Fixture
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, target) as received
    unexpected: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # http.server's signature
                pass

            def do_GET(self) -> None:  # http.server's name
                self._reply()

            def do_POST(self) -> None:
                self._reply()

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                answer = replay._take(self.command, self.path)
                status, headers, body = (
                    (answer.status, answer.headers, answer.body)
                    if answer
                    else (418, {"Content-Type": "text/plain"}, b"replay: not the request expected next")
                )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _take(self, method: str, target: str) -> Answer | None:
        with self._lock:
            self.requests.append((method, target))
            answers = self.fixture.answers
            if self._next < len(answers) and answers[self._next].matches(method, target):
                self._next += 1
                return answers[self._next - 1]
            self.unexpected.append((method, target))
            return None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def left(self) -> int:
        """How many answers the client never asked for."""
        return len(self.fixture.answers) - self._next

    def __enter__(self) -> Replay:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
