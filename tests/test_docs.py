"""The documentation site: every example on every page runs, and every page is in the nav.

(`.ci/run` also builds the site with `mkdocs build --strict`, warnings as errors.)"""

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
