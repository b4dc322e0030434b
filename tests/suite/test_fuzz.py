"""Property tests of the loader and the writer.

* Whatever bytes or text it is given, the loader returns a suite or raises ``SuiteError`` --
  never another exception, never a hang (hypothesis' deadline is generous: it catches a
  runaway, it does not time the product).
* Values round-trip: rows written by ``apply_rows`` into any golden layout, and whole cases
  written by ``dump_suite``, read back equal -- with their types (1, 1.0 and True stay apart).

The runs are derandomized so CI is repeatable; set ``NL2SQL_FUZZ_RANDOM=1`` to explore.
"""

from __future__ import annotations

import math
import os
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.suitefile.loader import MATCH_OPTIONS, load_suite, parse_suite
from pytest_nl2sql.suitefile.model import (
    Difficulty,
    EvalCase,
    EvalSuite,
    Kind,
    Origin,
    Outcome,
    Status,
)
from pytest_nl2sql.suitefile.writer import RowsUpdate, apply_rows
from pytest_nl2sql.suitefile.yamltext import dump_suite
from tests.suite.corpus import GOLDEN, golden_files

FUZZ = settings(
    deadline=2000,
    max_examples=150,
    derandomize=not os.environ.get("NL2SQL_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASE_TEXT = (GOLDEN / "writer_layout.yaml").read_text(encoding="utf-8")
BASE_BYTES = BASE_TEXT.encode("utf-8")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _parse_or_refuse(text: str) -> EvalSuite | None:
    """Parse; a SuiteError is a fine answer, any other exception fails the test."""
    try:
        return parse_suite(text, "fuzz.yaml")
    except SuiteError as exc:
        assert exc.problems, "a SuiteError must carry at least one problem"
        assert str(exc).startswith("fuzz.yaml"), str(exc)
        return None


def _load_or_refuse(path: Path, data: bytes) -> EvalSuite | None:
    path.write_bytes(data)
    try:
        return load_suite(path, use_cache=False)
    except SuiteError:
        return None


# -- nothing but SuiteError escapes ------------------------------------------------------

YAML_BITS = st.sampled_from(
    ["[", "]", "{", "}", ":", ": ", "- ", "-", "#", "&a ", "*a", "!", "!!str ", "|", ">", "'", '"', "\t", "\n",
     "\r\n", "  ", "? ", ",", "%YAML 1.2\n", "---\n", "...\n", "\\", "\x85", "\ufeff", "~", "@", "`"]
)  # fmt: skip


@FUZZ
@given(data=st.binary(max_size=2000))
def test_random_bytes_are_loaded_or_refused(scratch: Path, data: bytes) -> None:
    _load_or_refuse(scratch / "bytes.yaml", data)


@FUZZ
@given(text=st.text(max_size=2000))
def test_random_text_is_parsed_or_refused(text: str) -> None:
    _parse_or_refuse(text)


@FUZZ
@given(
    parts=st.lists(
        st.one_of(YAML_BITS, st.text(string.ascii_letters + string.digits + " ._", max_size=8))
    )
)
def test_random_yaml_punctuation_is_parsed_or_refused(parts: list[str]) -> None:
    _parse_or_refuse("".join(parts))


@FUZZ
@given(
    flips=st.lists(
        st.tuples(st.integers(0, len(BASE_BYTES) - 1), st.integers(0, 255)), min_size=1, max_size=8
    )
)
def test_byte_flips_of_a_valid_suite_are_loaded_or_refused(
    scratch: Path, flips: list[tuple[int, int]]
) -> None:
    data = bytearray(BASE_BYTES)
    for index, value in flips:
        data[index] = value
    _load_or_refuse(scratch / "flipped.yaml", bytes(data))


@FUZZ
@given(
    inserts=st.lists(st.tuples(st.integers(0, len(BASE_TEXT)), YAML_BITS), min_size=1, max_size=6),
)
def test_inserted_punctuation_in_a_valid_suite_is_parsed_or_refused(
    inserts: list[tuple[int, str]],
) -> None:
    text = BASE_TEXT
    for index, bit in sorted(inserts, reverse=True):
        text = text[:index] + bit + text[index:]
    _parse_or_refuse(text)


def test_a_valid_suite_truncated_at_every_length_is_parsed_or_refused() -> None:
    whole = parse_suite(BASE_TEXT)
    loaded = 0
    for end in range(len(BASE_TEXT)):
        suite = _parse_or_refuse(BASE_TEXT[:end])
        if suite is not None:
            loaded += 1
            assert len(suite) <= len(whole)
    assert loaded > 0  # a cut at a case boundary is itself a valid, shorter suite


@FUZZ
@example(value="0x_")
@example(value="._")
@example(value="9" * 5000)
@given(value=st.from_regex(r"[-+]?(0[xob]_*|\._*|[0-9_]{1,5})", fullmatch=True))
def test_number_like_plain_values_are_read_or_refused(value: str) -> None:
    _parse_or_refuse(BASE_TEXT.replace("{total: null}", f"{{total: {value}}}"))
    _parse_or_refuse(f"version: {value}\ncases: []\n")


# -- values round-trip through the writer ----------------------------------------------

YAML_WORDS = [
    "yes", "no", "Yes", "NO", "on", "off", "y", "n", "null", "Null", "NULL", "~", "true", "False", "TRUE",
    "1e3", "0x1F", "0o17", "0b101", "1_000", ".5", "+1", "-0", ".inf", "-.inf", ".nan", "2009-01-01",
    "2009-01-01 00:00:00", "12:30:00", "1:20", ": ", ":", "#", " # x", "- x", "-", "? x", "[a]", "{a: 1}",
    "&a", "*a", "!tag", "!!str", "|", ">", "'", '"', "''", "\\", "\\n", " leading", "trailing ", "a  b",
    "", " ", "\t", "\n", "a\nb", "\r\n", "%", "@", "`", "=", "<<", "...", "---", "\x00", "\x7f", "\x85",
    "\u2028", "\ufeff", "é", "🎵", "\U0010ffff", "\ufffe",
]  # fmt: skip

# Two known writer bugs are kept out of the generated text until they are fixed (each has its
# own strict xfail below): '?' in a plain flow scalar, and U+2028/U+2029 in a quoted key.
KNOWN_BAD = ""
TEXT_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters=KNOWN_BAD)
SAFE_WORDS = [w for w in YAML_WORDS if not set(KNOWN_BAD) & set(w)]
SCALARS = st.one_of(
    st.sampled_from(SAFE_WORDS),
    st.text(TEXT_CHARS, max_size=30),
    st.integers(),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**64, 10**100, -(10**300)]),
    st.floats(allow_nan=False),
    st.sampled_from(
        [0.0, -0.0, 1.0, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, math.inf, -math.inf]
    ),
    st.booleans(),
    st.none(),
)
COLUMN = st.one_of(
    st.sampled_from([w for w in SAFE_WORDS if w]), st.text(TEXT_CHARS, min_size=1, max_size=12)
)


def _typed(value: Any) -> Any:
    """A comparison key that keeps 1, 1.0, True and -0.0/0.0 apart, recursively."""
    if isinstance(value, Mapping):
        return ("map", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


@st.composite
def row_sets(draw: st.DrawFn, min_rows: int = 0) -> list[dict[str, Any]]:
    columns = draw(st.lists(COLUMN, min_size=1, max_size=4, unique=True))
    count = draw(st.integers(min_rows, 4))
    return [{c: draw(SCALARS) for c in columns} for _ in range(count)]


def _sql_cases() -> list[tuple[str, str]]:
    out = []
    for path in golden_files():
        suite = load_suite(path, use_cache=False)
        out += [(path.name, c.id) for c in suite if c.sql is not None]
    return out


SQL_CASES = _sql_cases()


@settings(FUZZ, max_examples=200)
@given(target=st.sampled_from(SQL_CASES), rows=row_sets(), alt=row_sets())
def test_rows_written_into_any_layout_read_back_with_their_types(
    target: tuple[str, str], rows: list[dict[str, Any]], alt: list[dict[str, Any]]
) -> None:
    name, case_id = target
    text = (GOLDEN / name).read_bytes().decode("utf-8-sig")
    before = parse_suite(text, name)
    old = before.get(case_id)
    alts = [alt] * len(old.alt_sql)
    new_text = apply_rows(text, {case_id: RowsUpdate(rows, alts if old.alt_sql else None)}, name)
    after = parse_suite(new_text, name, strict=False)
    got = after.get(case_id)
    assert _typed(got.rows) == _typed(rows)
    if old.alt_sql:
        assert _typed(got.alt_rows) == _typed(alts)
    assert [c for c in after if c.id != case_id] == [c for c in before if c.id != case_id]
    assert got.sql == old.sql and got.question == old.question and got.plan == old.plan


@settings(FUZZ, max_examples=40)
@given(first=row_sets(min_rows=1), second=row_sets(min_rows=1))
def test_rewriting_rows_twice_is_the_same_as_writing_the_last(first: list, second: list) -> None:
    once = apply_rows(BASE_TEXT, {"chinook_003": RowsUpdate(second)})
    twice = apply_rows(
        apply_rows(BASE_TEXT, {"chinook_003": RowsUpdate(first)}),
        {"chinook_003": RowsUpdate(second)},
    )
    assert twice == once


# -- whole cases round-trip through dump_suite -----------------------------------------

NONBLANK = st.text(TEXT_CHARS, min_size=1, max_size=40).filter(lambda s: s.strip() != "")
WORD = st.text(
    st.characters(blacklist_categories=("Z", "Cc", "Cs"), blacklist_characters="[]" + KNOWN_BAD),
    min_size=1,
    max_size=12,
)
IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
PLAN_DATA = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(TEXT_CHARS, max_size=20),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(TEXT_CHARS, max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
MATCH = st.fixed_dictionaries(
    {},
    optional={
        key: st.floats(0, 1e6) if allowed is float else st.sampled_from(allowed)
        for key, allowed in MATCH_OPTIONS.items()
    },
)


@st.composite
def eval_cases(draw: st.DrawFn, case_id: str) -> EvalCase:
    """A case the loader accepts (every cross-field rule of the spec holds)."""
    kind = draw(st.sampled_from(Kind))
    status = draw(st.sampled_from(Status))
    roles = draw(
        st.lists(NONBLANK, min_size=1, max_size=1 if kind is Kind.ROUTING else 3, unique=True)
    )
    outcome = {role: draw(st.sampled_from(Outcome)) for role in roles}
    if Outcome.UNANSWERABLE in outcome.values():  # the data does not exist, for any role
        outcome = {
            role: Outcome.REFUSED if o is Outcome.ALLOWED else o for role, o in outcome.items()
        }
    answerable = Outcome.ALLOWED in outcome.values()
    unanswerable = Outcome.UNANSWERABLE in outcome.values()
    sql = rows = None
    alt_sql: tuple[str, ...] = ()
    alt_rows: tuple = ()
    if kind is Kind.ANSWER and not unanswerable:
        needs_sql = status is Status.APPROVED and answerable
        sql = draw(NONBLANK if needs_sql else st.one_of(st.none(), NONBLANK))
        if sql is not None:
            rows = draw(st.one_of(st.none(), row_sets().map(tuple)))
            alt_sql = tuple(draw(st.lists(NONBLANK, max_size=2, unique=True)))
            n_alt = (
                len(alt_sql) if status is Status.APPROVED else draw(st.integers(0, len(alt_sql)))
            )
            alt_rows = tuple(tuple(draw(row_sets())) for _ in range(n_alt))
    datasources = (
        (draw(NONBLANK),)
        if sql is not None
        else tuple(draw(st.lists(NONBLANK, min_size=1, max_size=3, unique=True)))
    )
    tables = draw(st.lists(NONBLANK, max_size=3, unique=True))
    columns = draw(
        st.lists(
            st.tuples(NONBLANK, WORD.filter(lambda c: "." not in c)).map(".".join),
            max_size=3,
            unique=True,
        )
    )
    return EvalCase(
        id=case_id,
        question=draw(NONBLANK),
        datasources=datasources,
        outcome=outcome,
        status=status,
        kind=kind,
        origin=draw(st.sampled_from(Origin)),
        difficulty=draw(st.one_of(st.none(), st.sampled_from(Difficulty))),
        tags=draw(st.lists(WORD, max_size=3, unique=True)),
        paraphrase_group=draw(st.one_of(st.none(), NONBLANK.map(lambda g: f"{case_id}:{g}"))),
        tables=tables,
        columns=columns,
        order_matters=draw(st.booleans()) if kind is Kind.ANSWER else False,
        match=draw(st.one_of(st.none(), MATCH.filter(bool))),
        sql=sql,
        rows=rows,
        alt_sql=alt_sql,
        alt_rows=alt_rows,
        plan=draw(
            st.one_of(
                st.none(),
                st.dictionaries(st.text(TEXT_CHARS, max_size=8), PLAN_DATA, min_size=1, max_size=4),
            )
        ),
    )


@st.composite
def case_lists(draw: st.DrawFn) -> list[EvalCase]:
    ids = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    return [draw(eval_cases(case_id)) for case_id in ids]


# Printable header text only: see test_a_header_with_a_carriage_return_loads_back.
HEADER = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")) | st.just("\n"), max_size=60
)


@settings(FUZZ, max_examples=150)
@given(cases=case_lists(), header=HEADER)
def test_dumped_cases_load_back_equal(cases: list[EvalCase], header: str) -> None:
    text = dump_suite(cases, header=header)
    suite = parse_suite(text, "dumped.yaml")
    assert suite.cases == tuple(cases)
    for got, want in zip(suite.cases, cases, strict=True):
        assert _typed(got.rows) == _typed(want.rows)
        assert _typed(got.alt_rows) == _typed(want.alt_rows)
        assert _typed(got.plan) == _typed(want.plan)
    assert apply_rows(text, {}) == text
    assert (
        apply_rows(
            text, {c.id: RowsUpdate(c.rows, c.alt_rows) for c in cases if c.rows is not None}
        )
        == text
    )


def test_a_case_built_with_lists_equals_the_case_read_back() -> None:
    case = EvalCase(
        id="c1",
        question="How many customers are there?",
        datasources=["chinook"],
        outcome={"admin": Outcome.ALLOWED},
        sql="SELECT COUNT(*) AS n FROM Customer",
        rows=[{"n": 59}],
        alt_sql=["SELECT 59 AS n"],
        alt_rows=[[{"n": 59}]],
    )
    assert parse_suite(dump_suite([case])).cases == (case,)


def test_a_header_with_newlines_becomes_comment_lines() -> None:
    text = dump_suite([], header="Drafts for chinook\n\n# already a comment\nlast line")
    assert text.splitlines()[:4] == [
        "# Drafts for chinook",
        "#",
        "# already a comment",
        "# last line",
    ]
    assert len(parse_suite(text)) == 0


def test_a_header_with_a_carriage_return_loads_back() -> None:
    parse_suite(dump_suite([], header="exported from run 12\rby alice"))


def test_a_column_name_with_a_line_separator_round_trips() -> None:
    text = apply_rows(BASE_TEXT, {"chinook_003": RowsUpdate([{"\u2028": "yes", "a\u2029b": 1}])})
    assert parse_suite(text).get("chinook_003").rows == ({"\u2028": "yes", "a\u2029b": 1},)


@pytest.mark.parametrize("value", ["Why?", "a?b", "How many customers are there?"])
def test_a_value_with_a_question_mark_round_trips(value: str) -> None:
    text = apply_rows(BASE_TEXT, {"chinook_003": RowsUpdate([{"subject": value, value: 1}])})
    assert parse_suite(text).get("chinook_003").rows == ({"subject": value, value: 1},)


def test_dumped_flow_lists_with_a_question_mark_load_back() -> None:
    case = EvalCase(
        id="c1",
        question="Why?",
        datasources=("chinook",),
        outcome={"admin?": Outcome.REFUSED},
        tables=("Who?",),
    )
    assert parse_suite(dump_suite([case])).cases == (case,)
