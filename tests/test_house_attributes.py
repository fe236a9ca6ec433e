"""A house rule beside tests/test_house.py's, held in app/train: every attribute is created where it
is declared, in its class's __init__ (a dataclass's fields are its own), so that a reader finds all
of a Trainer's state in one place; no class declares attributes for another class to create."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"


def _attributes_assigned(function: ast.FunctionDef) -> dict[str, int]:
    """The attributes `function` assigns on self, each with the line of its first assignment."""
    found: dict[str, int] = {}
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets = [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else targets
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    found.setdefault(part.attr, part.lineno)
    return found


def attributes_created_elsewhere(folder: Path) -> list[str]:
    """Each attribute of a class in `folder` that a method other than its __init__ creates, and each
    one a class declares (an annotation without a value, outside a dataclass) but does not create."""
    problems = []
    for path in sorted(folder.glob("*.py")):
        for cls in (node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)):
            dataclass = any("dataclass" in ast.unparse(decorator) for decorator in cls.decorator_list)
            annotated = [
                s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            ]
            declared = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and s.value is None]
            if declared and not dataclass:
                problems.append(f"{path.name}: {cls.name} declares {', '.join(declared)} without creating them")
            methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
            created = set(annotated) | set(_attributes_assigned(methods["__init__"]) if "__init__" in methods else ())
            for name, method in methods.items():
                for attribute, line in _attributes_assigned(method).items():
                    if attribute not in created:
                        problems.append(f"{path.name}:{line}: {cls.name}.{name} creates self.{attribute}")
    return problems


def test_the_trainer_creates_every_attribute_in_its_init():
    assert attributes_created_elsewhere(APP / "train") == []


def test_the_attribute_check_sees_a_mixin_and_a_late_attribute(tmp_path):
    (tmp_path / "mixin.py").write_text(
        "class Core:\n    step: int\n\n"
        "class Recording(Core):\n    def record(self):\n        self.step += 1\n\n"
        "class Trainer(Recording):\n    def __init__(self):\n        self.step = 0\n"
        "    def resize(self):\n        self.slots = []\n"
    )
    assert attributes_created_elsewhere(tmp_path) == [
        "mixin.py: Core declares step without creating them",
        "mixin.py:6: Recording.record creates self.step",
        "mixin.py:12: Trainer.resize creates self.slots",
    ]
