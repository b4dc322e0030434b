"""The dialects the reference engine compiles to and the validator analyses, by sqlglot's
names; without sqlglot, so that the validator's front (``engine/validator.py``) can name a
dialect in a run that imports no sqlglot. Re-exported by ``engine/compiler.py``."""

from __future__ import annotations

__all__ = ["DIALECTS", "CompileError", "sqlglot_dialect"]

#: Dialect names :func:`~pytest_nl2sql.engine.compiler.compile_plan` accepts, mapped to sqlglot's names.
DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres", "postgres": "postgres", "duckdb": "duckdb"}


class CompileError(ValueError):
    """A plan that cannot be turned into SQL (wrong kind, bad raw SQL, unknown dialect)."""


def sqlglot_dialect(dialect: str) -> str:
    """sqlglot's name for ``dialect``; raise :class:`CompileError` for an unsupported one."""
    try:
        return DIALECTS[dialect.lower()]
    except (KeyError, AttributeError):
        raise CompileError(
            f"unsupported dialect {dialect!r} (supported: {', '.join(DIALECTS)})"
        ) from None
