"""``python -m consistent_hash``: the command line (see consistent_hash.cli)."""

from consistent_hash.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
