"""The package's shape (issue 23): modules of one role and at most 600 lines, one boundary to
the compiled core, the old import paths of moved modules, one registry of systems, one address
parser, compat's ``__all__``.  These read the source tree the tests import."""

from __future__ import annotations

import argparse
import ast
import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import consistent_hash
import consistent_hash.compat

PACKAGE = Path(consistent_hash.__file__).resolve().parent
ROOT = PACKAGE.parent
MAX_LINES = 600


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _imports_ring(path: Path) -> bool:
    """Whether the module imports the compiled core, by any spelling."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name == "consistent_hash._ring" for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if mod == "consistent_hash._ring" or mod.endswith("._ring") and node.level:
                return True
            if node.level and mod == "_ring":
                return True
            if mod == "consistent_hash" and any(a.name == "_ring" for a in node.names):
                return True
            if node.level and not mod and any(a.name == "_ring" for a in node.names):
                return True
    return False


def test_one_boundary_to_the_core() -> None:
    importers = [p.relative_to(ROOT).as_posix() for p in _modules() if _imports_ring(p)]
    assert importers == ["consistent_hash/_core.py"]


def test_the_boundary_lists_names_the_core_has() -> None:
    from consistent_hash import _core, _ring

    assert sorted(set(_core.__all__)) == sorted(_core.__all__)
    for name in _core.__all__:
        assert getattr(_core, name) is getattr(_ring, name), name


def test_the_import_check_sees_every_spelling(tmp_path: Path) -> None:
    cases = {"from consistent_hash._ring import _Ring": True,
             "from consistent_hash import _ring": True,
             "import consistent_hash._ring": True,
             "from ._ring import x": True,
             "from .. import _ring": True,
             "from consistent_hash._core import _Ring": False,
             "from consistent_hash import _ringbase": False}
    for i, (text, expected) in enumerate(cases.items()):
        p = tmp_path / f"m{i}.py"
        p.write_text(text + "\n")
        assert _imports_ring(p) is expected, text


def test_modules_are_at_most_600_lines() -> None:
    long = {p.relative_to(ROOT).as_posix(): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


# Old import path -> new, and the names that must be the very same objects.
MOVED = [
    ("consistent_hash.migrate", "consistent_hash.integrations.migrate",
     ["Address", "MigrationError", "MigrationReport", "PairReport", "SourceReport",
      "migrate_memcached", "migrate_redis", "parse_address", "_Memcached"]),
    ("consistent_hash.spark", "consistent_hash.integrations.spark", ["partition", "route"]),
]


@pytest.mark.parametrize(("old", "new", "names"), MOVED)
def test_old_import_paths_are_the_same_objects(old: str, new: str, names: list[str]) -> None:
    a, b = importlib.import_module(old), importlib.import_module(new)
    assert a.__all__ == b.__all__
    for name in names:
        assert getattr(a, name) is getattr(b, name), name


# The load balancers became packages: every name the module had is still there, and the
# classes pickle under the module path they had (a pickle written before loads after).
PACKAGES = {
    "consistent_hash.compat.envoy": ["EnvoyRingHash", "EnvoyMaglev", "from_config",
                                     "header_hash", "HASH_FUNCTIONS", "ring_counts",
                                     "DEFAULT_TABLE_SIZE", "MAX_TABLE_SIZE", "KIND_ENVOY_RING"],
    "consistent_hash.compat.haproxy": ["HAProxyBackend", "from_config", "assign_ids",
                                       "header_value", "uri_key", "url_param_value",
                                       "FUNCTIONS", "MAX_WEIGHT", "KIND_HAPROXY"],
    "consistent_hash.compat.nginx": ["NginxUpstream", "Upstream", "from_config",
                                     "parse_upstreams", "POINTS_PER_WEIGHT", "KIND_NGINX"],
}


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_load_balancer_packages_keep_their_names(name: str) -> None:
    module = importlib.import_module(name)
    for attr in PACKAGES[name]:
        assert hasattr(module, attr), attr
    for attr in module.__all__:
        obj = getattr(module, attr)
        if isinstance(obj, type):
            assert obj.__module__ == name, attr


def test_routers_pickle_under_their_old_module_path() -> None:
    from consistent_hash.compat.envoy import EnvoyMaglev, EnvoyRingHash
    from consistent_hash.compat.haproxy import HAProxyBackend
    from consistent_hash.compat.nginx import NginxUpstream

    nodes = ["10.0.0.1:80", "10.0.0.2:80"]
    for router, module in [(EnvoyRingHash(nodes), "consistent_hash.compat.envoy"),
                           (EnvoyMaglev(nodes), "consistent_hash.compat.envoy"),
                           (HAProxyBackend(["a", "b"]), "consistent_hash.compat.haproxy"),
                           (NginxUpstream(nodes), "consistent_hash.compat.nginx")]:
        data = pickle.dumps(router, protocol=2)
        assert module.encode() in data and b"._routers" not in data
        assert b"._backend" not in data and b"._upstream" not in data
        back = pickle.loads(data)
        assert back.get_many(["k1", "k2", "k3"]).tolist() == \
            router.get_many(["k1", "k2", "k3"]).tolist()


def test_compat_all_lists_every_public_module() -> None:
    public = {m.name for m in pkgutil.iter_modules(consistent_hash.compat.__path__)
              if not m.name.startswith("_")}
    assert set(consistent_hash.compat.__all__) == public
    for name in consistent_hash.compat.__all__:
        importlib.import_module(f"consistent_hash.compat.{name}")


def test_one_registry_of_systems() -> None:
    from consistent_hash.cli._layouts import add_config_options
    from consistent_hash.compat import config

    assert config.SYSTEMS == tuple(s.name for s in config.REGISTRY)
    assert len(set(config.SYSTEMS)) == len(config.SYSTEMS)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for row in config.REGISTRY:
        assert callable(importlib.import_module(row.module).from_config), row.name
        assert (ROOT / "docs" / row.page).is_file(), row.page
        assert re.search(rf":\s*{re.escape(row.page)}\s*$", nav, re.M), row.page
    parser = argparse.ArgumentParser()
    add_config_options(parser)
    (system,) = [a for a in parser._actions if a.dest == "system"]
    assert tuple(system.choices or ()) == config.SYSTEMS
    # no module keeps its own list of the systems
    spelled = re.compile(r"""["']nginx["'],\s*["']haproxy["'],\s*["']envoy["']""")
    holders = [p.relative_to(ROOT).as_posix() for p in _modules()
               if spelled.search(p.read_text(encoding="utf-8"))]
    assert holders == []


def test_one_address_parser() -> None:
    from consistent_hash import _address
    from consistent_hash.compat.ketama import _parse_server
    from consistent_hash.integrations import migrate
    from consistent_hash.integrations.pymemcache import _ketama_spec

    assert migrate.parse_address is _address.parse_address
    # the bare "v6:port" HashClient writes reads alike everywhere
    assert _address.parse_address("::1:11211") == ("::1", 11211)
    assert _address.bare_v6_port("::1:11211") == ("::1", "11211")
    assert _address.bare_v6_port("10.0.0.1:11211") is None
    assert _address.bare_v6_port("::1") is None  # a bare address: ketama gives it its port
    assert _ketama_spec("::1:11211") == "[::1]:11211"
    assert _ketama_spec("10.0.0.1:11211") == "10.0.0.1:11211"
    assert _parse_server("::1:11211")[:3] == _parse_server("[::1]:11211")[:3]
    with pytest.raises(ValueError, match="HashClient"):
        _ketama_spec("no-port")


TESTS = Path(__file__).resolve().parent


def test_live_harnesses_and_models_live_in_support_under_one_naming_scheme() -> None:
    """tests/support/ holds every live-server harness (live_<what>.py) and every independent
    model (model_<what>.py), and the free-port helper they share; none is left elsewhere."""
    support = sorted(p.name for p in (TESTS / "support").glob("*.py"))
    assert any(n.startswith("live_") for n in support)
    assert any(n.startswith("model_") for n in support)
    odd = [n for n in support if not re.fullmatch(r"(live|model)_[a-z0-9_]+\.py|ports\.py", n)]
    assert not odd, odd
    stray = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
             if "support" not in p.parts and not p.name.startswith("test_")
             and re.search(r"^(live|model)_|_(live|model|reference)\.py$|^(model|servers)\.py$",
                           p.name)]
    assert not stray, stray


def test_every_vector_file_is_named_for_its_generator_or_described() -> None:
    """tests/data: each generator is make_<name>.py and writes <name>.json; a vector file with
    no generator (recorded from a reference built here) has its section in data/README.md."""
    data = TESTS / "data"
    scripts = sorted(p.stem for p in data.glob("*.py"))
    assert scripts and all(s.startswith("make_") for s in scripts), scripts
    for s in scripts:
        assert (data / f"{s.removeprefix('make_')}.json").is_file(), s
    readme = (data / "README.md").read_text(encoding="utf-8")
    for j in sorted(data.glob("*.json")):
        base = j.stem.removesuffix("_unsigned_char")  # make_twemproxy_vectors --unsigned-char
        assert (data / f"make_{base}.py").is_file() or f"## {j.name}" in readme, j.name
