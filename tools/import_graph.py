"""Count the imports between the apps, split by where they sit: module level, inside a function, or under
``if TYPE_CHECKING``. ``.venv/bin/python tools/import_graph.py`` prints a table; ``--edges`` lists each import.

grimp (shipped with import-linter) builds the graph; the position of each import is read back from the source with
``ast`` because grimp records only the line.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import grimp

APPS = ("config", "projects", "annotation", "aggregation", "suggestions")
ROOT = Path(__file__).resolve().parents[1]


def _positions(path: Path) -> dict[int, str]:
    """Line number of each import statement -> 'module', 'function' or 'typing'."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[int, str] = {}

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                here = "function"
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and where == "module":
                here = "typing"
            if isinstance(child, ast.Import | ast.ImportFrom):
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    found[line] = here
            visit(child, here)

    visit(tree, "module")
    return found


def main() -> None:
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*APPS, cache_dir=None)
    counts: Counter[tuple[str, str, str]] = Counter()
    edges = []
    position_cache: dict[str, dict[int, str]] = {}
    for importer in sorted(graph.modules):
        if ".migrations." in importer:
            continue
        source = importer.split(".")[0]
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            target = imported.split(".")[0]
            if target == source:
                continue
            module_path = ROOT / (importer.replace(".", "/") + ".py")
            if not module_path.exists():
                module_path = ROOT / importer.replace(".", "/") / "__init__.py"
            positions = position_cache.setdefault(importer, _positions(module_path))
            for detail in graph.get_import_details(importer=importer, imported=imported):
                where = positions.get(detail["line_number"], "module")
                counts[(source, target, where)] += 1
                edges.append(f"{importer}:{detail['line_number']} -> {imported} ({where})")
    print(f"{'from':<12} {'to':<12} {'module':>7} {'function':>9} {'typing':>7}")
    for source in APPS:
        for target in APPS:
            row = [counts[(source, target, where)] for where in ("module", "function", "typing")]
            if any(row):
                print(f"{source:<12} {target:<12} {row[0]:>7} {row[1]:>9} {row[2]:>7}")
    if "--edges" in sys.argv:
        print("\n".join(edges))


if __name__ == "__main__":
    main()
