"""Root conftest: keeps the repository root importable so tests can share helpers (tests.*).

It also imports, in the test process itself, the libraries the plugin imports lazily (sqlglot
with the parts the guard, the validator and the compiler use; SQLAlchemy). pytester's
in-process runs (``runpytest_inprocess``) drop from ``sys.modules`` whatever a run imported; a
package the run imported then comes back as a second copy in the next run, while objects of the
first copy survive in modules imported before (sqlglot's dialect registry, the plugin's memos),
and a tree of one copy meets a generator of the other ("Unsupported expression type Select").
Imported here first, they are kept across those runs, as in any single pytest run.

The runs the tests make read and fill a cache folder of this test session's own (each xdist
worker its own), never the user's ``~/.cache/pytest-nl2sql``, unless ``NL2SQL_CACHE_DIR`` is set;
a test about the folder itself sets or removes the variable.
"""

import os
from collections.abc import Iterator

import pytest
import sqlalchemy  # noqa: F401
import sqlglot
from sqlglot.optimizer.qualify import qualify  # noqa: F401
from sqlglot.optimizer.scope import traverse_scope  # noqa: F401

for _dialect in ("sqlite", "postgres", "duckdb", None):
    sqlglot.parse_one("SELECT 1 AS x", read=_dialect).sql(dialect=_dialect)


@pytest.fixture(autouse=True, scope="session")
def _session_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if "NL2SQL_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["NL2SQL_CACHE_DIR"] = str(tmp_path_factory.mktemp("nl2sql-cache"))
    try:
        yield
    finally:
        os.environ.pop("NL2SQL_CACHE_DIR", None)
