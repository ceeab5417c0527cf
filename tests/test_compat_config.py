"""consistent_hash.compat.config: one entry point for a balancer's configuration file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from consistent_hash.analysis import migration_plan, movement
from consistent_hash.compat import config, envoy, haproxy, nginx, twemproxy

NGINX = """
http {
  upstream cache {
    hash $http_x_key consistent;
    server 127.0.0.1:8001;
    server 127.0.0.1:8002 weight=2;
    server 127.0.0.1:8003;
  }
}
"""
HAPROXY = """
defaults
  mode http
backend cache
  balance hdr(X-Key)
  hash-type consistent
  http-request deny if { path_beg /admin }
  server s1 127.0.0.1:8001 id 1
  server s2 127.0.0.1:8002 weight 2 id 2
  server s3 127.0.0.1:8003 id 3
"""
TWEMPROXY = """
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  servers:
   - 127.0.0.1:11211:1
   - 127.0.0.1:11212:1
   - 127.0.0.1:11213:1
"""
ENVOY_YAML = """
name: cache
lb_policy: RING_HASH
load_assignment:
  cluster_name: cache
  endpoints:
  - lb_endpoints:
    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}
    - endpoint: {address: {socket_address: {address: 10.0.0.2, port_value: 80}}}
"""
ENVOY_JSON = """{"name": "cache", "lb_policy": "MAGLEV", "load_assignment": {"cluster_name":
 "cache", "endpoints": [{"lb_endpoints": [
  {"endpoint": {"address": {"socket_address": {"address": "10.0.0.1", "port_value": 80}}}},
  {"endpoint": {"address": {"socket_address": {"address": "10.0.0.2", "port_value": 80}}}}]}]}}
"""
CASES = [("nginx", NGINX, nginx), ("haproxy", HAPROXY, haproxy),
         ("twemproxy", TWEMPROXY, twemproxy), ("envoy", ENVOY_YAML, envoy),
         ("envoy", ENVOY_JSON, envoy)]
KEYS = [f"user:{i}" for i in range(5_000)]


@pytest.mark.parametrize(("system", "text", "module"), CASES)
def test_detects_the_system_and_builds_its_router(system: str, text: str, module: object,
                                                  tmp_path: Path) -> None:
    assert config.detect(text) == system
    want = module.from_config(text)  # type: ignore[attr-defined]
    got = config.from_text(text)
    assert type(got) is type(want) and got == want
    assert np.array_equal(got.get_indices(KEYS), want.get_indices(KEYS))
    path = tmp_path / "balancer.conf"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # a byte-order mark is dropped
    assert config.load(path) == want
    assert config.load(path, system=system) == want


def test_unknown_or_bad_text_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot tell which system"):
        config.detect("just some text\n")
    with pytest.raises(ValueError, match="system must be one of"):
        config.from_text(NGINX, system="apache")
    with pytest.raises(TypeError, match="text must be str"):
        config.detect(b"upstream x {}")  # type: ignore[arg-type]
    bad = tmp_path / "bad.conf"
    bad.write_bytes(b"upstream \xff {")
    with pytest.raises(ValueError, match="not UTF-8"):
        config.load(bad)


def test_a_config_edit_is_planned_exactly() -> None:
    # What an nginx edit moves, before it is deployed: a server respelled as localhost is a
    # different point set, so keys move although no backend changed.
    old = config.from_text(NGINX)
    new = config.from_text(NGINX.replace("127.0.0.1:8003", "localhost:8003"))
    m = movement(old, new)
    actual = old.get_many(KEYS) != new.get_many(KEYS)
    assert m.exact and actual.mean() > 0.05
    assert np.array_equal(migration_plan(old, new).moves(KEYS), actual)
