"""consistent-hash: see what consistent hashing does before you change a cluster.

  simulate   keys moved and load spread: hash % N vs the ring vs the other algorithms
             (the default command: python -m consistent_hash)
  plan       what changes from one layout to another: moved share, flows, hash ranges
  assign     route keys (text lines, CSV, Parquet) to nodes: CSV, Parquet or JSON lines
  inspect    summarise a ring file
  ring       write a ring file for a node list
  migrate    migrate memcached|redis --from OLD --to NEW: copy the keys a resize moves
  demo       demo memcached: real servers, a join and a loss, hit rates ring vs modulo;
             demo resize: the hit rate through a resize, with and without migrate

A layout is a ring file (see consistent_hash.ringfile) or a node list: "a,b,c", names as
written ("10.0.0.1:11211,10.0.0.2:11211"), a weight as name=weight ("a=2,b=1"), or "@path"
to a file with one "name" or "name=weight" per line. Every subcommand takes --json for
machine-readable output; user errors are one line on stderr with exit status 2.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence
from typing import Protocol

from consistent_hash import __version__
from consistent_hash.cli import assign, demo, inspect, migrate, plan, ring, simulate
from consistent_hash.cli._common import Parser, Subparsers, UserError


class _Subcommand(Protocol):
    """A module of this package that is one subcommand."""

    NAME: str

    def add_parser(self, subparsers: Subparsers) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


# In the order --help lists them; a new subcommand is a module plus its line here.
SUBCOMMANDS: tuple[_Subcommand, ...] = (simulate, plan, assign, inspect, migrate, demo,
                                         ring)
COMMANDS = tuple(m.NAME for m in SUBCOMMANDS)
DEFAULT = simulate.NAME  # what runs when no subcommand is named; it takes its options directly


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="consistent-hash", description=__doc__,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"consistent_hash {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(sub)
    p.epilog = _default_options(sub.choices[DEFAULT])
    return p


def _default_options(default: argparse.ArgumentParser) -> str:
    """The top-level help's epilog: the options of the default command, which run without
    naming it (``python -m consistent_hash --keys 100000 --json``)."""
    f = argparse.HelpFormatter("consistent-hash", max_help_position=26)
    f.start_section(f"options of the default command, {DEFAULT} (python -m consistent_hash "
                    "--keys 100000 --json)")
    f.add_arguments([a for a in default._actions if a.option_strings
                     and a.help is not argparse.SUPPRESS and "-h" not in a.option_strings])
    f.end_section()
    return (f.format_help().rstrip() + "\n\n`consistent-hash COMMAND --help` lists a "
            "command's options.")


def _invalid_choice(word: str) -> UserError:
    near = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return UserError(f"argument COMMAND: invalid choice: {word!r} (choose from "
                     f"{', '.join(COMMANDS)}){hint}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on argv (default: sys.argv[1:]); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    handlers = {m.NAME: m.run for m in SUBCOMMANDS}
    try:
        if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
            raise _invalid_choice(argv[0])
        if not argv or argv[0] not in (*COMMANDS, "-h", "--help", "--version"):
            argv.insert(0, DEFAULT)
        args = parser().parse_args(argv)
        return handlers[args.command](args)
    except (UserError, argparse.ArgumentTypeError) as e:
        return _fail(str(e))
    except MemoryError:
        return _fail("out of memory: try a smaller input or fewer --keys")
    except BrokenPipeError:
        # e.g. `consistent-hash assign ... | head`: stop quietly, like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("consistent-hash: interrupted", file=sys.stderr)
        return 130


def _fail(message: str) -> int:
    line = " ".join(message.split())  # one line, whatever the message held
    print(f"consistent-hash: error: {line}", file=sys.stderr)
    return 2
