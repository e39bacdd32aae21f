#!/usr/bin/env bash
# npm_install.sh DIR: the server tests' npm packages (the official openai client, puppeteer-core for
# the system Chromium; for the agents suite LangChain's OpenAI chat model, Anthropic's client, zod
# and ajv), through tests/npm_install.sh. @langchain/openai 1.5.8 is the last that runs on node 20
# (1.5.9 on wants node 22) and takes openai 6.x, so the pinned openai is the one it drives.
exec "$(dirname "$0")/../npm_install.sh" "${1:?usage: npm_install.sh DIR}" openai@6.49.0 puppeteer-core@24.43.1 \
  @langchain/openai@1.5.8 @langchain/core@1.4.0 @anthropic-ai/sdk@1.17.0 zod@4.6.7 ajv@8.20.0
