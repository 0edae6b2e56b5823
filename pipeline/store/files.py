"""Writing files so that a crash or a reader never sees half of one, and naming paths that stay inside a folder.

The store's record files, its state files and the reader site's tree are all written through here.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path

from pipeline.errors import StoreError

__all__ = ["check_rel", "fsync_dir", "host_id", "inside", "process_alive", "write_atomic"]


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (a rename into it) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# A new file gets the mode any new file would; a rewritten one keeps its own.
NEW_FILE_MODE = 0o666 & ~_umask()


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` so that readers and crashes see the old bytes or the new, never a mix.

    The file keeps its mode (a new one gets what any new file would), unless `mode` is given: a
    file of secrets passes 0o600 and has it from its first byte, never readable by others meanwhile.
    `durable=False` skips the fsyncs, for a caller writing thousands of files that syncs once at the end
    (`pipeline.site.tree.SiteTree.sync`): readers still see whole files only.
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = NEW_FILE_MODE
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)  # mkstemp makes it 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def inside(folder: Path, rel: str) -> Path:
    """`folder / rel` for a relative POSIX path that stays inside `folder` (no leading slash, no `..`,
    `.` or empty part, no backslash); StoreError for any other. Read off the text: no file system call."""
    return folder.joinpath(*check_rel(folder, rel))


def check_rel(folder: Path, rel: str) -> list[str]:
    """The parts of `rel`, a path inside `folder` (`inside`); StoreError naming it when it is not one."""
    parts = rel.split("/")
    if not rel or "\\" in rel or any(part in ("", ".", "..") for part in parts):
        raise StoreError(f"{rel!r}: not a path inside {folder}", path=rel)
    return parts


def host_id() -> str:
    """This machine, as the names of its processes' temporary folders carry it: a hash of its name."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user's counts: it may not be signalled)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
