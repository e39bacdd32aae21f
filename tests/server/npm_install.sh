#!/usr/bin/env bash
# npm_install.sh DIR: the pinned npm packages the server tests drive it with (the official openai
# client, puppeteer-core for the system Chromium), installed into DIR/node_modules from the npm
# registry unless that exact set is there already. Not committed, not in the source tree.
set -euo pipefail
dir=${1:?usage: npm_install.sh DIR}
packages=(openai@6.49.0 puppeteer-core@24.43.1)
mkdir -p "$dir"
stamp=$dir/installed.txt
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ] && [ -d "$dir/node_modules/openai" ]; then
  exit 0
fi
cd "$dir"
[ -f package.json ] || echo '{"private": true}' >package.json
# puppeteer-core downloads no browser (the test uses Debian's chromium).
npm install --no-audit --no-fund --loglevel=error "${packages[@]}" >/dev/null
echo "${packages[*]}" >"$stamp"
