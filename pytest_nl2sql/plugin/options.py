"""Command-line options (group ``nl2sql``), their ini twins, and the resolved run settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# imported when the plugin registers, in every pytest run where the package is installed: only
# the standard library and pytest here (a dataclass, not attrs), so a project that never uses
# the plugin pays nothing for it (in_use, docs/plugin.md#cost-when-unused); the Settings class
# itself is made when first asked for (_make_settings)
__all__ = ["MODES", "Settings", "add_options", "in_use", "join_args", "named_suites", "read_settings", "settings_class", "take_suites"]  # noqa: F822 -- Settings: module __getattr__

MODES = ("retrieval", "plans", "full")
#: --nl2sql-second-core's values (docs/plugin.md#speed-warm-and-cold-runs).
SECOND_CORE = ("auto", "off")
#: Engine calls in flight per process in mode full unless --nl2sql-concurrency says otherwise.
FULL_CONCURRENCY = 8

# name, argparse kwargs, ini type (None: no ini twin), help
_OPTIONS: list[tuple[str, dict[str, Any], str | None, str]] = [
    ("suite", {"action": "append", "metavar": "PATH"}, "paths", "suite file to run (repeatable; default: the suites evals.yaml names)"),
    ("config", {"metavar": "PATH"}, "string", "the project's nl2sql.yaml (default: found beside the rootdir)"),
    ("mode", {"choices": MODES, "metavar": "MODE"}, "string", "retrieval (routing only, no LLM), plans (fake LLM serves each case's plan), full (the configured LLM); default plans"),
    ("roles", {"metavar": "ROLE,..."}, "string", "run only these roles"),
    ("cases", {"metavar": "TAG,..."}, "string", "run only cases with one of these tags or datasources"),
    ("clarify", {"action": "store_true", "default": None}, "bool", "also run roles whose outcome is clarify"),
    ("out", {"metavar": "FILE"}, "string", "write the JSON report here"),
    ("baseline", {"metavar": "FILE"}, "string", "known failures (JSON); default: <suite>.baseline.json beside each suite"),
    ("update-baseline", {"action": "store_true", "default": None}, None, "rewrite the baseline from the items that ran"),
    ("strict-baseline", {"action": "store_true", "default": None}, "bool", "fail the run when a known failure now passes"),
    ("max-cost", {"type": float, "metavar": "USD"}, "string", "budget for the whole run's cost: LLM calls in mode full, recorded prediction costs in any mode"),
    ("recall-threshold", {"type": float, "metavar": "X"}, "string", "fail items whose retrieval recall is below X (0..1)"),
    ("regenerate", {"action": "store_true", "default": None}, None, "rewrite rows/alt_rows of the selected cases from the database, then run"),
    ("allow-packaged", {"action": "store_true", "default": None}, None, "let regenerate rewrite a suite the package ships"),
    ("predictions", {"metavar": "FILE"}, "string", "answer from precomputed predictions (JSONL or YAML) instead of an engine"),
    ("audit", {"action": "store_true", "default": None}, None, "audit the suites' gold (SQL runs, ties at LIMIT, stale rows, ...); errors fail the run"),
    ("audit-warnings", {"action": "store_true", "default": None}, None, "with --nl2sql-audit: warnings fail the run too"),
    ("audit-mutants", {"action": "store_true", "default": None}, None, "with --nl2sql-audit: also run mutants of each gold sql (kill rates, weak-gold)"),
    ("seed", {"metavar": "DATASOURCE"}, None, "draft cases from this datasource's schema (with --nl2sql-seed-out)"),
    ("seed-out", {"metavar": "PATH"}, None, "the drafts file --nl2sql-seed writes"),
    ("seed-count", {"type": int, "metavar": "N"}, None, "how many drafts --nl2sql-seed writes (default 50)"),
    ("concurrency", {"metavar": "N"}, "string", f"engine calls in flight per process (default {FULL_CONCURRENCY} in mode full, else 1)"),
    ("cache", {"action": "store_true", "default": None}, "bool", "mode full: keep each LLM answer in the response cache and reuse it"),
    ("cache-dir", {"metavar": "DIR"}, "string", "the response cache's folder (default: .nl2sql-cache/llm beside nl2sql.yaml)"),
    ("repeat", {"metavar": "K"}, "string", "ask every item K times: it passes only when all K pass (pass^k); reports pass@k and flaky items"),
    ("estimate", {"action": "store_true", "default": None}, None, "print the expected calls, tokens and cost of the run, then stop (nothing is asked)"),
    ("save-predictions", {"metavar": "FILE"}, "string", "write every answer the engine gave (its SQL, or its status without SQL) as a predictions file (JSONL) for --nl2sql-predictions"),
    ("html", {"metavar": "FILE"}, "string", "write a self-contained HTML report here (docs/report.md#html-report)"),
    ("compare", {"metavar": "BASE.json"}, "string", "at the end, compare this run with an earlier JSON report: flipped items, per-tag deltas, a paired test"),
    ("allow-series-break", {"action": "store_true", "default": None}, "bool", "with --nl2sql-compare: compare even when a datasource's schema fingerprint changed (else the run exits 7)"),
    ("shard", {"metavar": "I/N"}, None, "run only shard I of N (1-based): a stable, balanced share of the cases by case id (docs/ci.md)"),
    ("max-leak-rate", {"metavar": "X"}, "string", "fail the run when the 95% upper bound of the leak rate (answered, should be refused) is above X (0..1)"),
    ("engine", {"metavar": "NAME"}, "string", "the engine under test, instead of nl2sql.yaml's: reference (pytest-nl2sql's), nl2sql-engine, or module:factory (docs/engine.md)"),
    ("test-suite", {"metavar": "K"}, "string", "test-suite accuracy: an allowed item passes result_match only if its SQL gives the gold's rows on the real database and on K generated neighbour databases (SQLite; PostgreSQL with test_suite.scratch_url in nl2sql.yaml; docs/scoring.md)"),
    ("second-core", {"choices": SECOND_CORE, "metavar": "auto|off"}, "string", "serial runs with --nl2sql-predictions: check the predicted SQL on a second core too, in a forked helper process (Linux, 2+ CPUs; default auto); off: one core"),
    ("llm", {"action": "append", "metavar": "NAME"}, None, "run every item once per named LLM config (llms.NAME in nl2sql.yaml; repeatable): node ids case[role-NAME], -k NAME selects one, a comparison board per config"),
]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("nl2sql", "pytest-nl2sql: run NL2SQL suites")
    for name, kwargs, ini_type, help_text in _OPTIONS:
        dest = "nl2sql_" + name.replace("-", "_")
        # argparse formats help with %: a literal percent sign must reach it doubled
        group.addoption(f"--nl2sql-{name}", dest=dest, help=help_text.replace("%", "%%"), **kwargs)
        if ini_type is not None:
            parser.addini(dest, help=help_text, type=ini_type, default=None)


def _make_settings() -> type:
    """The ``Settings`` class, made on first use: a frozen dataclass of 37 fields takes ~4 ms to
    make (its methods are generated and compiled), which every pytest run of an environment where
    the package is installed paid at registration, the plugin used or not."""

    @dataclass(frozen=True)
    class Settings:
        __qualname__ = "Settings"
        suites: tuple[Path, ...]
        config: Path | None
        mode: str
        roles: frozenset[str] | None
        cases: frozenset[str] | None
        clarify: bool
        out: Path | None
        baseline: Path | None
        update_baseline: bool
        strict_baseline: bool
        max_cost: float | None
        recall_threshold: float | None
        regenerate: bool
        allow_packaged: bool
        predictions: Path | None
        audit: bool
        audit_warnings: bool
        audit_mutants: bool
        seed: str | None
        seed_out: Path | None
        seed_count: int
        explicit: bool  # any nl2sql option given at all
        concurrency: int = 1  # engine calls in flight per process (docs/plugin.md#concurrency)
        cache: bool = False
        cache_dir: Path | None = None
        repeat: int = 1
        estimate: bool = False
        save_predictions: Path | None = None
        html: Path | None = None
        compare: Path | None = None
        allow_series_break: bool = False  # --nl2sql-compare across a schema change does not fail the run
        shard: tuple[int, int] | None = None  # (index, count), 1-based
        max_leak_rate: float | None = None
        test_suite: int = 0  # neighbour databases per datasource (--nl2sql-test-suite; 0: off)
        engine: str | None = None  # --nl2sql-engine: reference, nl2sql-engine or module:factory
        llms: tuple[str, ...] = ()  # --nl2sql-llm NAME (repeatable): the named LLM configs, in the order given
        second_core: bool = True  # --nl2sql-second-core auto: a serial run may check SQL in a forked helper

        @property
        def routes_only(self) -> bool:
            """Mode retrieval without predictions: the engine is asked to route, never to answer."""
            return self.mode == "retrieval" and self.predictions is None

    return Settings


def settings_class() -> type:
    """``Settings`` (made once, then a module attribute like any other)."""
    made = globals().get("Settings")
    if made is None:
        made = globals()["Settings"] = _make_settings()
    return made


def __getattr__(name: str) -> Any:  # PEP 562: ``from ...options import Settings`` makes it
    if name == "Settings":
        return settings_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def in_use(config: pytest.Config) -> bool:
    """Whether this run uses the plugin at all: an nl2sql option or ini key is set, a ``.yaml``
    file is named on the command line, or an ``nl2sql.yaml`` is in the rootdir, the current
    folder or one above it. Otherwise the plugin stays dormant: nothing past this module is
    imported and no hook of its runs."""
    for name, _kwargs, ini_type, _help in _OPTIONS:
        dest = "nl2sql_" + name.replace("-", "_")
        if config.getoption(dest) not in (None, False, []):
            return True
        if ini_type is not None and _ini(config, dest) not in (None, "", []):
            return True
    if named_suites(config):
        return True
    here = Path.cwd()
    return any((folder / "nl2sql.yaml").is_file() for folder in (Path(str(config.rootpath)), here, *here.parents))


def named_suites(config: pytest.Config) -> list[Path]:
    """The suite files named (alone or in a node id) on pytest's command line, resolved."""
    named = []
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        for arg in config.args:
            path = Path(arg.split("::")[0])
            if path.suffix in (".yaml", ".yml") and path.is_file():
                named.append(path.resolve())
    return named


def take_suites(config: pytest.Config, suites: Any) -> None:
    """Have pytest collect ``suites``: they replace its default arguments (the rootdir, the
    ``testpaths``), or join the paths given on its command line unless named there already.
    Done as many times as asked, the arguments are the same."""
    if not suites:
        return
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [str(p) for p in suites]
    else:
        join_args(config, suites)


def join_args(config: pytest.Config, paths: Any) -> None:
    """Append paths to pytest's arguments, unless already named there."""
    have = {Path(a.split("::")[0]).resolve() for a in config.args}
    config.args.extend(str(p) for p in paths if Path(p).resolve() not in have)


def _get(config: pytest.Config, name: str) -> Any:
    dest = "nl2sql_" + name.replace("-", "_")
    value = config.getoption(dest)
    if value is None:
        value = _ini(config, dest)
        if value in ("", [], None):
            value = None
    return value


def _ini(config: pytest.Config, dest: str) -> Any:
    try:
        return config.getini(dest)
    except ValueError:
        return None


def _csv(value: Any) -> frozenset[str] | None:
    if not value:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    out = frozenset(i.strip() for i in items if i and i.strip())
    return out or None


def _float(config: pytest.Config, name: str) -> float | None:
    value = _get(config, name)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"--nl2sql-{name}: {value!r} is not a number") from None


def read_settings(config: pytest.Config) -> Settings:  # noqa: F821 -- made on first use (_make_settings)
    root = Path(str(config.rootpath))
    raw_suites = _get(config, "suite") or []
    suites = tuple(Path(s) if Path(s).is_absolute() else (Path.cwd() / s) for s in map(str, raw_suites))
    mode = _get(config, "mode") or "plans"
    if mode not in MODES:
        raise pytest.UsageError(f"--nl2sql-mode: {mode!r} is not one of {', '.join(MODES)}")
    cfg = _get(config, "config")
    out = _get(config, "out")
    baseline = _get(config, "baseline")
    predictions = _get(config, "predictions")
    max_cost = _float(config, "max-cost")
    if max_cost is not None and max_cost < 0:
        raise pytest.UsageError("--nl2sql-max-cost must be >= 0")
    if _get(config, "seed") and not _get(config, "seed-out"):
        raise pytest.UsageError("--nl2sql-seed needs --nl2sql-seed-out PATH (the drafts file to write)")
    threshold = _float(config, "recall-threshold")
    if threshold is not None and not 0 <= threshold <= 1:
        raise pytest.UsageError("--nl2sql-recall-threshold must be between 0 and 1")
    explicit = any(
        config.getoption("nl2sql_" + n.replace("-", "_")) not in (None, False, [])
        for n, *_ in _OPTIONS
    )
    return settings_class()(
        suites=suites,
        config=Path(cfg) if cfg else None,
        mode=mode,
        roles=_csv(_get(config, "roles")),
        cases=_csv(_get(config, "cases")),
        clarify=bool(_get(config, "clarify")),
        out=Path(out) if out else None,
        baseline=Path(baseline) if baseline else None,
        update_baseline=bool(_get(config, "update-baseline")),
        strict_baseline=bool(_get(config, "strict-baseline")),
        max_cost=max_cost,
        recall_threshold=threshold,
        regenerate=bool(_get(config, "regenerate")),
        allow_packaged=bool(_get(config, "allow-packaged")),
        predictions=Path(predictions) if predictions else None,
        audit=bool(_get(config, "audit")),
        audit_warnings=bool(_get(config, "audit-warnings")),
        audit_mutants=bool(_get(config, "audit-mutants")),
        seed=_get(config, "seed"),
        seed_out=Path(_get(config, "seed-out")) if _get(config, "seed-out") else None,
        seed_count=_seed_count(config),
        engine=_get(config, "engine"),
        explicit=explicit or bool(raw_suites) or root is None,
        **_full_run(config, mode),
        **_report_settings(config),
        test_suite=_whole(config, "test-suite", 0) if _get(config, "test-suite") is not None else 0,
        llms=_llm_names(config),
        second_core=_second_core(config),
    )


def _second_core(config: pytest.Config) -> bool:
    """--nl2sql-second-core (ini ``nl2sql_second_core``): auto (the default) or off."""
    value = _get(config, "second-core")
    if value is None:
        return True
    text = str(value).strip().lower()
    if text not in SECOND_CORE:
        raise pytest.UsageError(f"--nl2sql-second-core: {value!r} is not one of {', '.join(SECOND_CORE)}")
    return text == "auto"


def _llm_names(config: pytest.Config) -> tuple[str, ...]:
    """--nl2sql-llm NAME (repeatable; commas allowed), each once, in the order given."""
    names = [n.strip() for value in config.getoption("nl2sql_llm") or () for n in str(value).split(",") if n.strip()]
    return tuple(dict.fromkeys(names))


def _report_settings(config: pytest.Config) -> dict[str, Any]:
    """The report options: --nl2sql-html, --nl2sql-compare, --nl2sql-shard, --nl2sql-max-leak-rate."""
    html, compare, shard = _get(config, "html"), _get(config, "compare"), _get(config, "shard")
    leak = _float(config, "max-leak-rate")
    if leak is not None and not 0 <= leak <= 1:
        raise pytest.UsageError("--nl2sql-max-leak-rate must be between 0 and 1")
    if compare and not Path(compare).is_file():
        raise pytest.UsageError(f"--nl2sql-compare: no such report: {compare}")
    parsed = None
    if shard:
        index, _, count = str(shard).partition("/")
        try:
            parsed = (int(index), int(count))
        except ValueError:
            parsed = None
        if parsed is None or not 1 <= parsed[0] <= parsed[1]:
            raise pytest.UsageError(f"--nl2sql-shard: {shard!r} is not I/N with 1 <= I <= N (e.g. 2/3)")
    return {
        "html": Path(html) if html else None,
        "compare": Path(compare) if compare else None,
        "allow_series_break": bool(_get(config, "allow-series-break")),
        "shard": parsed,
        "max_leak_rate": leak,
    }


def _whole(config: pytest.Config, name: str, default: int) -> int:
    value = _get(config, name)
    if value is None:
        return default
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise pytest.UsageError(f"--nl2sql-{name}: {value!r} is not a whole number") from None
    if number < 1:
        raise pytest.UsageError(f"--nl2sql-{name} must be at least 1 (got {number})")
    return number


def _full_run(config: pytest.Config, mode: str) -> dict[str, Any]:
    """The settings of mode full at scale: concurrency, cache, repeats, estimate, predictions out."""
    cache_dir, save = _get(config, "cache-dir"), _get(config, "save-predictions")
    return {
        "concurrency": _whole(config, "concurrency", FULL_CONCURRENCY if mode == "full" else 1),
        "cache": bool(_get(config, "cache")),
        "cache_dir": Path(cache_dir) if cache_dir else None,
        "repeat": _whole(config, "repeat", 1),
        "estimate": bool(_get(config, "estimate")),
        "save_predictions": Path(save) if save else None,
    }


def _seed_count(config: pytest.Config) -> int:
    value = _get(config, "seed-count")
    if value is None:
        return 50
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"--nl2sql-seed-count: {value!r} is not a whole number") from None
    if count < 1:
        raise pytest.UsageError(f"--nl2sql-seed-count must be at least 1 (got {count}): no drafts would replace the file's drafts")
    return count
