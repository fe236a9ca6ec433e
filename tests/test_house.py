"""The house's rules, checked on the code itself: app/'s packages import one way (each package only
from the packages below it, as its __init__ docstring says), no module tells the gradient paths
apart by their names, each path is one folder, every kernel entry point is in a .slang file, the
registries list what they say they list, module docstrings are short and no comment carries a
measured figure."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from app.kernels.paths import PATHS, PathRequest, choose_path
from app.kernels.paths.group.path import GROUP
from app.model.activations import ACTIVATIONS
from app.model.encodings import ENCODINGS

APP = Path(__file__).resolve().parent.parent / "app"

# Bottom to top: a module may import its own package and those before it, never one after it.
# (datasets, errors and resources sit at the bottom; ui, entry, sweep and bench at the top.)
LAYERS = [
    {"errors", "resources", "interrupts"},
    {"model", "datasets"},
    {"truth"},
    {"config"},
    {"kernels"},
    {"gpu"},
    {"train"},
    {"views"},
    {"loop"},
    {"files"},
    {"check"},
    {"ui"},
    {"run"},  # a headless run: the command line's --headless and each sweep trial
    {"serve"},  # the window served to browsers: the ui's frames, no display
    {"sweep"},
    {"entry"},  # the command line, which hands `visual-trainer sweep ...` to app/sweep
    {"bench", "__main__"},
]
RANK = {part: k for k, layer in enumerate(LAYERS) for part in layer}


def _part(root: Path, path: Path) -> str:
    """The top-level part of `root` (app/) a file belongs to: its package, or its module's name."""
    relative = path.relative_to(root)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_parts(root: Path, path: Path) -> set[str]:
    """The top-level parts of app/ that `path` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text())
    package = list(path.relative_to(root).parent.parts)
    parts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            parts.update([base[0]] if base else [alias.name for alias in node.names])
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            parts.update(m.split(".")[1] for m in modules if m and m.startswith("app."))
    return parts


def upward_imports(root: Path) -> list[str]:
    """Every import in `root` that runs from a part of the house up to a part above it."""
    upward = []
    for path in sorted(root.rglob("*.py")):
        here = _part(root, path)
        if here == "__init__":
            continue
        assert here in RANK, f"{path.relative_to(root)}: a new top-level part of app/ needs its place in LAYERS"
        for part in _imported_parts(root, path) - {here}:
            assert part in RANK, f"{path.relative_to(root)} imports app.{part}, which has no place in LAYERS"
            if RANK[part] > RANK[here]:
                upward.append(f"{path.relative_to(root)} -> {part}")
    return upward


def test_every_package_imports_only_the_packages_below_it():
    assert len(list(APP.rglob("*.py"))) > 100
    upward = upward_imports(APP)
    assert not upward, "imports that run back up:\n" + "\n".join(upward)


def test_the_layering_check_sees_an_upward_import(tmp_path):
    """The check above can fail: a model module that imports the UI, relatively or not, is caught."""
    for folder in ("model", "ui"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "ui" / "window.py").write_text("from ..model import optimizers\n")
    (tmp_path / "model" / "optimizers.py").write_text("from ..ui import window\nimport app.ui.window\n")
    assert upward_imports(tmp_path) == ["model/optimizers.py -> ui"]


def _module(root: Path, path: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _is_module(root: Path, module: tuple[str, ...]) -> bool:
    place = root.joinpath(*module)
    return place.with_suffix(".py").is_file() or (place / "__init__.py").is_file()


def _imported_modules(root: Path, path: Path) -> set[tuple[str, ...]]:
    """The modules of `root` that `path` imports, at its top or inside a function: `from a import b`
    is module a.b where there is one, else a."""
    package = list(_module(root, path)) if path.name == "__init__.py" else list(_module(root, path)[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("app.")):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            base += (node.module.split(".")[0 if node.level else 1 :]) if node.module else []
            for alias in node.names:
                module = tuple([*base, alias.name])
                found.add(module if _is_module(root, module) else tuple(base))
        elif isinstance(node, ast.Import):
            found.update(tuple(a.name.split(".")[1:]) for a in node.names if a.name.startswith("app."))
    return {module for module in found if _is_module(root, module)} - {_module(root, path)}


def import_circles(root: Path) -> list[list[str]]:
    """Modules that import each other, round a loop of any length (Tarjan's strongly connected
    components of the import graph), each as its modules' dotted names."""
    graph = {_module(root, path): _imported_modules(root, path) for path in root.rglob("*.py")}
    index, low, stack, circles = {}, {}, [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            circle = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(circle) > 1:
                circles.append(sorted(".".join(m) for m in circle))

    for module in graph:
        if module not in index:
            visit(module)
    return circles


def test_no_modules_import_each_other():
    """Not even lazily, inside a function: a circle is two modules that are one."""
    assert import_circles(APP) == []


def test_the_circle_check_sees_a_circle_through_a_function(tmp_path):
    (tmp_path / "entry").mkdir()
    (tmp_path / "entry" / "__init__.py").write_text("")
    (tmp_path / "entry" / "cli.py").write_text("from . import race_run\nEXIT = 2\n")
    (tmp_path / "entry" / "race_run.py").write_text("def main():\n    from .cli import EXIT\n")
    (tmp_path / "entry" / "alone.py").write_text("from .cli import EXIT\n")
    assert import_circles(tmp_path) == [["entry.cli", "entry.race_run"]]


def test_no_module_compares_a_gradient_path_name():
    names = "|".join(re.escape(path.name) for path in PATHS)
    comparison = re.compile(rf"gradient_path\s*(==|!=|in\b)|(==|!=)\s*[\"']({names})[\"']")
    found = []
    for path in APP.rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if comparison.search(code) and ("gradient_path" in code or ".name" in code):
                found.append(f"{path.relative_to(APP)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_paths_have_distinct_names_and_group_tiles_fit_every_network():
    assert len({path.name for path in PATHS}) == len(PATHS)
    assert PATHS[-1] is GROUP, "group tiles fit every network: the last path tried"
    from app.kernels.plan import LayerPlan

    wide = (4, 256, 256, 4)
    layers, offset = [], 0
    for fan_in, fan_out in zip(wide[:-1], wide[1:]):
        layers.append(LayerPlan(fan_in, fan_out, ACTIVATIONS["sin"], offset, 0))
        offset += fan_in * fan_out + fan_out
    request = PathRequest(
        sizes=wide,
        layers=tuple(layers),
        precision="float",
        matmul="auto",
        squared=False,
        points=True,
        grid_params=0,
        image=False,
        tensor_cores=False,
        fused=False,
        cpu=False,
    )
    path, fields = choose_path(request)
    assert path is GROUP and fields["group_size"] >= 8


def test_every_gradient_path_is_one_folder():
    """app/kernels/paths/<name>/ holds a path's object (path.py), its Slang and a README.md that
    says what the path is, when it is chosen and its files."""
    for path in PATHS:
        folder = APP / "kernels" / "paths" / path.name
        assert type(path).__module__ == f"app.kernels.paths.{path.name}.path", path.name
        readme = (folder / "README.md").read_text()
        assert readme.startswith("# ") and len(readme.splitlines()) >= 3, path.name
        named = set(re.findall(r"`([\w./]+\.(?:py|slang))`", readme))
        own = {f.name for f in folder.iterdir() if f.suffix in (".py", ".slang") and f.name != "__init__.py"}
        assert own <= named, f"{path.name}/README.md does not name {sorted(own - named)}"
        elsewhere = {
            f.relative_to(root).as_posix() for root in (APP.parent / "shaders", APP) for f in root.rglob("*.*")
        }
        stale = {name for name in named - own if not any(f.endswith(name) for f in elsewhere)}
        assert not stale, f"{path.name}/README.md names files that are nowhere: {sorted(stale)}"


def _includes(text: str) -> list[str]:
    return re.findall(r'^#include "([^"]+)"', text, re.MULTILINE)


def test_every_slang_include_names_one_file():
    """A .slang file includes its own folder's files by name and the others by their folder from one
    of the roots (app/resources.py: slang_include_paths); the generated modules' includes too."""
    from app.config.config import Config, validate
    from app.kernels.network_module import network_source
    from app.kernels.planning import plan_for
    from app.resources import slang_include_paths

    roots = slang_include_paths()
    files = [f for root in (APP.parent / "shaders", APP) for f in root.rglob("*.slang")]
    assert len(files) > 40
    texts = {f: f.read_text() for f in files}
    configs = [
        dict(),
        dict(hidden=[64, 64]),
        dict(hidden=[64, 64], precision="half", encoding="hashgrid", grid_levels=4),
    ]
    for config in configs:
        for tensor_cores in (False, True):
            texts[Path("generated")] = network_source(plan_for(validate(Config(**config)), tensor_cores=tensor_cores))
            for file, text in texts.items():
                for name in _includes(text):
                    found = [base / name for base in (file.parent, *roots) if (base / name).is_file()]
                    assert len(found) == 1, f"{file}: #include {name!r} finds {found}"


def test_no_python_module_writes_a_kernel_entry_point():
    """Every kernel entry point is written in a .slang file: a generator prints only constants,
    tables and the per-layer helpers the entry points call."""
    found = [str(p.relative_to(APP)) for p in APP.rglob("*.py") if '[shader("' in p.read_text()]
    assert not found, found


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_every_encoding_owns_its_settings(name):
    """An encoding's setting survives its network.json entry, and the Config fields it reads exist."""
    from app.config.config import FIELDS, Config, validate

    encoding = ENCODINGS[name]
    config = validate(Config(encoding=name, grid_levels=4))  # a dense grid of 16 levels is too big
    setting = encoding.setting(config.encoding_settings)
    entry = encoding.schema(setting)
    assert entry["kind"] == name and encoding.entry_setting(entry) == setting
    assert set(encoding.fields) <= set(FIELDS)
    assert set(encoding.config_fields(entry)) == set(encoding.fields)
    assert encoding.dim(setting) == len(encoding.names(setting)) > 0
    if not encoding.trained:  # the Slang export prints each input as an expression
        assert len(encoding.expressions(setting)) == encoding.dim(setting)


# Comments say why in a line or two and module docstrings are at most 5 lines: the long story is in
# docs/. Measured figures live in docs/benchmarks.md, with their machine and date, where a new
# measurement replaces them; in a comment they go stale unseen.
MAX_MODULE_DOCSTRING_LINES = 5
_NUMBER = r"(?<![\w.])\d(?:[\d,.]*\d)?(?:e[+-]?\d+)?"  # not the 4 of "float4s"
_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
_FIGURE = re.compile(
    rf"{_NUMBER}\s?(?:ms|us|µs|ns|s|seconds?|min|minutes|hours?)\b"  # a time
    rf"|{_NUMBER}\s?(?:samples|steps|frames|GFLOP|TFLOP)/s"  # a speed
    rf"|{_NUMBER}\s?(?:x|×|%)\s(?:faster|slower)"  # a speed-up
)
# What makes a figure a measurement rather than a setting ("every 0.5 s"): where or that it was taken.
_MEASURED = re.compile(r"\b(?:H100|H200|A100|RTX|lavapipe|CPU driver|\d cores|\d-core|measured|took|ran)\b", re.I)


def module_docstring_lines(path: Path) -> int:
    doc = ast.get_docstring(ast.parse(path.read_text()), clean=False)
    return len(doc.strip().splitlines()) if doc else 0


def _comment_blocks(path: Path) -> list[tuple[int, str]]:
    """(first line, text) of each comment a reader takes as one: each paragraph of a docstring, a
    run of whole-line comments, and a comment after code."""
    text = path.read_text()
    docs, marker = [], "#" if path.suffix == ".py" else "//"
    if path.suffix == ".py":
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        comments = [(t.start[0], t.string, t.line) for t in tokens if t.type == tokenize.COMMENT]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    docs += [(node.body[0].lineno, " ".join(part.split())) for part in re.split(r"\n\s*\n", doc)]
    else:
        lines = enumerate(text.splitlines(), 1)
        comments = [(n, line[line.index("//") :], line) for n, line in lines if "//" in line]
    blocks: list[list] = []  # [first line, last line of a run of whole-line comments or None, text]
    for number, comment, line in comments:
        words = comment[len(marker) :].strip()
        whole = line.lstrip().startswith(marker)
        if whole and blocks and blocks[-1][1] == number - 1:
            blocks[-1][1:] = [number, blocks[-1][2] + " " + words]
        else:
            blocks.append([number, number if whole else None, words])
    return sorted(docs + [(first, words) for first, _, words in blocks])


def measured_figures(root: Path) -> list[str]:
    """Every comment or docstring under `root` that carries a date or a measured figure."""
    found = []
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.slang")]):
        text = path.read_text()
        if not (_DATE.search(text) or _FIGURE.search(text)):  # most files: nothing to look at closer
            continue
        for line, words in _comment_blocks(path):
            if _DATE.search(words) or (_FIGURE.search(words) and _MEASURED.search(words)):
                found.append(f"{path.relative_to(root)}:{line}: {words[:100]}")
    return found


def test_every_module_docstring_is_at_most_five_lines():
    long = [
        f"{p.relative_to(APP)}: {n} lines" for p in sorted(APP.rglob("*.py")) if (n := module_docstring_lines(p)) > 5
    ]
    assert not long, "the long story goes to docs/, the docstring links to it: " + ", ".join(long)


def test_no_comment_or_docstring_carries_a_measured_figure():
    found = measured_figures(APP) + [f"shaders/{entry}" for entry in measured_figures(APP.parent / "shaders")]
    assert not found, "measured figures go to docs/benchmarks.md, with machine and date:\n" + "\n".join(found)


def test_the_figure_check_sees_measurements_and_passes_settings(tmp_path):
    """Measurements of the kinds moved to docs/benchmarks.md are seen, in Python comments and
    docstrings and in Slang comments; settings with units, and sizes, are not."""
    (tmp_path / "settings.py").write_text(
        '"""A frame: the window plots an eval point every 0.5 s."""\n'
        "THROUGHPUT_WINDOW_S = 1.0  # samples/s shown: over the last second\n"
        "BUDGET = 48 << 10  # bytes: the most Vulkan on NVIDIA gave a workgroup (64 KiB lost the device)\n"
        "# at 1280 x 800 the third slider's label ran past the panel's edge\n"
        "PRIOR_FLOPS = 1e9  # well below what a CPU driver does, so the first frames err on the small side\n"
    )
    (tmp_path / "settings.slang").write_text(
        "// 16 KiB of shared memory, the Vulkan minimum\nstatic const int A = 1;\n"
    )
    assert measured_figures(tmp_path) == []
    (tmp_path / "timed.py").write_text(
        "# The full run took 514 s on an H200, past its 8 minutes.\n"
        "X = 1\n"
        "# where a worker's second trial died\n"
        "# (SlangPy's CUDA device, 4 x H100, 2026-11-27).\n"
        "Y = 2  # bank conflicts made 2-64-64-64-4 30% slower on an H200\n"
        'def f():\n    """Draws once.\n\n    Each draw cost ~50 us on a CPU driver."""\n'
    )
    (tmp_path / "timed.slang").write_text(
        "// one workgroup a parameter, reading one float a slot,\n// took 0.54 ms for 1,024 slots\nvoid f() {}\n"
    )
    found = measured_figures(tmp_path)
    assert [entry.split(":")[:2] for entry in found] == [
        ["timed.py", "1"],
        ["timed.py", "3"],
        ["timed.py", "5"],
        ["timed.py", "7"],
        ["timed.slang", "1"],
    ], found
