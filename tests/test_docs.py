"""The docs hold together: the README stays a newcomer's first page (at most README_LINES lines), and
every link in README.md and docs/ resolves: a relative file link to a file or folder that exists, an
#anchor to a heading of the target Markdown file, by GitHub's rules."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LINES = 300

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.*?)\1")
# [text](target) and ![alt](target); the target ends at the first space (a "title" may follow)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, code spans blanked."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercase, punctuation dropped, spaces to hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file, repeated headings numbered as GitHub numbers them."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    """Each link of `path` that does not resolve, as 'file:line: target (why)'."""
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not resolved.exists():
                problems.append(f"{where} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where} (no heading #{anchor} in {resolved.relative_to(ROOT)})")
    return problems


def test_readme_is_a_first_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, (
        f"README.md has {len(lines)} lines, more than {README_LINES}: the manual goes in docs/guide/"
    )


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(path):
    problems = broken_links(path)
    assert not problems, "\n".join(problems)


def test_the_checker_sees_a_broken_link_and_anchor(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# Title\n## The hash grid's roads: `--grid` (fast)\n## Title\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-hash-grids-roads---grid-fast) [ok](other.md#title-1) [ok](#here)\n"
        "## Here\n[gone](missing.md) [bad](other.md#nothing) [web](https://example.com/x.md#y)\n"
        "```\n[in code](missing.md)\n```\n`[span](missing.md)`\n"
    )
    assert broken_links(page) == [
        "page.md:3: missing.md (no such file)",
        "page.md:3: other.md#nothing (no heading #nothing in other.md)",
    ]
