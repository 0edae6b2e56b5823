"""The accounts of the reviewer's web page: the library, the file it keeps, and `incidentlib reviewer`."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from pipeline import reviewers
from pipeline.errors import ReviewerError, ReviewError
from pipeline.reviewers import (
    Reviewer,
    add_reviewer,
    check_password,
    list_reviewers,
    remove_reviewer,
    reviewers_path,
    set_password,
)
from pipeline.store import Store

PASSWORD = "correct horse battery"
OTHER = "staple tango violet"
LABEL = ".incidentlib/reviewers.json"
NO_BOB = "name: no reviewer 'bob'; add one with `incidentlib reviewer add bob`"


def file_mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def stored(store: Store) -> dict:
    return json.loads(reviewers_path(store).read_text(encoding="utf-8"))["reviewers"]


# ------------------------------------------------------------ the library


def test_a_reviewer_added_signs_in_with_their_password_and_no_other(store: Store) -> None:
    assert list_reviewers(store) == [] and not reviewers_path(store).exists()
    add_reviewer(store, "alice", PASSWORD)
    assert check_password(store, "alice", PASSWORD)
    assert not check_password(store, "alice", OTHER)
    assert not check_password(store, "alice", PASSWORD.upper())
    assert not check_password(store, "alice", "")
    assert not check_password(store, "Alice", PASSWORD)  # names are exact
    assert not check_password(store, "bob", PASSWORD)  # unknown


def test_the_file_holds_an_argon2id_hash_at_the_defaults_in_stable_pretty_json(store: Store) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    add_reviewer(store, "bob", OTHER)
    add_reviewer(store, "alice", PASSWORD)
    path = reviewers_path(store)
    assert path == store.root / ".incidentlib" / "reviewers.json"
    text = path.read_text(encoding="utf-8")
    accounts = json.loads(text)["reviewers"]
    assert list(accounts) == ["alice", "bob"]  # by name, whatever the order of adding
    assert list(accounts["alice"]) == ["hash", "added_at"]
    hashed = accounts["alice"]["hash"]
    assert hashed.startswith("$argon2id$") and PASSWORD not in text
    assert not PasswordHasher().check_needs_rehash(hashed)
    assert datetime.fromisoformat(accounts["alice"]["added_at"]) >= before
    assert accounts["alice"]["added_at"].endswith("Z")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def test_the_file_is_readable_by_its_owner_only_after_every_write(store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    assert file_mode(reviewers_path(store)) == 0o600
    set_password(store, "alice", OTHER)
    assert file_mode(reviewers_path(store)) == 0o600
    reviewers_path(store).chmod(0o644)  # loosened by hand: the next write tightens it again
    add_reviewer(store, "bob", PASSWORD)
    assert file_mode(reviewers_path(store)) == 0o600
    assert remove_reviewer(store, "bob")
    assert file_mode(reviewers_path(store)) == 0o600
    assert not [p.name for p in reviewers_path(store).parent.iterdir() if p.name.endswith(".tmp")]


def test_list_gives_names_and_when_they_were_added_never_a_hash(store: Store) -> None:
    for name in ("carol", "alice", "bob"):
        add_reviewer(store, name, PASSWORD)
    listed = list_reviewers(store)
    assert [r.name for r in listed] == ["alice", "bob", "carol"]
    assert [f.name for f in dataclasses.fields(Reviewer)] == ["name", "added_at"]
    assert all(r.added_at.tzinfo is not None for r in listed)
    assert "$argon2" not in repr(listed) and "$argon2" not in json.dumps([r.as_json() for r in listed])


def test_a_removed_reviewer_answers_as_an_unknown_one(store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    add_reviewer(store, "bob", OTHER)
    assert remove_reviewer(store, "alice") is True
    assert not check_password(store, "alice", PASSWORD)
    assert [r.name for r in list_reviewers(store)] == ["bob"]
    assert "alice" not in stored(store)
    assert remove_reviewer(store, "alice") is False
    assert remove_reviewer(store, "nobody") is False
    assert check_password(store, "bob", OTHER)


def test_an_unknown_name_is_checked_against_a_hash_as_costly_as_a_real_one() -> None:
    # Verifying against it costs what verifying a reviewer's hash costs, so timing tells no names apart.
    assert not PasswordHasher().check_needs_rehash(reviewers._DUMMY_HASH)


def test_a_new_password_replaces_the_old_and_keeps_when_they_were_added(store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    added = stored(store)["alice"]
    set_password(store, "alice", OTHER)
    assert check_password(store, "alice", OTHER)
    assert not check_password(store, "alice", PASSWORD)
    now = stored(store)["alice"]
    assert now["added_at"] == added["added_at"] and now["hash"] != added["hash"]


def test_a_new_password_for_no_one_or_too_short_is_refused(store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    with pytest.raises(ReviewerError) as unknown:
        set_password(store, "bob", OTHER)
    assert unknown.value.field == "name"
    assert str(unknown.value) == NO_BOB
    with pytest.raises(ReviewerError) as short:
        set_password(store, "alice", "eleven char")
    assert short.value.field == "password"
    assert str(short.value) == "password: shorter than 12 characters"
    assert check_password(store, "alice", PASSWORD)


def test_a_taken_name_is_refused_with_what_to_do_instead(store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    with pytest.raises(ReviewerError) as raised:
        add_reviewer(store, "alice", OTHER)
    assert raised.value.field == "name" and isinstance(raised.value, ReviewError)
    message = str(raised.value)
    assert message.startswith("name: reviewer 'alice' exists already") and "\n" not in message
    assert "`incidentlib reviewer remove alice`" in message and "`incidentlib reviewer password alice`" in message
    assert check_password(store, "alice", PASSWORD) and not check_password(store, "alice", OTHER)


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("", PASSWORD, "name: empty"),
        ("   ", PASSWORD, "name: empty"),
        ("a" * 101, PASSWORD, "name: longer than 100 characters (101)"),
        ("ali\nce", PASSWORD, "name: holds a control or invisible character (U+000A)"),
        ("ali\x1bce", PASSWORD, "name: holds a control or invisible character (U+001B)"),
        ("ali\u200bce", PASSWORD, "name: holds a control or invisible character (U+200B)"),
        (" alice", PASSWORD, "name: begins or ends with a space"),
        ("alice", "a" * 11, "password: shorter than 12 characters"),
        ("alice", "", "password: shorter than 12 characters"),
    ],
)
def test_a_bad_name_or_short_password_is_refused_naming_the_field(
    store: Store, name: str, password: str, message: str
) -> None:
    with pytest.raises(ReviewerError) as raised:
        add_reviewer(store, name, password)
    assert str(raised.value) == message
    assert raised.value.field == message.partition(":")[0]
    assert not reviewers_path(store).exists()


def test_the_longest_name_and_the_shortest_password_are_taken(store: Store) -> None:
    add_reviewer(store, "é" * 100, "x" * 12)
    assert check_password(store, "é" * 100, "x" * 12)


def test_a_hash_made_with_weaker_parameters_is_made_again_at_sign_in(store: Store) -> None:
    weak = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    store.state.dir.mkdir()
    document = {"reviewers": {"alice": {"hash": weak, "added_at": "2026-01-02T03:04:05Z"}}}
    reviewers_path(store).write_text(json.dumps(document), encoding="utf-8")
    assert not check_password(store, "alice", OTHER)
    assert stored(store)["alice"]["hash"] == weak  # a wrong password changes nothing
    assert check_password(store, "alice", PASSWORD)
    renewed = stored(store)["alice"]
    assert renewed["hash"] != weak and not PasswordHasher().check_needs_rehash(renewed["hash"])
    assert renewed["added_at"] == "2026-01-02T03:04:05Z"
    assert file_mode(reviewers_path(store)) == 0o600
    assert check_password(store, "alice", PASSWORD)


def test_writers_at_once_lose_no_account(store: Store) -> None:
    names = [f"reviewer-{n}" for n in range(6)]
    failures: list[BaseException] = []

    def add(name: str) -> None:
        try:
            add_reviewer(store, name, PASSWORD)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert [r.name for r in list_reviewers(store)] == names


CORRUPT = [
    (b"", "not valid JSON (Expecting value: line 1 column 1 (char 0))"),
    (b'{"reviewers": {"alice": ', "not valid JSON (Expecting value: line 1 column 25 (char 24))"),
    (b"\xff\xfe\x00", "not valid JSON"),
    (b"[]", 'not a reviewers file: expected {"reviewers": {NAME: {"hash": ..., "added_at": ...}}}'),
    (b'{"reviewers": []}', "not a reviewers file"),
    (b'{"reviewers": {}, "more": 1}', "not a reviewers file"),
    (b'{"reviewers": {"alice": "x"}}', "reviewers['alice']: expected exactly hash and added_at"),
    (b'{"reviewers": {"alice": {"hash": "$argon2id$v=19$m=65536,t=3,p=4$not-a-hash", "added_at": "2026-01-01"}}}',
     "reviewers['alice'].hash: not an argon2 hash"),
    (b'{"reviewers": {"alice": {"hash": 7, "added_at": "2026-01-01T00:00:00Z"}}}',
     "reviewers['alice'].hash: not an argon2 hash"),
    (b'{"reviewers": {"alice": {"hash": "%s", "added_at": "2026-01-01"}}}' % reviewers._DUMMY_HASH.encode(),
     "reviewers['alice'].added_at: not a date and time with its offset"),
    (b'{"reviewers": {"alice": {"hash": "%s", "added_at": 5}}}' % reviewers._DUMMY_HASH.encode(),
     "reviewers['alice'].added_at: not a date and time with its offset"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "problem"), CORRUPT)
def test_a_corrupt_file_is_one_line_naming_it_whoever_reads_it(
    store: Store, cli: Callable, data: bytes, problem: str
) -> None:
    store.state.dir.mkdir()
    reviewers_path(store).write_bytes(data)
    for read in (
        lambda: list_reviewers(store),
        lambda: check_password(store, "alice", PASSWORD),
        lambda: add_reviewer(store, "bob", PASSWORD),
        lambda: remove_reviewer(store, "alice"),
    ):
        with pytest.raises(ReviewerError) as raised:
            read()
        assert str(raised.value).startswith(f"{LABEL}: {problem}")
        assert "\n" not in str(raised.value) and raised.value.path == LABEL
        assert "not-a-hash" not in str(raised.value)  # a hash, even a broken one, is never shown
    assert reviewers_path(store).read_bytes() == data  # nothing was written over it
    result = cli("reviewer", "list", "--root", str(store.root))
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Error: {LABEL}: {problem}") and result.stderr.count("\n") == 1


# ------------------------------------------------------------ the commands


def test_the_commands_add_list_change_and_remove_a_reviewer(cli: Callable, store: Store) -> None:
    root = str(store.root)
    result = cli("reviewer", "add", "bob", "--root", root, input=f"{OTHER}\n")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "added reviewer bob\n", "")
    result = cli("reviewer", "add", "alice", "--root", root, input=f"{PASSWORD}\r\nsecond line\n")
    assert result.exit_code == 0, result.stderr
    assert check_password(store, "alice", PASSWORD)  # the first line, without its line break

    listed = cli("reviewer", "list", "--root", root)
    assert listed.exit_code == 0
    added = {r.name: r.as_json()["added_at"] for r in list_reviewers(store)}
    assert listed.stdout == f"alice  added {added['alice']}\nbob    added {added['bob']}\n"
    as_json = cli("reviewer", "list", "--json", "--root", root)
    assert json.loads(as_json.stdout) == [
        {"name": "alice", "added_at": added["alice"]},
        {"name": "bob", "added_at": added["bob"]},
    ]

    result = cli("reviewer", "password", "alice", "--root", root, input=f"{OTHER}\n")
    assert (result.exit_code, result.stdout) == (0, "changed the password of reviewer alice\n")
    assert check_password(store, "alice", OTHER) and not check_password(store, "alice", PASSWORD)

    result = cli("reviewer", "remove", "alice", "--root", root)
    assert (result.exit_code, result.stdout) == (0, "removed reviewer alice\n")
    assert not check_password(store, "alice", OTHER)
    assert [r.name for r in list_reviewers(store)] == ["bob"]


def test_the_password_keeps_its_spaces_and_only_the_line_break_goes(cli: Callable, store: Store) -> None:
    spaced = "  a phrase with spaces  "
    result = cli("reviewer", "add", "alice", "--root", str(store.root), input=spaced + "\n")
    assert result.exit_code == 0, result.stderr
    assert check_password(store, "alice", spaced) and not check_password(store, "alice", spaced.strip())


def test_no_reviewers_is_said_on_stderr_and_an_empty_list_in_json(cli: Callable, store: Store) -> None:
    result = cli("reviewer", "list", "--root", str(store.root))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "no reviewers; add one with `incidentlib reviewer add NAME`\n"
    result = cli("reviewer", "list", "--json", "--root", str(store.root))
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


@pytest.mark.parametrize(
    ("args", "stdin", "error"),
    [
        (["add", "alice"], "short\n", "Error: password: shorter than 12 characters\n"),
        (["add", "alice"], "", "Error: password: shorter than 12 characters\n"),  # nothing on stdin
        (["add", ""], f"{PASSWORD}\n", "Error: name: empty\n"),
        (["add", "a\nb"], f"{PASSWORD}\n", "Error: name: holds a control or invisible character (U+000A)\n"),
        (["add", "x" * 101], f"{PASSWORD}\n", "Error: name: longer than 100 characters (101)\n"),
        (["password", "bob"], f"{PASSWORD}\n", f"Error: {NO_BOB}\n"),
        (["password", "taken"], "short\n", "Error: password: shorter than 12 characters\n"),
        (["remove", "bob"], None, "Error: name: no reviewer 'bob'\n"),
        (["remove", "a\nb"], None, "Error: name: no reviewer 'a\\nb'\n"),
    ],
)  # fmt: skip
def test_a_refused_command_is_one_line_on_stderr_and_exit_1(
    cli: Callable, store: Store, args: list[str], stdin: str | None, error: str
) -> None:
    add_reviewer(store, "taken", OTHER)
    before = reviewers_path(store).read_bytes()
    result = cli("reviewer", *args, "--root", str(store.root), input=stdin)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", error)
    assert reviewers_path(store).read_bytes() == before


def test_a_taken_name_is_refused_before_the_password_is_read(cli: Callable, store: Store) -> None:
    add_reviewer(store, "alice", PASSWORD)
    result = cli("reviewer", "add", "alice", "--root", str(store.root), input=f"{OTHER}\n")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: name: reviewer 'alice' exists already; remove it first")
    assert result.stderr.count("\n") == 1
    assert check_password(store, "alice", PASSWORD)


def test_no_hash_or_password_shows_in_any_output_or_tracked_file(cli: Callable, root: Path) -> None:
    assert cli("init", str(root)).exit_code == 0
    store = Store(root)
    outputs: list[str] = []

    def run(*args: str, stdin: str | None = None) -> None:
        result = cli("reviewer", *args, "--root", str(root), input=stdin)
        outputs.extend((result.stdout, result.stderr))

    run("add", "alice", stdin=f"{PASSWORD}\n")
    first = stored(store)["alice"]["hash"]
    run("add", "alice", stdin=f"{OTHER}\n")  # refused: exists already
    run("password", "alice", stdin=f"{OTHER}\n")
    second = stored(store)["alice"]["hash"]
    run("add", "bob", stdin=f"{PASSWORD}\n")
    bob = stored(store)["bob"]["hash"]
    run("list")
    run("list", "--json")
    run("remove", "bob")
    run("remove", "bob")  # refused: none
    secrets = [first, second, bob, PASSWORD, OTHER]
    salts = [h.rsplit("$", 2)[1] for h in (first, second, bob)]
    for text in outputs:
        assert not [s for s in [*secrets, *salts, "$argon2"] if s in text], text

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True, text=True)
    files = [name for name in tracked.stdout.split("\0") if name]
    assert ".gitignore" in files and not [name for name in files if name.startswith(".incidentlib")]
    for name in files:
        data = (root / name).read_text(encoding="utf-8", errors="replace")
        assert not [s for s in [*secrets, *salts] if s in data], name


@pytest.mark.parametrize("command", ["add", "password", "remove", "list"])
def test_each_command_outside_a_data_root_says_so_and_reads_no_password(
    cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["reviewer", command] + ([] if command == "list" else ["alice"])
    result = cli(*args, input=f"{PASSWORD}\n")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: {tmp_path}: not a data root") and result.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []
