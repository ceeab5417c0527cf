"""A pure-Python model of HAProxy 2.6's ``hash-type consistent``, written from its sources
(src/hash.c, include/haproxy/intops.h full_hash, src/lb_chash.c chash_init_server_tree and
chash_get_server_hash, src/cfgparse.c server id assignment), not from consistent_hash.

It keeps HAProxy's own structure: a sorted tree of (point, server) and a lookup that takes
the node at or after the hash and the node before it and returns the nearer one (the one
before on a tie), wrapping round at both ends.  consistent_hash turns the same rule into
midpoint positions; this model does not, so the two are independent.
"""

from __future__ import annotations

import bisect

M32 = 0xFFFFFFFF


def sdbm(data: bytes) -> int:
    h = 0
    for c in data:
        h = (c + (h << 6) + (h << 16) - h) & M32
    return h


def djb2(data: bytes) -> int:
    h = 5381
    for c in data:
        h = ((h << 5) + h + c) & M32
    return h


def _rotl(x: int, r: int) -> int:
    # HAProxy: (x << r) | (x >> (32 - r)); at r = 0 the right shift by 32 leaves x on x86
    return ((x << r) | (x >> (32 - r))) & M32 if r else x


def wt6(data: bytes) -> int:
    h0, h1 = 0xA53C965A, 0x5CA6953A
    step0, step1 = 6, 18
    for t in data:
        h0 = ~(h0 ^ t) & M32
        h1 = ~(h1 + t) & M32
        t = _rotl(h1, step0)
        h1 = _rotl(h0, step1)
        h0 = t
        t = ((h0 >> 16) ^ h1) & 0xFFFF
        step0 = t & 0x1F
        step1 = t >> 11
    return h0 ^ h1


def crc32(data: bytes) -> int:
    h = M32
    for c in data:
        h ^= c
        for _ in range(8):
            h = (h >> 1) ^ (0xEDB88320 if h & 1 else 0)
    return h ^ M32


def full_hash(a: int) -> int:
    a &= M32
    a = ((a + 0x7ED55D16) + (a << 12)) & M32
    a = ((a ^ 0xC761C23C) ^ (a >> 19)) & M32
    a = ((a + 0x165667B1) + (a << 5)) & M32
    a = ((a + 0xD3A2646C) ^ (a << 9)) & M32
    a = ((a + 0xFD7046C5) + (a << 3)) & M32
    a = ((a ^ 0xB55A4F09) ^ (a >> 16)) & M32
    return (a * 3221225473) & M32


FUNCS = {"sdbm": sdbm, "djb2": djb2, "wt6": wt6, "crc32": crc32}


def key_hash(data: bytes, function: str, avalanche: bool) -> int:
    h = FUNCS[function](data)
    return full_hash(h) if avalanche else h


def puids(servers: list[dict]) -> list[int]:
    """cfgparse.c: next_id = 1; a server without id gets get_next_id(used, next_id); next_id
    is incremented after every server."""
    used = {s["id"] for s in servers if s.get("id")}
    out, next_id = [], 1
    for s in servers:
        if s.get("id"):
            out.append(s["id"])
        else:
            while next_id in used:
                next_id += 1
            used.add(next_id)
            out.append(next_id)
        next_id += 1
    return out


class Backend:
    """servers: dicts with name, weight (default 1), id, disabled, backup, in config order."""

    def __init__(self, servers: list[dict], function: str = "sdbm", avalanche: bool = True,
                 allbackups: bool = False) -> None:
        self.function, self.avalanche = function, avalanche
        ids = puids(servers)
        usable = [(s, p) for s, p in zip(servers, ids, strict=True) if s.get("weight", 1) > 0
                  and not s.get("disabled")]
        act = [(s, p) for s, p in usable if not s.get("backup")]
        bck = [(s, p) for s, p in usable if s.get("backup")]
        self.fbck = None
        if not act and bck and not allbackups:
            self.fbck = bck[0][0]["name"]  # lbprm.fbck: every key, no hashing
        tree = act or bck
        nodes = []
        for s, p in tree:
            for j in range(s.get("weight", 1) * 16):
                nodes.append((full_hash((p * 4096 + j) & M32), s["name"]))
        nodes.sort(key=lambda x: x[0])
        self.keys = [k for k, _ in nodes]
        self.owner = [n for _, n in nodes]

    def get(self, data: bytes) -> str | None:
        return self.get_hash(key_hash(data, self.function, self.avalanche))

    def get_hash(self, h: int) -> str | None:
        """chash_get_server_hash for a 32-bit hash (fbck: every key, not hashed)."""
        if self.fbck is not None:
            return self.fbck
        if not self.keys:
            return None
        i = bisect.bisect_left(self.keys, h)  # eb32_lookup_ge
        nxt = i if i < len(self.keys) else 0  # none: eb32_first
        prv = nxt - 1 if nxt > 0 else len(self.keys) - 1  # eb32_prev, or eb32_last
        dp = (h - self.keys[prv]) & M32
        dn = (self.keys[nxt] - h) & M32
        return self.owner[prv] if dp <= dn else self.owner[nxt]


def hdr_value(raw: bytes) -> bytes:
    """http_find_header (src/http_htx.c) without the full flag: skip leading LWS, end at
    http_find_hdr_value_end (the first ',' outside "..." with \\-pairs), drop trailing LWS.
    (HAProxy's H1 parser already removed the OWS around the whole field value.)"""
    lws = b" \t\r\n"
    s = 0
    while s < len(raw) and raw[s] in lws:
        s += 1
    e, quoted, qdpair = s, False, False
    while e < len(raw):
        c = raw[e:e + 1]
        if qdpair:
            qdpair = False
        elif quoted:
            if c == b"\\":
                qdpair = True
            elif c == b'"':
                quoted = False
        elif c == b'"':
            quoted = True
        elif c == b",":
            break
        e += 1
    while e > s and raw[e - 1] in lws:
        e -= 1
    return raw[s:e]


def uri_hashed(uri: bytes, whole: bool = False, length: int = 0, depth: int | None = None) -> bytes:
    """get_server_uh (src/backend.c): uri_len = MIN(uri_len, len) when len is set; walk from
    the start, counting '/': stop at the one numbered arg_opt3 = depth + 1 (0 when no depth:
    never), or at '?' unless whole."""
    if length:
        uri = uri[:length]
    opt3 = 0 if depth is None else depth + 1
    slashes, end = 0, 0
    while end < len(uri):
        c = uri[end:end + 1]
        if c == b"/":
            slashes += 1
            if slashes == opt3:
                break
        elif c == b"?" and not whole:
            break
        end += 1
    return uri[:end]


def url_param(uri: bytes, name: bytes) -> bytes | None:
    """get_server_ph (src/backend.c): after the first '?', at each parameter start: if the
    byte at len(name) is '=' and the name matches, the value runs to the next '&'; else skip
    past the next '&'; stop (None: round robin) when no more than len(name) bytes remain."""
    p = uri.find(b"?")
    if p < 0:
        return None
    rest = uri[p + 1:]
    plen = len(name)
    while len(rest) > plen:
        if rest[plen:plen + 1] == b"=" and rest[:plen] == name:
            v = rest[plen + 1:]
            e = v.find(b"&")
            return v if e < 0 else v[:e]
        e = rest.find(b"&")
        if e < 0:
            return None
        rest = rest[e + 1:]
    return None


def domain_only(v: bytes) -> bytes:
    """get_server_hh with use_domain_only: p = value end, len = length; while len: if dohash,
    stop when *(p - 1) == '.'; else if *p == '.', end = p, dohash = 1; then p--, len--.
    start = p.  (The first *p is the byte after the value: not a dot here.)"""
    buf = v + b"\x00"  # the byte after the value
    p, n, end, dohash = len(v), len(v), len(v), False
    while n:
        if dohash:
            if buf[p - 1:p] == b".":
                break
        elif buf[p:p + 1] == b".":
            end, dohash = p, True
        p -= 1
        n -= 1
    return v[p:end]


def hashed_bytes(cfg: dict, raw: bytes) -> bytes | None:
    """What a backend of tests/support/live_haproxy.py hashes of one request (None: HAProxy balances
    it round robin): the X-Key header, or the request target for a backend with "via"."""
    via = cfg.get("via")
    if via is None:
        return hdr_value(raw) or None
    if via["kind"] == "hdr":
        v = hdr_value(raw)
        return (domain_only(v) if via.get("domain") else v) if v else None
    if via["kind"] == "url_param":
        return url_param(raw, via["param"].encode())
    return uri_hashed(raw, via.get("whole", False), via.get("length", 0), via.get("depth"))
