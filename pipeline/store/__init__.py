"""The data root: the only package that reads or writes it.

    sources/*.yaml        the crawl registry                             Store.read_sources, append_sources
    sources/feeds.yaml    the feeds `discover` reads                     Store.read_feeds, write_feeds
    sources/candidates.yaml  what the feeds proposed, for a person       Store.read_candidates, write_candidates
    drafts/<id>.json      drafts awaiting review                         Store (records.py)
    cases/<id>.json       published cases                                Store (records.py)
    .incidentlib/         the pipeline's own memory, not data            State (state.py; its LAYOUT lists every file)
    incidentlib.env       settings and archive keys                      pipeline.settings; made by init_data_root
    site/                 the reader's site built from cases/            pipeline.site.tree (ignored by git)

`records.py` holds `Store`, the record store; `state.py` `State`, the owner of `.incidentlib/`;
`files.py` the atomic write both use; `init.py` makes a data root (`incidentlib init`).
"""

from pipeline.store.files import write_atomic
from pipeline.store.init import InitReport, data_root_problem, init_data_root
from pipeline.store.records import MODELS, RecordKind, Store
from pipeline.store.state import LAYOUT, State

__all__ = [
    "LAYOUT",
    "MODELS",
    "InitReport",
    "RecordKind",
    "State",
    "Store",
    "data_root_problem",
    "init_data_root",
    "write_atomic",
]
