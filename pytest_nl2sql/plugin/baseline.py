"""The baseline gate: a committed JSON file of known failing items.

Format (``version: 1``)::

    {"version": 1,
     "failures": {"routing.yaml::r_017[admin]": {"scorer": "routing", "reason": "..."}}}

Keys are ``<suite file name>::<case id>[<role>]``, so a baseline survives moving the suite
(``nl2sql init --demo`` copies suites and their ``<stem>.baseline.json`` together). A known
failure is reported as xfail; any other failure fails the run; a known failure that passes is
reported as fixed (and fails the run with ``--nl2sql-strict-baseline``).
``--nl2sql-update-baseline`` rewrites the file from the items that ran and keeps the entries of
items that did not run.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.suitefile.lock import write_atomic

__all__ = ["Baseline", "BaselineError", "baseline_key", "beside"]


class BaselineError(Nl2sqlError):
    pass


def baseline_key(suite_path: str | Path, case_id: str, role: str) -> str:
    return f"{Path(suite_path).name}::{case_id}[{role}]"


def beside(suite_path: str | Path) -> Path:
    """The baseline found without a flag: ``<stem>.baseline.json`` next to the suite."""
    p = Path(suite_path)
    return p.with_name(p.stem + ".baseline.json")


class Baseline:
    def __init__(self, path: Path, failures: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.path = path
        self.failures: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (failures or {}).items()}

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except RecursionError:  # e.g. 100,000 nested '[' (json recurses once per level)
            raise BaselineError(f"{path}: not a baseline file (nested too deeply to read)") from None
        except (OSError, ValueError) as exc:  # ValueError: not JSON, not UTF-8, a 5,000-digit number
            raise BaselineError(f"{path}: not a baseline file ({str(exc)[:200]})") from None
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("failures"), dict):
            raise BaselineError(f"{path}: a baseline is {{\"version\": 1, \"failures\": {{...}}}}")
        bad = [k for k, v in data["failures"].items() if not isinstance(v, dict)]
        if bad:
            raise BaselineError(
                f"{path}: failure {bad[0]!r} must map to {{\"scorer\": ..., \"reason\": ...}}, got {reprlib.repr(data['failures'][bad[0]])}"
            )
        return cls(path, data["failures"])

    def known(self, key: str) -> dict[str, Any] | None:
        return self.failures.get(key)

    def updated(self, ran: Iterable[tuple[str, bool, str, str]]) -> Baseline:
        """A new baseline from (key, passed, scorer, reason) of the items that ran."""
        failures = dict(self.failures)
        for key, passed, scorer, reason in ran:
            if passed:
                failures.pop(key, None)
            else:
                failures[key] = {"scorer": scorer, "reason": reason}
        return Baseline(self.path, failures)

    def write(self) -> None:
        data = {"version": 1, "failures": {k: self.failures[k] for k in sorted(self.failures)}}
        write_atomic(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
