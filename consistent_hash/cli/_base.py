"""The types every subcommand shares: the user-error type, the parser that raises it, and
what add_subparsers() returns."""

from __future__ import annotations

import argparse
from typing import Any, TypeAlias


class UserError(Exception):
    """A mistake in the command line or its inputs: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        raise UserError(message)


# What Parser.add_subparsers() returns: each subcommand module adds its parser to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"
