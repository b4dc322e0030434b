"""The case renderer (drafts, seeding, migrations: ``yamltext.dump_suite``) writes a case's
``reviewed`` answers: what it writes reads back as the same cases and dumps to the same bytes,
and is byte for byte what ``eval audit --mark-reviewed`` adds to a case."""

from __future__ import annotations

from pytest_nl2sql.suitefile.loader import parse_suite
from pytest_nl2sql.suitefile.model import EvalCase, Outcome, Reviewed, Status
from pytest_nl2sql.suitefile.writer import apply_reviewed
from pytest_nl2sql.suitefile.yamltext import dump_suite

REVIEWED = (
    Reviewed("SELECT name FROM pets WHERE id IN (1, 2)", "equivalent", "ids stop at 4: the filter always holds"),
    Reviewed("SELECT a,\n  b FROM t -- two lines: 'quoted' \"too\"", "equivalent", None),
    Reviewed("SELECT 1", "equivalent", "yes: no, [brackets] # and a hash"),
)


def _case(reviewed: tuple = REVIEWED, case_id: str = "pets_001") -> EvalCase:
    return EvalCase(id=case_id, question="Which pets?", datasources=("pets",), outcome={"admin": Outcome.ALLOWED},
                    status=Status.APPROVED, sql="SELECT name FROM pets", reviewed=reviewed)


def test_dumped_reviewed_answers_read_back_and_dump_to_the_same_bytes() -> None:
    text = dump_suite([_case(), _case((), "pets_002")])
    assert text.count("reviewed:") == 1 and "verdict: equivalent" in text
    cases = list(parse_suite(text).cases)
    assert cases[0].reviewed == REVIEWED and cases[1].reviewed == ()
    assert dump_suite(cases) == text


def test_the_dump_is_what_mark_reviewed_writes() -> None:
    bare = dump_suite([_case(())])
    marked = bare
    for r in REVIEWED:
        marked = apply_reviewed(marked, "pets_001", {"sql": r.sql, "verdict": r.verdict, "note": r.note})
    assert marked == dump_suite([_case()])
