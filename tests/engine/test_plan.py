"""PlanModel: strict parsing with errors that name the place, round trips, and the JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from pytest_nl2sql.engine import PlanError, PlanModel, plan_json_schema
from pytest_nl2sql.engine.plan import (
    CTE,
    FUNCTIONS,
    Call,
    Case,
    Cast,
    Column,
    DateFormat,
    DerivedTable,
    Exists,
    InList,
    InQuery,
    Join,
    Literal,
    OrderItem,
    Query,
    RawSQL,
    SelectItem,
    Subquery,
    Table,
    When,
    Window,
)
from tests.engine.examples import EXAMPLES, NON_ANSWERS, Example
from tests.engine.schema_check import errors as schema_errors

SCHEMA = plan_json_schema()


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


# -- examples ----------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_round_trips_and_fits_the_schema(example: Example) -> None:
    data = example.data()
    plan = PlanModel.from_dict(data)
    canonical = plan.to_dict()
    assert PlanModel.from_dict(canonical) == plan
    assert PlanModel.from_dict(canonical).to_dict() == canonical
    assert json.loads(json.dumps(canonical)) == canonical
    assert schema_errors(data, SCHEMA) == []
    assert schema_errors(canonical, SCHEMA) == []


@pytest.mark.parametrize("text", NON_ANSWERS)
def test_non_answer_plans_round_trip_and_fit_the_schema(text: str) -> None:
    data = load(text)
    plan = PlanModel.from_dict(data)
    assert plan.kind in ("not_answerable", "clarify")
    assert plan.to_dict() == data
    assert schema_errors(data, SCHEMA) == []


def test_canonical_yaml_reads_back_unchanged() -> None:
    data = load("""
datasource: chinook
from: {table: Customer, alias: c}
joins:
- {table: Invoice, alias: i, on: {eq: [i.CustomerId, c.CustomerId]}, type: left}
select:
- c.Country
- {expr: {round: [{sum: i.Total}, 2]}, alias: total}
where: {ge: [i.InvoiceDate, {value: '2010-01-01'}]}
group_by: [c.Country]
having: {gt: [{count: '*'}, 1]}
order_by: [{expr: total, desc: true, nulls: last}, c.Country]
limit: 5
offset: 10
""")
    assert PlanModel.from_dict(data).to_dict() == data


def test_shorthands_read_as_their_canonical_form() -> None:
    long = PlanModel.from_dict({
        "from": {"table": "Invoice"},
        "select": [{"expr": "Total"}, {"expr": {"count": ["*"]}}],
        "order_by": [{"expr": "Total", "desc": False}],
        "distinct": False,
    })
    short = PlanModel.from_dict({"from": "Invoice", "select": ["Total", {"count": "*"}],
                                 "order_by": ["Total"]})
    assert long == short
    assert long.to_dict() == {"from": "Invoice", "select": ["Total", {"count": "*"}],
                              "order_by": ["Total"]}


def test_explicit_nulls_count_as_absent() -> None:
    # Structured output often fills every optional field with null.
    plan = PlanModel.from_dict({"kind": None, "datasource": None, "from": "Genre",
                                "select": ["Name"], "where": None, "limit": None, "joins": None})
    assert plan.to_dict() == {"from": "Genre", "select": ["Name"]}


def test_unquoted_yaml_dates_become_text_constants() -> None:
    plan = PlanModel.from_dict(load("""
from: Invoice
select: [InvoiceId]
where: {between: [InvoiceDate, {value: 2010-01-01}, {value: 2010-12-31 23:59:59}]}
"""))
    assert plan.query is not None
    assert plan.query.where == Call("between", (
        Column("InvoiceDate"), Literal("2010-01-01"), Literal("2010-12-31 23:59:59")))


def test_plan_from_dict_accepts_a_path_prefix_for_its_errors() -> None:
    with pytest.raises(PlanError) as err:
        PlanModel.from_dict({"select": []}, path="case 'chinook_007' plan")
    assert str(err.value) == "case 'chinook_007' plan.select: needs at least one output column"


# -- errors name the place ---------------------------------------------------------------------

ERRORS = [
    ({"select": [1, 2, {"expr": {"cnt": "x"}}]},
     "plan.select[2].expr: unknown function 'cnt' (did you mean 'count'? known: abs, add, and, avg,"),
    ({"select": ["a"], "where": {"and": [{"eq": [1, 2]}, {"eq": [1]}]}},
     "plan.where.and[1].eq: 'eq' takes 2 arguments, got 1"),
    ({"from": {"table": "Customer", "alias": "c"},
      "joins": [{"table": "Invoice", "alias": "i", "on": {"eq": ["i.CustomerId", "c CustomerId"]}}],
      "select": ["c.Country"]},
     "plan.joins[0].on.eq[1]: 'c CustomerId' is not a column reference (write 'Column', "
     "'Table.Column' or 'alias.Column'; text constants are written {value: ...})"),
    ({"select": ["a"], "limt": 3},
     "plan: unknown key 'limt' (known: clarification, datasource, distinct, from, group_by, "
     "having, joins, kind, limit, offset, order_by, reason, select, where, with)"),
    ({"select": ["a"], "limit": -1}, "plan.limit: expected a non-negative integer, got -1"),
    ({"select": ["a"], "limit": True}, "plan.limit: expected a non-negative integer, got True"),
    ({"kind": "maybe"}, "plan.kind: unknown kind 'maybe' (known: answer, not_answerable, clarify)"),
    ({"kind": "not_answerable", "select": ["a"]},
     "plan.select: a plan of kind not_answerable has no query; remove 'select'"),
    ({"kind": "clarify"}, "plan: a clarify plan needs 'clarification': the question to ask back"),
    ({"kind": "clarify", "clarification": "  "},
     "plan.clarification: expected a clarification question (non-empty text), got '  '"),
    ({"select": ["a"], "reason": "x"},
     "plan.reason: only a plan of kind not_answerable/clarify has 'reason'"),
    ({"from": "Invoice"}, "plan: missing 'select': the list of output columns"),
    ({"select": "Country"}, "plan.select: expected a list of output columns, got 'Country'"),
    ({"select": [{"rank": []}]},
     "plan.select[0]: 'rank' is a window function; write {over: {expr: {rank: []}, "
     "partition_by: [...], order_by: [...]}}"),
    ({"select": [{"expr": {"over": {"expr": {"rank": []}}}}]},
     "plan.select[0].expr.over: 'rank' needs 'order_by'"),
    ({"select": [{"over": {"expr": {"upper": "x"}, "order_by": ["x"]}}]},
     "plan.select[0].over.expr: expected a window or aggregate function call such as {rank: []} "
     "or {sum: x} (known: avg, count, count_distinct, dense_rank, lag, lead, max, min, ntile, "
     "rank, row_number, sum)"),
    ({"select": [{"cast": {"expr": "x", "to": "varchar"}}]},
     "plan.select[0].cast.to: unknown type 'varchar' (known: integer, real, text, date, timestamp)"),
    ({"select": ["a"], "where": {"in": {"expr": "a", "query": {"from": "T", "select": [{"x": 1}]}}}},
     "plan.where.in.query.select[0]: unknown function 'x' ("),
    ({"select": ["a"], "where": {"in": {"expr": "a", "values": []}}},
     "plan.where.in.values: needs at least one value"),
    ({"select": ["a"], "where": {"in": {"expr": "a", "values": [[1]]}}},
     "plan.where.in.values[0]: expected a constant (text, number, true/false, null), got [1]"),
    ({"select": [{"sum": "*"}]},
     "plan.select[0].sum: '*' is allowed only as a select item or in {count: '*'}"),
    ({"select": [{"eq": [1, 2], "gt": [1, 2]}]},
     "plan.select[0]: an expression is a mapping with one key naming a function, e.g. "
     "{eq: [a, b]}; got keys 'eq', 'gt'"),
    ({"select": [[1, 2]]},
     "plan.select[0]: a list is not an expression (did you mean a function's argument list, "
     "e.g. {eq: [a, b]}?)"),
    ({"select": [{"date_format": {"expr": "d", "format": "%Y-%q"}}]},
     "plan.select[0].date_format.format: unsupported code '%q' (known: %Y %m %d %H %M %S %%)"),
    ({"from": {"query": {"select": [1]}}, "select": ["a"]},
     "plan.from: a subquery in from/joins needs an 'alias'"),
    ({"from": {"table": "T", "query": {"select": [1]}, "alias": "t"}, "select": ["a"]},
     "plan.from: give exactly one of 'table' (a table name) or 'query' (a subquery)"),
    ({"from": "Customer c", "select": ["a"]},
     "plan.from: expected a table name (letters, digits and _, not starting with a digit), "
     "got 'Customer c'"),
    ({"select": ["a"], "joins": [{"table": "T", "on": {"eq": [1, 1]}}]},
     "plan.joins: joins need a 'from'"),
    ({"from": "A", "select": ["a"], "joins": [{"table": "T", "type": "outer"}]},
     "plan.joins[0].type: unknown join type 'outer' (known: inner, left, right, full, cross)"),
    ({"from": "A", "select": ["a"], "joins": [{"table": "T", "type": "cross", "on": True}]},
     "plan.joins[0].on: a cross join has no 'on'"),
    ({"from": "A", "select": ["a"], "order_by": [{"expr": "a", "nulls": "middle"}]},
     "plan.order_by[0].nulls: expected first or last, got 'middle'"),
    ({"select": [{"case": {"when": [{"if": True}]}}]},
     "plan.select[0].case.when[0]: missing 'then'"),
    ({"select": [{"expr": 1, "alias": "two words"}]},
     "plan.select[0].alias: expected an output name (letters, digits and _, not starting with a "
     "digit), got 'two words'"),
    ({"select": [{"value": float("nan")}]}, "plan.select[0].value: a number must be finite, got nan"),
    ("SELECT 1", "plan: expected a plan (a mapping), got 'SELECT 1'"),
    ({"select": [{"sql": ""}]},
     "plan.select[0].sql: expected SQL text (non-empty text), got ''"),
    ({"with": [{"name": "t"}], "select": ["a"]}, "plan.with[0]: missing 'query'"),
]


@pytest.mark.parametrize(("data", "message"), ERRORS, ids=[m.split(":")[0] for _, m in ERRORS])
def test_errors_name_the_path_and_the_fix(data: Any, message: str) -> None:
    with pytest.raises(PlanError) as err:
        PlanModel.from_dict(data)
    assert str(err.value).startswith(message), str(err.value)
    assert str(err.value) == f"{err.value.path}: {err.value.problem}"


# -- the JSON Schema ---------------------------------------------------------------------------


def test_schema_is_plain_json_naming_every_function() -> None:
    text = json.dumps(SCHEMA)
    assert json.loads(text) == SCHEMA
    for name in FUNCTIONS:
        assert f'"{name}"' in text


@pytest.mark.parametrize("bad", [
    {"select": [{"cnt": "x"}]},
    {"select": []},
    {"select": ["a"], "limit": -1},
    {"select": ["two words"]},
    {"kind": "maybe"},
    {"select": [{"eq": [1]}]},
])
def test_schema_rejects_what_the_parser_rejects(bad: dict[str, Any]) -> None:
    assert schema_errors(bad, SCHEMA) != []
    with pytest.raises(PlanError):
        PlanModel.from_dict(bad)


# -- round trip (property) ---------------------------------------------------------------------

NAMES = st.sampled_from(["Customer", "c", "Country", "Total", "x_1", "InvoiceDate"])
TEXT = st.text(min_size=1, max_size=12).filter(str.strip)
SCALARS = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
COLUMNS = st.builds(Column, NAMES, st.none() | NAMES)
LEAVES = COLUMNS | st.builds(Literal, SCALARS)
SCALAR_SPECS = [s for s in FUNCTIONS.values() if s.category != "window"]
WINDOW_SPECS = [s for s in FUNCTIONS.values() if s.category in ("window", "aggregate")]


def _calls(children: st.SearchStrategy[Any], specs: list[Any]) -> st.SearchStrategy[Call]:
    def build(spec: Any) -> st.SearchStrategy[Call]:
        top = spec.max_args if spec.max_args is not None else spec.min_args + 2
        arities = st.integers(spec.min_args, top)
        return arities.flatmap(lambda n: st.tuples(*[children] * n)).map(
            lambda args: Call(spec.name, args))
    return st.sampled_from(specs).flatmap(build)


def _orders(
    exprs: st.SearchStrategy[Any], min_size: int = 0
) -> st.SearchStrategy[tuple[OrderItem, ...]]:
    item = st.builds(OrderItem, exprs, st.booleans(), st.sampled_from([None, "first", "last"]))
    return st.lists(item, min_size=min_size, max_size=2).map(tuple)


SIMPLE_QUERIES = st.builds(
    Query,
    select=st.lists(st.builds(SelectItem, LEAVES, st.none() | NAMES), min_size=1, max_size=2).map(tuple),
    from_=st.none() | st.builds(Table, NAMES, st.none() | NAMES),
    where=st.none() | LEAVES,
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    window = st.builds(
        lambda call, part, order: Window(call, part, order),
        _calls(children, WINDOW_SPECS), st.lists(children, max_size=2).map(tuple),
        _orders(children, min_size=1),
    )
    return (
        _calls(children, SCALAR_SPECS)
        | st.just(Call("count", (Column("*"),)))
        | st.builds(InList, children, st.lists(SCALARS, min_size=1, max_size=3).map(tuple))
        | st.builds(InQuery, children, SIMPLE_QUERIES)
        | st.builds(Cast, children, st.sampled_from(["integer", "real", "text", "date", "timestamp"]))
        | st.builds(DateFormat, children, st.sampled_from(["%Y", "%Y-%m", "%d/%m %H:%M:%S", "w%%"]))
        | st.builds(Case, st.lists(st.builds(When, children, children), min_size=1, max_size=2)
                    .map(tuple), st.none() | children)
        | window
        | st.builds(Subquery, SIMPLE_QUERIES)
        | st.builds(Exists, SIMPLE_QUERIES)
        | st.builds(RawSQL, st.sampled_from(["ABS(-3)", "1 + 1"]))
    )


def _exprs(depth: int) -> st.SearchStrategy[Any]:
    # Fixed depth rather than st.recursive, whose leaf budget trips inside st.lists.
    return LEAVES if depth == 0 else LEAVES | _extend(_exprs(depth - 1))


EXPRS = _exprs(2)
SOURCES = st.builds(Table, NAMES, st.none() | NAMES) | st.builds(DerivedTable, SIMPLE_QUERIES, NAMES)


@st.composite
def queries(draw: st.DrawFn) -> Query:
    from_ = draw(st.none() | SOURCES)
    joins: tuple[Join, ...] = ()
    if from_ is not None:
        joins = tuple(draw(st.lists(
            st.one_of(
                st.builds(Join, SOURCES, EXPRS, st.sampled_from(["inner", "left", "right", "full"])),
                st.builds(Join, SOURCES, st.none(), st.just("cross")),
            ), max_size=2)))
    star = st.builds(Column, st.just("*"), st.none() | NAMES)
    return Query(
        select=tuple(draw(st.lists(st.builds(SelectItem, EXPRS | star, st.none() | NAMES),
                                   min_size=1, max_size=3))),
        from_=from_,
        joins=joins,
        with_=tuple(draw(st.lists(st.builds(CTE, NAMES, SIMPLE_QUERIES), max_size=1))),
        distinct=draw(st.booleans()),
        where=draw(st.none() | EXPRS),
        group_by=tuple(draw(st.lists(EXPRS, max_size=2))),
        having=draw(st.none() | EXPRS),
        order_by=draw(_orders(EXPRS)),
        limit=draw(st.none() | st.integers(0, 1000)),
        offset=draw(st.none() | st.integers(0, 1000)),
    )


PLANS = st.one_of(
    st.builds(PlanModel, st.just("answer"), st.none() | NAMES, queries()),
    st.builds(lambda ds, r: PlanModel("not_answerable", ds, reason=r), st.none() | NAMES,
              st.none() | TEXT),
    st.builds(lambda ds, c: PlanModel("clarify", ds, clarification=c), st.none() | NAMES, TEXT),
)


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(PLANS)
def test_any_plan_round_trips_through_plain_data(plan: PlanModel) -> None:
    data = plan.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert PlanModel.from_dict(data) == plan
    assert schema_errors(data, SCHEMA) == []
