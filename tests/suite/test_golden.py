"""The golden corpus: valid suites in many layouts, and what the writer does to them.

The writer edits rows in place, so whatever a person wrote around them -- comments, blank lines,
quoting, key order, flow style, CRLF -- must survive a rewrite. Files in ``WRITER_LAYOUT`` already
hold their rows the way the writer writes them (block lists of one-line ``{column: value}``
maps, plain where YAML allows), so rewriting them with the rows they hold gives the same bytes.
The other files hold rows in layouts the writer does not produce (flow lists, block maps,
needless quotes, a comment between rows): rewriting them gives the writer's layout for those
rows only, and the same cases.
"""

from __future__ import annotations

import difflib
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.suitefile.loader import CaseSpans, load_suite, parse_suite
from pytest_nl2sql.suitefile.model import Kind, Status
from pytest_nl2sql.suitefile.writer import RowsUpdate, apply_rows, update_rows
from pytest_nl2sql.suitefile.yamlnodes import MappingNode, SequenceNode
from tests.suite import writers
from tests.suite.corpus import GOLDEN, HERE, golden_files

#: file -> (cases, approved cases)
COUNTS = {
    "alt_rows.yaml": (2, 1),
    "blank_lines.yaml": (2, 2),
    "block_scalars.yaml": (5, 5),
    "bom.yaml": (1, 1),
    "comments.yaml": (3, 2),
    "crlf.yaml": (3, 3),
    "flow_cases.yaml": (4, 4),
    "flow_maps.yaml": (3, 3),
    "indented.yaml": (2, 2),
    "key_order.yaml": (3, 3),
    "kinds.yaml": (8, 6),
    "quoted.yaml": (2, 2),
    "rows_empty.yaml": (2, 2),
    "rows_missing.yaml": (3, 1),
    "unicode_values.yaml": (2, 2),
    "writer_layout.yaml": (5, 5),
}
WRITER_LAYOUT = {
    "alt_rows.yaml",
    "blank_lines.yaml",
    "block_scalars.yaml",
    "bom.yaml",
    "crlf.yaml",
    "key_order.yaml",
    "kinds.yaml",
    "rows_empty.yaml",
    "rows_missing.yaml",
    "writer_layout.yaml",
}
NAMES = sorted(COUNTS)


def _text(name: str) -> str:
    """A golden file's text as the writer sees it (UTF-8, byte order mark left out)."""
    return (GOLDEN / name).read_bytes().decode("utf-8-sig")


def _sql_cases() -> list[Any]:
    return [
        pytest.param(path.name, case.id, id=f"{path.stem}-{case.id}")
        for path in golden_files()
        for case in load_suite(path, use_cache=False)
        if case.sql is not None
    ]


def test_the_corpus_is_what_this_module_describes() -> None:
    assert sorted(p.name for p in golden_files()) == NAMES
    assert WRITER_LAYOUT < set(NAMES)
    assert (GOLDEN / ".gitattributes").read_text() == "* -text\n"  # git keeps CRLF and BOM bytes
    assert (HERE / "malformed" / ".gitattributes").read_text() == "* -text\n"


@pytest.mark.parametrize("name", NAMES)
def test_golden_file_loads(name: str) -> None:
    suite = load_suite(GOLDEN / name, use_cache=False)
    assert (len(suite), len(suite.approved())) == COUNTS[name]
    assert suite.sha256  # the loader records the file's digest
    assert all(
        case.location is not None and case.location.path == str(GOLDEN / name) for case in suite
    )


def test_values_read_from_each_layout() -> None:
    block = load_suite(GOLDEN / "block_scalars.yaml")
    assert block.get("clip").sql == "SELECT Title\nFROM Album\nWHERE ArtistId = 1\n"
    assert block.get("clip").question == "Which albums does AC/DC have?\n"
    assert block.get("strip").sql == "SELECT COUNT(*) AS count\nFROM Album"
    assert block.get("keep").sql == "SELECT COUNT(*) AS count\nFROM Artist\n\n\n"
    assert block.get("folded").sql == "SELECT COUNT(*) AS count FROM MediaType"
    assert block.get("folded").question == "How many media types are there?\n"
    assert block.get("indent_indicator").sql == "  SELECT COUNT(*) AS count\nFROM Genre\n"

    quoted = load_suite(GOLDEN / "quoted.yaml")
    assert quoted.get("q1").question == 'What\'s the "best" selling track?'
    assert quoted.get("q1").sql == "SELECT Name FROM Track\n  WHERE TrackId = 1"
    assert quoted.get("q2").question == "Tab\there, a backslash \\ and unicode \u00e9\U0001f3b5"
    assert quoted.get("q2").rows == (
        {"answer": "yes", "other": "no", "nothing": None},
        {"answer": "true", "other": "1e3", "nothing": "~"},
    )

    crlf = load_suite(GOLDEN / "crlf.yaml")
    assert crlf.get("w1").sql == "SELECT COUNT(*) AS count\nFROM Customer\n"  # no CR in values
    assert crlf.get("w2").question == "How many artists are there?"
    assert crlf.get("w2").rows == () and crlf.get("w3").rows is None

    uni = load_suite(GOLDEN / "unicode_values.yaml")
    assert uni.get("uni.1").outcome["gérant"] == "refused"
    row, row2 = uni.get("uni-2").rows
    assert [(type(v).__name__, v) for v in row.values()] == [
        ("str", "yes"), ("str", "null"), ("str", "0x1F"), ("str", "2009-01-01"), ("float", 1000.0), ("float", -0.0)
    ]  # fmt: skip
    assert str(row["f"]) == "-0.0" and row2["e"] == float("inf") and row2["f"] == float("-inf")

    kinds = load_suite(GOLDEN / "kinds.yaml")
    assert kinds.match == {
        "column_names": "require",
        "duplicates": "count",
        "extra_columns": "forbid",
        "float_tolerance": 0.0,
    }
    assert [c.id for c in kinds if c.kind is Kind.ROUTING] == ["r1", "r2"]
    assert kinds.get("r2").datasources == ("webanalytics", "chinook")
    assert [c.id for c in kinds if c.status is not Status.APPROVED] == ["d1", "old1"]

    flow = load_suite(GOLDEN / "flow_cases.yaml")
    assert flow.get("f4").alt_rows == (({"Name": "AAC audio file"}, {"Name": "MPEG audio file"}),)
    assert flow.get("f2").rows is None and flow.get("f3").rows == ()
    assert load_suite(GOLDEN / "key_order.yaml").get("k2").alt_sql == (
        "SELECT COUNT(InvoiceLineId) AS count FROM InvoiceLine",
    )
    assert load_suite(GOLDEN / "indented.yaml").get("i2").rows[0] == {"Country": "USA", "n": 13}
    assert load_suite(GOLDEN / "bom.yaml").get("bom1").rows == ({"count": 3503},)


@pytest.mark.parametrize("name", NAMES)
def test_no_updates_give_the_same_text(name: str) -> None:
    text = _text(name)
    assert apply_rows(text, {}) == text


@pytest.mark.parametrize("name", NAMES)
def test_rewriting_the_rows_a_file_holds(name: str) -> None:
    text = _text(name)
    suite = parse_suite(text, name)
    same = {c.id: RowsUpdate(c.rows, c.alt_rows) for c in suite if c.rows is not None}
    new = apply_rows(text, same, name)
    # rows equal to what a case holds are not rewritten at all, whatever their layout
    assert new == text


# -- one case's rows change, nothing else -------------------------------------------------


def _last_line(node: Any) -> int:
    """0-based line of the last character of a node's own text."""
    while type(node) in (MappingNode, SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    end = node.end_mark
    return end.line if end.column > 0 else end.line - 1


def _allowed_ranges(text: str, case_id: str, keys: tuple[str, ...]) -> list[tuple[int, int]]:
    """Line ranges an update of ``keys`` may touch: each key with its value, or, for a key the
    case lacks, the case's own lines (where the writer adds it)."""
    spans: dict[str, CaseSpans] = {}
    parse_suite(text, strict=False, spans=spans)
    case = spans[case_id]
    out = []
    for key in keys:
        if key in case.nodes:
            knode, vnode = case.nodes[key]
            out.append((knode.start_mark.line, _last_line(vnode)))
        else:
            first = text.count("\n", 0, case.start)
            out.append((first, max(_last_line(v) for _, v in case.nodes.values())))
    return out


def _changed_outside(old: str, new: str, ranges: list[tuple[int, int]]) -> list[str]:
    a, b = old.split("\n"), new.split("\n")
    bad = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if not any(first <= i1 and i2 <= last + 1 for first, last in ranges):
            bad.append(f"{tag} old lines {i1 + 1}-{i2}: {a[i1:i2]!r} -> {b[j1:j2]!r}")
    return bad


NEW_ROWS = [
    {"x": 1, "label": "Why not", "when": "2009-01-01"},
    {"x": -2.5, "label": None, "when": "yes"},
]


@pytest.mark.parametrize(("name", "case_id"), _sql_cases())
def test_updating_one_case_changes_only_its_rows(name: str, case_id: str) -> None:
    text = _text(name)
    before = parse_suite(text, name)
    old = before.get(case_id)
    alts = [[{"alt": n}] for n in range(len(old.alt_sql))]
    keys = ("rows", "alt_rows") if old.alt_sql else ("rows",)
    new = apply_rows(text, {case_id: RowsUpdate(NEW_ROWS, alts if old.alt_sql else None)}, name)

    assert not _changed_outside(text, new, _allowed_ranges(text, case_id, keys))
    after = parse_suite(new, name, strict=False)
    got = after.get(case_id)
    assert got.rows == tuple(NEW_ROWS)
    assert got.alt_rows == (tuple(tuple(a) for a in alts) if old.alt_sql else old.alt_rows)
    assert attrs.evolve(got, rows=old.rows, alt_rows=old.alt_rows) == old
    assert [c for c in after if c.id != case_id] == [c for c in before if c.id != case_id]
    if "\r\n" in text:
        assert new.count("\n") == new.count("\r\n")  # the new lines use the file's line ending


def test_updating_several_cases_at_once_equals_updating_them_one_by_one() -> None:
    text = _text("writer_layout.yaml")
    updates = {
        "chinook_003": RowsUpdate([{"a": 1}]),
        "chinook_004": RowsUpdate([]),
        "chinook_001": RowsUpdate([{"b": 2}], [[]]),
    }
    step = text
    for cid, update in updates.items():
        step = apply_rows(step, {cid: update})
    assert apply_rows(text, updates) == step


def test_an_update_for_an_unknown_case_is_refused() -> None:
    with pytest.raises(SuiteError) as info:
        apply_rows(
            _text("kinds.yaml"),
            {"p1": RowsUpdate([]), "nope": RowsUpdate([]), "gone": RowsUpdate([])},
            "kinds.yaml",
        )
    assert str(info.value).splitlines() == [
        "kinds.yaml: no case 'nope' in this suite",
        "kinds.yaml: no case 'gone' in this suite",
    ]


# -- update_rows on files -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["writer_layout.yaml", "crlf.yaml", "flow_cases.yaml", "comments.yaml"]
)
def test_update_rows_replaces_the_file_atomically_and_keeps_its_mode(
    golden_copy, name: str
) -> None:
    path = golden_copy(name)
    path.chmod(0o640)
    text = path.read_bytes().decode("utf-8")
    case_id = next(c.id for c in load_suite(path) if c.sql is not None)
    update = {case_id: RowsUpdate(NEW_ROWS)}

    assert update_rows(path, update) is True
    assert sorted(p.name for p in path.parent.iterdir()) == [name]  # no temporary file left
    assert path.stat().st_mode & 0o7777 == 0o640
    assert path.read_bytes() == apply_rows(text, update).encode("utf-8")
    assert load_suite(path).get(case_id).rows == tuple(NEW_ROWS)  # and the cache sees the new bytes


def test_update_rows_with_the_rows_a_file_holds_leaves_it_alone(golden_copy) -> None:
    path = golden_copy("writer_layout.yaml")
    before = path.stat()
    suite = load_suite(path)
    assert (
        update_rows(
            path, {c.id: RowsUpdate(c.rows, c.alt_rows) for c in suite if c.rows is not None}
        )
        is False
    )
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_update_rows_refuses_a_broken_file_and_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    data = (HERE / "malformed" / "status_misspelled.yaml").read_bytes()
    path.write_bytes(data)
    with pytest.raises(SuiteError):
        update_rows(path, {"c1": RowsUpdate([{"n": 1}])})
    assert path.read_bytes() == data
    with pytest.raises(SuiteError, match="no such suite file"):
        update_rows(tmp_path / "missing.yaml", {"c1": RowsUpdate([])})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.yaml"]


def test_update_rows_keeps_a_byte_order_mark(golden_copy) -> None:
    path = golden_copy("bom.yaml")
    update_rows(path, {"bom1": RowsUpdate([{"count": 3504}])})
    assert path.read_bytes().startswith(b"\xef\xbb\xbf# Golden")


def test_a_comment_between_rows_survives_a_rewrite_of_the_same_rows() -> None:
    text = _text("comments.yaml")
    c2 = parse_suite(text).get("c2")
    assert "  # more rows\n" in apply_rows(text, {"c2": RowsUpdate(c2.rows)})


@pytest.mark.parametrize("line", [" " * 110 + "FROM Customer", "-- " + "-" * 100])
def test_a_deeply_indented_or_dashed_sql_line_is_not_nesting(line: str) -> None:
    text = _text("writer_layout.yaml").replace(
        "    FROM Customer\n    GROUP BY", f"    {line}\n    GROUP BY", 1
    )
    assert line in parse_suite(text).get("chinook_001").sql


# -- several processes -----------------------------------------------------------------------


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(_text("writer_layout.yaml"), encoding="utf-8")
    case_ids = ["chinook_001", "chinook_003", "chinook_004"]
    rounds = 8
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(case_ids))
    procs = [
        ctx.Process(target=writers.rewrite_rounds, args=(str(path), cid, rounds, barrier))
        for cid in case_ids
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * len(procs)

    suite = load_suite(path, use_cache=False)
    for cid in case_ids:
        assert suite.get(cid).rows == tuple(writers.rows_for(cid, rounds - 1)), cid
    untouched = parse_suite(_text("writer_layout.yaml"))
    assert [c for c in suite if c.id not in case_ids] == [
        c for c in untouched if c.id not in case_ids
    ]
    assert suite.get("chinook_001").alt_rows == untouched.get("chinook_001").alt_rows


def test_a_writer_killed_at_any_moment_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    cases = 150
    path = tmp_path / "big.yaml"
    base = writers.big_suite(cases)
    ids = [f"case_{i:04d}" for i in range(cases)]
    sides = [apply_rows(base, writers.flip_updates(ids, side)).encode("utf-8") for side in (0, 1)]
    assert sides[0] != sides[1]
    path.write_bytes(sides[0])
    rng = random.Random(20240501)
    env = {**os.environ, "NL2SQL_CACHE_DIR": "off", "PYTHONPATH": str(HERE.parent.parent)}
    seen = set()
    for _ in range(21):
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.suite.writers", str(path), str(cases)],
            stdout=subprocess.PIPE,
            env=env,
            cwd=HERE.parent.parent,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        # a random moment inside the rewrite loop (reading, editing, writing or replacing)
        time.sleep(rng.uniform(0, 0.25))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        data = path.read_bytes()
        assert data in sides, "the file is neither the old nor the new version"
        seen.add(sides.index(data))
        assert len(load_suite(path, use_cache=False)) == cases
    # the lock of a killed writer does not block the next one
    assert update_rows(path, writers.flip_updates(ids, 1 - sides.index(path.read_bytes())))
    assert seen  # (which versions were hit depends on timing; both are valid)
