"""A worker of a large site build (`pipeline.site.build`): `python -m pipeline.site.worker JOB RESULT`.

Reads its share of the build from the file JOB (pickled by the build, in a private temporary folder:
the data root, the site's base and note, the cards, the build's time, the keys to make, the cases read
already, the site's folder and what its cache knows), makes those files with the same pure functions as the
build, writes each into the site's folder unless it holds it already, and writes to the file RESULT,
pickled, each file's hash and whether it was written.

A process of its own, started with `-m` rather than by `multiprocessing`: spawning through
multiprocessing runs the parent's main script again in the child, which a script that calls `build_site`
without an `if __name__ == "__main__"` guard would not survive, and forking a process with threads running
(a Prefect flow's) can hang.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from pipeline.site.build import WorkerJob

    job = pickle.loads(Path(argv[0]).read_bytes())
    assert isinstance(job, WorkerJob)
    written = job.write()
    Path(argv[1]).write_bytes(pickle.dumps(written, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
