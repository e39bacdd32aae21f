// node greedy_ids.mjs MODEL "ID ID ..." N: the N token ids llama.cpp picks greedily after the
// given prompt ids, space-separated on one line. One thread and an F32 KV cache, as r1pi's exact
// cache; the prompt goes in as ids so that no tokenizer stands between the two forwards.
import {getLlama} from "node-llama-cpp";

const [model, promptIds, n] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0});
const ctx = await m.createContext({contextSize: 256, threads: 1, batchSize: 64,
  experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
const ids = [];
for await (const id of ctx.getSequence().evaluate(promptIds.split(" ").map(Number), {temperature: 0})) {
  ids.push(id);
  if (ids.length >= Number(n)) break;
}
console.log(ids.join(" "));
await ctx.dispose();
await m.dispose();
