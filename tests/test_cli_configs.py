"""The CLI over a load balancer's or proxy's configuration file: `plan old.conf new.conf`
shows exactly what an edit moves before it is deployed, and `assign --ring FILE` routes keys
where the balancer does (issue 13, point 3)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_cli import ok, run

from consistent_hash.analysis import migration_plan, movement
from consistent_hash.compat import config

HAPROXY = """defaults
  mode http
backend cache
  balance hdr(X-Key)
  hash-type consistent
  server s1 127.0.0.1:8001{id1}
  server s2 127.0.0.1:8002{id2}
  server s3 127.0.0.1:8003{id3}
  server s4 127.0.0.1:8004{id4}
  server s5 127.0.0.1:8005{id5}
"""
NGINX = """http {{
  upstream cache {{
    hash $http_x_key consistent;
    server 127.0.0.1:8001;
    server 127.0.0.1:8002 weight=2;
    server {third};
  }}
  upstream other {{
    hash $http_x_key;
    server 127.0.0.1:9001;
  }}
}}
"""
TWEMPROXY = """alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: {dist}
  servers:
{servers}
"""


def _haproxy(with_ids: bool, drop: str | None = None) -> str:
    ids = {f"id{i}": (f" id {i}" if with_ids else "") for i in range(1, 6)}
    text = HAPROXY.format(**ids)
    return "".join(ln + "\n" for ln in text.splitlines() if not (drop and f" {drop} " in ln))


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("with_ids", [False, True])
def test_plan_between_two_haproxy_configs_is_exact(tmp_path: Path, with_ids: bool) -> None:
    old_text, new_text = _haproxy(with_ids), _haproxy(with_ids, drop="s3")
    old_p, new_p = _write(tmp_path, "old.cfg", old_text), _write(tmp_path, "new.cfg", new_text)
    old, new = config.from_text(old_text), config.from_text(new_text)
    keys = [f"user:{i}" for i in range(20_000)]
    actual = old.get_many(keys) != new.get_many(keys)
    doc = json.loads(ok("plan", old_p, new_p, "--json").stdout)
    assert doc["exact"] and doc["moved"] == pytest.approx(movement(old, new).moved)
    assert abs(doc["moved"] - actual.mean()) < 0.02
    assert len(doc["ranges"]) == len(migration_plan(old, new))
    share = dict(zip(old.nodes, np.bincount(old.get_indices(keys)) / len(keys), strict=True))
    assert doc["fair_share"] == pytest.approx(share["s3"], abs=0.02)
    table = ok("plan", old_p, new_p).stdout
    if with_ids:  # explicit ids: only s3's keys move
        assert doc["moved"] == pytest.approx(doc["fair_share"], abs=1e-9)
        assert {f["from"] for f in doc["flows"]} == {"s3"}
        assert "moves between nodes that keep their share" not in table
    else:  # HAProxy renumbers s4 and s5: far more than s3's share moves, and the plan says so
        assert doc["moved"] > doc["fair_share"] + 0.2
        assert "moves between nodes that keep their share" in table


def test_plan_of_an_nginx_edit_and_name(tmp_path: Path) -> None:
    old_p = _write(tmp_path, "nginx.conf", NGINX.format(third="127.0.0.1:8003"))
    new_p = _write(tmp_path, "nginx2.conf", NGINX.format(third="localhost:8003"))
    r = run("plan", old_p, new_p)
    assert r.returncode == 2 and "name" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    doc = json.loads(ok("plan", old_p, new_p, "--name", "cache", "--json").stdout)
    old = config.load(old_p, name="cache")
    new = config.load(new_p, name="cache")
    assert doc["moved"] == pytest.approx(movement(old, new).moved) and doc["moved"] > 0.3
    assert {f["to"] for f in doc["flows"]} >= {"localhost:8003"}


def test_plan_of_twemproxy_modula_is_estimated(tmp_path: Path) -> None:
    servers = [f"   - 127.0.0.1:{11211 + i}:1" for i in range(4)]
    old_p = _write(tmp_path, "a.yml", TWEMPROXY.format(dist="modula",
                                                       servers="\n".join(servers[:3])))
    new_p = _write(tmp_path, "b.yml", TWEMPROXY.format(dist="modula",
                                                       servers="\n".join(servers)))
    doc = json.loads(ok("plan", old_p, new_p, "--json").stdout)
    assert doc["exact"] is False and doc["ranges"] is None
    assert 0.65 < doc["moved"] < 0.85  # modula 3 -> 4 moves about 3 keys in 4
    out = ok("plan", old_p, new_p).stdout
    assert "estimated" in out
    r = run("plan", old_p, new_p, "--csv")
    assert r.returncode == 2 and "not a ring" in r.stderr


def test_assign_routes_where_the_config_says(tmp_path: Path) -> None:
    conf = _write(tmp_path, "nginx.conf", NGINX.format(third="127.0.0.1:8003"))
    keys = [f"user:{i}" for i in range(500)]
    out = ok("assign", "--ring", conf, "--name", "cache", input="\n".join(keys) + "\n").stdout
    rows = [ln.split(",") for ln in out.splitlines()[1:]]
    router = config.load(conf, name="cache")
    assert [k for k, _ in rows] == keys
    assert [n for _, n in rows] == list(router.get_many(keys))


def test_mixed_or_bad_configs_are_one_line_errors(tmp_path: Path) -> None:
    nginx_p = _write(tmp_path, "nginx.conf", NGINX.format(third="127.0.0.1:8003"))
    ha_p = _write(tmp_path, "old.cfg", _haproxy(True))
    r = run("plan", ha_p, "a,b,c")
    assert r.returncode == 2 and "different kinds" in r.stderr
    broken = _write(tmp_path, "broken.cfg", "backend cache\n  balance hdr(X-Key)\n"
                                             "  hash-type consistent\n  server s1\n")
    for args in (["plan", broken, ha_p], ["plan", nginx_p, nginx_p, "--name", "nope"],
                 ["assign", "--ring", broken, "--system", "haproxy"]):
        r = run(*args, input="k\n")
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("consistent-hash: error:") and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def _two_layouts(system: str) -> str:
    """A configuration of `system` with two layouts, "cache" and "other"."""
    if system == "nginx":
        return NGINX.format(third="127.0.0.1:8003")
    if system == "haproxy":
        return HAPROXY.format(**{f"id{i}": "" for i in range(1, 6)}) + (
            "backend other\n  balance hdr(X-Key)\n  hash-type consistent\n"
            "  server t1 127.0.0.1:9001\n")
    if system == "twemproxy":
        pool = TWEMPROXY.format(dist="ketama", servers="   - 127.0.0.1:11211:1")
        return pool.replace("alpha:", "cache:") + pool.replace("alpha:", "other:").replace(
            "22121", "22122")
    one = {"lb_policy": "RING_HASH", "load_assignment": {"endpoints": [{"lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "127.0.0.1",
                                                     "port_value": 8001}}}}]}]}}
    return json.dumps({"static_resources": {"clusters": [{"name": "cache", **one},
                                                         {"name": "other", **one}]}})


@pytest.mark.parametrize("system", config.SYSTEMS)
def test_several_layouts_ask_for_name(tmp_path: Path, system: str) -> None:
    """The CLI said "pass name=" (the API's keyword) for a file with several layouts."""
    conf = _write(tmp_path, f"{system}.conf", _two_layouts(system))
    assert config.detect(conf.read_text()) == system
    for args in (["plan", conf, conf], ["assign", "--ring", conf, "--input-format", "text"]):
        r = run(*args, input="k\n")
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        assert "--name" in lines[0] and "name=" not in lines[0], lines[0]
        assert "'cache'" in lines[0] and "'other'" in lines[0], lines[0]
        ok(*args, "--name", "cache", input="k\n")
    with pytest.raises(config.NameNeeded, match="name=") as ei:
        config.load(conf)
    assert ei.value.names == ["cache", "other"]
