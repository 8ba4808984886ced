"""The package's folders are the pipeline's stages: a module imports only from its own stage
or from earlier ones, and the modules' import graph has no cycle."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "isobook"

# The data's path, first to last; a stage may import from any stage before it.
STAGES = ["config", "device", "store", "tasks", "model", "rollout", "sets", "grpo", "sweeps", "analysis", "book",
          "report", "cli"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: dict | None = None) -> list[tuple[str, bool]]:
    """The isobook modules `path` imports, each with whether it is imported at module level
    (``from package import module`` counts as importing the module, among `modules`)."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("isobook"):
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            named = [m for m in submodules if modules and m in modules]
            found += [(m, id(node) in top) for m in named or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names if alias.name.startswith("isobook")]
    return found


def _stage(module: str) -> str:
    return module.split(".")[1] if module != "isobook" else ""


def test_every_module_lives_in_a_known_stage() -> None:
    modules = {_module_name(path) for path in PACKAGE.rglob("*.py")} - {"isobook"}
    assert {_stage(module) for module in modules} <= set(STAGES)


def test_no_module_imports_from_a_later_stage() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        here = _module_name(path)
        for imported, _ in _imports(path):
            if _stage(here) and STAGES.index(_stage(imported)) > STAGES.index(_stage(here)):
                upward.append(f"{here} -> {imported}")
    assert upward == []


def test_the_module_level_import_graph_has_no_cycle() -> None:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: {m for m, at_top in _imports(path, modules) if at_top and m in modules}
             for name, path in modules.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for child in sorted(graph[name]):
            assert state.get(child) != 1, " -> ".join([*path, name, child])
            if child not in state:
                visit(child, [*path, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
