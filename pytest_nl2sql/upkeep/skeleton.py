"""``pytest-nl2sql init DIR``: the skeleton of a project of your own.

Writes ``nl2sql.yaml`` (one small SQLite datasource to start from, other kinds commented out,
two roles, the reference engine, the LLM section commented out), ``pytest.ini`` (the folder is
its own pytest root: ``pytest`` finds the project from any subfolder), ``evals.yaml`` (the
suites ``pytest`` runs), ``evals/example.yaml`` (one reviewed case, with its SQL, rows and
plan) and ``data/example.sqlite`` (the three rows the case reads). ``pytest`` in the folder
passes at once; replace the datasource and the case with your own. Existing files are kept
unless ``force``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pytest_nl2sql.suitefile.lock import write_atomic

__all__ = ["SKELETON", "init_project"]

NL2SQL_YAML = """\
# nl2sql.yaml -- written by `pytest-nl2sql init`. Paths are relative to this file (docs/config.md).
version: 1
datasources:
  example:                       # the database your NL2SQL system answers from
    url: sqlite:///data/example.sqlite
    description: "A small library: its books (title, year)."
    row_limit: 1000
    timeout_s: 10
  # warehouse:                   # PostgreSQL (pip install 'pytest-nl2sql[postgresql]')
  #   url: postgresql://reader@localhost:5432/warehouse
  #   description: "What the tables hold, in a sentence or two (routing reads it)."
  # events:                      # DuckDB (pip install 'pytest-nl2sql[duckdb]')
  #   url: duckdb:///data/events.duckdb
roles:                           # who asks; each case says per role what must happen
  admin:
    datasources: "*"
  reader:                        # a restricted role: may not see the year
    datasources: [example]
    deny:
      columns: [example.book.year]
engine: pytest_nl2sql.engine.reference:make_engine
# llm:                           # mode full (pytest --nl2sql-mode full) asks this model
#   base_url: https://api.openai.com/v1
#   model: gpt-4o-mini
#   api_key_env: OPENAI_API_KEY
"""

PYTEST_INI = """\
# Written by `pytest-nl2sql init`: this folder is its own pytest root. Without this file,
# `pytest` run from a subfolder (evals/) takes that subfolder as its root, does not see
# nl2sql.yaml and collects nothing (docs/plugin.md#where-pytest-finds-the-project).
[pytest]
"""

EVALS_YAML = """\
# Suites `pytest` and `pytest-nl2sql eval run` use by default (paths relative to nl2sql.yaml).
suites:
- evals/example.yaml
"""

EXAMPLE_SUITE = """\
# One reviewed case to start from: copy it, change the question, SQL and roles, then write the
# rows from the database with `pytest-nl2sql eval regenerate evals/example.yaml` and the plan
# with `pytest-nl2sql suite plan evals/example.yaml` (docs/suites.md).
version: 1
cases:
- id: example_001
  question: Which books were published after 1950?
  datasources: [example]
  status: approved
  origin: hand
  tags: [example]
  outcome: {admin: allowed, reader: refused}
  sql: SELECT title FROM book WHERE year > 1950 ORDER BY title
  rows:
  - {title: Dune}
  - {title: The Left Hand of Darkness}
  plan:
    datasource: example
    from: book
    select: [title]
    where: {gt: [year, 1950]}
    order_by: [title]
"""

SKELETON = {
    "nl2sql.yaml": NL2SQL_YAML,
    "pytest.ini": PYTEST_INI,
    "evals.yaml": EVALS_YAML,
    "evals/example.yaml": EXAMPLE_SUITE,
}
_BOOKS = [(1, "Brave New World", 1932), (2, "Dune", 1965), (3, "The Left Hand of Darkness", 1969)]


def init_project(target: str | Path, *, force: bool = False) -> tuple[list[str], list[str]]:
    """Write the skeleton into ``target``: (the files written, the files kept as they were)."""
    root = Path(target)
    root.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for rel, text in SKELETON.items():
        path = root / rel
        if path.exists() and not force:
            kept.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        written.append(rel)
    db = root / "data" / "example.sqlite"
    if not db.exists() or force:
        db.parent.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER)")
            conn.executemany("INSERT INTO book VALUES (?, ?, ?)", _BOOKS)
        conn.close()
        written.append("data/example.sqlite")
    else:
        kept.append("data/example.sqlite")
    return written, kept
