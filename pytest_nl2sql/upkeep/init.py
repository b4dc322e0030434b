"""``pytest-nl2sql init --demo DIR``: a ready demo project.

Writes ``nl2sql.yaml`` (the three demo datasources, the demo's roles), ``pytest.ini`` (the
folder is its own pytest root), ``evals.yaml`` (naming
only ``evals/chinook.yaml``), ``evals/`` (copies of the shipped suites and their baselines)
and ``data/<name>.sqlite``. A file the user changed since init wrote it is never overwritten
without ``force`` (the others are refreshed around it) (init keeps a manifest of what it wrote, ``.nl2sql-init.json``).
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

from pytest_nl2sql.demo import DEMO_DATASOURCES, build_sqlite
from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.suitefile.lock import write_atomic
from pytest_nl2sql.suitefile.yamltext import format_text

__all__ = ["DEMO_ROLES_YAML", "InitError", "Written", "init_demo", "shipped_suites"]

MANIFEST = ".nl2sql-init.json"

DEMO_ROLES_YAML = """\
roles:
  admin:
    datasources: "*"
  analyst:                       # no employee data
    datasources: [chinook, support, webanalytics]
    deny:
      tables: [chinook.Employee]
  viewer:                        # no customer or employee personal data
    datasources: [chinook, webanalytics]
    deny:
      tables: [chinook.Customer, chinook.Employee]
      columns: [chinook.Invoice.BillingAddress, chinook.Invoice.BillingPostalCode]
"""


class InitError(Nl2sqlError):
    pass


def shipped_suites() -> list[Path]:
    """The suites (and baselines) the package ships, in ``pytest_nl2sql/suites``."""
    root = resources.files("pytest_nl2sql.suites")
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith((".yaml", ".baseline.json")))


def nl2sql_yaml() -> str:
    lines = [
        "# nl2sql.yaml -- written by `pytest-nl2sql init --demo`. Paths are relative to this file.",
        "version: 1",
        "datasources:",
    ]
    for name, ds in DEMO_DATASOURCES.items():
        lines.append(f"  {name}:")
        lines.append(f"    url: sqlite:///data/{name}.sqlite")
        lines.append(f"    description: {format_text(ds.description)}")
        lines.append("    sample_questions:")
        lines.extend(f"    - {format_text(q)}" for q in ds.sample_questions)
        lines.append("    row_limit: 1000")
        lines.append("    timeout_s: 10")
    lines.append(DEMO_ROLES_YAML.rstrip("\n"))
    lines += [
        "routing: {candidates: 3, max_datasources: 2}",
        "engine: pytest_nl2sql.engine.reference:make_engine",
        "llm:",
        "  base_url: https://api.openai.com/v1",
        "  model: gpt-4o-mini",
        "  api_key_env: OPENAI_API_KEY",
        "  price_input_per_1k: 0.00015",
        "  price_output_per_1k: 0.0006",
        "feedback: {store: feedback.sqlite}",
        DEMO_VERIFIED_YAML.rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"


#: The demo's curated queries: the engine answers these questions with reviewed SQL
#: (``source: verified`` in the report), still under the asking role's policy. Identifiers are
#: quoted so the same text runs on SQLite and on PostgreSQL (which folds unquoted names to lower case).
DEMO_VERIFIED_YAML = """\
verified:                        # curated queries (docs/engine.md#verified-queries)
- id: playlist_count
  datasource: chinook
  questions: ["How many playlists are there?"]
  sql: SELECT COUNT("PlaylistId") AS playlist_count FROM "Playlist"
- id: sales_by_billing_country
  datasource: chinook
  questions: ["What were total invoice sales per billing country, highest first?"]
  sql: |
    SELECT "BillingCountry", ROUND(SUM("Total"), 2) AS sales
    FROM "Invoice"
    GROUP BY "BillingCountry"
    ORDER BY sales DESC, "BillingCountry"
"""


PYTEST_INI = """\
# Written by `pytest-nl2sql init --demo`: this folder is its own pytest root, wherever it is made, so
# plain `pytest` (and `pytest --lf`) here runs the suites evals.yaml lists, with node ids
# relative to this folder (evals/chinook.yaml::chinook_001[admin]).
[pytest]
"""


class Written(dict):
    """What ``init_demo`` wrote (relative name -> path); ``kept`` lists the files it left alone
    because you changed them since init wrote them."""

    kept: list[str]


EVALS_YAML = "# Suites `pytest` and `pytest-nl2sql eval run` use by default (paths relative to nl2sql.yaml).\nsuites:\n- evals/chinook.yaml\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def init_demo(target: str | Path, *, force: bool = False) -> Written:
    """Create (or refresh) the demo project in ``target``; return what was written.

    A file you changed since init wrote it is kept as it is (listed in ``kept``) and every
    other file is refreshed; ``force`` overwrites those too.
    """
    root = Path(target)
    root.mkdir(parents=True, exist_ok=True)
    manifest_path = root / MANIFEST
    try:
        manifest: dict[str, str] = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        manifest = {}
    files: dict[str, bytes] = {
        "nl2sql.yaml": nl2sql_yaml().encode(),
        "evals.yaml": EVALS_YAML.encode(),
        "pytest.ini": PYTEST_INI.encode(),
    }
    for suite in shipped_suites():
        files[f"evals/{suite.name}"] = suite.read_bytes()
    changed = []
    for rel, data in files.items():
        path = root / rel
        if path.exists() and not force:
            current = _sha(path.read_bytes())
            if current != _sha(data) and manifest.get(rel) != current:
                changed.append(rel)
    written = Written()
    written.kept = changed  # refreshed around, never overwritten without force
    for rel, data in files.items():
        if rel in changed:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            write_atomic(path, data.decode("utf-8"))
        manifest[rel] = _sha(data)
        written[rel] = path
    for name in DEMO_DATASOURCES:
        db = root / "data" / f"{name}.sqlite"
        db.parent.mkdir(parents=True, exist_ok=True)
        if not db.exists() or force:
            build_sqlite(name, db)
        written[f"data/{name}.sqlite"] = db
    write_atomic(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return written
