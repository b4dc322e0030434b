"""A copy of nl2sql-engine 0.7.0's demo project (``tests/fixtures/nl2sql_engine_demo``), with
its databases unpacked, in a folder of the test's own: the project a user of nl2sql-engine has."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "nl2sql_engine_demo"


def make_engine_project(dest: Path) -> Path:
    """Write the project into ``dest`` (created); return the path of its ``nl2sql.yaml``."""
    shutil.copytree(FIXTURE, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.gz", "PROVENANCE.md"))
    for packed in sorted((FIXTURE / "data").glob("*.sqlite.gz")):
        (dest / "data").mkdir(exist_ok=True)
        with gzip.open(packed, "rb") as src, open(dest / "data" / packed.name[: -len(".gz")], "wb") as out:
            shutil.copyfileobj(src, out)
    return dest / "nl2sql.yaml"
