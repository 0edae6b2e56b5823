"""`fmt`: rewrite every draft and case in the canonical layout.

A record already in the layout is not touched (not even its modification time), so
`fmt` on a clean tree changes nothing. A record that does not validate is left exactly
as it is and reported: formatting never loses data. The registry's YAML is not
rewritten, because its comments are the operator's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.errors import Fault, InvalidRecord
from pipeline.records import dump_record, load_record
from pipeline.store import MODELS, Store

__all__ = ["FmtReport", "fmt"]


@dataclass
class FmtReport:
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    faults: list[Fault] = field(default_factory=list)


def fmt(store: Store, *, check: bool = False) -> FmtReport:
    """Rewrite records into the canonical layout; with `check`, only report which would change."""
    report = FmtReport()
    for kind, path in store.record_files():
        label = store.label(path)
        data = path.read_bytes()
        try:
            canonical = dump_record(load_record(MODELS[kind], data, label))
        except InvalidRecord as exc:
            report.faults += exc.faults
            continue
        if canonical == data:
            report.unchanged += 1
            continue
        if not check:
            store.write_file(path, canonical)
        report.changed.append(label)
    return report
