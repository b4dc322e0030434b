"""The plan language's words: kinds, join types, cast types, the functions a plan may call
(:data:`FUNCTIONS`), the special forms, and :class:`PlanError`. Imports nothing of the package."""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

Scalar = str | int | float | bool | None

KINDS = ("answer", "not_answerable", "clarify")
JOIN_TYPES = ("inner", "left", "right", "full", "cross")
NULLS = ("first", "last")
#: Types ``cast`` accepts; each compiles to the dialect's own spelling.
CAST_TYPES = ("integer", "real", "text", "date", "timestamp")
#: strftime codes ``date_format`` accepts (all three dialects agree on them).
DATE_FORMAT_CODES = ("%Y", "%m", "%d", "%H", "%M", "%S", "%%")

_NAME = r"[^\W\d]\w*"
_NAME_RE = re.compile(rf"^{_NAME}$")
_COLUMN_RE = re.compile(rf"^(?:({_NAME})\.)?({_NAME}|\*)$")
_ASCII_NAME = "[A-Za-z_][A-Za-z0-9_]*"
#: The column-reference pattern given to LLMs (ASCII names; the parser also takes Unicode).
_COLUMN_PATTERN = rf"^(?:{_ASCII_NAME}\.)?(?:{_ASCII_NAME}|\*)$"



class PlanError(ValueError):
    """A plan that does not follow the format. ``str(err)`` is ``"<path>: <problem>"``."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem



# --------------------------------------------------------------------------------------------
# Functions


@attrs.frozen
class FunctionSpec:
    """A function a plan may call as ``{name: args}``."""

    name: str
    min_args: int
    max_args: int | None  # None: no upper bound
    category: str  # operator | aggregate | scalar | date | window
    doc: str

    def arity_text(self) -> str:
        """Human wording of the argument count, for error messages."""
        if self.max_args == self.min_args:
            n = self.min_args
            return "no arguments" if n == 0 else f"{n} argument{'s' if n > 1 else ''}"
        if self.max_args is None:
            return f"{self.min_args} or more arguments"
        return f"{self.min_args} to {self.max_args} arguments"


def _specs(category: str, min_args: int, max_args: int | None, **docs: str) -> list[FunctionSpec]:
    return [FunctionSpec(n, min_args, max_args, category, d) for n, d in docs.items()]


FUNCTIONS: Mapping[str, FunctionSpec] = {
    s.name: s
    for s in [
        *_specs(
            "operator", 2, 2,
            eq="a = b", ne="a <> b", lt="a < b", le="a <= b", gt="a > b", ge="a >= b",
            like="a LIKE pattern (pattern is usually {value: '%text%'})",
            sub="a - b", div="a / b, always true (fractional) division", idiv="integer division",
            mod="remainder of a / b",
        ),
        *_specs("operator", 2, None, add="a + b + ...", mul="a * b * ...",
                concat="text concatenation a || b || ...",
                **{"and": "all conditions hold", "or": "any condition holds"}),
        *_specs("operator", 1, 1, neg="-a", is_null="a IS NULL",
                **{"not": "negation, e.g. {not: {is_null: x}}"}),
        *_specs("operator", 3, 3, between="a BETWEEN low AND high (inclusive)"),
        *_specs("aggregate", 1, 1, count="COUNT(x); {count: '*'} counts rows",
                count_distinct="COUNT(DISTINCT x)", sum="SUM(x)", avg="AVG(x)",
                min="MIN(x)", max="MAX(x)"),
        *_specs("scalar", 1, 2, round="ROUND(x[, digits])"),
        *_specs("scalar", 2, None, coalesce="first non-null argument"),
        *_specs("scalar", 2, 2, nullif="NULL when a = b, else a"),
        *_specs("scalar", 1, 1, lower="lower case", upper="upper case",
                length="number of characters", abs="absolute value",
                trim="strip surrounding spaces"),
        *_specs("scalar", 2, 3, substr="SUBSTR(text, start[, length]), 1-based"),
        *_specs("scalar", 3, 3, replace="REPLACE(text, from, to)"),
        *_specs("date", 1, 1, year="year of a date/timestamp, as an integer",
                month="month (1-12), as an integer", day="day of month, as an integer",
                hour="hour (0-23), as an integer", minute="minute, as an integer"),
        *_specs("window", 0, 0, rank="RANK() (only inside over)",
                dense_rank="DENSE_RANK() (only inside over)",
                row_number="ROW_NUMBER() (only inside over)"),
        *_specs("window", 1, 1, ntile="NTILE(n) (only inside over)"),
        *_specs("window", 1, 3, lag="LAG(x[, offset[, default]]) (only inside over)",
                lead="LEAD(x[, offset[, default]]) (only inside over)"),
    ]
}

#: Expression keys with named parts rather than a list of arguments.
SPECIAL_FORMS = ("value", "in", "case", "over", "cast", "date_format", "query", "exists", "sql")

