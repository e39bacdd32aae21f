#!/usr/bin/env bash
# npm_install.sh DIR: the server tests' npm packages (the official openai client, puppeteer-core for
# the system Chromium), through tests/npm_install.sh.
exec "$(dirname "$0")/../npm_install.sh" "${1:?usage: npm_install.sh DIR}" openai@6.49.0 puppeteer-core@24.43.1
