// node llamacpp_grammar_decode.mjs MODEL THREADS N [SCHEMA]: llama.cpp's greedy decode rate
// (node-llama-cpp's prebuilt CPU library) on MODEL, free or held to the JSON schema in the file
// SCHEMA (node-llama-cpp's LlamaJsonSchemaGrammar), timed from the first generated token to the
// last, printed as JSON with the count and the text. Free runs ignore end-of-generation; a
// constrained one ends where the grammar ends, or after N tokens.
import {getLlama, LlamaGrammarEvaluationState} from "node-llama-cpp";
import {readFileSync} from "node:fs";

const [model, threads, n, schemaFile] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0});
const ctx = await m.createContext({contextSize: 512, threads: Number(threads), batchSize: 64});
const grammar = schemaFile ? await llama.createGrammarForJsonSchema(JSON.parse(readFileSync(schemaFile, "utf8"))) : null;
const options = {temperature: 0, yieldEogToken: !grammar};
if (grammar) options.grammarEvaluationState = new LlamaGrammarEvaluationState({model: m, grammar});
const tokens = [];
let start = 0, end = 0;
for await (const token of ctx.getSequence().evaluate(m.tokenize("Why is the sky blue?"), options)) {
  if (tokens.length === 0) start = performance.now();
  tokens.push(token);
  end = performance.now();
  if (tokens.length > Number(n)) break;
}
// The first token's time is the prompt's forward: the rate is over the tokens after it.
console.log(JSON.stringify({decode_tok_s: (tokens.length - 1) / ((end - start) / 1000), tokens: tokens.length - 1,
                            text: m.detokenize(tokens)}));
await ctx.dispose();
await m.dispose();
