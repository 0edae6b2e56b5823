"""`validate`: check every record under a data root against the models and vocabularies.

Each fault is one line, `path: field: problem`, so an operator (or CI on the data
repository) sees every problem at once, not just the first.
"""

from __future__ import annotations

from pipeline.errors import Fault, InvalidRecord
from pipeline.models import Case, Draft, DraftState
from pipeline.records import load_record
from pipeline.registry import find_duplicates
from pipeline.store import MODELS, RecordKind, Store

__all__ = ["validate"]


def validate(store: Store) -> list[Fault]:
    """Every fault of every record under the store's root; an empty list means all is well."""
    sources, faults = store.read_sources()
    faults += find_duplicates(sources)

    loaded: dict[RecordKind, dict[str, Draft | Case]] = {"draft": {}, "case": {}}
    for kind, path in store.record_files():
        label = store.label(path)
        try:
            record = load_record(MODELS[kind], path.read_bytes(), label)
        except InvalidRecord as exc:
            faults += exc.faults
            continue
        if record.id != path.stem:
            faults.append(Fault(label, "id", f"{record.id!r} does not match the file name {path.name!r}"))
        loaded[kind][path.stem] = record

    faults += _links(store, loaded)
    return faults


def _links(store: Store, loaded: dict[RecordKind, dict[str, Draft | Case]]) -> list[Fault]:
    """References between records must point at records that exist: a reader follows them."""
    cases = loaded["case"]
    faults = []
    for kind, records in loaded.items():
        for record_id, record in records.items():
            label = store.label(store.path(kind, record_id))
            for index, other in enumerate(record.related):
                if other not in cases:
                    faults.append(Fault(label, f"related.{index}", f"{other} is not a case in cases/"))
            if record.recurrence_of and record.recurrence_of not in cases:
                faults.append(Fault(label, "recurrence_of", f"{record.recurrence_of} is not a case in cases/"))
            if isinstance(record, Draft) and record.state == DraftState.PUBLISHED:
                if record.case_id is None:
                    faults.append(Fault(label, "case_id", "a published draft must name its case"))
                elif record.case_id not in cases:
                    faults.append(Fault(label, "case_id", f"{record.case_id} is not a case in cases/"))
    return faults
