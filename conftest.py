"""Root conftest: keeps the repository root importable so tests can share helpers (tests.*).

It also imports, in the test process itself, the libraries the plugin imports lazily (sqlglot
with the parts the guard, the validator and the compiler use; SQLAlchemy). pytester's
in-process runs (``runpytest_inprocess``) drop from ``sys.modules`` whatever a run imported; a
package the run imported then comes back as a second copy in the next run, while objects of the
first copy survive in modules imported before (sqlglot's dialect registry, the plugin's memos),
and a tree of one copy meets a generator of the other ("Unsupported expression type Select").
Imported here first, they are kept across those runs, as in any single pytest run.
"""

import sqlalchemy  # noqa: F401
import sqlglot
from sqlglot.optimizer.qualify import qualify  # noqa: F401
from sqlglot.optimizer.scope import traverse_scope  # noqa: F401

for _dialect in ("sqlite", "postgres", "duckdb", None):
    sqlglot.parse_one("SELECT 1 AS x", read=_dialect).sql(dialect=_dialect)
