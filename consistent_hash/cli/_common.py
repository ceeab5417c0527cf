"""What the subcommands share, under one name (``_common.table``, ``_common.UserError``, ...):
the types (``cli._base``: the user-error type, the parser), the output (``cli._output``:
markdown tables, strict JSON, percentages, the progress bar, the plotting helpers), the number
arguments (``cli._args``) and layouts (``cli._layouts``: a ring file, a node list or a proxy's
configuration: ``router_from_spec``, ``layout_from_spec``). Each of those has one role; this
module only gathers them."""

from consistent_hash.cli._args import (
    batch,
    non_negative,
    per_second,
    positive,
    redis_db,
    seconds,
    seed,
    vnodes,
)
from consistent_hash.cli._base import Parser, Subparsers, UserError
from consistent_hash.cli._layouts import (
    MAX_NODES,
    MAX_POSITIONS,
    WEIGHTS_HELP,
    add_config_options,
    add_layout_options,
    check_positions,
    is_ring_file,
    layout_from_spec,
    parse_node,
    parse_nodes,
    router_from_spec,
)
from consistent_hash.cli._output import (
    Progress,
    check_plot_path,
    pct,
    pyplot,
    save_figure,
    table,
    to_json,
)

__all__ = ["MAX_NODES", "MAX_POSITIONS", "WEIGHTS_HELP", "Parser", "Progress", "Subparsers",
           "UserError", "add_config_options", "add_layout_options", "batch", "check_plot_path",
           "check_positions", "is_ring_file", "layout_from_spec", "non_negative",
           "parse_node", "parse_nodes", "pct", "per_second", "positive", "pyplot", "redis_db",
           "router_from_spec", "save_figure", "seconds", "seed", "table", "to_json", "vnodes"]
