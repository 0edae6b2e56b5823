"""A worker of a large site build (`pipeline.site.build`): `python -m pipeline.site.worker START RESULT`.

Reads the file START (pickled by the build, in a private temporary folder: the data root, the settings the
pages show, the build's time, the site's folder), reads the cases and plans the site itself with the same
pure functions as the build, then reads one line on its standard input: the name of its share file (the
keys of the files it makes, what the tree's cache knows of them, and what the build planned from), or
nothing. It makes those files, writes each into the site's folder unless it holds it already, and writes to
the file RESULT, pickled, each file's hash and whether it was written. A worker that read other cases or
settings than the build planned from (a case written meanwhile) says so and exits with 3: the build makes
its share itself. A worker whose build is gone (killed: this process's parent is another) stops before its
next file and exits with 4.

A process of its own, started with `-m` rather than by `multiprocessing`: spawning through
multiprocessing runs the parent's main script again in the child, which a script that calls `build_site`
without an `if __name__ == "__main__"` guard would not survive. Started only when the build's process runs
other threads (a Prefect flow's, the web server's), whose locks a forked child could find held for ever;
a build that runs one thread forks its workers instead (`pipeline.site.forked`).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    import os

    build = os.getppid()  # the build that started this worker: when it is gone, this one stops
    from pipeline.site.build import BuildGone, CasesMoved, WorkerShare, WorkerStart, work

    start = pickle.loads(Path(argv[0]).read_bytes())
    assert isinstance(start, WorkerStart)

    def share() -> WorkerShare | None:
        named = sys.stdin.readline().strip()  # waits for the build to have planned
        if not named:
            return None
        given = pickle.loads(Path(named).read_bytes())
        assert isinstance(given, WorkerShare)
        return given

    try:
        written = work(start, share, lambda: os.getppid() == build)
    except CasesMoved as error:
        print(f"incidentlib site worker: {error}; the build makes this share itself", file=sys.stderr)
        return 3
    except BuildGone:
        return 4  # nobody to tell
    Path(argv[1]).write_bytes(pickle.dumps(written, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
