// node llamacpp_decode.mjs MODEL THREADS N [PROMPT_TOKENS]: llama.cpp's decode rate (node-llama-cpp's
// prebuilt CPU library) on MODEL: N tokens generated greedily after a short prompt, timed from the
// first generated token to the last (the prompt's forward excluded), printed as JSON. Its default
// F16 KV cache: at a context of a few dozen tokens the cache's type does not move the rate.
// With PROMPT_TOKENS (N then 0): the prefill rate instead, llama-bench's ppP: that many tokens of a
// fixed text evaluated in batches of 512 (llama-bench's micro-batch), timed whole.
import {getLlama} from "node-llama-cpp";

const [model, threads, n, promptTokens] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0});
const P = Number(promptTokens || 0);
const ctx = await m.createContext({contextSize: Math.max(512, P + 64), threads: Number(threads), batchSize: P ? 512 : 64});
if (P) {
  const text = "The history of the sky's colour is a story of light, air and the eye. ".repeat(Math.ceil(P / 8));
  const tokens = m.tokenize(text).slice(0, P);
  const start = performance.now();
  await ctx.getSequence().evaluateWithoutGeneratingNewTokens(tokens);
  console.log(JSON.stringify({prefill_tok_s: tokens.length / ((performance.now() - start) / 1000), tokens: tokens.length}));
} else {
  let count = 0, start = 0, end = 0;
  for await (const _ of ctx.getSequence().evaluate(m.tokenize("Why is the sky blue?"), {temperature: 0})) {
    if (count === 0) start = performance.now();
    if (++count > Number(n)) { end = performance.now(); break; }
  }
  console.log(JSON.stringify({decode_tok_s: Number(n) / ((end - start) / 1000)}));
}
await ctx.dispose();
await m.dispose();
