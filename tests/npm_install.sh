#!/usr/bin/env bash
# npm_install.sh DIR PACKAGE@VERSION...: pinned npm packages the tests drive r1pi with (or compare
# it with), installed into DIR/node_modules from the npm registry unless that exact set is there
# already. Not committed, not in the source tree. No install scripts and no optional packages:
# puppeteer-core then downloads no browser (the tests use Debian's chromium) and node-llama-cpp
# builds nothing and pulls no GPU builds (~600 MB).
set -euo pipefail
dir=${1:?usage: npm_install.sh DIR PACKAGE@VERSION...}
shift
packages=("$@")
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)  # the stamp is written after the cd below
stamp=$dir/installed.txt
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ] && [ -d "$dir/node_modules" ]; then
  exit 0
fi
cd "$dir"
[ -f package.json ] || echo '{"private": true}' >package.json
npm install --no-audit --no-fund --loglevel=error --ignore-scripts --omit=optional "${packages[@]}" >/dev/null
echo "${packages[*]}" >"$stamp"
