"""Korean words' stems, analysed in a process of its own (`search.Stems.analyse_aside`):
`python -m pipeline.site.stemmer` reads a JSON list of words on standard input and writes a JSON object,
each word's stems (`search.Stems.analyse`), on standard output.

A process of its own, started with `-m` rather than by `multiprocessing`, for the reasons the build's
worker is (`pipeline.site.worker`).
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    from pipeline.site.search import Stems

    words = json.loads(sys.stdin.buffer.read())
    stems = Stems()
    stems.analyse(str(word) for word in words)
    sys.stdout.buffer.write(json.dumps({word: list(stems.of(word)) for word in words}, ensure_ascii=False).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
