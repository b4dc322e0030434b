"""Which suite, which database and which code a run's numbers are about (``run.provenance``;
docs/report.md#provenance).

* ``suites`` -- per suite file: the SHA-256 of its bytes and of each case's content (question,
  SQL, rows, alternatives, outcomes, tables, columns -- not its plan, which in mode plans stands
  in for the engine's answer: ``suitefile.digest.case_digest``);
* ``datasources`` -- per datasource: the **schema fingerprint**, a SHA-256 over its tables,
  their columns and the columns' types (sorted, case-folded), with the table count; or
  ``error`` when it could not be read;
* ``git`` -- the project's commit and whether its work tree had changes (``dirty``), or null
  outside a git work tree;
* ``engine`` -- the engine that answered (``name``) and its version.

Two runs whose fingerprint of a datasource differs are a **series break**: their figures are
about different databases. ``report compare`` and ``report gate --against`` name it and exit 2
unless ``--allow-series-break`` is given; cases whose digest changed are listed apart.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_nl2sql.safetext import one_line

__all__ = ["changed_cases", "collect", "engine_identity", "html_section", "schema_fingerprint", "series_breaks", "summary_line"]

#: The longest a git call may take (a slow network file system must not hold up the report).
_GIT_TIMEOUT_S = 5.0


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def suite_provenance(paths: Iterable[Path]) -> dict[str, Any]:
    from pytest_nl2sql.errors import SuiteError
    from pytest_nl2sql.suitefile.digest import case_digest
    from pytest_nl2sql.suitefile.loader import load_suite

    out: dict[str, Any] = {}
    for path in sorted(Path(p) for p in paths):
        entry: dict[str, Any] = {}
        try:
            entry["sha256"] = _sha(path.read_bytes())
        except OSError as exc:
            out[path.name] = {"sha256": None, "cases": {}, "error": one_line(str(exc))[:200]}
            continue
        try:
            entry["cases"] = {c.id: case_digest(c) for c in load_suite(path, write_cache=False).cases}
        except (SuiteError, OSError) as exc:
            entry["cases"] = {}
            entry["error"] = one_line(str(exc))[:200]
        out[path.name] = entry
    return out


def schema_fingerprint(info: Any) -> str:
    """SHA-256 over a ``SchemaInfo``'s tables, columns and column types."""
    shape = sorted(
        (name.casefold(), sorted((c.name.casefold(), str(c.type or "").upper()) for c in table.columns))
        for name, table in info.tables.items()
    )
    return _sha(json.dumps(shape, separators=(",", ":")).encode())


def datasource_provenance(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    from pytest_nl2sql.datasources import DatasourceRegistry, introspect

    out: dict[str, Any] = {}
    registry = DatasourceRegistry.from_config(config)
    try:
        for name in registry.names():
            try:
                info = introspect(registry.get(name), shape_only=True)  # no counts, no samples: not fingerprinted
                out[name] = {"fingerprint": schema_fingerprint(info), "tables": len(info.tables)}
            except Exception as exc:  # noqa: BLE001 -- unreachable, a missing driver: said, never fatal
                out[name] = {"fingerprint": None, "error": one_line(str(getattr(exc, "message", None) or exc))[:200]}
    finally:
        registry.close()
    return out


def git_provenance(root: Path) -> dict[str, Any] | None:
    """The commit and dirty flag of the git work tree holding ``root`` (None when there is none)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


def engine_identity(engine: Any, named: str | None) -> dict[str, Any]:
    """``{"name", "version"}``: the engine object's own ``version`` when it has one, else the
    version of the distribution its module belongs to."""
    from pytest_nl2sql import __version__

    module = type(engine).__module__ if engine is not None else (named or "").partition(":")[0]
    name = f"{module}:{type(engine).__name__}" if engine is not None else (named or None)
    version = getattr(engine, "version", None) if engine is not None else None
    if version is None and module:
        top = module.split(".")[0]
        if top == "pytest_nl2sql":
            version = __version__
        else:
            dists = metadata.packages_distributions().get(top) or []
            for dist in dists:
                try:
                    version = metadata.version(dist)
                    break
                except metadata.PackageNotFoundError:
                    continue
    return {"name": name, "version": None if version is None else str(version)}


def collect(suites: Iterable[Path], config: Any, root: Path, engine: Any, named: str | None) -> dict[str, Any]:
    """The run's ``provenance``."""
    return {
        "suites": suite_provenance(suites),
        "datasources": datasource_provenance(config),
        "git": git_provenance(root),
        "engine": engine_identity(engine, named),
    }


def _provenance(run: Mapping[str, Any]) -> Mapping[str, Any]:
    p = run.get("provenance")
    return p if isinstance(p, Mapping) else {}


def _section(run: Mapping[str, Any], key: str) -> Mapping[str, Mapping[str, Any]]:
    """``run.provenance[key]`` with only the entries that are objects (a report read back is
    input: anything else in it is ignored, never a crash)."""
    value = _provenance(run).get(key)
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, Mapping)}


def series_breaks(base_run: Mapping[str, Any], new_run: Mapping[str, Any]) -> list[str]:
    """The datasources whose schema fingerprint differs between two runs' ``run`` sections
    (one line each); none when either run recorded no fingerprint for it."""
    base, new = _section(base_run, "datasources"), _section(new_run, "datasources")
    out = []
    for name in sorted(set(base) & set(new)):
        b, n = base[name].get("fingerprint"), new[name].get("fingerprint")
        if isinstance(b, str) and isinstance(n, str) and b and n and b != n:
            out.append(f"datasource {name}: schema fingerprint {str(b)[:12]} -> {str(n)[:12]}")
    return out


def changed_cases(base_run: Mapping[str, Any], new_run: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """``{(suite file name, case id): what}`` for the cases whose digest differs between two runs."""
    base, new = _section(base_run, "suites"), _section(new_run, "suites")
    out: dict[tuple[str, str], str] = {}
    for suite in set(base) & set(new):
        b, n = base[suite].get("cases"), new[suite].get("cases")
        if not isinstance(b, Mapping) or not isinstance(n, Mapping):
            continue
        for case in set(b) & set(n):
            if b[case] != n[case]:
                out[(suite, case)] = "case edited"
    return out


def _count(cases: Any) -> int:
    return len(cases) if isinstance(cases, Mapping) else 0


def summary_line(run: Mapping[str, Any]) -> str | None:
    """One line: the suites' and schemas' digests (12 hex digits), the commit and the engine."""
    p = _provenance(run)
    if not p:
        return None
    suites = ", ".join(
        f"{name} {str(s.get('sha256') or '?')[:12]} ({_count(s.get('cases'))} cases)" for name, s in _section(run, "suites").items()
    )
    schemas = ", ".join(f"{name} {str(d.get('fingerprint') or 'unread')[:12]}" for name, d in _section(run, "datasources").items())
    git = p.get("git")
    commit = f"git {str(git.get('commit'))[:12]}{' (dirty)' if git.get('dirty') else ''}" if isinstance(git, Mapping) else "not in git"
    engine = p.get("engine") if isinstance(p.get("engine"), Mapping) else {}
    parts = [f"suites {suites}" if suites else "", f"schemas {schemas}" if schemas else "", commit,
             f"engine {engine.get('name')} {engine.get('version') or '(no version)'}"]
    return " " + one_line("provenance: " + "; ".join(x for x in parts if x))


def html_section(run: Mapping[str, Any], esc: Any) -> str:
    p = _provenance(run)
    if not p:
        return ""
    rows = [f"<tr><th>suite {esc(name)}</th><td><code>{esc(s.get('sha256'))}</code></td><td>{_count(s.get('cases'))} cases</td></tr>"
            for name, s in _section(run, "suites").items()]
    rows += [f"<tr><th>datasource {esc(name)}</th><td><code>{esc(d.get('fingerprint') or d.get('error'))}</code></td>"
             f"<td>{esc(d.get('tables', '-'))} tables (schema fingerprint)</td></tr>" for name, d in _section(run, "datasources").items()]
    git = p.get("git")
    rows.append(f"<tr><th>git</th><td><code>{esc(git.get('commit'))}</code></td><td>{'dirty' if git.get('dirty') else 'clean'}</td></tr>"
                if isinstance(git, Mapping) else "<tr><th>git</th><td colspan=2>not a git work tree</td></tr>")
    engine = p.get("engine") if isinstance(p.get("engine"), Mapping) else {}
    rows.append(f"<tr><th>engine</th><td><code>{esc(engine.get('name'))}</code></td><td>{esc(engine.get('version') or 'no version')}</td></tr>")
    return f'<h2>Provenance</h2><table id="provenance">{"".join(rows)}</table>'
