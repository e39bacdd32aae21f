// The server as OpenAI clients meet it, through the official openai npm client (and fetch where
// the client would hide what is checked: status codes, headers, retries). Run by run_openai.sh:
//   WARM_URL  a server that has served earlier requests (its prompt cache is warm)
//   COLD_URL  a second server on the same model, started with --api-key $API_KEY --queue-size 2
//   CLI       JSON list: the command that runs r1pi -m MODEL (with mpirun for several ranks)
//   TEMPLATE  deepseek-r1 or chatml: how a user message is rendered, to ask the CLI for the same
// Prints PASS:/FAIL: lines; exits 1 when a check failed.
import OpenAI from "openai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import assert from "node:assert/strict";

const { WARM_URL, COLD_URL, API_KEY, TEMPLATE } = process.env;
const CLI = JSON.parse(process.env.CLI);
const R1 = TEMPLATE === "deepseek-r1";
const warm = new OpenAI({ baseURL: WARM_URL + "/v1", apiKey: "unused", maxRetries: 0 });
const cold = new OpenAI({ baseURL: COLD_URL + "/v1", apiKey: API_KEY, maxRetries: 0 });
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

// The prompt text a one-message chat is (without BOS: r1pi -p adds it as the server does).
function rendered(user) {
  return R1 ? `<｜User｜>${user}<｜Assistant｜><think>\n`
            : `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
}

// What r1pi prints for a prompt (its final newline removed), decoded as the server decodes. Run
// without blocking node's event loop: a blocked loop cannot retire the client's idle keep-alive
// sockets, so a CLI run longer than the server's keep-alive timeout (5 s, as under ASan) had the
// next request sent on a socket the server had just closed ("Connection error").
const execFileAsync = promisify(execFile);
async function cli(prompt, n, extra = []) {
  const { stdout } = await execFileAsync(CLI[0], [...CLI.slice(1), "-p", prompt, "-n", String(n), ...extra],
                                         { encoding: "buffer", timeout: 120000, maxBuffer: 1 << 24 });
  return new TextDecoder("utf-8").decode(stdout.subarray(0, stdout.length - 1));
}

// How the server splits an R1 answer: reasoning up to the first </think>, the answer after it.
function split(text) {
  if (!R1) return { reasoning: "", content: text };
  const end = text.indexOf("</think>");
  return end < 0 ? { reasoning: text, content: "" } : { reasoning: text.slice(0, end), content: text.slice(end + 8) };
}
const parts = m => ({ reasoning: m.reasoning_content ?? "", content: m.content ?? "" });

async function streamChat(client, body) {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let reasoning = "", content = "", first = null, finish = null, usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (!chunk.choices.length) continue;
    const d = chunk.choices[0].delta;
    if (first === null) first = d;
    reasoning += d.reasoning_content ?? "";
    content += d.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  return { reasoning, content, first, finish, usage };
}

async function streamText(client, body) {
  const stream = await client.completions.create({ ...body, stream: true });
  let text = "", finish = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}

const chat = (client, user, extra = {}) =>
  client.chat.completions.create({ messages: [{ role: "user", content: user }], temperature: 0, max_tokens: 16, ...extra });

function post(base, path, body, headers = {}) {
  return fetch(base + path, { method: "POST", headers: { "Content-Type": "application/json", ...headers },
                              body: typeof body === "string" ? body : JSON.stringify(body) });
}
async function metric(base, name) {
  const text = await (await fetch(base + "/metrics", { headers: { Authorization: `Bearer ${API_KEY}` } })).text();
  const line = text.split("\n").find(l => l.startsWith(name + " "));
  return Number(line.split(" ")[1]);
}

// ---- the cold server first: its first generation must be a cold prefill ----
await check("prompt cache: an extended conversation gives a cold server's bytes (greedy and sampled)", async () => {
  for (const sampling of [{ temperature: 0 }, { temperature: 0.8, seed: 7 }]) {
    const first = await chat(warm, "Tell me a story about a cat.", sampling);
    const turn2 = { messages: [{ role: "user", content: "Tell me a story about a cat." },
                               { role: "assistant", content: first.choices[0].message.content },
                               { role: "user", content: "And then?" }], max_tokens: 16, ...sampling };
    const reused = await warm.chat.completions.create(turn2);
    const fresh = await cold.chat.completions.create(turn2);
    assert.ok(reused.usage.prompt_tokens_details.cached_tokens > 0, "the warm server reused its cache");
    assert.deepEqual(parts(reused.choices[0].message), parts(fresh.choices[0].message));
    const text1 = await warm.completions.create({ prompt: "Once upon a time", max_tokens: 8, ...sampling });
    const longer = { prompt: "Once upon a time" + text1.choices[0].text + " and", max_tokens: 16, ...sampling };
    const a = await warm.completions.create(longer), b = await cold.completions.create(longer);
    assert.ok(a.usage.prompt_tokens_details.cached_tokens >= 4);
    assert.equal(a.choices[0].text, b.choices[0].text);
  }
});

await check("models, health, tokenize round trip", async () => {
  const models = await warm.models.list();
  assert.equal(models.data.length, 1);
  assert.equal((await (await fetch(WARM_URL + "/health")).json()).status, "ok");
  const ids = (await (await post(WARM_URL, "/tokenize", { content: "Hello world" })).json()).tokens;
  // SentencePiece vocabularies read back with their leading space (tokenizer.h).
  const back = (await (await post(WARM_URL, "/detokenize", { tokens: ids })).json()).content;
  assert.ok(back === "Hello world" || (!R1 && back === " Hello world"), JSON.stringify(back));
});

await check("chat at temperature 0 gives the CLI's text, whole and streamed, split at </think>", async () => {
  const expected = split(await cli(rendered("Hi there"), 24, ["--temp", "0"]));
  const whole = await chat(warm, "Hi there", { max_tokens: 24 });
  assert.equal(whole.object, "chat.completion");
  assert.equal(whole.choices[0].message.role, "assistant");
  assert.deepEqual(parts(whole.choices[0].message), expected);
  assert.equal(whole.usage.completion_tokens, 24);
  assert.equal(whole.choices[0].finish_reason, "length");
  const streamed = await streamChat(warm, { messages: [{ role: "user", content: "Hi there" }], temperature: 0, max_tokens: 24 });
  assert.equal(streamed.first.role, "assistant");
  assert.deepEqual({ reasoning: streamed.reasoning, content: streamed.content }, expected);
  assert.equal(streamed.finish, "length");
  assert.equal(streamed.usage.completion_tokens, 24);
  if (R1) assert.ok(expected.reasoning.length > 0, "R1's answer opens in its reasoning");
});

await check("completions at temperature 0 give the CLI's text, whole and streamed", async () => {
  const expected = await cli("Once upon a time", 20, ["--temp", "0"]);
  const whole = await warm.completions.create({ prompt: "Once upon a time", max_tokens: 20, temperature: 0 });
  assert.equal(whole.object, "text_completion");
  assert.equal(whole.choices[0].text, expected);
  assert.equal((await streamText(warm, { prompt: "Once upon a time", max_tokens: 20, temperature: 0 })).text, expected);
});

await check("a seed reproduces the sampled text, and the CLI's with the same seed", async () => {
  const body = { prompt: "The little dog", max_tokens: 20, temperature: 0.9, top_p: 0.95, top_k: 40, seed: 42 };
  const a = await warm.completions.create(body), b = await warm.completions.create(body);
  assert.equal(a.choices[0].text, b.choices[0].text);
  assert.equal(a.choices[0].text, await cli("The little dog", 20, ["--temp", "0.9", "--top-p", "0.95", "--top-k", "40", "--seed", "42"]));
});

await check("the repetition penalties give the CLI's text with the same flags", async () => {
  const body = { prompt: "Once upon a time", max_tokens: 20, temperature: 0, frequency_penalty: 0.5, presence_penalty: 0.25,
                 repeat_penalty: 1.5, repeat_last_n: 16 };
  const penalised = (await warm.completions.create(body)).choices[0].text;
  assert.equal(penalised, await cli("Once upon a time", 20, ["--temp", "0", "--frequency-penalty", "0.5", "--presence-penalty",
                                                           "0.25", "--repeat-penalty", "1.5", "--repeat-last-n", "16"]));
});

await check("stop strings cut the text, also across tokens and when streamed", async () => {
  const full = (await warm.completions.create({ prompt: "Once upon a time", max_tokens: 24, temperature: 0 })).choices[0].text;
  assert.ok(full.length >= 12, "enough text to cut: " + JSON.stringify(full));
  const stop = full.slice(5, 10);
  const expected = full.slice(0, full.indexOf(stop));
  const cut = await warm.completions.create({ prompt: "Once upon a time", max_tokens: 24, temperature: 0, stop: [stop, "never-written"] });
  assert.equal(cut.choices[0].text, expected);
  assert.equal(cut.choices[0].finish_reason, "stop");
  const streamed = await streamText(warm, { prompt: "Once upon a time", max_tokens: 24, temperature: 0, stop });
  assert.equal(streamed.text, expected);
  assert.equal(streamed.finish, "stop");
});

await check("bad input gets the right 4xx in OpenAI's shape, and the server goes on", async () => {
  const cases = [
    ["{\"messages\": [", 400], [{ messages: "hi" }, 400], [{}, 400], [{ messages: [{ role: "user", content: 1 }] }, 400],
    [{ messages: [{ role: "user", content: "x" }], max_tokens: "8" }, 400], [{ messages: [{ role: "user", content: "x" }], n: 3 }, 400],
    [{ messages: [{ role: "user", content: "x".repeat(2 << 20) }] }, 413],
    [{ messages: [{ role: "user", content: "a ".repeat(5000) }] }, 400],
  ];
  for (const [body, status] of cases) {
    const res = await post(WARM_URL, "/v1/chat/completions", body);
    assert.equal(res.status, status, JSON.stringify(body).slice(0, 60));
    const error = (await res.json()).error;
    assert.equal(typeof error.message, "string");
    assert.equal(typeof error.type, "string");
  }
  const over = await post(WARM_URL, "/v1/completions", { prompt: "a ".repeat(5000) });
  assert.match((await over.json()).error.message, /does not fit the context/);
  await assert.rejects(() => new OpenAI({ baseURL: COLD_URL + "/v1", apiKey: "wrong", maxRetries: 0 })
                                 .chat.completions.create({ messages: [{ role: "user", content: "x" }] }),
                       e => e.status === 401);
  assert.equal((await chat(cold, "still there?", { max_tokens: 2 })).choices.length, 1);
});

await check("a client that disconnects mid-stream ends its generation; the next request is served", async () => {
  const before = await metric(WARM_URL, "r1pi_generations_cancelled_total");
  const res = await post(WARM_URL, "/v1/completions", { prompt: "Long", max_tokens: 1500, stream: true });
  const reader = res.body.getReader();
  await reader.read();  // the first event: it is generating
  await reader.cancel();  // closes the connection
  const next = await warm.completions.create({ prompt: "Short", max_tokens: 2, temperature: 0 });
  assert.equal(next.choices.length, 1);
  assert.equal(await metric(WARM_URL, "r1pi_generations_cancelled_total"), before + 1);
});

await check("a full queue answers 503 with Retry-After", async () => {
  const auth = { Authorization: `Bearer ${API_KEY}` };
  const long = await post(COLD_URL, "/v1/completions", { prompt: "Long", stream: true }, auth);  // to a full context
  const reader = long.body.getReader();
  await reader.read();  // running: with --queue-size 2, one more may wait and the next is refused
  const pending = [1, 2].map(i => post(COLD_URL, "/v1/completions", { prompt: "q" + i, max_tokens: 2 }, auth));
  // The refusal comes at once; the queued request is served only once the long one ends, so end
  // it then (its client goes away) rather than wait for the whole context.
  await Promise.race(pending);
  await reader.cancel();
  const answers = await Promise.all(pending);
  const statuses = answers.map(a => a.status).sort();
  assert.deepEqual(statuses, [200, 503]);
  const refused = answers.find(a => a.status === 503);
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal((await refused.json()).error.code, "queue_full");
});

await check("20 concurrent clients all complete, served in arrival order", async () => {
  const answers = await Promise.all([...Array(20).keys()].map(i => chat(warm, `Client ${i} says hello`, { max_tokens: 8 })));
  const order = answers.map(a => a.timings).sort((x, y) => x.queue_ticket - y.queue_ticket);
  for (let i = 1; i < order.length; ++i) assert.ok(order[i].served_as > order[i - 1].served_as);
  for (const i of [0, 7, 19])  // each is what that request gives alone
    assert.deepEqual(parts(answers[i].choices[0].message), parts((await chat(warm, `Client ${i} says hello`, { max_tokens: 8 })).choices[0].message));
});

console.log(failures ? `FAIL: openai client: ${failures} check(s) failed` : "PASS: openai client (all checks)");
process.exit(failures ? 1 : 0);
