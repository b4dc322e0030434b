"""Every attack of the corpus through the three SQL paths, on SQLite and PostgreSQL (superuser
login and read-only login). What must hold is in ``corpus.py``'s docstring; ``harness.py``
checks it: nothing in the database changed and nothing was shown that must not be."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .corpus import Attack
from .harness import Backend, matrix, oracle_matrix, run_attack, run_oracle


def _id(backend: str, attack: Attack, path: str, role: str | None) -> str:
    return f"{backend}-{path}-{role or 'norole'}-{attack.id}"


CASES = [pytest.param(*case, id=_id(*case)) for case in matrix()]
ORACLE_CASES = [
    pytest.param(backend, oracle, path, id=f"{backend}-{path}-viewer-oracle_{oracle.id}")
    for backend, oracle, path in oracle_matrix()
]


@pytest.mark.parametrize(("backend_name", "attack", "path", "role"), CASES)
def test_attack(backend_name: str, attack: Attack, path: str, role: str | None, security_backend: Callable[[str], Backend]) -> None:
    verdict = run_attack(security_backend(backend_name), attack, path, role)
    assert verdict.ok, verdict.describe()


@pytest.mark.parametrize(("backend_name", "oracle", "path"), ORACLE_CASES)
def test_existence_oracle(backend_name: str, oracle: object, path: str, security_backend: Callable[[str], Backend]) -> None:
    verdict = run_oracle(security_backend(backend_name), oracle, path)
    assert verdict.ok, verdict.describe()
