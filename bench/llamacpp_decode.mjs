// node llamacpp_decode.mjs MODEL THREADS N: llama.cpp's decode rate (node-llama-cpp's prebuilt CPU
// library) on MODEL: N tokens generated greedily after a short prompt, timed from the first
// generated token to the last (the prompt's forward excluded), printed as JSON. Its default F16
// KV cache: at a context of a few dozen tokens the cache's type does not move the rate.
import {getLlama} from "node-llama-cpp";

const [model, threads, n] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0});
const ctx = await m.createContext({contextSize: 512, threads: Number(threads), batchSize: 64});
let count = 0, start = 0, end = 0;
for await (const _ of ctx.getSequence().evaluate(m.tokenize("Why is the sky blue?"), {temperature: 0})) {
  if (count === 0) start = performance.now();
  if (++count > Number(n)) { end = performance.now(); break; }
}
console.log(JSON.stringify({decode_tok_s: Number(n) / ((end - start) / 1000)}));
await ctx.dispose();
await m.dispose();
