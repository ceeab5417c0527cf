"""The documentation site: every example on every page runs, and every page is in the nav.

(`.ci/run` also runs the README's docs command, `pip install -e ".[docs]" && mkdocs build
--strict`, in a fresh venv of its own: warnings are errors there.)"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
# Generated at build time (docs/_hooks.py), not written by hand.
PAGES = sorted(p for p in DOCS.rglob("*.md") if "generated" not in p.parts) \
    if DOCS.exists() else []
# The compatibility pages' examples run in tests/test_compat_vectors.py with their own count.
EXAMPLE_PAGES = [p for p in PAGES if p.name != "compat.md" and p.parent.name != "compat"]


@pytest.mark.skipif(not DOCS.exists(), reason="docs/ is not beside tests/")
@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if re.search(r"^\s*>>> ", page.read_text(), flags=re.M):  # a doctest prompt
        assert result.attempted > 0


@pytest.mark.skipif(not MKDOCS.exists(), reason="mkdocs.yml is not beside tests/")
def test_every_page_is_in_the_nav() -> None:
    nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", MKDOCS.read_text(), flags=re.M))
    pages = {str(p.relative_to(DOCS)) for p in PAGES}
    assert pages - nav == set(), "pages missing from mkdocs.yml's nav"
    assert nav - pages == set(), "nav entries without a page"


@pytest.mark.skipif(not DOCS.exists(), reason="docs/ is not beside tests/")
def test_snippets_name_existing_sections() -> None:
    # `--8<-- "FILE:section"` must name a section that FILE marks with start and end lines.
    for page in PAGES:
        for path, section in re.findall(r'--8<-- "([^":]+):([\w-]+)"', page.read_text()):
            text = (ROOT / path).read_text()
            assert f"--8<-- [start:{section}]" in text, (page.name, path, section)
            assert f"--8<-- [end:{section}]" in text, (page.name, path, section)


PACKAGE = ROOT / "consistent_hash"
# A Markdown reference link, [text][id] or [id][] (Python-Markdown allows one space or line
# break between the two): mkdocs-autorefs takes each for a cross-reference and fails the
# strict build when no such object exists.
_REFERENCE = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\s?\[[^\[\]]*\]")  # text: one nesting
_CODE_SPAN = re.compile(r"``.+?``|`[^`\n]+`")


def _docstrings() -> list[tuple[str, int, str]]:
    import ast

    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    line = node.body[0].lineno if node.body else 0
                    out.append((str(path.relative_to(ROOT)), line, doc))
    return out


@pytest.mark.skipif(not PACKAGE.exists(), reason="the package source is not beside tests/")
def test_docstrings_hold_no_markdown_reference_links() -> None:
    """The API pages render docstrings as Markdown (docstring_style: null), where a doctest
    line such as ``[mg.nodes[i] for i in mg.table][:3]`` is a reference link [..][:3] that the
    strict build refuses (in a fresh venv; issue 20).  Code belongs in ``...`` spans there."""
    import inspect

    bad = []
    for where, line, doc in _docstrings():
        text = _CODE_SPAN.sub("", inspect.cleandoc(doc))
        for m in _REFERENCE.finditer(text):
            bad.append(f"{where}:{line + text.count(chr(10), 0, m.start())}: {m.group(0)!r}")
    assert not bad, "\n".join(bad)
