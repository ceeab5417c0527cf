"""One entry point for a load balancer's or proxy's configuration: tell which system wrote it,
and build that system's router.

``load(path)`` / ``from_text(text)`` recognise an nginx.conf (``upstream NAME { ... }``), a
haproxy.cfg (``backend`` / ``listen`` sections with ``server`` lines), an Envoy cluster
(YAML or JSON with ``load_assignment`` / ``lb_policy`` / ``clusters``) and a nutcracker
(twemproxy) pool file (YAML pools with ``servers:``), and hand the text to that system's
``from_config``. ``system=`` skips the detection; ``name=`` picks one upstream, backend,
cluster or pool where the file has several. This is what ``consistent-hash plan old.conf
new.conf`` uses, so a user sees what a balancer edit moves before deploying it.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Any, NamedTuple

__all__ = ["REGISTRY", "SYSTEMS", "NameNeeded", "System", "detect", "from_text", "load"]


class System(NamedTuple):
    """One system whose configuration the library reads: one row of ``REGISTRY``."""

    name: str      # system= here, --system on the command line
    module: str    # the module whose from_config(text, name=None) builds its router
    config: str    # what its configuration file is
    page: str      # the docs page that says how the router agrees with it


# The one registry of the systems: detect / from_text, the CLI's --system and the docs
# (tests/test_structure.py checks that every page exists and is in the docs' nav) read it.
REGISTRY = (
    System("nginx", "consistent_hash.compat.nginx", "nginx.conf (upstream blocks)",
           "agreeing-with-nginx.md"),
    System("haproxy", "consistent_hash.compat.haproxy", "haproxy.cfg (backend / listen)",
           "agreeing-with-haproxy.md"),
    System("envoy", "consistent_hash.compat.envoy", "an Envoy cluster (YAML or JSON)",
           "agreeing-with-envoy.md"),
    System("twemproxy", "consistent_hash.compat.twemproxy", "a nutcracker pool file (YAML)",
           "agreeing-with-twemproxy.md"),
)
SYSTEMS = tuple(s.name for s in REGISTRY)
MAX_CONFIG_BYTES = 16 << 20

_NGINX = re.compile(r"(?m)^[^#\n]*\bupstream\s+[^\s{;#]+\s*\{")
_HAPROXY = re.compile(r"(?m)^\s*(backend|listen)\s+\S+")
_HAPROXY_SERVER = re.compile(r"(?m)^\s*server\s+\S+\s+\S+")
_ENVOY = re.compile(r"""(?m)["']?(load_assignment|lb_policy|load_balancing_policy|"""
                    r"""static_resources|ring_hash_lb_config|maglev_lb_config)["']?\s*:""")
_ENVOY_DUMP = re.compile(r"envoy\.admin\.v\d\w*\.(ClustersConfigDump|BootstrapConfigDump)")
_TWEMPROXY_SERVERS = re.compile(r"(?m)^\s+servers\s*:")
_TWEMPROXY_KEYS = re.compile(r"(?m)^\s+(listen|distribution|hash|hash_tag|auto_eject_hosts)\s*:")


class NameNeeded(ValueError):
    """A configuration holds several upstreams, backends, clusters or pools and none was
    named: ``kind`` (their plural) and ``names`` say what to pick from, with ``name=`` here
    (``message("--name")`` says it as the command line does)."""

    def __init__(self, kind: str, names: list[str]) -> None:
        self.kind, self.names = kind, list(names)
        super().__init__(self.message("name="))

    def message(self, how: str) -> str:
        return (f"the configuration has several {self.kind}: pick one with {how} ("
                + ", ".join(map(repr, self.names)) + ")")


def detect(text: str) -> str:
    """Which system's configuration ``text`` is: one of ``SYSTEMS``; ValueError when it is
    none of them or could be more than one."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__!r}")
    found = []
    if _NGINX.search(text):
        found.append("nginx")
    if _ENVOY.search(text) or _ENVOY_DUMP.search(text):
        found.append("envoy")
    elif _TWEMPROXY_SERVERS.search(text) and _TWEMPROXY_KEYS.search(text):
        found.append("twemproxy")
    if not found and _HAPROXY.search(text) and _HAPROXY_SERVER.search(text):
        found.append("haproxy")
    if len(found) != 1:
        what = "none of them" if not found else "more than one: " + ", ".join(found)
        raise ValueError(f"cannot tell which system this configuration is for ({what}); "
                         f"pass system= (one of {', '.join(SYSTEMS)})")
    return found[0]


def from_text(text: str, *, system: str | None = None, name: str | None = None) -> Any:
    """The router of configuration ``text`` (see the module docstring)."""
    if system is None:
        system = detect(text)
    elif system not in SYSTEMS:
        raise ValueError(f"system must be one of {', '.join(map(repr, SYSTEMS))}, "
                         f"got {system!r}")
    module = importlib.import_module(REGISTRY[SYSTEMS.index(system)].module)
    return module.from_config(text, name=name)


def load(path: str | os.PathLike[str], *, system: str | None = None,
         name: str | None = None) -> Any:
    """The router of the configuration file at ``path`` (see the module docstring)."""
    size = os.path.getsize(path)
    if size > MAX_CONFIG_BYTES:
        raise ValueError(f"{os.fspath(path)!r}: {size} bytes is more than a configuration "
                         f"file ({MAX_CONFIG_BYTES} at most)")
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{os.fspath(path)!r} is not UTF-8 text (byte {e.start})") from None
    return from_text(text, system=system, name=name)
