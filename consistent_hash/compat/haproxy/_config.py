"""Reading haproxy.cfg: the sections, a backend's servers and its balance / hash-type."""

from __future__ import annotations

import re
from typing import Any

from consistent_hash.compat.config import NameNeeded
from consistent_hash.compat.haproxy._backend import (
    FUNCTIONS,
    MAX_ID,
    MAX_WEIGHT,
    HAProxyBackend,
    _check_name,
)

# -- haproxy.cfg ---------------------------------------------------------------------------------

_SECTIONS = {"global", "defaults", "frontend", "backend", "listen", "peers", "resolvers",
             "userlist", "mailers", "program", "http-errors", "ring", "cache", "fcgi-app",
             "dynamic-update"}
_HASH_BALANCE = ("hdr(", "uri", "url_param", "hash", "rdp-cookie")


def _words(line: str, lineno: int) -> list[str]:
    """A config line split as HAProxy splits it: blanks separate words, '#' starts a comment,
    a backslash escapes the next character, "..." and '...' quote (no variable expansion)."""
    out: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(line)
    quote = ""
    while i < n:
        c = line[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < n:
                i += 1
                cur.append(line[i])
            else:
                cur.append(c)
        elif c in " \t\r\n":
            if have:
                out.append("".join(cur))
                cur, have = [], False
        elif c == "#":
            break
        elif c in "\"'":
            quote, have = c, True
        elif c == "\\" and i + 1 < n:
            i += 1
            cur.append(line[i])
            have = True
        else:
            cur.append(c)
            have = True
        i += 1
    if quote:
        raise ValueError(f"line {lineno}: unmatched quote")
    if have:
        out.append("".join(cur))
    return out


class _Section:
    def __init__(self, kind: str, name: str, lineno: int, parent: _Section | None) -> None:
        self.kind, self.name, self.lineno = kind, name, lineno
        self.balance: tuple[str, int] | None = parent.balance if parent else None
        self.hash_type: tuple[list[str], int] | None = parent.hash_type if parent else None
        self.mode: str = parent.mode if parent else "tcp"
        self.allbackups: bool = parent.allbackups if parent else False
        self.default_server: dict[str, Any] = dict(parent.default_server) if parent else {}
        self.servers: list[tuple[str, dict[str, Any], int]] = []


def _server_options(words: list[str], lineno: int, base: dict[str, Any]) -> dict[str, Any]:
    opts = dict(base)
    k = 0
    while k < len(words):
        w = words[k]
        if w in ("weight", "id"):
            if k + 1 >= len(words):
                raise ValueError(f"line {lineno}: '{w}' expects an integer argument")
            v = words[k + 1]
            if not re.fullmatch(r"[+-]?\d+", v):
                raise ValueError(f"line {lineno}: '{w}' expects an integer, got {v!r}")
            opts[w] = int(v)
            k += 2
            continue
        if w == "disabled":
            opts["disabled"] = True
        elif w == "enabled":
            opts["disabled"] = False
        elif w == "backup":
            opts["backup"] = True
        elif w == "no-backup":
            opts["backup"] = False
        k += 1
    return opts


def _parse(text: str) -> list[_Section]:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__!r}")
    sections: list[_Section] = []
    defaults: dict[str, _Section] = {}
    last_defaults: _Section | None = None
    cur: _Section | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        words = _words(line, lineno)
        if not words:
            continue
        kw = words[0]
        if kw in _SECTIONS:
            name = words[1] if len(words) > 1 and words[1] != "from" else ""
            # a proxy inherits from the last defaults section above it, a defaults section
            # from nothing; either takes the one "from" names instead
            parent = None if kw == "defaults" else last_defaults
            if "from" in words[1:]:
                k = words.index("from", 1)
                if k + 1 >= len(words) or words[k + 1] not in defaults:
                    raise ValueError(f"line {lineno}: 'from' names no defaults section "
                                     "defined above")
                parent = defaults[words[k + 1]]
            if kw in ("backend", "listen", "frontend", "defaults"):
                if kw != "defaults" and not name:
                    raise ValueError(f"line {lineno}: '{kw}' needs a name")
                cur = _Section(kw, name, lineno, parent)
                if kw == "defaults":
                    last_defaults = cur
                    if name:
                        defaults[name] = cur
                else:
                    sections.append(cur)
            else:
                cur = None
            continue
        if cur is None:
            continue
        if kw == "balance":
            if len(words) < 2:
                raise ValueError(f"line {lineno}: 'balance' needs an algorithm")
            cur.balance = (" ".join(words[1:]), lineno)
        elif kw == "hash-type":
            cur.hash_type = (words[1:], lineno)
        elif kw == "mode" and len(words) > 1:
            cur.mode = words[1]
        elif kw == "option" and words[1:2] == ["allbackups"]:
            cur.allbackups = True
        elif kw == "no" and words[1:3] == ["option", "allbackups"]:
            cur.allbackups = False
        elif kw == "default-server":
            if "id" in words[1:]:
                raise ValueError(f"line {lineno}: 'id' is not allowed on default-server")
            cur.default_server = _server_options(words[1:], lineno, cur.default_server)
        elif kw in ("server", "server-template"):
            if cur.kind == "defaults" or cur.kind == "frontend":
                raise ValueError(f"line {lineno}: '{kw}' is not allowed in a {cur.kind} "
                                 "section")
            if kw == "server-template":
                raise ValueError(f"line {lineno}: server-template is not supported: write "
                                 "the servers out")
            if len(words) < 3:
                raise ValueError(f"line {lineno}: 'server' needs a name and an address")
            try:
                _check_name(words[1])
            except ValueError as e:
                raise ValueError(f"line {lineno}: {e}") from None
            cur.servers.append((words[1], _server_options(words[3:], lineno,
                                                          cur.default_server), lineno))
    return sections


def _hash_type(words: list[str], lineno: int) -> tuple[str | None, bool | None]:
    """(function, avalanche) of a hash-type line, checked as HAProxy checks it."""
    if not words or words[0] not in ("consistent", "map-based"):
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'consistent' and "
                         "'map-based'")
    if words[0] != "consistent":
        raise ValueError(f"line {lineno}: hash-type {words[0]} is not consistent hashing "
                         "(only 'hash-type consistent' is reproduced)")
    if len(words) == 1:
        return None, None  # sdbm + avalanche
    if words[1] not in FUNCTIONS:
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'sdbm', 'djb2', 'crc32', "
                         f"or 'wt6' hash functions, got {words[1]!r}")
    if len(words) > 2 and words[2] != "avalanche":
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'avalanche' as a "
                         f"modifier, got {words[2]!r}")
    return words[1], len(words) > 2


def from_config(text: str, name: str | None = None) -> HAProxyBackend:
    """An ``HAProxyBackend`` from haproxy.cfg text: a whole file, or one ``backend`` or
    ``listen`` section.  A file with several backends (sections with ``server`` lines) needs
    ``name=``.  ``balance`` and ``hash-type`` may come from a ``defaults`` section (the last
    one above, or the one named by ``from``), as HAProxy inherits them."""
    sections = [s for s in _parse(text) if s.kind in ("backend", "listen")]
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__!r}")
        chosen = [s for s in sections if s.name == name]
        if not chosen:
            raise ValueError(f"no backend or listen section named {name!r}; the config has "
                             f"{', '.join(repr(s.name) for s in sections) or 'none'}")
        sec = chosen[0]
    else:
        with_servers = [s for s in sections if s.servers] or sections
        if not with_servers:
            raise ValueError("the config has no backend or listen section")
        if len(with_servers) > 1:
            raise NameNeeded("backends", [s.name for s in with_servers])
        sec = with_servers[0]
    where = f"{sec.kind} {sec.name!r} (line {sec.lineno})"
    if sec.balance is None:
        raise ValueError(f"{where} has no 'balance' line, so HAProxy balances it round robin, "
                         "not by a hash")
    algo, bline = sec.balance
    if not algo.startswith(_HASH_BALANCE) and algo.split()[0] != "source":
        raise ValueError(f"line {bline}: 'balance {algo}' does not hash a key")
    if sec.mode != "http" and algo.startswith(("hdr(", "uri", "url_param")):
        raise ValueError(f"line {bline}: 'balance {algo}' needs mode http (HAProxy falls "
                         f"back to round robin in mode {sec.mode})")
    if sec.hash_type is None:
        raise ValueError(f"{where} has no 'hash-type consistent' line: HAProxy's default is "
                         "map-based, not consistent hashing")
    function, avalanche = _hash_type(*sec.hash_type)
    names, weights, ids, dis, bck = [], {}, {}, [], []
    seen: dict[str, int] = {}
    used_ids: dict[int, int] = {}
    for sname, opts, lineno in sec.servers:
        if sname in seen:
            raise ValueError(f"line {lineno}: server {sname!r} is already defined at line "
                             f"{seen[sname]}")
        seen[sname] = lineno
        names.append(sname)
        if "weight" in opts:
            if not 0 <= opts["weight"] <= MAX_WEIGHT:
                raise ValueError(f"line {lineno}: weight of server {sname} is not within 0 "
                                 f"and 256 ({opts['weight']})")
            weights[sname] = opts["weight"]
        if "id" in opts:
            i = opts["id"]
            if not 1 <= i <= MAX_ID:
                raise ValueError(f"line {lineno}: custom id has to be > 0 (and fit 31 bits)")
            if i in used_ids:
                raise ValueError(f"line {lineno}: custom id {i} already used at line "
                                 f"{used_ids[i]}")
            used_ids[i] = lineno
            ids[sname] = i
        if opts.get("disabled"):
            dis.append(sname)
        if opts.get("backup"):
            bck.append(sname)
    return HAProxyBackend(names, weights, ids=ids, disabled=dis, backup=bck,
                          function=function, avalanche=avalanche, allbackups=sec.allbackups)
