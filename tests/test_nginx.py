"""consistent_hash.compat.nginx: NginxUpstream agrees with nginx's upstream `hash` balancer.

Three independent references:

- a live nginx (Debian's 1.22, started here with backends that answer with their own address;
  tests/support/live_nginx.py): every key of every configuration must be where nginx put it;
- the golden vectors of tests/data/nginx_vectors.json, recorded from a live nginx by
  tests/data/make_nginx_vectors.py (checked without nginx);
- a pure-Python model of the recipe written from nginx's source (tests/support/model_nginx.py),
  itself checked against the live nginx here, then used for random configurations and for the exact
  movement between two configurations.
"""

from __future__ import annotations

import json
import os
import random
import struct
import zlib

import numpy as np
import pytest
from live_nginx import Config, configs, header_safe, keys, live_nginx
from live_servers import require
from model_nginx import ConsistentModel, PlainModel, model

from consistent_hash import EmptyRingError
from consistent_hash.analysis import migration_plan, movement
from consistent_hash.compat.nginx import NginxUpstream, from_config, parse_upstreams

DATA = os.path.join(os.path.dirname(__file__), "data", "nginx_vectors.json")
NKEYS = 3000
KEYS = keys(13, NKEYS)
NAMES = [c.name for c in configs(list(range(1, 26)), "/x.sock")]
# probes of what a header does to a key: leading / trailing spaces dropped, tabs kept
TRIM = [b"  " + k + b"   " for k in KEYS[:300:3]] + [b"\t" + k for k in KEYS[:300:3]]


def effective(c: Config) -> list[tuple[str, int, bool]]:
    """The config's servers with dead ones as down (nginx skips a failed server the same way)."""
    return [(s, w, d or s in c.dead) for s, w, d in c.servers]


def router_of(conf: str, c: Config) -> NginxUpstream:
    r = from_config(conf, name=c.name)
    for s in c.dead:
        r.mark_down(s)
    return r


@pytest.fixture(scope="module")
def live():
    binary = require("nginx")
    with live_nginx(binary) as lv:
        reqs = [(c.name, k) for c in lv.configs for k in KEYS]
        reqs += [("c25", k) for k in TRIM] + [("h25", k) for k in TRIM]
        answers = lv.route(reqs)
        by = {}
        for i, c in enumerate(lv.configs):
            got = answers[i * NKEYS:(i + 1) * NKEYS]
            by[c.name] = (c, [lv.answer_to_server(c, a) for a in got])
        rest = answers[len(lv.configs) * NKEYS:]
        trim = {"c25": rest[:len(TRIM)], "h25": rest[len(TRIM):]}
        yield lv, by, trim


# -- the live nginx -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_live_nginx_puts_every_key_where_the_router_says(live, name):
    lv, by, _ = live
    c, got = by[name]
    r = router_of(lv.conf_text, c)
    assert r.consistent is c.consistent
    assert r.nodes == tuple(s for s, _, _ in c.servers)  # backups excluded, names as written
    predicted = r.get_many(KEYS).tolist()
    wrong = [(k, g, p) for k, g, p in zip(KEYS, got, predicted, strict=True) if g != p]
    assert not wrong, f"{len(wrong)} of {NKEYS} keys elsewhere, e.g. {wrong[:3]}"
    assert set(got) <= set(r.nodes) - set(c.dead) - {s for s, _, d in c.servers if d}
    # the constructor says the same as the config text
    direct = NginxUpstream([s for s, _, _ in c.servers], {s: w for s, w, _ in c.servers},
                           consistent=c.consistent,
                           down=[s for s, _, d in c.servers if d] + list(c.dead))
    assert direct == r
    assert direct.get_indices(KEYS).tolist() == r.get_indices(KEYS).tolist()


@pytest.mark.parametrize("name", NAMES)
def test_live_nginx_agrees_with_the_model(live, name):
    """The pure-Python model the other tests lean on is nginx's recipe."""
    _, by, _ = live
    c, got = by[name]
    m = model(effective(c), c.consistent)
    expect = [None if (i := m.index(k)) is None else c.servers[i][0] for k in KEYS]
    assert expect == got


def test_live_keys_cover_what_was_promised(live):
    _, by, _ = live
    ascii_keys = [k for k in KEYS if all(32 < b < 127 for b in k)]
    high = [k for k in KEYS if any(b >= 0x80 for b in k)]
    control = [k for k in KEYS if any(b < 32 for b in k)]
    utf8 = [k for k in high if _is_utf8(k)]
    assert len(ascii_keys) >= 900 and len(utf8) >= 900 and len(control) >= 500
    assert len(high) - len(utf8) >= 500  # bytes that are not UTF-8 at all
    # every server of the 25-server rings received keys
    assert len(set(by["c25"][1])) == 25 and len(set(by["h25"][1])) == 25


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_live_header_drops_spaces_keeps_tabs(live):
    lv, by, trim = live
    half = len(TRIM) // 2
    for name in ("c25", "h25"):
        c, _ = by[name]
        r = router_of(lv.conf_text, c)
        got = [lv.answer_to_server(c, a) for a in trim[name]]
        assert got[:half] == r.get_many([k.strip(b" ") for k in TRIM[:half]]).tolist()
        assert got[half:] == r.get_many(TRIM[half:]).tolist()
        # a tab is part of the key: with it most keys land elsewhere than without it
        plain = r.get_many([k[1:] for k in TRIM[half:]]).tolist()
        assert sum(a != b for a, b in zip(got[half:], plain, strict=True)) > half // 2


def test_live_localhost_and_127_are_different_points(live):
    """The same backends written as localhost:P instead of 127.0.0.1:P: nginx moves keys
    between them, and the router predicts exactly which."""
    lv, by, _ = live
    c5, got5 = by["c5"]
    cl, gotl = by["c5local"]
    port = [g.rsplit(":", 1)[1] for g in got5]
    portl = [g.rsplit(":", 1)[1] for g in gotl]
    moved = [a != b for a, b in zip(port, portl, strict=True)]
    assert 0.15 < sum(moved) / NKEYS < 0.8
    old, new = router_of(lv.conf_text, c5), router_of(lv.conf_text, cl)
    plan = migration_plan(old, new)
    # the plan holds exactly the keys whose server (as written) changes under nginx: those
    # whose backend changed, and those that stay on a backend under its other name
    names_changed = [a != b for a, b in zip(got5, gotl, strict=True)]
    assert plan.moves(KEYS).tolist() == names_changed
    assert all(n for n, mv in zip(names_changed, moved, strict=True) if mv)
    assert movement(old, new).moved > 0.3  # two of five servers renamed: far more than 0


# -- golden vectors (no nginx needed) -------------------------------------------------------------

def _vectors():
    with open(DATA) as f:
        return json.load(f)


def test_golden_vectors_cover_the_configurations():
    doc = _vectors()
    assert doc["nginx"].endswith("1.22.1")
    names = {c["name"] for c in doc["cases"]}
    assert names == set(NAMES)
    assert len(doc["keys"]) >= 300


@pytest.mark.parametrize("name", NAMES)
def test_golden_vectors(name):
    doc = _vectors()
    ks = [bytes.fromhex(k) for k in doc["keys"]]
    case = next(c for c in doc["cases"] if c["name"] == name)
    r = from_config(case["upstream"])
    assert r.consistent is case["consistent"]
    for s in case["dead"]:  # nothing listened there: nginx skipped it as failed
        r.mark_down(s)
    assert list(r.nodes) == case["servers"]
    assert r.get_indices(ks).tolist() == case["answers"]


# -- the model on random configurations -----------------------------------------------------------

def _random_config(rng: random.Random, n: int) -> list[tuple[str, int, bool]]:
    names: list[str] = []
    kinds = [lambda i: f"10.1.{i // 200}.{i % 200}:{rng.randint(1, 65535)}",
             lambda i: f"cache{i}.example.com:11211",
             lambda i: f"unix:/run/app{i}.sock",
             lambda i: f"UNIX:/run/App{i}.sock",
             lambda i: f"[2001:db8::{i:x}]:8080",
             lambda i: f"backend{i}",                    # no port: hashed as "backend{i}\0"
             lambda i: f"10.2.0.{i % 250}"]
    while len(names) < n:
        s = rng.choice(kinds)(len(names))
        if s not in names:
            names.append(s)
    down = set(rng.sample(range(n), rng.randint(0, n // 3)))
    return [(s, rng.choice([1, 1, 1, 2, 3, 7]), i in down) for i, s in enumerate(names)]


@pytest.mark.parametrize("consistent", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_router_matches_the_model_on_random_configurations(consistent, seed):
    rng = random.Random(seed * 2 + consistent)
    cfg = _random_config(rng, rng.choice([1, 2, 3, 8, 25, 40]))
    r = NginxUpstream([s for s, _, _ in cfg], {s: w for s, w, _ in cfg},
                      consistent=consistent, down=[s for s, _, d in cfg if d])
    m = model(cfg, consistent)
    ks = keys(seed + 100, 2000)
    expect = [m.index(k) for k in ks]
    got = r.get_indices(ks).tolist()
    fallback = [i for i, e in enumerate(expect) if e is None]  # nginx round-robins these
    assert [g for i, g in enumerate(got) if i not in fallback] == \
        [e for e in expect if e is not None]
    assert all(not cfg[got[i]][2] for i in fallback)  # we still give a server that is up
    if not consistent:
        assert (r.tries(ks) > 21).tolist() == [e is None for e in expect]
    assert r.hash_many(ks).tolist() == [zlib.crc32(k) for k in ks]


def test_points_are_nginx_points():
    cfg = [("127.0.0.1:8001", 1, False), ("localhost:8001", 2, False), ("unix:/tmp/a", 1, False)]
    r = NginxUpstream([s for s, _, _ in cfg], {s: w for s, w, _ in cfg})
    m = ConsistentModel(cfg)
    assert r.points.tolist() == m.values
    assert r.owners.tolist() == [s for _, s in m.points]
    assert len(r.points) == 160 * 4
    # the first point of 127.0.0.1:8001 by hand: crc32("127.0.0.1" NUL "8001" + 4 zero bytes)
    first = zlib.crc32(b"127.0.0.1\x008001" + struct.pack("<I", 0))
    assert first in r.points.tolist()


def test_down_servers_keep_their_points_and_pass_keys_on():
    servers = [f"10.0.0.{i}:80" for i in range(1, 6)]
    r = NginxUpstream(servers)
    ks = keys(7, 3000)
    before = r.get_many(ks).tolist()
    r.mark_down(servers[2])
    after = r.get_many(ks).tolist()
    assert r.down == {servers[2]}
    assert all(a == b for a, b in zip(before, after, strict=True) if a != servers[2])
    assert servers[2] not in after
    assert len(r.points) == 5 * 160  # still on the ring
    # its keys go to the next server clockwise: the second replica
    reps = NginxUpstream(servers).replicas_many(ks, 2).tolist()
    assert all(after[i] == reps[i][1] for i in range(len(ks)) if before[i] == servers[2])
    r.mark_up(servers[2])
    assert r.get_many(ks).tolist() == before
    r2 = NginxUpstream(servers, consistent=False, down=servers)
    with pytest.raises(EmptyRingError):
        r2.get("x")


def test_replicas_are_the_servers_nginx_tries_next():
    """proxy_next_upstream walks the points from the key's point, skipping servers tried:
    the distinct servers clockwise (the model's walk)."""
    cfg = [(f"10.0.0.{i}:80", 1 + i % 2, False) for i in range(1, 9)]
    r = NginxUpstream([s for s, _, _ in cfg], {s: w for s, w, _ in cfg})
    m = ConsistentModel(cfg)
    for k in keys(3, 300):
        i = next(j for j, v in enumerate(m.values + [1 << 32]) if v >= zlib.crc32(k))
        order: list[str] = []
        for t in range(len(m.points)):
            s = cfg[m.points[(i + t) % len(m.points)][1]][0]
            if s not in order:
                order.append(s)
        assert r.replicas(k, 4) == order[:4]
    with pytest.raises(TypeError):
        NginxUpstream(["a:1", "b:2"], consistent=False).replicas("k", 2)


# -- movement and migration plans are exact for two consistent configurations ---------------------

def _exact_moved(old: ConsistentModel, new: ConsistentModel) -> dict[tuple[str, str], int]:
    """Independent exact flows over the 2**32 key hashes: the owner is constant on each
    (u[k-1], u[k]] of the union of both rings' points."""
    def owner(mo: ConsistentModel, h: int) -> str:
        i = next((j for j, v in enumerate(mo.values) if v >= h), 0)
        for t in range(21):
            s = mo.points[(i + t) % len(mo.points)][1]
            if not mo.servers[s][2]:
                return mo.servers[s][0]
        raise AssertionError("fallback")

    u = sorted(set(old.values) | set(new.values))
    flows: dict[tuple[str, str], int] = {}
    for k, v in enumerate(u):
        length = v - u[k - 1] if k else v + (1 << 32) - u[-1]
        a, b = owner(old, v), owner(new, v)
        if a != b:
            flows[(a, b)] = flows.get((a, b), 0) + length
    return flows


S5 = [f"127.0.0.1:{8000 + i}" for i in range(5)]
CHANGES = {
    "remove": (S5, S5[:2] + S5[3:], {}, {}, (), ()),
    "add": (S5, S5 + ["127.0.0.1:8009"], {}, {}, (), ()),
    "down": (S5, S5, {}, {}, (), (S5[1],)),
    "weight": (S5, S5, {}, {S5[3]: 3}, (), ()),
    "localhost": (S5, [s.replace("127.0.0.1", "localhost") if i % 2 else s
                       for i, s in enumerate(S5)], {}, {}, (), ()),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_movement_and_plan_are_exact(change):
    so, sn, wo, wn, do, dn = CHANGES[change]
    old = NginxUpstream(so, wo, down=do)
    new = NginxUpstream(sn, wn, down=dn)
    mo = ConsistentModel([(s, wo.get(s, 1), s in do) for s in so])
    mn = ConsistentModel([(s, wn.get(s, 1), s in dn) for s in sn])
    flows = _exact_moved(mo, mn)
    mv = movement(old, new)
    assert mv.exact
    assert mv.flows == pytest.approx({p: v / (1 << 32) for p, v in flows.items()}, abs=0)
    assert mv.moved == pytest.approx(sum(flows.values()) / (1 << 32), abs=1e-15)
    plan = migration_plan(old, new)
    assert plan.moved == pytest.approx(mv.moved, abs=1e-15)
    ks = keys(11, 5000)
    changed = [a != b for a, b in zip(old.get_many(ks), new.get_many(ks), strict=True)]
    assert plan.moves(ks).tolist() == changed


def test_movement_of_plain_hash_is_estimated():
    old = NginxUpstream(S5, consistent=False)
    new = NginxUpstream(S5[:4], consistent=False)
    mv = movement(old, new, keys(2, 20000))
    assert not mv.exact
    # plain hash: modulo over the total weight, so most keys move (unlike the ring)
    assert mv.moved > 0.7
    with pytest.raises(ValueError):
        migration_plan(old, new)


# -- from_config ----------------------------------------------------------------------------------

CONF = r"""
# a whole nginx.conf
user nobody;
events { worker_connections 64; }
http {
    map $http_x_user $k { default "${http_x_user}-x"; }   # ${...} inside a word
    upstream cache {                  # consistent ring
        zone cache 64k;
        hash $k consistent;
        server 10.0.0.1:11211 weight=2 max_fails=3 fail_timeout=5s;
        server "10.0.0.2:11211";      # quoted
        server 'unix:/run/mc.sock' down;
        keepalive 16;
    }
    upstream app {
        server 10.0.1.1:80 backup;    # before `hash`: accepted, never used by hash
        hash $request_uri;
        server 10.0.1.2:80;
        server 10.0.1.3:80 max_conns=10;
    }
    upstream rr { server 10.0.2.1:80; server 10.0.2.2:80; }
    server { listen 80; location / { proxy_pass http://cache; return 200 "a;b{c}#d"; } }
}
"""


def test_from_config_reads_the_upstreams():
    cache = from_config(CONF, name="cache")
    assert cache.consistent and cache.nodes == ("10.0.0.1:11211", "10.0.0.2:11211",
                                                "unix:/run/mc.sock")
    assert cache.weights == {"10.0.0.1:11211": 2, "10.0.0.2:11211": 1, "unix:/run/mc.sock": 1}
    assert cache.down == {"unix:/run/mc.sock"}
    app = NginxUpstream.from_config(CONF, "app")
    assert not app.consistent and app.nodes == ("10.0.1.2:80", "10.0.1.3:80")
    ups = parse_upstreams(CONF)
    assert [u.name for u in ups] == ["cache", "app", "rr"]
    assert ups[0].key == "$k" and ups[1].key == "$request_uri" and ups[2].key is None


def test_from_config_errors():
    with pytest.raises(ValueError, match="'cache', 'app', 'rr'"):
        from_config(CONF)
    with pytest.raises(ValueError, match="not hash"):
        from_config(CONF, name="rr")
    with pytest.raises(ValueError, match="no upstream 'nope'"):
        from_config(CONF, name="nope")
    with pytest.raises(ValueError, match="no upstream block"):
        from_config("events {}")
    with pytest.raises(TypeError):
        from_config(b"upstream a { hash $k; server a:1; }")  # type: ignore[arg-type]
    bad = {
        "upstream a { hash $k consistent; server a:1 backup; }": "backup",
        "upstream a { hash $k consistent; server a:1 weight=0; }": "weight=0",
        "upstream a { hash $k consistent; server a:1 slow_start=3; }": "slow_start",
        "upstream a { hash $k ketama; server a:1; }": "ketama",
        "upstream a { hash $k consistent; server a:1; ip_hash; }": "ip_hash",
        "upstream a { hash $k consistent; server a:1; server a:1; }": "duplicate",
        "upstream a { hash $k consistent; server a:99999; }": "port",
        "upstream a { hash $k consistent; server a:1 }": "unexpected '}'",
        "upstream a { hash $k consistent; server a:1; } server b": "no ';'",
        "upstream a { hash $k consistent; server 'a:1; }": "unterminated",
        "upstream a { hash $k consistent; server a:1; } }": "without an open block",
        "upstream a { hash $k consistent; server a:1;": "expecting '}'",
        "upstream a { hash $k consistent; }": "no servers",
        "upstream a { hash $k; server a:1; } upstream A { hash $k; server b:1; }": "duplicate",
    }
    for text, what in bad.items():
        with pytest.raises(ValueError, match=what):
            from_config(text)


@pytest.mark.parametrize("server,what", [
    ("10.0.0.7:80 weight=0", "weight=0"),
    ("10.0.0.7:80 slow_start=3", "slow_start"),
    ("10.0.0.7:80 backup", "backup"),
    ("10.0.0.7:80 weight=99999999999", "weight"),
    ("10.0.0.7:99999", "port"),
    ("10.0.0.1:80", "duplicate"),
])
def test_from_config_errors_name_the_server_and_its_line(server: str, what: str) -> None:
    """A server's error names its address and its line ("server 'line 6'" named neither)."""
    text = ("http {\n"
            "  upstream cache {\n"
            "    hash $request_uri consistent;\n"
            "    server 10.0.0.1:80;\n"
            "    server 10.0.0.2:80 weight=2;\n"
            f"    server {server};\n"
            "  }\n"
            "}\n")
    with pytest.raises(ValueError) as ei:
        from_config(text)
    msg = str(ei.value)
    address = server.split()[0]
    assert "line 6" in msg and repr(address) in msg and what in msg, msg
    if what == "duplicate":
        assert "line 4" in msg


def test_from_config_bare_block_and_mode_from_the_last_hash():
    text = """upstream u {
        hash $a;
        hash $b consistent;   # nginx: "load balancing method redefined", the last one counts
        server h1:1;
        server h2:2;
    }"""
    r = from_config(text)
    assert r.consistent
    assert r == NginxUpstream(["h1:1", "h2:2"])
    # escapes as nginx's ngx_conf_read_token reads them: \" \' \\ give the character, \t
    # \r \n the control character, any other backslash stays with its character
    u = parse_upstreams(r'upstream u { hash "$a\"x\tb"; server h\:1; server \'g\\2\':3; }')[0]
    assert u.key == '$a"x\tb'
    assert [s for s, _, _ in u.servers] == ["h\\:1", "'g\\2':3"]  # \' at a word's start


# -- the constructor ------------------------------------------------------------------------------

def test_constructor_vocabulary_and_errors():
    r = NginxUpstream(["a:1 weight=3", "b:2 down", "c:3 max_fails=2"])
    assert r.weights == {"a:1": 3, "b:2": 1, "c:3": 1} and r.down == {"b:2"}
    assert r.servers == ["a:1 weight=3", "b:2 down", "c:3"]
    assert NginxUpstream.from_bytes(r.to_bytes()) == r
    assert eval(repr(r), {"NginxUpstream": NginxUpstream}) == r
    with pytest.raises(TypeError):
        NginxUpstream("a:1")
    with pytest.raises(TypeError):
        NginxUpstream([1])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        NginxUpstream(["a:1"], consistent=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backup"):
        NginxUpstream(["a:1 backup"])
    with pytest.raises(ValueError):
        NginxUpstream(["a:1", "a:1"])
    with pytest.raises(ValueError):
        NginxUpstream(["a b"])  # two words as one address: "b" is not a parameter
    with pytest.raises(KeyError):
        NginxUpstream(["a:1"], {"b:1": 2})
    with pytest.raises(KeyError):
        NginxUpstream(["a:1"], down=["b:1"])
    with pytest.raises(ValueError):
        NginxUpstream(["a:1"], {"a:1": 0})
    with pytest.raises(TypeError):
        NginxUpstream(["a:1"], {"a:1": 1.5})  # type: ignore[dict-item]
    with pytest.raises(KeyError):
        r.remove("zz:1")
    with pytest.raises(KeyError):
        r.mark_down("zz:1")
    with pytest.raises(ValueError):
        r.add("a:1")
    before = r.to_bytes()
    with pytest.raises(ValueError):
        r.set_weight("a:1", 0)
    with pytest.raises(ValueError, match="points"):
        r.set_weight("a:1", 1 << 20)  # 168M points: refused before anything is built
    assert r.to_bytes() == before  # nothing half-applied
    with pytest.raises(AttributeError):
        _ = NginxUpstream(["a:1"], consistent=False).positions
    with pytest.raises(TypeError):
        r.tries(["k"])


def test_ownership_is_exact_and_matches_keys():
    r = NginxUpstream(S5, {S5[0]: 4})
    own = r.ownership()
    assert sum(own.values()) == pytest.approx(1.0)
    ks = keys(5, 30000)
    got = r.get_many(ks).tolist()
    for s in S5:
        assert got.count(s) / len(ks) == pytest.approx(own[s], abs=0.02)
    r.mark_down(S5[0])
    assert r.ownership()[S5[0]] == 0.0


def test_plain_hash_is_weighted_modulo_of_crc():
    """Without down servers a plain-hash key goes to the weight interval of
    ((crc32(key) >> 16) & 0x7fff) % total, servers in order."""
    ws = [3, 1, 2]
    servers = ["x:1", "y:2", "z:3"]
    r = NginxUpstream(servers, dict(zip(servers, ws, strict=True)), consistent=False)
    ks = keys(9, 3000)
    ends = np.cumsum(ws)
    expect = [int(np.searchsorted(ends, ((zlib.crc32(k) >> 16) & 0x7FFF) % 6, side="right"))
              for k in ks]
    assert r.get_indices(ks).tolist() == expect
    assert PlainModel([(s, w, False) for s, w in zip(servers, ws, strict=True)]).index(b"") is None


@pytest.mark.parametrize("weights", [[40000, 1, 30000, 7], [1, 65535], [1, 65536, 3]])
def test_plain_hash_with_large_total_weight(weights):
    """Totals above 65,536 take the kernel's search instead of its table: same answers."""
    servers = [f"s{i}:80" for i in range(len(weights))]
    cfg = [(s, w, i == 0) for i, (s, w) in enumerate(zip(servers, weights, strict=True))]
    r = NginxUpstream(servers, dict(zip(servers, weights, strict=True)), consistent=False,
                      down=[servers[0]])
    m = PlainModel(cfg)
    ks = keys(4, 2000)
    assert r.get_indices(ks).tolist() == [m.index(k) for k in ks]


def test_docs_examples():
    import doctest

    doc = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "agreeing-with-nginx.md")
    if not os.path.exists(doc):
        pytest.skip("docs/ is not beside tests/")
    result = doctest.testfile(os.path.abspath(doc), module_relative=False)
    assert result.attempted >= 8 and result.failed == 0


def test_header_safe():
    assert header_safe(b"a\tb c") and header_safe(b"\xff\x01")
    assert not header_safe(b" a") and not header_safe(b"a ") and not header_safe(b"a\nb")
    assert not header_safe(b"") and not header_safe(b"a\0")
