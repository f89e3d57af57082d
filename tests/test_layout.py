"""Three programs, three packages: the sandbox image carries the runtime (grainworker/) only, which imports
neither the client and CLI (sandclient/) nor the emulator (sandemu/); the client is standard library only."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEVELOPER_SIDE = {"sandclient", "sandemu", "flask"}


def _image_dir() -> Path:
    """The folder deploy/sandbox-image.sh copies into the image (its WORKER_DIR)."""
    m = re.search(r'^WORKER_DIR="([^"]+)"', (ROOT / "deploy" / "sandbox-image.sh").read_text(), re.M)
    assert m, "deploy/sandbox-image.sh no longer names WORKER_DIR"
    return ROOT / m.group(1)


def _runtime_files() -> list[Path]:
    """What the image gets of the repository: every file of WORKER_DIR but caches (as its tar), and the
    generated Thrift code (_gen) but that."""
    d = _image_dir()
    return sorted(
        p
        for p in d.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and "_gen" not in p.relative_to(d).parts
    )


def test_the_image_copies_the_runtime_package_and_no_cli_or_emulator() -> None:
    d = _image_dir()
    assert d == ROOT / "grainworker"
    names = [p.relative_to(d).as_posix() for p in _runtime_files()]
    assert "__main__.py" in names and "supervisor.py" in names and "worker.py" in names
    cli_or_emulator = [n for n in names if re.search(r"(^|/)(cli|_cli_\w*|emulator\w*|_http)(\.py$|/)", n)]
    assert cli_or_emulator == []
    # Nothing of the developer's side under another name either: no module of sandclient/ or sandemu/.
    theirs = {p.name for pkg in ("sandclient", "sandemu") for p in (ROOT / pkg).glob("*.py")} - {"__init__.py"}
    assert theirs and not theirs & {Path(n).name for n in names}
    assert [p for p in d.iterdir() if p.is_dir() and p.name not in ("_gen", "__pycache__")] == []


def test_the_runtime_imports_neither_the_client_nor_the_emulator() -> None:
    for f in _runtime_files():
        if f.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            for name in names:
                assert name.split(".")[0] not in DEVELOPER_SIDE, f"{f.relative_to(ROOT)} imports {name}"
    # And when it runs: every runtime module loaded, nothing of the developer's side comes along.
    modules = [f"grainworker.{p.stem}" for p in (ROOT / "grainworker").glob("*.py") if p.stem != "__init__"]
    code = (
        f"import sys\nimport {', '.join(modules)}\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(DEVELOPER_SIDE)!r}))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_the_client_and_cli_need_the_standard_library_only() -> None:
    code = (
        "import sys, sandclient, sandclient.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('thrift', 'sandemu', 'flask', 'requests')))\n"
        "print(sorted(m for m in sys.modules if m.startswith('grainworker.')))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    # The workflow rules are grainworker.workflow's (one place for each contract), which imports only the standard
    # library and grainworker.rules (the reader of contracts/rules.json).
    assert r.stdout.splitlines() == ["[]", "['grainworker.rules', 'grainworker.workflow']"]


# ---- Java modules: the frontend and the host agent share contracts and cluster, never each other ----


def _module_deps(module: str) -> set[str]:
    """The SAND modules the module's main code depends on (test-scoped dependencies, like common's test clock, not)."""
    pom = (ROOT / module / "pom.xml").read_text()
    deps = pom.split("<dependencies>", 1)[1]
    return {
        m.group(1)
        for d in re.findall(r"<dependency>(.*?)</dependency>", deps, re.S)
        if "<scope>test</scope>" not in d
        for m in [re.search(r"<groupId>sand</groupId>\s*<artifactId>([\w-]+)</artifactId>", d)]
        if m
    }


def _java_imports(module: str) -> set[str]:
    found: set[str] = set()
    for f in (ROOT / module / "src" / "main").rglob("*.java"):
        found |= set(re.findall(r"^import (?:static )?sand\.(\w+)\.", f.read_text(), re.M))
    return found


def test_frontend_and_host_agent_depend_on_the_shared_modules_not_on_each_other() -> None:
    # the global data layer's client (the KNIX door's storage actions) is cluster's (sand.cluster.globaldata)
    assert _module_deps("frontend") == {"common", "contracts", "cluster"}
    assert "frontend" not in _module_deps("hostagent")
    assert {"hostagent", "localbus", "datalayer"}.isdisjoint(_java_imports("frontend"))
    assert not any(
        re.search(r"\bsand\.datalayer\.", f.read_text()) for f in (ROOT / "frontend" / "src").rglob("*.java")
    ), "the frontend uses the local data layer"
    assert "frontend" not in _java_imports("hostagent")
    # the shared modules stay below both processes
    for shared in ("common", "contracts", "cluster"):
        assert {"hostagent", "frontend"}.isdisjoint(_module_deps(shared) | _java_imports(shared)), shared


# ---- every top-level folder says in its README what lives there and what it may depend on ----


def _folders() -> list[str]:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted({line.split("/", 1)[0] for line in tracked.splitlines() if "/" in line and line[0] != "."})


def _may_depend_on(folder: str) -> set[str] | None:
    """The names in the README's `May depend on:` line; None for "anything"."""
    m = re.search(r"^May depend on: (.*)$", (ROOT / folder / "README.md").read_text(), re.M)
    assert m, f"{folder}/README.md has no 'May depend on:' line"
    if m.group(1).startswith("anything"):
        return None
    return {name.split(".")[0] for name in re.findall(r"`([\w.-]+)`", m.group(1))}


def _python_imports(folder: str) -> set[str]:
    found: set[str] = set()
    for f in (ROOT / folder).glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {folder}


def test_every_folder_has_a_readme_that_says_what_it_may_depend_on() -> None:
    folders = _folders()
    assert {"common", "contracts", "hostagent", "frontend", "grainworker", "deploy", "tests"} <= set(folders)
    for folder in folders:
        _may_depend_on(folder)


def test_java_modules_depend_on_what_their_readme_allows() -> None:
    modules = re.findall(r"<module>([\w-]+)</module>", (ROOT / "pom.xml").read_text())
    assert len(modules) >= 7
    for module in modules:
        allowed = _may_depend_on(module)
        assert allowed is not None, f"{module}/README.md must name its dependencies"
        assert _module_deps(module) - {module} == allowed, module
        assert _java_imports(module) - {module} <= allowed, f"{module} imports beyond its README"


def test_python_packages_import_what_their_readme_allows() -> None:
    for package in ("grainworker", "sandclient", "sandemu"):
        allowed = _may_depend_on(package)
        assert allowed is not None
        assert _python_imports(package) <= allowed, f"{package} imports {_python_imports(package) - allowed}"


MAX_LINES = 600


def test_no_main_code_file_is_over_600_lines_without_a_reason_at_its_top() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.java", "*.py", "*.sh"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    main_code = [
        f
        for f in tracked
        if not f.startswith(("tests/", "examples/"))
        and "/src/test/" not in f
        and "/_gen/" not in f
        and (ROOT / f).is_file()
    ]
    assert len(main_code) > 100
    long = [
        f
        for f in main_code
        if len((ROOT / f).read_text().splitlines()) > MAX_LINES
        and not re.search(rf"longer than {MAX_LINES} lines", "\n".join((ROOT / f).read_text().splitlines()[:40]), re.I)
    ]
    assert long == [], f"over {MAX_LINES} lines, with no 'longer than {MAX_LINES} lines because ...' at the top: {long}"
