"""Root conftest: keeps the repository root importable so tests can share helpers (tests.*)."""
