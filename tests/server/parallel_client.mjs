// --parallel through the official openai npm client: requests answered together are each the
// same, byte for byte, as the request served alone. Run by run_parallel.sh:
//   URL  a server started with --parallel 4 (and --queue-size 32)
// Prints PASS:/FAIL: lines; exits 1 when a check failed.
import OpenAI from "openai";
import assert from "node:assert/strict";

const { URL } = process.env;
const client = new OpenAI({ baseURL: URL + "/v1", apiKey: "unused", maxRetries: 0 });
let failures = 0;

async function check(name, body) {
  try {
    await body();
    console.log(`PASS: ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL: ${name}: ${e.stack || e}`);
  }
}

async function json(path) {
  const res = await fetch(URL + path);
  return res.json();
}

async function metric(name) {
  const text = await (await fetch(URL + "/metrics")).text();
  const line = text.split("\n").find(l => l.startsWith(name + " "));
  return Number(line.split(" ")[1]);
}

// Sixteen requests: chat and completions, greedy, seeded, penalised, short and long, streamed or
// not; the answer's text (reasoning and content as one) is what is compared.
const requests = [...Array(16).keys()].map(i => {
  const body = { max_tokens: 12 + 7 * (i % 5), temperature: i % 3 === 0 ? 0 : 0.4 + 0.1 * (i % 4), seed: 100 + i };
  if (i % 4 === 1) Object.assign(body, { frequency_penalty: 0.5, presence_penalty: 0.2, repeat_penalty: 1.3 });
  if (i % 5 === 2) body.top_k = 5;
  return i % 2 ? { kind: "chat", stream: i % 4 === 3, body: { ...body, messages: [{ role: "user", content: `Tell story ${i}` }] } }
               : { kind: "text", stream: i % 4 === 2, body: { ...body, prompt: `Once upon a time there was a ${"big ".repeat(i)}dog` } };
});

async function answer(r) {
  const api = r.kind === "chat" ? client.chat.completions : client.completions;
  if (!r.stream) {
    const whole = await api.create(r.body);
    const c = whole.choices[0];
    return r.kind === "chat" ? (c.message.reasoning_content ?? "") + (c.message.content ?? "") : c.text;
  }
  let text = "";
  for await (const chunk of await api.create({ ...r.body, stream: true })) {
    const c = chunk.choices[0];
    if (!c) continue;
    text += r.kind === "chat" ? (c.delta.reasoning_content ?? "") + (c.delta.content ?? "") : (c.text ?? "");
  }
  return text;
}

const alone = [];
for (const r of requests) alone.push(await answer(r));

await check("16 concurrent clients (4 slots) each get their answer alone", async () => {
  const before = await metric("r1pi_batch_sequences_total"), forwards = await metric("r1pi_batch_forwards_total");
  const together = await Promise.all(requests.map(answer));
  for (let i = 0; i < requests.length; i++) assert.equal(together[i], alone[i], `request ${i}`);
  const sequences = (await metric("r1pi_batch_sequences_total")) - before;
  const passes = (await metric("r1pi_batch_forwards_total")) - forwards;
  assert.ok(sequences > passes, `batched: ${sequences} requests' forwards in ${passes} passes`);
});

await check("ignore_eos generates every token asked for", async () => {
  const r = await client.completions.create({ prompt: "The end.", max_tokens: 60, temperature: 0, ignore_eos: true });
  assert.equal(r.usage.completion_tokens, 60);
});

await check("a client that cancels mid-stream frees its slot at once; the others go on", async () => {
  const cancelled = await metric("r1pi_generations_cancelled_total");
  const others = requests.slice(0, 3).map(answer);
  const res = await fetch(URL + "/v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: "Long", max_tokens: 1500, stream: true, ignore_eos: true }) });
  const reader = res.body.getReader();
  await reader.read();
  await reader.cancel();
  const texts = await Promise.all(others);
  for (let i = 0; i < 3; i++) assert.equal(texts[i], alone[i], `request ${i}`);
  // The slot is free well before 1500 tokens could have been generated.
  let busy = 1;
  for (let t = 0; t < 100 && busy; t++) {
    busy = (await json("/slots")).filter(s => s.is_processing).length;
    if (busy) await new Promise(r => setTimeout(r, 20));
  }
  assert.equal(busy, 0);
  assert.equal(await metric("r1pi_generations_cancelled_total"), cancelled + 1);
  const slots = await json("/slots");
  assert.equal(slots.length, 4);
  assert.ok(slots.every(s => s.n_ctx > 0 && s.requests_served >= 1), JSON.stringify(slots));
});

await check("a long prompt joining three streams does not change their tokens", async () => {
  const streams = [0, 3, 6].map(i => answer(requests[i]));
  await new Promise(r => setTimeout(r, 30));
  const long = { kind: "text", stream: false, body: { prompt: "Lily said: " + "I like the big red ball. ".repeat(60), max_tokens: 8, temperature: 0 } };
  const longAnswer = answer(long);
  const texts = await Promise.all(streams);
  assert.deepEqual(texts, [alone[0], alone[3], alone[6]]);
  assert.equal(await longAnswer, await answer(long));
});

if (failures) {
  console.log(`FAIL: parallel client: ${failures} check(s) failed`);
  process.exit(1);
}
console.log("PASS: parallel client (all checks)");
