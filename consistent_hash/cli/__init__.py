"""consistent-hash: see what consistent hashing does before you change a cluster.

  simulate   keys moved and load spread: hash % N vs the ring vs the other algorithms
             (the default command: python -m consistent_hash)
  plan       what changes from one layout to another: moved share, flows, hash ranges
  assign     route keys (text lines, CSV, Parquet) to nodes: key,node
  inspect    summarise a ring file
  ring       write a ring file for a node list
  migrate    migrate memcached|redis --from OLD --to NEW: copy the keys a resize moves
  demo       demo memcached: real servers, a join and a loss, hit rates ring vs modulo;
             demo resize: the hit rate through a resize, with and without migrate

A layout is a ring file (see consistent_hash.ringfile) or a node list: "a,b,c",
"a:2,b:1" (name:weight), or "@path" to a file with one "name [weight]" per line.
"""

from __future__ import annotations

import argparse
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
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    for command in SUBCOMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on argv (default: sys.argv[1:]); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, DEFAULT)
    handlers = {m.NAME: m.run for m in SUBCOMMANDS}
    try:
        args = parser().parse_args(argv)
        return handlers[args.command](args)
    except (UserError, argparse.ArgumentTypeError) as e:
        print(f"consistent-hash: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # e.g. `consistent-hash assign ... | head`: stop quietly, like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("consistent-hash: interrupted", file=sys.stderr)
        return 130
