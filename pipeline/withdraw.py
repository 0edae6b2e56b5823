"""`withdraw`: take a published case back without deleting it, OSV's way, or merge it into another.

    withdraw(store, "IL-0007", why="a duplicate of IL-0003", by="carol", into="IL-0003")

A published id is a promise: links to it are in other people's notes, tickets and citations. So a case
is never deleted; its file stays in cases/ with `withdrawn` (when), `withdrawn_reason` (why),
`withdrawn_by` (who) and, for a merge, `merged_into` (the survivor), and its page says so and sends the
reader on. Its `updated_at` moves too, so the feeds and `modified_id.csv` carry the change to whoever
syncs the library.

The survivor lists the ids merged into it, the case's and those sent on, as its `aliases` (OSV's), written
last. Refused: an unknown case, a case already withdrawn (but by the same merge cut short before it sent
the cases merged into it on or the survivor listed them: running it again finishes it), a survivor that
is unknown, withdrawn itself or the case itself. Cases merged earlier into the one withdrawn now are sent
on to its survivor in the same step (one hop, never a chain); with no survivor to send them to, the
withdrawal is refused. Each case is written atomically under its own lock (`Store.update_case`); the
whole step holds the cases lock, so two withdrawals (or a withdrawal and a publication) do not interleave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pipeline import gate
from pipeline.errors import InvalidRecord, RecordError
from pipeline.models import Case, utc_now
from pipeline.store import Store

__all__ = ["Withdrawal", "withdraw"]


@dataclass
class Withdrawal:
    """What `withdraw` did: the case, when, its survivor, and the cases sent on to the survivor."""

    case_id: str
    withdrawn: datetime
    merged_into: str | None = None
    repointed: list[str] = field(default_factory=list)


def _merged_into(store: Store, case_id: str) -> list[str]:
    """The cases merged into `case_id` (so withdrawn already), by id; a broken file is `validate`'s to name."""
    found = []
    for other in store.ids("case"):
        try:
            if store.read_case(other).merged_into == case_id:
                found.append(other)
        except InvalidRecord:
            continue
    return found


def _check(store: Store, case: Case, into: str | None) -> None:
    if case.withdrawn is not None:
        raise RecordError(f"{case.id} was withdrawn already, at {case.withdrawn.isoformat()}")
    if into is None:
        return
    if into == case.id:
        raise RecordError(f"{case.id} cannot be merged into itself")
    if not store.exists("case", into):
        raise RecordError(f"{into} is not a case in cases/: name the case that survives the merge")
    survivor = store.read_case(into)
    if survivor.withdrawn is not None:
        onward = f"; it was merged into {survivor.merged_into}, name that one" if survivor.merged_into else ""
        raise RecordError(f"{into} is withdrawn itself{onward}")


def withdraw(
    store: Store, case_id: str, *, why: str, by: str, into: str | None = None, now: datetime | None = None
) -> Withdrawal:
    """Withdraw a published case (into a survivor, for a merge); see the module's docstring."""
    why = gate.clean(why).text.strip()  # an operator's words, shown on the case's page: through the gate
    if not why:
        raise RecordError("say why the case is withdrawn (--why): its page tells the reader")
    at = now or utc_now()
    with store.state.lock("cases"):
        case = store.read_case(case_id)
        earlier = _merged_into(store, case_id)
        if (
            into is not None
            and case.withdrawn is not None
            and case.merged_into == into
            and (earlier or _unaliased(store, case_id, into))
        ):
            # The same merge cut short after the case was written: the cases merged into it are sent on now,
            # and the survivor takes their ids (the withdrawal keeps its time and reason as written).
            for other in earlier:
                store.update_case(other, lambda c: c.model_copy(update={"merged_into": into, "updated_at": at}))
            _alias(store, case_id, into, earlier, at)
            return Withdrawal(case_id, case.withdrawn, into, earlier)
        _check(store, case, into)
        if earlier and into is None:
            raise RecordError(
                f"{', '.join(earlier)} merged into {case_id}: withdraw it --into a survivor, so that they point at one"
            )
        stamp = {"withdrawn": at, "withdrawn_reason": why, "withdrawn_by": by, "merged_into": into, "updated_at": at}
        # Its aliases go with the cases they name, to the survivor: a withdrawn case is known by no other id.
        store.update_case(case_id, lambda case: case.model_copy(update={**stamp, "aliases": []}))
        for other in earlier:
            store.update_case(other, lambda case: case.model_copy(update={"merged_into": into, "updated_at": at}))
        if into is not None:
            _alias(store, case_id, into, earlier, at)
    return Withdrawal(case_id, at, into, earlier)


def _unaliased(store: Store, case_id: str, into: str) -> bool:
    """Whether the survivor `into` does not list `case_id`, merged into it, among its aliases yet."""
    return store.exists("case", into) and case_id not in store.read_case(into).aliases


def _alias(store: Store, case_id: str, into: str, earlier: list[str], at: datetime) -> None:
    """The survivor `into` known by the ids merged into it now (`case_id`, and those merged into that one
    earlier): its `aliases`, OSV's. Written after the withdrawals, so that each alias names a withdrawn case;
    a merge cut short before it is finished by the same merge again."""

    def add(survivor: Case) -> Case | None:
        aliases = sorted({*survivor.aliases, case_id, *earlier})
        if aliases == survivor.aliases:
            return None
        return survivor.model_copy(update={"aliases": aliases, "updated_at": at})

    store.update_case(into, add)
