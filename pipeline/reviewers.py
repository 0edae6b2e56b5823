"""The people who may sign in to the reviewer's web page: their names and password hashes.

The accounts live in the data root's state folder, which git ignores, in one file
(`.incidentlib/reviewers.json`), never in a record and never in a log. The file is
written atomically under the lock `reviewers`, readable by its owner only (0600), as
stable pretty JSON, names in order:

    {"reviewers": {"alice": {"hash": "$argon2id$v=19$m=65536,t=3,p=4$...", "added_at": "2026-05-01T09:30:00Z"}}}

Passwords are hashed with argon2id at argon2-cffi's defaults; a hash made with other
parameters is made again at its reviewer's next sign-in. A wrong password, an unknown
name and a removed one all answer False, and each costs one verification (an unknown
name's against a fixed hash of no one's password), so neither the answer nor its time
tells which names exist.

The rules and the file's format are pure functions (`_name_problem`, `_password_problem`,
`_parse`, `_dump`); the public functions read and write the file around them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shlex
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from argon2 import PasswordHasher, extract_parameters
from argon2.exceptions import InvalidHashError, VerificationError

from pipeline.errors import LockBusy, ReviewerError, StoreError
from pipeline.models import utc_now
from pipeline.records import dump_json
from pipeline.store import Store

__all__ = [
    "MAX_NAME_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "Reviewer",
    "account_stamps",
    "add_reviewer",
    "check_name",
    "check_password",
    "list_reviewers",
    "remove_reviewer",
    "reviewers_path",
    "set_password",
]

MIN_PASSWORD_LENGTH = 12
MAX_NAME_LENGTH = 100
FILE_NAME = "reviewers.json"
_FILE_MODE = 0o600
_LOCK = "reviewers"

_HASHER = PasswordHasher()  # argon2id, RFC 9106's low-memory profile: 64 MiB, 3 passes, 4 lanes

# A hash, at the hasher's defaults, of a password no account has: an unknown name is checked
# against it, so that it costs what a known one does. Made again if the defaults ever change.
_DUMMY_HASH = "$argon2id$v=19$m=65536,t=3,p=4$PGM9UjM84jjfN/AbfeREVQ$WfEc2Ev7rS3PNAtT/P9t/8K8RCC7xi+cUuMmXzVT8JQ"


@dataclass(frozen=True)
class Reviewer:
    """A person who may sign in to the web page (never their hash)."""

    name: str
    added_at: datetime

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "added_at": _stamp(self.added_at)}


@dataclass(frozen=True)
class _Account:
    hash: str
    added_at: datetime


# ------------------------------------------------------------ the rules and the format (pure)


def _name_problem(name: str) -> str | None:
    if not name.strip():
        return "name: empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"name: longer than {MAX_NAME_LENGTH} characters ({len(name)})"
    for char in name:
        if unicodedata.category(char).startswith("C"):  # Cc controls, Cf invisible formats, surrogates
            return f"name: holds a control or invisible character (U+{ord(char):04X})"
    if name != name.strip():
        return "name: begins or ends with a space"
    return None


def _password_problem(password: str) -> str | None:
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"password: shorter than {MIN_PASSWORD_LENGTH} characters"
    return None


def _exists_already(name: str) -> ReviewerError:
    quoted = shlex.quote(name)
    return ReviewerError(
        f"name: reviewer {name!r} exists already; remove it first (`incidentlib reviewer remove {quoted}`)"
        f" or change its password (`incidentlib reviewer password {quoted}`)",
        field="name",
    )


def _unknown(name: str) -> ReviewerError:
    return ReviewerError(
        f"name: no reviewer {name!r}; add one with `incidentlib reviewer add {shlex.quote(name)}`", field="name"
    )


def _check(accounts: Mapping[str, _Account], name: str, *, exists: bool) -> None:
    if exists:
        if name not in accounts:
            raise _unknown(name)
        return
    problem = _name_problem(name)
    if problem:
        raise ReviewerError(problem, field="name")
    if name in accounts:
        raise _exists_already(name)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _is_argon2(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        extract_parameters(value)
    except InvalidHashError:
        return False
    return True


def _parse(data: bytes, label: str) -> dict[str, _Account]:
    """The accounts in a reviewers file; ReviewerError naming the file (`label`) when it is not one."""

    def refuse(problem: str) -> ReviewerError:
        return ReviewerError(f"{label}: {problem}", path=label)

    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise refuse(f"not valid JSON ({exc})") from None
    if not isinstance(document, dict) or set(document) != {"reviewers"} or not isinstance(document["reviewers"], dict):
        raise refuse('not a reviewers file: expected {"reviewers": {NAME: {"hash": ..., "added_at": ...}}}')
    accounts = {}
    for name, entry in document["reviewers"].items():
        where = f"reviewers[{name!r}]"
        if not isinstance(entry, dict) or set(entry) != {"hash", "added_at"}:
            raise refuse(f"{where}: expected exactly hash and added_at")
        if not _is_argon2(entry["hash"]):
            raise refuse(f"{where}.hash: not an argon2 hash")  # its value is never shown
        try:
            added_at = datetime.fromisoformat(entry["added_at"])
        except (TypeError, ValueError):
            added_at = None
        if added_at is None or added_at.tzinfo is None:
            raise refuse(f"{where}.added_at: not a date and time with its offset, such as 2026-05-01T09:30:00Z")
        accounts[name] = _Account(hash=entry["hash"], added_at=added_at)
    return accounts


def _dump(accounts: Mapping[str, _Account]) -> bytes:
    return dump_json(
        {
            "reviewers": {
                name: {"hash": accounts[name].hash, "added_at": _stamp(accounts[name].added_at)}
                for name in sorted(accounts)
            }
        }
    )


@functools.cache
def _dummy_hash() -> str:
    if _HASHER.check_needs_rehash(_DUMMY_HASH):  # argon2-cffi's defaults changed: cost what a new hash costs
        return _HASHER.hash("incidentlib: the password of no reviewer")
    return _DUMMY_HASH


# ------------------------------------------------------------ the file


def reviewers_path(store: Store) -> Path:
    """The reviewers file of a data root (which may not exist yet)."""
    return store.state.path(FILE_NAME)


def _read(store: Store) -> dict[str, _Account]:
    path = reviewers_path(store)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}  # no file, no reviewers
    except OSError as exc:
        raise StoreError(f"{store.label(path)}: cannot read: {exc.strerror or exc}", path=str(path)) from None
    return _parse(data, store.label(path))


def _write(store: Store, accounts: Mapping[str, _Account]) -> None:
    path = reviewers_path(store)
    try:
        store.state.write(FILE_NAME, _dump(accounts), mode=_FILE_MODE)
    except OSError as exc:
        raise StoreError(f"{store.label(path)}: cannot write: {exc.strerror or exc}", path=str(path)) from None


# ------------------------------------------------------------ the accounts


def check_name(store: Store, name: str, *, exists: bool) -> None:
    """Raise ReviewerError unless `name` is a reviewer now (`exists=True`), or is a name a new
    reviewer may take (`exists=False`). For a command to say so before it asks for a password;
    the functions below check again, under the lock."""
    _check(_read(store), name, exists=exists)


def add_reviewer(store: Store, name: str, password: str) -> None:
    """Add a reviewer who may sign in with `password`. Raises ReviewerError, naming the field, for a
    name that is empty, too long, holds control characters or is taken, or a password too short."""
    for field, problem in (("name", _name_problem(name)), ("password", _password_problem(password))):
        if problem:
            raise ReviewerError(problem, field=field)
    hashed = _HASHER.hash(password)  # outside the lock: it takes a tenth of a second on purpose
    with store.state.lock(_LOCK):
        accounts = _read(store)
        _check(accounts, name, exists=False)
        accounts[name] = _Account(hash=hashed, added_at=utc_now())
        _write(store, accounts)


def set_password(store: Store, name: str, password: str) -> None:
    """Give reviewer `name` a new password; ReviewerError for a name that is none or a password too short."""
    problem = _password_problem(password)
    if problem:
        raise ReviewerError(problem, field="password")
    hashed = _HASHER.hash(password)
    with store.state.lock(_LOCK):
        accounts = _read(store)
        _check(accounts, name, exists=True)
        accounts[name] = _Account(hash=hashed, added_at=accounts[name].added_at)
        _write(store, accounts)


def remove_reviewer(store: Store, name: str) -> bool:
    """Remove reviewer `name`, who can no longer sign in; False when there is none of that name."""
    with store.state.lock(_LOCK):
        accounts = _read(store)
        if name not in accounts:
            return False
        del accounts[name]
        _write(store, accounts)
    return True


def list_reviewers(store: Store) -> list[Reviewer]:
    """Every reviewer, by name; a missing file means none."""
    accounts = _read(store)
    return [Reviewer(name=name, added_at=accounts[name].added_at) for name in sorted(accounts)]


def check_password(store: Store, name: str, password: str) -> bool:
    """Whether `name` is a reviewer whose password is `password`.

    Unknown, removed and wrong all answer False after one verification each. A right password
    whose hash was made with other parameters than today's is hashed again and kept.
    """
    account = _read(store).get(name)
    try:
        _HASHER.verify(account.hash if account else _dummy_hash(), password)
    except VerificationError:  # VerifyMismatchError, or a hash the library cannot check
        return False
    if account is None:
        return False
    if _HASHER.check_needs_rehash(account.hash):
        _rehash(store, name, account.hash, _HASHER.hash(password))
    return True


def _rehash(store: Store, name: str, old: str, new: str) -> None:
    """Put `new` in place of `old`, unless the account changed meanwhile or the lock is busy (the
    next sign-in tries again: a sign-in does not wait on someone managing the accounts)."""
    try:
        with store.state.lock(_LOCK, timeout=0):
            accounts = _read(store)
            current = accounts.get(name)
            if current is None or current.hash != old:
                return
            accounts[name] = _Account(hash=new, added_at=current.added_at)
            _write(store, accounts)
    except LockBusy:
        return


def account_stamps(store: Store) -> dict[str, str]:
    """Each reviewer's stamp: a short digest of their password's hash. A session carries the stamp
    it was signed in with, and ends when the account is removed or its password changed."""
    return {name: hashlib.sha256(account.hash.encode()).hexdigest()[:16] for name, account in _read(store).items()}
