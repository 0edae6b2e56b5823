"""What `validate` finds that each record alone does not show: a case's address off the library's base, and a
promotion or merge a crash stopped between its writes, named with the command that finishes it; and that
command finishing it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import complete_draft
from test_merge import written

from pipeline.models import Case, DraftState
from pipeline.store import Store

pytestmark = pytest.mark.usefixtures("prefect_api")


def _validate(cli: Callable, root: Path) -> Any:
    return cli("validate", "--root", str(root))


def test_a_case_url_off_the_librarys_base_is_a_fault_and_never_the_pages_address(
    cli: Callable, root: Path, case_json: dict[str, Any]
) -> None:
    foreign = "https://attacker.example/cases/IL-0001"
    (root / "cases" / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001", "url": foreign}))
    validated = _validate(cli, root)
    assert validated.exit_code == 1
    assert validated.stdout == (
        f"cases/IL-0001.json: url: {foreign} is not under the library's base https://benchlet.com/incidentlib/app; "
        "the case's address is https://benchlet.com/incidentlib/app/cases/IL-0001\n"
    )

    built = cli("site", "--root", str(root))
    assert built.exit_code == 0, built.output
    for lang in ("en", "ko"):
        page = (root / "site" / lang / "cases" / "IL-0001" / "index.html").read_text()
        assert "attacker.example" not in page
        assert '<a href="https://benchlet.com/incidentlib/app/cases/IL-0001">' in page


def test_a_promotion_cut_short_is_reported_and_promote_finishes_it(
    cli: Callable, store: Store, case_json: dict[str, Any]
) -> None:
    draft = complete_draft(case_json, 1)
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    approved = path.read_bytes()
    assert cli("promote", "--root", str(store.root)).exit_code == 0
    # What a crash between promotion's two writes leaves: the case written, the draft still approved.
    path.write_bytes(approved)

    validated = _validate(cli, store.root)
    assert validated.exit_code == 1
    assert validated.stdout == (
        f"drafts/{draft.id}.json: state: published as IL-0001, but not marked published (a promotion cut short): "
        "rerun `incidentlib promote`\n"
    )

    again = cli("promote", "--root", str(store.root))
    assert again.exit_code == 0, again.output
    assert f"{draft.id}: updated as cases/IL-0001.json" in again.stdout
    assert store.ids("case") == ["IL-0001"]
    assert store.read_draft(draft.id).state == DraftState.PUBLISHED
    assert _validate(cli, store.root).exit_code == 0


def test_a_merge_cut_short_after_the_survivor_is_reported_and_merge_finishes_it(
    cli: Callable, store: Store, case_json: dict[str, Any]
) -> None:
    first, second = written(case_json, 1), written(case_json, 2, by="carol")
    store.write_draft(first)
    store.write_draft(second)
    path = store.path("draft", second.id)
    before = path.read_bytes()
    merge = ("merge", second.id, "--into", first.id, "--by", "bob", "--root", str(store.root))
    assert cli(*merge).exit_code == 0
    # A crash after the survivor took the sources, before the merged draft was written.
    path.write_bytes(before)

    validated = _validate(cli, store.root)
    assert validated.exit_code == 1
    assert validated.stdout == (
        f"drafts/{second.id}.json: merged_into: a merge into {first.id} cut short ({first.id} took its sources, but "
        f"it is not merged): rerun `incidentlib merge {second.id} --into {first.id}`\n"
    )

    assert cli(*merge).exit_code == 0
    assert store.read_draft(second.id).state == DraftState.MERGED
    assert [s.url for s in store.read_draft(first.id).sources] == [s.url for s in first.sources + second.sources]
    assert _validate(cli, store.root).exit_code == 0


def test_a_merge_cut_short_before_the_withdrawal_is_reported_and_merge_finishes_it(
    cli: Callable, store: Store, case_json: dict[str, Any]
) -> None:
    for n in (1, 2):
        store.write_draft(complete_draft(case_json, n))
    assert cli("promote", "--root", str(store.root)).exit_code == 0
    case = store.path("case", "IL-0002")
    standing = case.read_bytes()
    merge = ("merge", "IL-0002", "--into", "IL-0001", "--by", "carol", "--root", str(store.root))
    done = cli(*merge)
    assert done.exit_code == 0, done.output
    assert store.read_case("IL-0002").withdrawn is not None
    # A crash after both drafts were written, before the merged draft's case was withdrawn.
    case.write_bytes(standing)

    validated = _validate(cli, store.root)
    assert validated.exit_code == 1
    merged = complete_draft(case_json, 2).id
    assert validated.stdout == (
        f"drafts/{merged}.json: merged_into: a merge into IL-0001 cut short (merged, but its case IL-0002 is not "
        f"withdrawn): rerun `incidentlib merge {merged} --into IL-0001`\n"
    )

    finished = cli("merge", merged, "--into", "IL-0001", "--by", "carol", "--root", str(store.root))
    assert finished.exit_code == 0, finished.output
    assert store.read_case("IL-0002").merged_into == "IL-0001"
    assert _validate(cli, store.root).exit_code == 0


def test_a_merge_of_cases_cut_short_before_sending_on_is_reported_and_withdraw_finishes_it(
    cli: Callable, store: Store, make_case: Callable[..., Case]
) -> None:
    for n in (1, 2, 3):
        store.write_case(make_case(f"IL-000{n}", url=f"https://benchlet.com/incidentlib/app/cases/IL-000{n}"))
    withdraw = ("withdraw", "--why", "a duplicate", "--by", "bob", "--root", str(store.root))
    assert cli(*withdraw, "IL-0003", "--into", "IL-0002").exit_code == 0
    earlier = store.path("case", "IL-0003")
    before = earlier.read_bytes()
    done = cli(*withdraw, "IL-0002", "--into", "IL-0001")
    assert "IL-0003 now points at IL-0001" in done.stdout
    # A crash after IL-0002 was withdrawn, before IL-0003, merged into it earlier, was sent on.
    earlier.write_bytes(before)

    validated = _validate(cli, store.root)
    assert validated.exit_code == 1
    assert validated.stdout == (
        "cases/IL-0003.json: merged_into: IL-0002 is withdrawn itself, merged into IL-0001: name that one, or "
        "finish the merge cut short that left it here with `incidentlib withdraw IL-0002 --into IL-0001 --why …`\n"
    )

    again = cli(*withdraw, "IL-0002", "--into", "IL-0001")
    assert again.exit_code == 0, again.output
    assert "IL-0003 now points at IL-0001" in again.stdout
    assert store.read_case("IL-0003").merged_into == "IL-0001"
    assert _validate(cli, store.root).exit_code == 0
