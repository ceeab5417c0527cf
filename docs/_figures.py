"""The figures of the documentation site, computed with the library at build time.

Run by the MkDocs hook (docs/_hooks.py) before every build, or by hand:
``python docs/_figures.py [outdir]``.  Each figure reproduces an experiment of the seed
articles (or answers a question users ask) with the library itself; the numbers quoted in the
pages were read off one run of this script, and every figure is regenerated on each build, so
a change in behaviour shows up in the site.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from consistent_hash import HashRing, MultiProbe

OUT = Path(__file__).resolve().parent / "figures"
KEYS = np.arange(100_000, dtype=np.uint64)  # seed 004: 10 servers, 100,000 keys


def _shares(router, keys=KEYS):  # type: ignore[no-untyped-def]
    counts = np.bincount(router.get_indices(keys), minlength=len(router.nodes))
    return counts / counts.mean()


def vnodes_spread() -> dict[int, tuple[float, float]]:
    """Busiest and quietest of 10 nodes (x the mean) over 100,000 keys, per vnode count."""
    out = {}
    for v in (1, 10, 100, 160, 1000):
        s = _shares(HashRing([f"server-{i}" for i in range(10)], vnodes=v))
        out[v] = (float(s.max()), float(s.min()))
    return out


def moved_10_to_11() -> dict[str, float]:
    """Share of 100,000 keys that change owner from 10 to 11 servers."""
    h = np.arange(100_000, dtype=np.uint64)
    names10 = [f"server-{i}" for i in range(10)]
    old, new = HashRing(names10), HashRing(names10 + ["server-10"])
    o = np.asarray(old.nodes, dtype=object)[old.get_indices(h)]
    n = np.asarray(new.nodes, dtype=object)[new.get_indices(h)]
    hashes = old.hash_many(h)
    return {"hash % N": float(np.mean(hashes % np.uint64(10) != hashes % np.uint64(11))),
            "hash ring": float(np.mean(o != n)), "ideal (1 in 11)": 1 / 11}


def multiprobe_spread(placements: int = 40, nodes: int = 8) -> dict[int, np.ndarray]:
    """Busiest and quietest node (x the mean) of `placements` different node sets of
    `nodes` nodes, per probe count: shape (placements, 2)."""
    keys = np.arange(200_000, dtype=np.uint64)
    out = {}
    for probes in (1, 5, 21, 81):
        rows = []
        for p in range(placements):
            s = _shares(MultiProbe([f"p{p}-node-{i}" for i in range(nodes)], probes=probes),
                        keys)
            rows.append((s.max(), s.min()))
        out[probes] = np.array(rows)
    return out


def _save(fig, path: Path) -> None:  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=100, metadata={"Software": None})
    new = tmp.read_bytes()
    if not path.exists() or path.read_bytes() != new:  # rewrite only on change (mkdocs serve)
        tmp.replace(path)
    else:
        tmp.unlink()


def build(out: Path = OUT) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spread = vnodes_spread()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    xs = np.arange(len(spread))
    ax.bar(xs - 0.2, [v[0] for v in spread.values()], 0.4, label="busiest node")
    ax.bar(xs + 0.2, [v[1] for v in spread.values()], 0.4, label="quietest node")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xticks(xs, [f"{v} vnode{'s' if v > 1 else ''}" for v in spread])
    ax.set_ylabel("load, x the mean")
    ax.set_title("10 nodes, 100,000 keys: virtual nodes even out the load")
    ax.legend()
    fig.tight_layout()
    _save(fig, out / "vnodes.png")
    plt.close(fig)

    moved = moved_10_to_11()
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.barh(list(moved), [100 * v for v in moved.values()], color=["C3", "C0", "gray"])
    for i, v in enumerate(moved.values()):
        ax.text(100 * v + 1, i, f"{100 * v:.1f}%", va="center")
    ax.set_xlim(0, 110)
    ax.set_xlabel("keys that change server, 10 -> 11 servers (%)")
    fig.tight_layout()
    _save(fig, out / "movement.png")
    plt.close(fig)

    mp = multiprobe_spread()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([mp[p][:, 0] for p in mp], positions=np.arange(len(mp)) - 0.17, widths=0.3,
               patch_artist=True, boxprops={"facecolor": "C0"})
    ax.boxplot([mp[p][:, 1] for p in mp], positions=np.arange(len(mp)) + 0.17, widths=0.3,
               patch_artist=True, boxprops={"facecolor": "C1"})
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xticks(np.arange(len(mp)), [f"{p} probe{'s' if p > 1 else ''}" for p in mp])
    ax.set_ylabel("load, x the mean")
    ax.set_title("MultiProbe, 8 nodes, 40 placements: busiest (blue), quietest (orange)")
    fig.tight_layout()
    _save(fig, out / "multiprobe.png")
    plt.close(fig)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    build(target)
    for v, (hi, lo) in vnodes_spread().items():
        print(f"vnodes {v:5d}: busiest {hi:.2f}x, quietest {lo:.2f}x")
    for k, v in moved_10_to_11().items():
        print(f"{k}: {100 * v:.1f}% moved")
    for p, a in multiprobe_spread().items():
        print(f"probes {p:3d}: busiest median {np.median(a[:, 0]):.3f} (max {a[:, 0].max():.3f}),"
              f" quietest median {np.median(a[:, 1]):.3f} (min {a[:, 1].min():.3f})")
