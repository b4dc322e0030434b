"""A tiny SQLite project (two roles) for the replay engine's tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.config import load_config

SUITE = """\
version: 1
cases:
- id: shop_001
  question: How many customers are there?
  datasources: [shop]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM customer
  rows:
  - {n: 3}
- id: shop_002
  question: Which customers live in Paris?
  datasources: [shop]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT name FROM customer WHERE city = 'Paris'
  rows:
  - {name: Ann}
  - {name: Bob}
- id: shop_003
  question: What is the total of all orders?
  datasources: [shop]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT SUM(total) AS total FROM orders
  rows:
  - {total: 60.5}
- id: shop_004
  question: List the customers' emails.
  datasources: [shop]
  status: approved
  outcome: {admin: allowed, clerk: refused}
  sql: SELECT email FROM customer
  rows:
  - {email: a@x}
  - {email: b@x}
  - {email: c@x}
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A project folder: shop.sqlite, nl2sql.yaml (admin, clerk without emails), evals.yaml."""
    db = tmp_path / "shop.sqlite"
    con = sqlite3.connect(db)
    con.executescript(
        """
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, email TEXT);
        INSERT INTO customer VALUES (1, 'Ann', 'Paris', 'a@x'), (2, 'Bob', 'Paris', 'b@x'), (3, 'Cid', 'Rome', 'c@x');
        CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
        INSERT INTO orders VALUES (1, 1, 10.25), (2, 2, 20.25), (3, 3, 30.0);
        """
    )
    con.commit()
    con.close()
    (tmp_path / "nl2sql.yaml").write_text(
        "version: 1\n"
        "datasources:\n  shop:\n    url: sqlite:///shop.sqlite\n"
        "roles:\n"
        '  admin: {datasources: "*"}\n'
        "  clerk: {datasources: [shop], deny: {columns: [shop.customer.email]}}\n"
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "shop.yaml").write_text(SUITE)
    (tmp_path / "evals.yaml").write_text("suites:\n  - evals/shop.yaml\n")
    return tmp_path


@pytest.fixture
def project(shop: Path):
    return load_config(shop / "nl2sql.yaml")


def copy_shop(shop: Path, dest: Path, predictions: list) -> None:
    """The shop project in ``dest`` (database, nl2sql.yaml, evals.yaml, evals/) and ``p.jsonl``:
    the predictions (``Prediction`` values) that have SQL and no datasource of their own."""
    import json
    import shutil

    for name in ("shop.sqlite", "nl2sql.yaml", "evals.yaml"):
        shutil.copy(shop / name, dest / name)
    shutil.copytree(shop / "evals", dest / "evals")
    rows = [{"id": p.id, "sql": p.sql, **({"role": p.role} if p.role else {})} for p in predictions if p.sql and not p.datasource]
    (dest / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
