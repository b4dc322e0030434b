"""The package's layout holds: one subpackage per stage of the data path, imports in one
direction only (TYPE_CHECKING ones included), no cycle, no module a newcomer must fear."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_nl2sql"

# The stage of each subpackage; a module may import only from its own stage or lower ones.
# plugin/ may call upkeep/ (both at the top); upkeep/ never imports the plugin.
STAGES = {
    "errors": 0,
    "safetext": 0,
    "collector": 0,
    "config": 0,
    "suitefile": 1,
    "datasources": 2,
    "llm": 2,
    "engine": 3,
    "scoring": 4,
    "upkeep": 5,
    "reporting": 5,
    "plugin": 6,
    "demo": 5,
    "api": 7,
    "cli": 7,
}
MAX_LINES = 700
MAX_TOP_LEVEL_MODULES = 8
MAX_PLUGIN_MODULES = 16  # plugin/ is the pytest wiring only; reports live in reporting/


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("pytest_nl2sql"):
                    continue
                submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                if submodules and len(submodules) == len(node.names):
                    graph[name].update(submodules)  # `from pkg import module`: the module only
                elif target in modules:
                    graph[name].add(target)
    return graph


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.get(parts[1]) if len(parts) > 1 else None


def test_no_module_imports_a_later_stage() -> None:
    upward = [
        f"{module} -> {dep}"
        for module, deps in _graph().items()
        for dep in deps
        if _stage(module) is not None and _stage(dep) is not None and _stage(dep) > _stage(module)
    ]
    assert upward == [], "imports against the data path:\n" + "\n".join(sorted(upward))


def test_there_is_no_import_cycle() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        trail.append(node)
        for dep in sorted(graph[node]):
            if dep == node or (dep.startswith(node + ".") and node in graph):
                continue  # a package importing its own submodules is not a cycle
            if state.get(dep) == 1:
                cycles.append(trail[trail.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep)
        trail.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_is_over_the_size_a_reader_can_hold() -> None:
    big = {
        str(path.relative_to(PACKAGE.parent)): n
        for path, _ in _modules().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert big == {}, f"modules over {MAX_LINES} lines: {big}"


def test_the_top_level_holds_few_modules_and_every_subpackage_says_what_it_owns() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{init.parent.name}/__init__.py has no docstring saying what it owns"
        if init.parent.name in ("suitefile", "scoring", "upkeep", "reporting"):
            assert "May import" in doc, f"{init.parent.name}/__init__.py does not say what it may import"


def test_the_plugin_is_only_the_pytest_wiring() -> None:
    modules = sorted(p.name for p in (PACKAGE / "plugin").glob("*.py"))
    assert len(modules) <= MAX_PLUGIN_MODULES, modules
    reporting = {p.stem for p in (PACKAGE / "reporting").glob("*.py")}
    assert {"report", "html_report", "compare", "shards", "taxonomy", "breakdowns", "outcomes"} <= reporting
