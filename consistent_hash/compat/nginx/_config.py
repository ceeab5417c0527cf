"""Reading nginx.conf: its tokens and directives, its upstream blocks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from consistent_hash.compat.config import NameNeeded
from consistent_hash.compat.nginx._upstream import (
    NginxUpstream,
    _server_args,
)

# -- nginx.conf -------------------------------------------------------------------------------

_SPACE = " \t\r\n"


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """nginx's configuration tokens: ("word", text, line), (";", "", line), ("{", ...), ("}",
    ...).  Words may be quoted ('...' or "..."); a backslash escapes the next character
    (\\t \\r \\n become the control characters, \\" \\' \\\\ the character); # starts a
    comment where a word could start; ${...} inside a word stays in the word."""
    out: list[tuple[str, str, int]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c in _SPACE:
            line += c == "\n"
            i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in ";{}":
            out.append((c, "", line))
            i += 1
            continue
        start_line = line
        buf: list[str] = []
        if c in "\"'":
            q = c
            i += 1
            while True:
                if i >= n:
                    raise ValueError(f"line {start_line}: unterminated {q}-quoted string")
                c = text[i]
                if c == "\\" and i + 1 < n:
                    buf.append(_unescape(text[i + 1]))
                    line += text[i + 1] == "\n"
                    i += 2
                    continue
                if c == q:
                    i += 1
                    break
                line += c == "\n"
                buf.append(c)
                i += 1
            if i < n and text[i] not in _SPACE + ";{":
                raise ValueError(f"line {line}: unexpected {text[i]!r} after a quoted string")
            out.append(("word", "".join(buf), start_line))
            continue
        variable = False
        while i < n:
            c = text[i]
            if c == "{" and variable:
                buf.append(c)
                i += 1
                continue
            variable = c == "$"
            if c == "\\" and i + 1 < n:
                buf.append(_unescape(text[i + 1]))
                line += text[i + 1] == "\n"
                i += 2
                continue
            if c in _SPACE or c in ";{":
                break
            buf.append(c)
            i += 1
        out.append(("word", "".join(buf), start_line))
    return out


def _unescape(c: str) -> str:
    if c in "\"'\\":
        return c
    return {"t": "\t", "r": "\r", "n": "\n"}.get(c, "\\" + c)


@dataclass
class _Directive:
    name: str
    args: list[str]
    line: int
    block: list[_Directive] | None = None


def _parse(text: str) -> list[_Directive]:
    toks = _tokens(text)
    root: list[_Directive] = []
    stack: list[list[_Directive]] = [root]
    words: list[tuple[str, int]] = []
    for kind, value, line in toks:
        if kind == "word":
            words.append((value, line))
        elif kind == ";":
            if not words:
                raise ValueError(f"line {line}: unexpected ';'")
            stack[-1].append(_Directive(words[0][0], [w for w, _ in words[1:]], words[0][1]))
            words = []
        elif kind == "{":
            if not words:
                raise ValueError(f"line {line}: unexpected '{{'")
            d = _Directive(words[0][0], [w for w, _ in words[1:]], words[0][1], [])
            stack[-1].append(d)
            stack.append(d.block)  # type: ignore[arg-type]
            words = []
        else:
            if words:
                raise ValueError(f"line {line}: unexpected '}}'")
            if len(stack) == 1:
                raise ValueError(f"line {line}: '}}' without an open block")
            stack.pop()
    if words:
        raise ValueError(f"line {words[0][1]}: directive {words[0][0]!r} has no ';'")
    if len(stack) > 1:
        raise ValueError("unexpected end of file, expecting '}'")
    return root


@dataclass
class Upstream:
    """One ``upstream`` block as read from a config: its name, its ``hash`` key and mode
    (None when it balances otherwise), and its servers as ``(address, weight, down)``."""

    name: str
    line: int
    key: str | None
    consistent: bool
    method: str
    servers: list[tuple[str, int, bool]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the line of each server

    def router(self) -> NginxUpstream:
        if self.key is None:
            raise ValueError(f"upstream {self.name!r} (line {self.line}) balances with "
                             f"{self.method}, not hash: NginxUpstream reproduces only "
                             "'hash $key;' and 'hash $key consistent;'")
        if not self.servers:
            raise ValueError(f"upstream {self.name!r} (line {self.line}) has no servers")
        first: dict[str, int] = {}
        for (address, _, _), line in zip(self.servers, self.lines, strict=False):
            if address in first:
                raise ValueError(f"line {line}: duplicate server {address!r} in upstream "
                                 f"{self.name!r} (first on line {first[address]}): nginx would "
                                 "give both the same points; write it once with the summed "
                                 "weight")
            first[address] = line
        return NginxUpstream([a for a, _, _ in self.servers],
                             {a: w for a, w, _ in self.servers},
                             consistent=self.consistent,
                             down=[a for a, _, d in self.servers if d])


_METHODS = ("hash", "ip_hash", "least_conn", "random", "least_time", "sticky")


def _walk(ds: list[_Directive]) -> Iterable[_Directive]:
    for d in ds:
        yield d
        if d.block is not None:
            yield from _walk(d.block)


def parse_upstreams(text: str) -> list[Upstream]:
    """Every ``upstream`` block of an nginx configuration text, in order."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__!r}")
    out: list[Upstream] = []
    for d in _walk(_parse(text)):
        if d.name != "upstream" or d.block is None:
            continue
        if len(d.args) != 1:
            raise ValueError(f"line {d.line}: upstream takes one name")
        if any(u.name.lower() == d.args[0].lower() for u in out):
            raise ValueError(f"line {d.line}: duplicate upstream {d.args[0]!r}")
        up = Upstream(d.args[0], d.line, None, False, "round robin")
        hash_seen = False
        for s in d.block:
            if s.name in _METHODS:
                up.method = s.name
                if s.name == "hash":
                    if not 1 <= len(s.args) <= 2:
                        raise ValueError(f"line {s.line}: hash takes a key and optionally "
                                         "'consistent'")
                    if len(s.args) == 2 and s.args[1] != "consistent":
                        raise ValueError(f"line {s.line}: invalid parameter {s.args[1]!r} "
                                         "(nginx accepts only 'consistent')")
                    up.key, up.consistent = s.args[0], len(s.args) == 2
                    hash_seen = True
                else:
                    up.key, up.consistent = None, False
            elif s.name == "server":
                if not s.args:
                    raise ValueError(f"line {s.line}: server needs an address")
                params = s.args[1:]
                if "backup" in params and not hash_seen:
                    # accepted before `hash` is read; nginx's hash never uses backup servers
                    continue
                try:
                    address, w, down = _server_args(s.args[0], params)
                except ValueError as e:
                    raise ValueError(f"line {s.line}: {e}") from None
                up.servers.append((address, 1 if w is None else w, down))
                up.lines.append(s.line)
        out.append(up)
    return out


def from_config(text: str, name: str | None = None) -> NginxUpstream:
    """The router of an nginx.conf's ``upstream`` balanced by ``hash`` (a whole config or a
    bare ``upstream NAME { ... }`` block).  Several upstreams need ``name=``; one that does
    not use ``hash`` is a ValueError."""
    ups = parse_upstreams(text)
    if not ups:
        raise ValueError("no upstream block in the configuration")
    if name is None:
        if len(ups) > 1:
            raise NameNeeded("upstreams", [u.name for u in ups])
        return ups[0].router()
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__!r}")
    for u in ups:
        if u.name == name:
            return u.router()
    raise ValueError(f"no upstream {name!r} in the configuration (it has: "
                     + ", ".join(u.name for u in ups) + ")")
