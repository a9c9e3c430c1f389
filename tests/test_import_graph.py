"""The package's modules import one another without circles: a module stands above everything it imports,
so each can be read (and loaded) from the ground up.

Every import counts, module-level and function-local alike (a local import is still a dependency, only a
later one); an import under ``if TYPE_CHECKING:`` does not, since it never runs."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("workbench",)


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name == "TYPE_CHECKING":
                skipped.update(id(sub) for child in node.body for sub in ast.walk(child))
    return skipped


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    return [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports (a name from a package counts as the package,
    a submodule as itself)."""
    modules = project_modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        targets = graph.setdefault(module, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                for name in _imported(node, module, path.name == "__init__.py"):
                    hit = resolve(name)
                    if hit is not None and hit != module:
                        targets.add(hit)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "workbench.session" in graph["workbench.runner"]
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    """The check above would see a circle: three modules importing round, beside one that does not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_readers_of_sessions_do_not_import_the_engine() -> None:
    """The session, the store and the exporters stand below the runner: nothing that reads a stored session
    reaches it, even lazily."""
    graph = import_graph()

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for target in graph[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    for reader in ("workbench.session", "workbench.store.store", "workbench.store.writer", "workbench.printer"):
        assert "workbench.runner" not in reachable(reader), reader
