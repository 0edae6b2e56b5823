"""Commands for whoever keeps the accounts of the reviewer's web page: `incidentlib reviewer ...`.

A password is read from standard input, its first line without the line break (so that a
script can pipe it, and it never stands on a command line or in a shell's history); at a
terminal it is asked for twice, not echoed.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from pipeline import reviewers
from pipeline.cli.common import JsonOption, RootOption, Typer, app, echo, open_store
from pipeline.errors import ReviewerError

reviewer_app = Typer(
    name="reviewer",
    help=(
        "Manage who may sign in to the reviewer's web page: add, password, remove, list. The accounts are "
        "kept in the data root's .incidentlib/reviewers.json (not in git), passwords as argon2id hashes."
    ),
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(reviewer_app)

NameArgument = Annotated[str, typer.Argument(help="The reviewer's name, as typed to sign in.", show_default=False)]


def _password() -> str:
    if sys.stdin.isatty():
        typed: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
        return typed
    return sys.stdin.readline().removesuffix("\n").removesuffix("\r")


@reviewer_app.command("add")
def add(name: NameArgument, root: RootOption = None) -> None:
    """Add a reviewer who may sign in to the web page.

    The password, 12 characters or more, is the first line of standard input; at a terminal it is
    asked for twice and not shown."""
    store = open_store(root)
    reviewers.check_name(store, name, exists=False)  # before the password is typed for nothing
    reviewers.add_reviewer(store, name, _password())
    echo(f"added reviewer {name}")


@reviewer_app.command("password")
def password(name: NameArgument, root: RootOption = None) -> None:
    """Give a reviewer a new password, read as `add` reads it."""
    store = open_store(root)
    reviewers.check_name(store, name, exists=True)
    reviewers.set_password(store, name, _password())
    echo(f"changed the password of reviewer {name}")


@reviewer_app.command("remove")
def remove(name: NameArgument, root: RootOption = None) -> None:
    """Remove a reviewer, who can no longer sign in."""
    if not reviewers.remove_reviewer(open_store(root), name):
        raise ReviewerError(f"name: no reviewer {name!r}", field="name")
    echo(f"removed reviewer {name}")


@reviewer_app.command("list")
def list_(root: RootOption = None, as_json: JsonOption = False) -> None:
    """List the reviewers by name, with when each was added (never a password's hash)."""
    entries = reviewers.list_reviewers(open_store(root))
    if as_json:
        echo(json.dumps([entry.as_json() for entry in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        echo("no reviewers; add one with `incidentlib reviewer add NAME`", err=True)
        return
    width = max(len(entry.name) for entry in entries)
    for entry in entries:
        echo(f"{entry.name:<{width}}  added {entry.as_json()['added_at']}")
