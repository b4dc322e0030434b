"""The default ``pytest_nl2sql_make_engine``: the engine nl2sql.yaml names (or the replay engine).

``engine: module:name`` names an *engine factory*: a class whose instances are engines, or a
function that returns one, called with the loaded ``Config``. Before anything is called, what
the path names is checked, so a typo or a hostile value (``engine: os:system``) is one usage
error instead of a traceback -- or a builtin run with the config:

* it is a class with ``route`` and ``answer`` methods, or a Python function (or method);
  builtins (``os.system``, ``eval``) and other callables are refused;
* it is not from Python's standard library (no stdlib callable is an engine factory);
* its signature takes the config as its one positional argument;
* what the call returns has callable ``route`` and ``answer`` (the engine protocol).

An exception raised by the factory is reported as a usage error naming it, too.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import pytest

from pytest_nl2sql.config.model import DEFAULT_ENGINE, ENGINE_NL2SQL
from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.plugin.collect import RUN_KEY

__all__ = ["DefaultEngineFactory", "EngineFactoryError", "build_engine", "check_factory"]

#: What an engine must offer (docs/engine.md, ``engine.protocol.Engine``).
ENGINE_METHODS = ("route", "answer")


class EngineFactoryError(Nl2sqlError):
    """``engine:`` in nl2sql.yaml names something that is not an engine factory."""


def _module_of(obj: Any) -> str:
    return str(getattr(obj, "__module__", None) or "")


def check_factory(dotted: str, obj: Any) -> None:
    """Raise ``EngineFactoryError`` unless ``obj`` (what ``dotted`` names) may be called as an
    engine factory; see the module docstring."""
    where = f"engine: {dotted!r}"
    hint = "name a class or function of your own that takes the Config and returns an engine (e.g. pytest_nl2sql.engine.reference:make_engine)"
    function = inspect.isfunction(obj) or (inspect.ismethod(obj) and inspect.isfunction(obj.__func__))
    if not (inspect.isclass(obj) or function):
        if not callable(obj):
            kind = f"a {type(obj).__name__} (nothing that can be called)"
        elif inspect.isbuiltin(obj) or inspect.ismethoddescriptor(obj):
            kind = "a builtin function"
        else:
            kind = f"a {type(obj).__name__} object"
        raise EngineFactoryError(f"{where} is {kind}, not an engine factory; {hint}")
    module = _module_of(obj)
    if not module or module.partition(".")[0] in sys.stdlib_module_names:
        raise EngineFactoryError(
            f"{where} is part of Python's standard library ({module or 'no module'}), not an engine factory; {hint}"
        )
    if inspect.isclass(obj):
        missing = [m for m in ENGINE_METHODS if not callable(getattr(obj, m, None))]
        if missing:
            raise EngineFactoryError(
                f"{where} is a class without {' and '.join(f'{m}()' for m in missing)}, so its instances are not engines; {hint}"
            )
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        raise EngineFactoryError(f"{where}: cannot tell what it takes (no signature); {hint}") from None
    try:
        signature.bind(object())
    except TypeError:
        raise EngineFactoryError(
            f"{where} must take the Config as its one argument, but its signature is {obj.__name__}{signature}"
        ) from None


def check_engine(dotted: str, engine: Any) -> Any:
    missing = [m for m in ENGINE_METHODS if not callable(getattr(engine, m, None))]
    if missing:
        raise EngineFactoryError(
            f"engine: {dotted!r} returned {type(engine).__name__!r}, which has no "
            f"{' and '.join(f'{m}()' for m in missing)} (an engine offers route(question, role) and "
            "answer(question, role, llm); see docs/engine.md)"
        )
    return engine


#: --nl2sql-engine's short names
ENGINE_NAMES = {"reference": DEFAULT_ENGINE, ENGINE_NL2SQL: ENGINE_NL2SQL}


def build_engine(dotted: str, project: Any, mode: str = "plans") -> Any:
    """Import what ``dotted`` names, check it, call it with ``project``, check the result.
    ``nl2sql-engine`` is nl2sql-engine's own pipeline (engine/nl2sql_engine.py), for ``mode``."""
    dotted = ENGINE_NAMES.get(dotted, dotted)
    if dotted == ENGINE_NL2SQL:
        from pytest_nl2sql.engine.nl2sql_engine import Nl2sqlEngine

        return Nl2sqlEngine(project, mode=mode)
    from pytest_nl2sql.plugin.run import import_object

    factory = import_object(dotted)
    check_factory(dotted, factory)
    try:
        engine = factory(project)
    except Nl2sqlError:
        raise
    except Exception as exc:
        raise EngineFactoryError(f"engine: {dotted!r} failed: {type(exc).__name__}: {str(exc)[:300]}") from None
    return check_engine(dotted, engine)


class DefaultEngineFactory:
    @pytest.hookimpl(trylast=True)
    def pytest_nl2sql_make_engine(self, config: pytest.Config, project: Any) -> Any:
        run = config.stash[RUN_KEY]
        if run.settings.predictions is not None:
            from pytest_nl2sql.engine.replay import ReplayEngine

            engine = ReplayEngine.from_file(run.settings.predictions, project)
            # a serial process has a forked helper check the rest of the run ahead of the items,
            # on a second core (engine/forkhelper.py); not an xdist worker (its partner has the
            # other core) nor beside engine-call threads (threads and fork do not mix)
            engine.second_core = (
                run.settings.second_core and not hasattr(config, "workerinput") and run.settings.concurrency <= 1
            )
            return engine
        if project is None:
            return None
        chosen = run.settings.engine or project.engine
        try:
            return build_engine(chosen, project, mode=run.settings.mode)
        except Nl2sqlError as exc:  # not a factory, or the factory refused the project
            raise pytest.UsageError(str(exc)) from None
