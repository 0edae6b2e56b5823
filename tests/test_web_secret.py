"""The key that signs the web page's sessions: the `web_secret` setting (the environment or
incidentlib.env), else a file made once in the state folder; `incidentlib config` never shows it."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from itsdangerous import BadSignature, URLSafeTimedSerializer

from pipeline.errors import SettingsError
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web import SESSION_COOKIE, create_app

PASSWORD = "correct horse battery"
SECRET = "a-signing-key-given-in-incidentlib-env-0123456789"


def signed_in_cookie(root: Path) -> str:
    """The session cookie of ann, signed in on a page built from the settings as they are here."""
    client = TestClient(create_app(Settings(root=root)), follow_redirects=False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text)
    assert token
    answer = client.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": token.group(1)})
    assert answer.status_code == 303, answer.text
    cookie = client.cookies.get(SESSION_COOKIE)
    assert cookie
    return cookie


def unsigned(cookie: str, key: str) -> dict[str, str]:
    data: dict[str, str] = URLSafeTimedSerializer(key, salt="incidentlib-session").loads(cookie)
    return data


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder, whose incidentlib.env the settings read."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_a_secret_in_incidentlib_env_signs_the_sessions(root: Path, store: Store, workdir: Path) -> None:
    add_reviewer(store, "ann", PASSWORD)
    (workdir / "incidentlib.env").write_text(f"INCIDENTLIB_WEB_SECRET={SECRET}\n")
    assert Settings(root=root).web_secret is not None

    cookie = signed_in_cookie(root)
    assert unsigned(cookie, SECRET)["name"] == "ann"
    assert not (store.state.dir / "web-secret").exists(), "no key file made when one is given"


def test_without_a_secret_one_is_made_once_and_kept(root: Path, store: Store, workdir: Path) -> None:
    add_reviewer(store, "ann", PASSWORD)
    first = signed_in_cookie(root)
    path = store.state.dir / "web-secret"
    kept = path.read_text(encoding="ascii").strip()
    assert len(kept) >= 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert unsigned(first, kept)["name"] == "ann"
    assert unsigned(signed_in_cookie(root), kept)["name"] == "ann", "a restart signs with the same key"
    with pytest.raises(BadSignature):
        unsigned(first, SECRET)


def test_a_short_secret_is_refused_naming_where_it_came_from(root: Path, store: Store, workdir: Path) -> None:
    (workdir / "incidentlib.env").write_text("INCIDENTLIB_WEB_SECRET=short\n")
    with pytest.raises(SettingsError, match=r"signing key \(INCIDENTLIB_WEB_SECRET\) is shorter than 32 characters"):
        create_app(Settings(root=root))
    (workdir / "incidentlib.env").unlink()
    store.state.dir.mkdir(parents=True, exist_ok=True)
    (store.state.dir / "web-secret").write_text("short\n")
    with pytest.raises(SettingsError, match=r"signing key \(.*web-secret\) is shorter than 32 characters"):
        create_app(Settings(root=root))


def test_config_masks_the_web_secret(cli: Callable, root: Path, workdir: Path) -> None:
    (workdir / "incidentlib.env").write_text(f"INCIDENTLIB_WEB_SECRET={SECRET}\n")
    as_json = cli("config", "--root", str(root), "--json")
    assert json.loads(as_json.stdout)["web_secret"] == "********"
    text = cli("config", "--root", str(root))
    assert "INCIDENTLIB_WEB_SECRET=********  # incidentlib.env" in text.stdout.splitlines()
    assert SECRET not in as_json.stdout + text.stdout
