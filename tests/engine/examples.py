"""Hand-written example plans over the Chinook-like test database, with the rows they return.

Each example is YAML, as a suite case's ``plan`` is written, and covers one or more constructs
of the plan format. The rows were worked out by hand from ``chinook_mini.ROWS``.
"""

from __future__ import annotations

from typing import Any

import attrs
from ruamel.yaml import YAML


@attrs.frozen
class Example:
    """One plan, the rows it returns, and whether their order is part of the answer."""

    id: str
    yaml: str
    rows: list[tuple[Any, ...]]
    ordered: bool = True

    def data(self) -> dict[str, Any]:
        """The plan as plain data, as a suite loader would hand it over."""
        return YAML(typ="safe").load(self.yaml)


EXAMPLES: list[Example] = [
    Example("count_group_by", """
from: Customer
select:
- Country
- {expr: {count: CustomerId}, alias: customer_count}
group_by: [Country]
order_by: [{expr: customer_count, desc: true}, Country]
""", [("Canada", 2), ("USA", 2), ("Brazil", 1), ("Germany", 1)]),
    Example("count_star", """
datasource: chinook
from: Invoice
select: [{expr: {count: "*"}, alias: n}]
""", [(7,)]),
    Example("select_star", """
from: {table: Genre, alias: g}
select: [g.*]
order_by: [g.GenreId]
""", [(1, "Rock"), (2, "Jazz"), (3, "Metal")]),
    Example("join_four_tables", """
from: {table: InvoiceLine, alias: il}
joins:
- {table: Track, alias: t, on: {eq: [t.TrackId, il.TrackId]}}
- {table: Album, alias: al, on: {eq: [al.AlbumId, t.AlbumId]}}
- {table: Artist, alias: ar, on: {eq: [ar.ArtistId, al.ArtistId]}}
select:
- {expr: ar.Name, alias: artist}
- {expr: {round: [{sum: {mul: [il.UnitPrice, il.Quantity]}}, 2]}, alias: revenue}
group_by: [ar.Name]
order_by: [{expr: revenue, desc: true}]
""", [("Aerosmith", 23.88), ("AC/DC", 14.85), ("Accept", 1.98)]),
    Example("ties_dense_rank_in_from_subquery", """
from:
  alias: ranked
  query:
    from: Invoice
    select:
    - CustomerId
    - {expr: {sum: Total}, alias: spent}
    - expr: {over: {expr: {dense_rank: []}, order_by: [{sum: Total}]}}
      alias: rnk
    group_by: [CustomerId]
select: [CustomerId, {expr: {round: [spent, 2]}, alias: spent}]
where: {eq: [rnk, 1]}
order_by: [CustomerId]
""", [(2, 1.98), (3, 1.98)]),
    Example("ties_having_scalar_subquery", """
from: Invoice
select: [CustomerId]
group_by: [CustomerId]
having:
  le:
  - {sum: Total}
  - query:
      from:
        alias: per_customer
        query: {from: Invoice, select: [{expr: {sum: Total}, alias: s}], group_by: [CustomerId]}
      select: [{min: s}]
order_by: [CustomerId]
""", [(2,), (3,)]),
    Example("date_range", """
from: Invoice
select: [InvoiceId]
where:
  and:
  - {ge: [InvoiceDate, {value: "2010-01-01"}]}
  - {lt: [InvoiceDate, {value: "2011-01-01"}]}
order_by: [InvoiceId]
""", [(4,), (5,), (6,)]),
    Example("year_extraction", """
from: Invoice
select: [{expr: {year: InvoiceDate}, alias: yr}, {expr: {count: "*"}, alias: invoices}]
group_by: [{year: InvoiceDate}]
order_by: [yr]
""", [(2009, 3), (2010, 3), (2011, 1)]),
    Example("date_parts", """
from: Invoice
select:
- {expr: {month: InvoiceDate}, alias: m}
- {expr: {day: InvoiceDate}, alias: d}
- {expr: {hour: InvoiceDate}, alias: h}
where: {eq: [InvoiceId, 4]}
""", [(3, 11, 0)]),
    Example("date_format_by_month", """
from: Invoice
select:
- {expr: {date_format: {expr: InvoiceDate, format: "%Y-%m"}}, alias: month}
- {expr: {count: "*"}, alias: n}
where: {eq: [{year: InvoiceDate}, 2009]}
group_by: [{date_format: {expr: InvoiceDate, format: "%Y-%m"}}]
order_by: [month]
""", [("2009-01", 2), ("2009-02", 1)]),
    Example("having", """
from: Invoice
select: [BillingCountry, {expr: {count: "*"}, alias: n}]
group_by: [BillingCountry]
having: {gt: [{count: "*"}, 1]}
order_by: [BillingCountry]
""", [("Brazil", 2), ("USA", 3)]),
    Example("in_subquery", """
from: Customer
select: [LastName]
where:
  in:
    expr: CustomerId
    query:
      from: {table: Invoice, alias: i}
      joins:
      - {table: InvoiceLine, alias: il, on: {eq: [il.InvoiceId, i.InvoiceId]}}
      - {table: Track, alias: t, on: {eq: [t.TrackId, il.TrackId]}}
      select: [i.CustomerId]
      where: {eq: [t.GenreId, 2]}
""", [("Gonçalves",)], ordered=False),
    Example("scalar_subquery", """
from: Invoice
select: [InvoiceId, Total]
where: {gt: [Total, {query: {from: Invoice, select: [{avg: Total}]}}]}
order_by: [InvoiceId]
""", [(3, 5.94), (4, 8.91), (7, 13.86)]),
    Example("correlated_subquery", """
from: {table: Invoice, alias: i}
select: [i.CustomerId, i.InvoiceId]
where:
  eq:
  - i.Total
  - query:
      from: {table: Invoice, alias: i2}
      select: [{max: i2.Total}]
      where: {eq: [i2.CustomerId, i.CustomerId]}
order_by: [i.CustomerId]
""", [(1, 7), (2, 1), (3, 6), (4, 4), (5, 5)]),
    Example("left_join_is_null", """
from: {table: Customer, alias: c}
joins:
- {table: Invoice, alias: i, on: {eq: [i.CustomerId, c.CustomerId]}, type: left}
select: [c.FirstName, c.LastName]
where: {is_null: i.InvoiceId}
""", [("Mark", "Philips")], ordered=False),
    Example("not_exists", """
from: {table: Artist, alias: a}
select: [a.Name]
where:
  not:
    exists:
      from: {table: Album, alias: al}
      select: [1]
      where: {eq: [al.ArtistId, a.ArtistId]}
""", [("Nobody Yet",)], ordered=False),
    Example("window_running_sum", """
from: Invoice
select:
- CustomerId
- InvoiceId
- expr: {over: {expr: {sum: Total}, partition_by: [CustomerId], order_by: [InvoiceDate]}}
  alias: running
where: {in: {expr: CustomerId, values: [1, 4]}}
order_by: [CustomerId, InvoiceId]
""", [(1, 3, 5.94), (1, 7, 19.8), (4, 2, 3.96), (4, 4, 12.87)]),
    Example("window_row_number_lag", """
from: Customer
select:
- Country
- LastName
- expr: {over: {expr: {row_number: []}, partition_by: [Country], order_by: [LastName]}}
  alias: pos
- expr: {over: {expr: {lag: LastName}, partition_by: [Country], order_by: [LastName]}}
  alias: previous
where: {in: {expr: Country, values: [Canada, USA]}}
order_by: [Country, pos]
""", [("Canada", "Philips", 1, None), ("Canada", "Tremblay", 2, "Philips"),
      ("USA", "Harris", 1, None), ("USA", "Smith", 2, "Harris")]),
    Example("case_when", """
from: Invoice
select:
- InvoiceId
- expr:
    case:
      when:
      - {if: {ge: [Total, 10]}, then: {value: large}}
      - {if: {ge: [Total, 5]}, then: {value: medium}}
      else: {value: small}
  alias: size
order_by: [InvoiceId]
""", [(1, "small"), (2, "small"), (3, "medium"), (4, "medium"), (5, "small"), (6, "small"),
      (7, "large")]),
    Example("distinct_limit_offset", """
from: Invoice
distinct: true
select: [BillingCountry]
order_by: [BillingCountry]
limit: 2
offset: 1
""", [("Canada",), ("Germany",)]),
    Example("offset_without_limit", """
from: Invoice
select: [InvoiceId]
order_by: [InvoiceId]
offset: 5
""", [(6,), (7,)]),
    Example("string_functions", """
from: Employee
select:
- {expr: {concat: [FirstName, {value: " "}, LastName]}, alias: full_name}
- {expr: {upper: LastName}, alias: upper_last}
- {expr: {length: LastName}, alias: len}
- {expr: {substr: [FirstName, 1, 3]}, alias: short}
order_by: [EmployeeId]
""", [("Andrew Adams", "ADAMS", 5, "And"), ("Nancy Edwards", "EDWARDS", 7, "Nan"),
      ("Jane Peacock", "PEACOCK", 7, "Jan")]),
    Example("more_string_functions", """
from: Artist
select:
- {expr: {replace: [{lower: Name}, {value: /}, {value: "-"}]}, alias: slug}
- {expr: {nullif: [ArtistId, 1]}, alias: not_first}
- {expr: {trim: {value: "  x "}}, alias: trimmed}
where: {lt: [ArtistId, 3]}
order_by: [ArtistId]
""", [("ac-dc", None, "x"), ("accept", 2, "x")]),
    Example("coalesce_nulls_sort_smallest", """
from: Customer
select: [CustomerId, {expr: {coalesce: [Company, {value: (none)}]}, alias: company}]
order_by: [Company, CustomerId]
""", [(2, "(none)"), (3, "(none)"), (1, "Embraer"), (4, "Google Inc."), (5, "Microsoft"),
      (6, "Telus")]),
    Example("nulls_last", """
from: Employee
select: [EmployeeId]
order_by: [{expr: ReportsTo, nulls: last}]
""", [(2,), (3,), (1,)]),
    Example("round_div_idiv", """
from: Track
select:
- {expr: {round: [{avg: UnitPrice}, 2]}, alias: avg_price}
- {expr: {div: [{count: "*"}, 4]}, alias: per_quarter}
- {expr: {idiv: [{sum: Milliseconds}, 60000]}, alias: minutes}
""", [(1.32, 1.5, 31)]),
    Example("between_like_not_in", """
from: Track
select: [Name]
where:
  and:
  - {like: [Name, {value: "%rock%"}]}
  - {between: [Milliseconds, 300000, 400000]}
  - {not: {in: {expr: TrackId, values: [3]}}}
""", [("For Those About To Rock",)], ordered=False),
    Example("cte", """
with:
- name: spend
  query:
    from: Invoice
    select: [CustomerId, {expr: {sum: Total}, alias: total}]
    group_by: [CustomerId]
from: {table: spend, alias: s}
joins:
- {table: Customer, alias: c, on: {eq: [c.CustomerId, s.CustomerId]}}
select: [c.Country, {expr: {round: [{max: s.total}, 2]}, alias: best}]
group_by: [c.Country]
order_by: [c.Country]
""", [("Brazil", 19.8), ("Canada", 1.98), ("Germany", 1.98), ("USA", 12.87)]),
    Example("cast_count_distinct_raw_sql", """
from: Invoice
select:
- {expr: {count_distinct: BillingCountry}, alias: countries}
- {expr: {cast: {expr: {min: InvoiceDate}, to: date}}, alias: first_day}
- {expr: {cast: {expr: {value: "42"}, to: integer}}, alias: answer}
- {expr: {sql: "ABS(-3)"}, alias: raw}
""", [(4, "2009-01-01", 42, 3)]),
    Example("self_join", """
from: {table: Employee, alias: e}
joins:
- {table: Employee, alias: m, on: {eq: [m.EmployeeId, e.ReportsTo]}, type: left}
select: [e.LastName, {expr: m.LastName, alias: manager}]
order_by: [e.EmployeeId]
""", [("Adams", None), ("Edwards", "Adams"), ("Peacock", "Edwards")]),
    Example("cross_join", """
from: Genre
joins: [{table: Artist, type: cross}]
select: [{expr: {count: "*"}, alias: pairs}]
""", [(12,)]),
    Example("operator_precedence", """
select:
- {expr: {mul: [{add: [1, 2]}, 3]}, alias: a}
- {expr: {sub: [10, {sub: [4, 1]}]}, alias: b}
- {expr: {mod: [7, 3]}, alias: c}
- {expr: {div: [1, 0]}, alias: d}
- {expr: {neg: {abs: -2}}, alias: e}
- {expr: {and: [{or: [true, false]}, false]}, alias: f}
""", [(9, 7, 1, None, -2, 0)]),
]

#: Plans that are not answers.
NON_ANSWERS: list[str] = [
    """
kind: not_answerable
datasource: chinook
reason: Chinook records sales, not streams; nothing says how often a track was played.
""",
    """
kind: clarify
clarification: Do you mean the customers' country or the billing country of their invoices?
""",
]
