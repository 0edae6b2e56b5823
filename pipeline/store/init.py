"""Making a data root (`incidentlib init`), and telling a folder that is one from a folder that is not."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import StoreError
from pipeline.settings import SETTINGS_FILE, settings_file_text
from pipeline.store.state import STATE_DIR

__all__ = ["DATA_FOLDERS", "InitReport", "data_root_problem", "init_data_root"]

DATA_FOLDERS = ("sources", "drafts", "cases")

_GITIGNORE = """\
# incidentlib's state under a data root: locks, link health, runs, a local Prefect server
.incidentlib/
# a crash between a temporary write and its rename leaves one of these behind
.*.tmp
# settings and archive keys of a working copy
incidentlib.env
# the reader's site, built from cases/ by `incidentlib site`
/site/
"""

_STARTER = """\
# The crawl registry: every *.yaml file in sources/ is a list of sources to crawl.
# `incidentlib add URL` appends one to sources/added.yaml; entries may also be written by hand,
# here or in a file of their own. Each entry is a URL with optional hints:
#
# - url: https://github.com/dfds/postmortems/blob/master/PM2020-007%20-%20Unhealthy%20nodes.md
#   org: DFDS            # who wrote the postmortem; else taken from the page or the site
#   kind: github         # a source kind of the vocabulary; else guessed from the URL
#   title: Unhealthy nodes
#   date: 2020-10-06     # YYYY, YYYY-MM or YYYY-MM-DD
#   tags: [kubernetes]   # free words for the operator
#
# `incidentlib validate` checks every entry; `incidentlib schema source` prints the format.
# This file lists no source: to list some here, replace the [] below with entries like the one above.
[]
"""


@dataclass
class InitReport:
    """What `init_data_root` did: paths relative to the root, made or found already there."""

    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def data_root_problem(root: Path) -> str | None:
    """Why `root` is not a data root (a folder holding sources/, drafts/ or cases/); None when it is one."""
    if not root.is_dir():
        return "no such folder"
    if not any((root / folder).is_dir() for folder in DATA_FOLDERS):
        return "not a data root (no sources/, drafts/ or cases/ folder)"
    return None


@contextmanager
def _os_errors_named(path: Path, doing: str) -> Iterator[None]:
    """An OSError as a StoreError of one line naming the path, which a command prints as it is."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"{path}: cannot {doing}: {exc.strerror or exc}", path=str(path)) from None


def init_data_root(root: Path) -> InitReport:
    """Make `root` a data root: its three folders, a .gitignore for its state, a commented starter
    registry, and its settings file (incidentlib.env, every setting commented out at its default).

    Safe to run again, and on a folder that is already a data root: nothing that exists is
    overwritten or changed (an existing .gitignore that does not ignore the state folder is
    named in `notes`). Raises StoreError, naming the path, when a file stands where a folder
    goes or the file system refuses.
    """
    root = root.expanduser().resolve()
    report = InitReport(root)
    for path in (root, *(root / folder for folder in DATA_FOLDERS)):
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: not a folder", path=str(path))
    for folder in DATA_FOLDERS:
        path = root / folder
        (report.kept if path.is_dir() else report.created).append(f"{folder}/")
        with _os_errors_named(path, "make the folder"):
            path.mkdir(parents=True, exist_ok=True)
    # The settings file may come to hold the archive's keys: readable by its owner alone.
    starters = (
        (".gitignore", _GITIGNORE, 0o666),
        ("sources/README.yaml", _STARTER, 0o666),
        (SETTINGS_FILE, settings_file_text(), 0o600),
    )
    for name, text, mode in starters:
        with _os_errors_named(root / name, "write the file"):
            try:  # O_EXCL: never over an existing file
                handle = os.open(root / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                report.kept.append(name)
                continue
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            report.created.append(name)
    with _os_errors_named(root / ".gitignore", "read the file"):
        gitignore = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    ignored = {line.strip().rstrip("/") for line in gitignore.splitlines()}
    if STATE_DIR not in ignored and f"/{STATE_DIR}" not in ignored:
        report.notes.append(f".gitignore does not ignore {STATE_DIR}/ (locks and state): add that line to it")
    return report
