"""Code that runs in other processes during the writer tests (importable by spawned children).

Kept apart from the test modules so a child imports only the package, not pytest's test files.
"""

from __future__ import annotations

import sys
from typing import Any

from pytest_nl2sql.suitefile.model import EvalCase, Outcome
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows
from pytest_nl2sql.suitefile.yamltext import dump_suite


def rows_for(case_id: str, version: int) -> list[dict[str, Any]]:
    """The rows a writer puts in ``case_id`` at round ``version`` (easy to recognise)."""
    return [
        {"writer": case_id, "round": version, "note": f"written by {case_id} in round {version}"}
    ]


def rewrite_rounds(path: str, case_id: str, rounds: int, barrier: Any) -> None:
    """Wait for the other writers, then rewrite one case's rows ``rounds`` times."""
    barrier.wait()
    for n in range(rounds):
        update_rows(path, {case_id: RowsUpdate(rows_for(case_id, n))})


def big_suite(cases: int) -> str:
    """A valid suite of ``cases`` approved cases with ten rows each (in the writer's layout)."""
    return dump_suite(
        [
            EvalCase(
                id=f"case_{i:04d}",
                question=f"How many invoices did customer {i} get in each year?",
                datasources=("chinook",),
                outcome={"admin": Outcome.ALLOWED, "viewer": Outcome.REFUSED},
                sql=f"SELECT strftime('%Y', InvoiceDate) AS year, COUNT(*) AS n FROM Invoice WHERE CustomerId = {i}",
                rows=tuple({"year": str(2009 + j), "invoices": j * i} for j in range(10)),
            )
            for i in range(cases)
        ],
        header="Crash-safety test suite",
    )


def flip_updates(case_ids: list[str], side: int) -> dict[str, RowsUpdate]:
    """Rows for every case: side 0 and side 1 differ in every row."""
    return {
        cid: RowsUpdate([{"year": str(2009 + j), "invoices": j * 1000 + side} for j in range(10)])
        for cid in case_ids
    }


def flip_forever(path: str, cases: int) -> None:
    """Rewrite every case's rows, alternating two versions, until killed; say 'ready' once."""
    case_ids = [f"case_{i:04d}" for i in range(cases)]
    side = 1
    update_rows(path, flip_updates(case_ids, side))
    print("ready", flush=True)
    while True:
        side = 1 - side
        update_rows(path, flip_updates(case_ids, side))


if __name__ == "__main__":
    flip_forever(sys.argv[1], int(sys.argv[2]))
