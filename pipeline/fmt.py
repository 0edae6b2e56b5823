"""`fmt`: rewrite every draft and case in the canonical layout.

A record already in the layout is not touched (not even its modification time), so
`fmt` on a clean tree changes nothing. Values are rewritten in their one canonical
spelling (`PT90M` becomes `PT1H30M`, `+00:00` becomes `Z`), never changed in meaning.
A record that does not validate is left exactly as it is and reported: formatting
never loses data. A record that someone changes while `fmt` runs is left to them. The
registry's YAML is not rewritten, because its comments are the operator's.
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
    for kind, path in [(k, p) for k in MODELS for p in store.files(k)]:
        label = store.label(path)
        data = path.read_bytes()
        try:
            canonical = dump_record(load_record(MODELS[kind], data, label), label)
        except InvalidRecord as exc:
            report.faults += exc.faults
            continue
        if canonical == data:
            report.unchanged += 1
            continue
        if not check and not store.replace_file(kind, path, data, canonical):
            report.faults.append(Fault(label, "-", "changed by someone else while formatting; run fmt again"))
            continue
        report.changed.append(label)
    return report
