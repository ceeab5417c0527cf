"""MkDocs hooks: before every build, draw the figures (docs/_figures.py) and write the CLI
reference from the CLI's own parser (docs/generated/cli-help.md), so neither can go stale."""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _help(argv: list[str]) -> str:
    from consistent_hash.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*argv, "--help"])
    return out.getvalue().rstrip()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged: no rebuild loop in serve
        path.write_text(text)


def cli_reference() -> str:
    from consistent_hash.cli import COMMANDS

    parts = ["## consistent-hash --help", "", "```", _help([]), "```", ""]
    for name in COMMANDS:
        parts += [f"## consistent-hash {name} --help", "", "```", _help([name]), "```", ""]
    return "\n".join(parts)


def on_pre_build(config: Any) -> None:
    spec = importlib.util.spec_from_file_location("_figures", HERE / "_figures.py")
    assert spec is not None and spec.loader is not None
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    figures.build()
    _write(HERE / "generated" / "cli-help.md", cli_reference())
