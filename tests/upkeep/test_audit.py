"""The audit of the gold: each kind of finding, caught on a hand-made suite, at path:line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.config import DatasourceConfig
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows
from pytest_nl2sql.upkeep.audit import Finding, audit_status, audit_suite, format_findings
from pytest_nl2sql.upkeep.regenerate import regenerate

from .conftest import Demo, digest


def _case(cid: str, sql: str, *, datasource: str = "shop", order_matters: bool = False, alt: str | None = None) -> str:
    lines = [
        f"- id: {cid}",
        f"  question: What does {cid} ask?",
        f"  datasources: [{datasource}]",
        "  status: approved",
        "  origin: hand",
        "  outcome: {admin: allowed}",
        f"  order_matters: {'true' if order_matters else 'false'}",
        f"  sql: {sql}",
    ]
    if alt:
        lines += ["  alt_sql:", f"  - {alt}"]
    return "\n".join(lines) + "\n"


CASES = {
    "clean": _case("clean", "SELECT player, points FROM scores ORDER BY points DESC, player LIMIT 3", order_matters=True),
    "clean_alt": _case(
        "clean_alt", "SELECT player FROM scores WHERE points >= 9", alt="SELECT player, points FROM scores WHERE points >= 9"
    ),
    "clean_rounded": _case("clean_rounded", "SELECT ROUND(SUM(x), 2) AS total FROM amounts"),
    "tie": _case("tie", "SELECT player, points FROM scores ORDER BY points DESC LIMIT 2", order_matters=True),
    "tie_hidden_key": _case("tie_hidden_key", "SELECT player FROM scores ORDER BY points DESC LIMIT 2", order_matters=True),
    "empty": _case("empty", "SELECT player FROM scores WHERE points > 100"),
    "stale": _case("stale", "SELECT player FROM scores WHERE points = 10"),
    "redundant": _case("redundant", "SELECT player FROM scores WHERE points = 8", alt="SELECT player FROM scores WHERE points < 9"),
    "unordered": _case("unordered", "SELECT player FROM scores", order_matters=True),
    "float_order": _case("float_order", "SELECT SUM(x) AS total FROM amounts"),
    "failing": _case("failing", "SELECT nope FROM scores"),
    "truncated": _case("truncated", "SELECT n FROM big", datasource="tiny"),
}
EXPECTED = {  # case id -> the findings' (severity, code)
    "tie": {("error", "tie-at-limit")},
    "tie_hidden_key": {("error", "tie-at-limit")},
    "empty": {("warning", "empty-result")},
    "stale": {("error", "stale-rows")},
    "redundant": {("warning", "redundant-alt")},
    "unordered": {("error", "order-without-order-by")},
    "float_order": {("warning", "float-summation")},
    "failing": {("error", "sql-failed")},
    "truncated": {("error", "truncated")},
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DatasourceRegistry]:
    root = tmp_path_factory.mktemp("audit")
    database = root / "shop.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE scores (id INTEGER PRIMARY KEY, player TEXT, points INTEGER)")
        db.executemany("INSERT INTO scores VALUES (?, ?, ?)", [(1, "ann", 10), (2, "bob", 9), (3, "cy", 9), (4, "dee", 8)])
        db.execute("CREATE TABLE amounts (id INTEGER PRIMARY KEY, x REAL)")
        db.executemany("INSERT INTO amounts VALUES (?, ?)", [(1, 0.1), (2, 0.2), (3, 0.3)])
        db.execute("CREATE TABLE big (n INTEGER)")
        db.executemany("INSERT INTO big VALUES (?)", [(i,) for i in range(10)])
    db.close()
    url = f"sqlite:///{database}"
    registry = DatasourceRegistry(
        {"shop": DatasourceConfig("shop", url), "tiny": DatasourceConfig("tiny", url, row_limit=5)}
    )
    yield root, registry
    registry.close()


@pytest.fixture
def suite(shop: tuple[Path, DatasourceRegistry], tmp_path: Path) -> Path:
    _, registry = shop
    path = tmp_path / "gold.yaml"
    path.write_text("# hand-made gold with one problem per case\nversion: 1\ncases:\n" + "".join(CASES.values()))
    regenerate(path, registry)  # rows as the SQL returns them (the failing/truncated cases keep none)
    update_rows(path, {"stale": RowsUpdate([{"player": "zed"}])})
    return path


def _line_of(path: Path, cid: str) -> int:
    return path.read_text().splitlines().index(f"- id: {cid}") + 1


@pytest.fixture
def findings(shop: tuple[Path, DatasourceRegistry], suite: Path) -> list[Finding]:
    root, registry = shop
    before = digest([root / "shop.sqlite"])
    found = audit_suite(suite, registry)
    assert digest([root / "shop.sqlite"]) == before
    return found


def test_each_finding_type_is_caught_on_its_case(findings: list[Finding]) -> None:
    got: dict[str, set[tuple[str, str]]] = {}
    for f in findings:
        got.setdefault(f.case_id, set()).add((f.severity, f.code))
    for cid, expected in EXPECTED.items():
        assert expected <= got.get(cid, set()), (cid, got.get(cid))
    for clean in ("clean", "clean_alt", "clean_rounded"):
        assert clean not in got, got[clean]


def test_findings_point_at_the_case_line(findings: list[Finding], suite: Path) -> None:
    for f in findings:
        line = _line_of(suite, f.case_id)
        assert (f.path, f.line) == (str(suite), line)
        assert str(f).startswith(f"{suite}:{line}: case '{f.case_id}': [{f.code}] ")


def test_messages_say_what_is_wrong(findings: list[Finding]) -> None:
    by = {(f.case_id, f.code): f.message for f in findings}
    assert "no such column: nope" in by[("failing", "sql-failed")]
    assert "run regenerate" in by[("stale", "stale-rows")]
    assert "rows 2 and 3 are equal on the sort keys (9)" in by[("tie", "tie-at-limit")]
    assert "0.6000000000000001" in by[("float_order", "float-summation")]
    assert "row limit (5 rows)" in by[("truncated", "truncated")]


def test_exit_status_fails_on_errors_and_on_warnings_only_when_asked(findings: list[Finding]) -> None:
    assert audit_status(findings) == 1
    warnings = [f for f in findings if f.severity == "warning"]
    assert warnings and audit_status(warnings) == 0
    assert audit_status(warnings, fail_on_warnings=True) == 1
    assert audit_status([]) == 0
    text = format_findings(findings)
    assert text.splitlines()[:-1] == [str(f) for f in findings]
    errors = len(findings) - len(warnings)
    assert text.splitlines()[-1] == f"audit: {errors} error(s), {len(warnings)} warning(s)"


def test_stale_alt_rows_and_reordered_rows(shop: tuple[Path, DatasourceRegistry], suite: Path) -> None:
    _, registry = shop
    update_rows(
        suite,
        {
            "stale": RowsUpdate([{"player": "ann"}]),  # fixed
            "clean_alt": RowsUpdate([{"player": "cy"}, {"player": "bob"}, {"player": "ann"}], [[{"player": "x", "points": 1}]]),
            "clean": RowsUpdate([{"player": "bob", "points": 9}, {"player": "ann", "points": 10}, {"player": "cy", "points": 9}]),
        },
    )
    got = {(f.case_id, f.severity, f.code) for f in audit_suite(suite, registry)}
    assert ("stale", "error", "stale-rows") not in got
    assert ("clean_alt", "warning", "stale-order") in got  # same rows, other order, order_matters: false
    assert ("clean_alt", "error", "stale-rows") in got  # its alt_rows
    assert ("clean", "error", "stale-rows") in got  # other order and order_matters: true


def test_shipped_suites_pass_the_audit(demo: Demo) -> None:
    for name in ("chinook.yaml", "routing.yaml"):
        findings = audit_suite(demo.root / "evals" / name, demo.registry)
        assert audit_status(findings) == 0, format_findings(findings)
