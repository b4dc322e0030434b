"""xdist's ``--dist loadscope`` and ``--dist loadfile`` with suites.

xdist groups ``loadscope`` by what is left of a node id once its last ``::`` part is cut, so
every item of a suite file (``evals/chinook.yaml::chinook_001[admin]``) would be one scope and
run on one worker. Under ``loadscope`` the plugin hands xdist a scheduler whose scope of an
nl2sql item is its case (``evals/chinook.yaml::chinook_001``: the roles of a case together,
the cases spread over the workers); other tests are scoped as xdist does. ``loadfile`` means
one file per worker, which for a suite is the whole suite: the plugin says so once, in the
header, and points at ``load``, ``worksteal`` or ``loadscope``.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["XdistScope"]


class XdistScope:
    def __init__(self, is_suite: Any) -> None:
        self.is_suite = is_suite  # path -> bool

    def _ours(self, nodeid: str) -> bool:
        path = nodeid.split("::")[0]
        return "::" in nodeid and nodeid.endswith("]") and self.is_suite(path)

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadscope":
            return None
        from xdist.scheduler import LoadScopeScheduling

        ours = self._ours

        class CaseScopeScheduling(LoadScopeScheduling):  # type: ignore[misc]
            def _split_scope(self, nodeid: str) -> str:
                if ours(nodeid):
                    return nodeid.rsplit("[", 1)[0]  # the case: its roles together
                return str(super()._split_scope(nodeid))

        return CaseScopeScheduling(config, log)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if getattr(config.option, "dist", None) == "loadfile" and getattr(config.option, "numprocesses", None):
            return [
                "nl2sql: --dist loadfile runs each suite file on one worker (a suite is one file); "
                "use --dist load, worksteal or loadscope (the plugin scopes loadscope by case) to spread a suite"
            ]
        return []
