"""A few attacks end to end through the real regenerate front door
(``Engine.from_config(...).evals.regenerate(path)``): every attack case lands in ``failed``,
the suite file is byte for byte unchanged, and the database is unchanged."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .harness import Backend, run_regenerate


@pytest.mark.parametrize("backend_name", ["sqlite", "pg_super", "pg_ro", "duckdb"])
def test_regenerate_refuses_attack_cases(backend_name: str, security_backend: Callable[[str], Backend]) -> None:
    backend = security_backend(backend_name)
    verdicts, report = run_regenerate(backend, backend.folder)
    bad = [v.describe() for v in verdicts if not v.ok]
    assert not bad, "\n".join(bad)
    assert report is not None
    assert "honest" in report.unchanged  # the harness itself works: an honest case regenerates
    assert not report.file_changed
