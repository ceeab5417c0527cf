"""A layout on the command line: a ring file, a node list, or a proxy's configuration file."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from consistent_hash import HashRing, ringfile
from consistent_hash._hashes import PUBLIC
from consistent_hash._validate import is_ip
from consistent_hash.cli._args import (
    seed,
    vnodes,
)
from consistent_hash.cli._base import (
    UserError,
)

# -- layouts ---------------------------------------------------------------------------------

def add_layout_options(parser: argparse.ArgumentParser) -> None:
    """The ring parameters a node list is built with."""
    parser.add_argument("--vnodes", type=vnodes, default=160,
                        help="vnodes per unit weight, for node lists (160)")
    parser.add_argument("--hash", default="xxh3", choices=["xxh3", "xxh64", "murmur3", "md5"],
                        help="hash for node lists (xxh3)")
    parser.add_argument("--seed", type=seed, default=0, help="hash seed for node lists (0)")


# A node list: "a,b,c" (weight 1 each), "a=2,b=1,10.0.0.1:11211=3" (name=weight), or "@path"
# to a file with one node a line ("name" or "name=weight"; blank lines and "#" comments are
# skipped). A name is taken as written, colons included, so "10.0.0.1:11211" is a name (as
# HashRing(["10.0.0.1:11211"]) names it). The old "name:weight" form is refused, not guessed:
# an entry without "=" whose text after its last colon is a number is taken as a name only if
# it reads as an address: a port after an IP address ("10.0.0.1:80", "[::1]:11211",
# "::1:11211"), or a port from 1024 up after a host name ("cache-1:11211"); anything else
# ("a:2", "a:0.5", "10.0.0.1:11211:2") is an error saying how to write the weight (a name like
# "cache-1:80" is written "cache-1:80=1").
WEIGHTS_HELP = "write a weight as name=weight, e.g. a=2,b=1,10.0.0.1:11211=3"
MAX_NODES = 100_000
# The positions a node list may build (nodes x vnodes x weight): 2**24, about 200 MB.
MAX_POSITIONS = 1 << 24


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _ip(text: str) -> bool:
    """An IP address literal: IPv4, IPv6 (a zone allowed) or "[IPv6]"."""
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return is_ip(text)


def _host_port(head: str, port: str) -> bool:
    """Whether head:port reads as an address: a port after an IP address literal, or a port
    from 1024 up after a host name (not itself "host:port")."""
    if not (port.isascii() and port.isdigit() and not port.startswith("0")
            and int(port) <= 65535):
        return False
    if _ip(head):
        return True
    return bool(head) and ":" not in head and int(port) >= 1024


def parse_node(entry: str, where: str = "") -> tuple[str, float]:
    """One node entry -> (name, weight); ``where`` names its place for errors."""
    at = f"{where}: " if where else ""
    name, eq, w = entry.rpartition("=")
    if not eq:
        name, w = entry, ""
        head, colon, tail = entry.rpartition(":")
        if colon and _number(tail.strip()) and not _host_port(head, tail):
            guess = f" ({head}={tail})" if head else ""
            raise UserError(f"{at}node {entry!r} is ambiguous: a weight is written "
                            f"name=weight{guess}; a name ending in ':{tail}' is written "
                            f"{entry}=1")
    name = name.strip()
    if not name:
        raise UserError(f"{at}node {entry!r} has no name ({WEIGHTS_HELP})")
    if any(c.isspace() for c in name):
        raise UserError(f"{at}node {name!r}: a name has no spaces ({WEIGHTS_HELP})")
    if not eq:
        return name, 1.0
    try:
        weight = float(w)
    except ValueError:
        raise UserError(f"{at}bad weight {w!r} for node {name!r} ({WEIGHTS_HELP})") from None
    if not (math.isfinite(weight) and weight > 0):
        raise UserError(f"{at}node {name!r}: the weight must be a number > 0, got {w!r}")
    return name, weight


def parse_nodes(text: str) -> dict[str, float]:
    """'a,b,c' | 'a=2,b=1' | '@file' (one 'name' or 'name=weight' a line) -> {name: weight}."""
    entries: list[tuple[str, str]] = []
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, "rb") as f:
                data = f.read(64 << 20)
        except OSError as e:
            raise UserError(f"cannot read node list {path!r}: {e.strerror}") from None
        for n, line in enumerate(data.split(b"\n"), 1):
            try:
                s = line.decode("utf-8-sig" if n == 1 else "utf-8").strip()
            except UnicodeDecodeError:
                raise UserError(f"{path}: line {n} is not UTF-8 text") from None
            if s and not s.startswith("#"):
                entries.append((s, f"{path}: line {n}"))
    else:
        entries = [(p.strip(), "") for p in text.split(",") if p.strip()]
    if not entries:
        raise UserError(f"empty node list {text!r}")
    if len(entries) > MAX_NODES:
        raise UserError(f"{len(entries):,} nodes: a node list holds at most {MAX_NODES:,}")
    out: dict[str, float] = {}
    for entry, where in entries:
        name, weight = parse_node(entry, where)
        if name in out:
            raise UserError(f"{where + ': ' if where else ''}node {name!r} is listed twice")
        out[name] = weight
    return out


def check_positions(total: float, what: str = "the layout") -> None:
    """Refuse a ring of more than MAX_POSITIONS positions before building it."""
    if total > MAX_POSITIONS:
        raise UserError(f"{what} needs {total:,.0f} ring positions (nodes x weight x vnodes); "
                        f"at most {MAX_POSITIONS:,}: lower --vnodes or the weights")


def _is_ring_path(spec: str) -> bool:
    return not spec.startswith("@") and ("," not in spec or os.path.exists(spec)) and (
        os.path.exists(spec) or os.sep in spec or "/" in spec
        or spec.endswith((".json", ".ring", ".txt", ".csv")))


def is_ring_file(spec: str) -> bool:
    """Whether a layout spec names a ring file (rather than a node list)."""
    return _is_ring_path(spec)


def _config_file(spec: str) -> bool:
    """An existing file that is a proxy's or load balancer's configuration (nginx.conf,
    haproxy.cfg, an Envoy cluster, a nutcracker pool file), not a ring file."""
    if spec.startswith("@") or not os.path.isfile(spec):
        return False
    from consistent_hash.compat import config

    try:
        with open(spec, "rb") as f:
            head = f.read(config.MAX_CONFIG_BYTES + 1)
        text = head.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    if '"consistent_hash.ring"' in text:
        return False
    try:
        config.detect(text)
    except ValueError:
        return False
    return True


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """The options of a layout given as a proxy's configuration file."""
    parser.add_argument("--name", metavar="NAME",
                        help="the upstream, backend, cluster or pool of a configuration file "
                             "that has several")
    from consistent_hash.compat.config import SYSTEMS

    parser.add_argument("--system", choices=SYSTEMS,
                        help="the system a configuration file is for (detected by default)")


def layout_from_spec(spec: str, args: argparse.Namespace) -> Any:
    """As router_from_spec, and also a proxy's configuration file (see
    consistent_hash.compat.config): its router, with --name and --system."""
    if _config_file(spec) or (getattr(args, "system", None) and os.path.isfile(spec)):
        from consistent_hash.compat import config

        try:
            return config.load(spec, system=getattr(args, "system", None),
                               name=getattr(args, "name", None))
        except config.NameNeeded as e:
            raise UserError(f"{spec}: {e.message('--name')}") from None
        except ImportError as e:
            raise UserError(f"{spec}: {e}") from None
        except (ValueError, TypeError, KeyError, OSError) as e:
            raise UserError(f"{spec}: {e}") from None
    return router_from_spec(spec, args)


def router_from_spec(spec: str, args: argparse.Namespace) -> HashRing:
    """What a command line names a layout with, as a router: a ring file (the path of an
    existing file, see consistent_hash.ringfile), "@file" (a nodes file) or a node list, built
    with the layout options in args (--vnodes, --hash, --seed).

    Every subcommand that takes a layout goes through here; another kind of layout file (a
    proxy's configuration: nginx.conf, haproxy.cfg, Envoy or twemproxy YAML) is one more
    branch that recognises its file and returns its router."""
    if _is_ring_path(spec):
        if not os.path.exists(spec):
            raise UserError(f"ring file {spec!r} not found (a node list is 'a,b,c')")
        if os.path.isdir(spec):
            raise UserError(f"{spec!r} is a directory, not a ring file")
        try:
            return ringfile.load(spec)
        except (ValueError, OSError, UnicodeDecodeError) as e:
            raise UserError(f"{spec}: {e}") from None
    weights = parse_nodes(spec)
    check_positions(sum(weights.values()) * args.vnodes)
    bits = PUBLIC.get(args.hash, 64)
    if args.seed >> bits:
        raise UserError(f"--seed {args.seed}: --hash {args.hash} takes "
                        + ("no seed" if not bits else f"a seed from 0 to 2**{bits} - 1"))
    try:
        return HashRing(weights, vnodes=args.vnodes, hash=args.hash, seed=args.seed)
    except (TypeError, ValueError, OverflowError) as e:
        raise UserError(str(e)) from None
