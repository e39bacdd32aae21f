#!/usr/bin/env bash
# The folders of src/ must include each other without a cycle: prints the folder graph and any
# cycle, exits 1 when there is one. A subfolder (runtime/mpi) may include its parent.
set -euo pipefail
src=${1:?usage: include_graph.sh SRC_DIR}
cd "$src"
edges=$(grep -rE '^#include "[a-z_0-9]+/' --include='*.h' --include='*.cpp' . |
  sed -E 's|^\./(.*)/[^/]+:#include "(.*)/[^/]+".*|\1 \2|' |
  awk '$1 != $2 && index($1, $2 "/") != 1' | sort -u)
echo "$edges" | awk '{ printf "%s -> %s\n", $1, $2 }'
# tsort names the folders of a cycle on stderr ("input contains a loop") and exits non-zero.
if ! echo "$edges" | tsort >/dev/null; then
  echo "include_graph: the folders of $src include each other in a cycle" >&2
  exit 1
fi
echo "include_graph: no cycle"
