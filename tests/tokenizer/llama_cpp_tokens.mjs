// node llama_cpp_tokens.mjs MODEL VECTORS_JSON: llama.cpp's ids (node-llama-cpp's prebuilt library)
// for every case of o200k_harmony_vectors.json on MODEL, ordinary and with specials, against the
// vectors: llama.cpp's own recorded ids where it differs from tiktoken, tiktoken's elsewhere. So the
// file r1pi writes is the one llama.cpp reads as the published gpt-oss GGUF. Prints PASS/FAIL.
import {getLlama} from "node-llama-cpp";
import {readFileSync} from "node:fs";

const [model, vectorsPath] = process.argv.slice(2);
const {cases} = JSON.parse(readFileSync(vectorsPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0, vocabOnly: true});
let same = 0;
for (const c of cases) {
  const plain = Array.from(m.tokenize(c.text, false)), special = Array.from(m.tokenize(c.text, true));
  const want = c.llama_cpp_ids ?? c.ids, wantSpecial = c.llama_cpp_ids_special ?? c.ids_harmony;
  if (JSON.stringify(plain) === JSON.stringify(want) && JSON.stringify(special) === JSON.stringify(wantSpecial)) ++same;
  else console.log(`  ${JSON.stringify(c.text)}: ${plain} / ${special}, recorded ${want} / ${wantSpecial}`);
}
console.log(`${same === cases.length ? "PASS" : "FAIL"}: llama.cpp gives its recorded ids on ${same} of ${cases.length} cases of r1pi's file`);
await m.dispose();
