"""The review page as served by `incidentlib web`, attacked over real HTTP on loopback: a cookie copied before
sign-out, bodies without a length, forms of too many fields, forwarded addresses nobody vouched for, and a
guesser who keeps the owner of an account out (pipeline.web.security)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import reviewable_draft

from pipeline.reviewers import add_reviewer, set_password
from pipeline.store import Store
from pipeline.web.security import BODY_MAX, SESSION_COOKIE

pytestmark = pytest.mark.runs_long(45)  # seconds in all: such modules start first (conftest.py)

PASSWORD = "correct horse battery"
DRAFT_ID = "example-org-outage-00000001"


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, follow_redirects=False, timeout=30, **kwargs)

    def stop(self) -> str:
        """Stop the server; what it wrote to its standard error."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        return err


def serve(root: Path, **env: str) -> Served:
    """`incidentlib web` on a free loopback port, once it answers its health check."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "web", "--port", str(port), "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    assert process.stdout is not None
    assert process.stdout.readline().startswith("review page: ")  # said once the app is made
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):  # bounded: the port opens within a second or two of that line
        try:
            if httpx.get(f"{url}/healthz", timeout=1).text == "ok":
                return Served(url, process)
        except httpx.TransportError:
            if process.poll() is not None:
                break
            with socket.socket() as waiter:  # block on the port itself, not on a sleep
                waiter.settimeout(0.05)
                waiter.connect_ex(("127.0.0.1", port))
    raise AssertionError(f"the review page did not start: {process.communicate(timeout=5)}")


@pytest.fixture
def data(root: Path, store: Store, case_json: dict[str, Any]) -> Path:
    store.write_draft(reviewable_draft(case_json, DRAFT_ID))
    add_reviewer(store, "ann", PASSWORD)
    return root


@pytest.fixture
def served(data: Path) -> Iterator[Served]:
    server = serve(data)
    yield server
    server.stop()


def csrf(client: httpx.Client, path: str = "/login") -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert found, f"no CSRF token on {path}"
    return found.group(1)


def sign_in(client: httpx.Client, name: str = "ann", password: str = PASSWORD, **headers: str) -> httpx.Response:
    token = csrf(client)
    return client.post("/login", data={"name": name, "password": password, "csrf_token": token}, headers=headers)


def test_a_cookie_copied_before_sign_out_opens_nothing_after_it(served: Served, data: Path) -> None:
    """The break: logout cleared the browser's cookie only; a copy of it read and changed drafts for 12 hours."""
    with served.client() as browser:
        assert sign_in(browser).status_code == 303
        copied = browser.cookies[SESSION_COOKIE]
        assert browser.get(f"/drafts/{DRAFT_ID}").status_code == 200
        assert browser.post("/logout", data={"csrf_token": csrf(browser, "/")}).status_code == 303

    with served.client(cookies={SESSION_COOKIE: copied}) as thief:
        page = thief.get(f"/drafts/{DRAFT_ID}")
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
        changed = thief.post(f"/drafts/{DRAFT_ID}/claim", data={"csrf_token": "anything"})
        assert changed.status_code == 401
    # Another process serving the same data root honours the sign-out too (it is kept on disk).
    other = serve(data)
    try:
        with other.client(cookies={SESSION_COOKIE: copied}) as thief:
            assert thief.get(f"/drafts/{DRAFT_ID}").status_code == 303
    finally:
        other.stop()


def test_a_password_change_ends_the_accounts_sessions(served: Served, data: Path) -> None:
    with served.client() as browser:
        assert sign_in(browser).status_code == 303
        set_password(Store(data), "ann", "a new and longer password")
        assert browser.get(f"/drafts/{DRAFT_ID}").status_code == 303


def _chunks(total: int, size: int = 64 << 10) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        piece = min(size, total - sent)
        yield b"a=" + b"x" * (piece - 2)
        sent += piece


@pytest.mark.parametrize("megabytes", [1.5, 10])
def test_a_body_without_a_length_is_refused_while_read_never_a_server_error(data: Path, megabytes: float) -> None:
    """The break: a chunked 1-10 MB body answered 500 with a traceback (or 400 after reading it all)."""
    server = serve(data)
    try:
        with server.client() as browser:
            answer = browser.post(
                "/login",
                content=_chunks(int(megabytes * (1 << 20))),
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
            assert "content-length" not in answer.request.headers  # sent chunked
            assert answer.status_code == 413, answer.text
            assert answer.text == f"too large: a request's body is at most {BODY_MAX} bytes\n"
    finally:
        said = server.stop()
    assert "Traceback" not in said and "Exception" not in said, said


def test_a_multipart_field_over_the_limit_and_a_form_of_too_many_fields_are_refused_in_one_line(
    served: Served,
) -> None:
    """The breaks: a chunked multipart field over 1 MiB dropped the connection; 1,001 fields answered 500."""
    with served.client() as browser:
        token = csrf(browser)
        boundary = "XyZ"
        part = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{token}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n'
        ).encode()

        def multipart() -> Iterator[bytes]:
            yield part
            yield from (b"y" * (64 << 10) for _ in range(20))  # 1.25 MiB in one field
            yield f"\r\n--{boundary}--\r\n".encode()

        big = browser.post(
            "/login", content=multipart(), headers={"content-type": f"multipart/form-data; boundary={boundary}"}
        )
        assert big.status_code == 413, big.text

        fields = "&".join([f"csrf_token={token}", *(f"f{n}=1" for n in range(1001))])
        many = browser.post(
            "/login", content=fields.encode(), headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert (
            many.status_code == 400
            and many.text == "not a form of this page: Too many fields. Maximum number of fields is 1000."
        )
    said = served.stop()
    assert "Traceback" not in said, said


def test_forwarded_addresses_are_believed_only_from_a_listed_proxy(served: Served) -> None:
    """The break: the throttle believed X-Forwarded-For from any loopback peer, so spraying names with a new
    forwarded address each time was never slowed down."""
    with served.client() as sprayer:
        answers = [
            sign_in(sprayer, f"user{n}", "guess", **{"X-Forwarded-For": f"203.0.113.{n}"}).status_code for n in range(6)
        ]
    assert answers[:3] == [401, 401, 401] and 429 in answers[3:], answers


def test_a_guesser_elsewhere_never_keeps_the_owner_out(data: Path) -> None:
    """The break: one wrong try every 30 s kept a reviewer locked out, even with the right password. Behind a
    listed proxy, the guesser's address and the owner's differ; the guessing is slowed, the owner is not."""
    server = serve(data, INCIDENTLIB_WEB_FORWARDED_FROM='["127.0.0.1"]')
    try:
        with server.client() as guesser, server.client() as owner:
            guesses = [
                sign_in(guesser, "ann", "wrong", **{"X-Forwarded-For": "198.51.100.7"}).status_code for _ in range(5)
            ]
            assert guesses[:3] == [401, 401, 401] and guesses[3:] == [429, 429], guesses
            came_in = sign_in(owner, **{"X-Forwarded-For": "192.0.2.44", "X-Forwarded-Proto": "https"})
            assert came_in.status_code == 303, came_in.text
            cookie = came_in.headers["set-cookie"]
            assert "; Secure" in cookie and "HttpOnly" in cookie, "over HTTPS the cookie is Secure"
    finally:
        server.stop()


def test_a_damaged_state_file_is_one_line_on_the_page_not_a_server_error(data: Path) -> None:
    (data / ".incidentlib").mkdir(exist_ok=True)
    (data / ".incidentlib" / "links.json").write_bytes(b"{not json")
    server = serve(data)
    try:
        with server.client() as browser:
            assert sign_in(browser).status_code == 303
            answer = browser.get(f"/drafts/{DRAFT_ID}")
            assert answer.status_code == 422, answer.text
            assert ".incidentlib/links.json" in answer.text
    finally:
        said = server.stop()
    assert "Traceback" not in said, said
