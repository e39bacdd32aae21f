// Agents and apps as they drive the server, through the npm clients they use: the official
// openai client (chat.completions.parse with zodResponseFormat, response_format, logprobs,
// logit_bias), LangChain's ChatOpenAI (withStructuredOutput) and Anthropic's client (messages,
// streaming, x-api-key, count_tokens); tool calls are tool_calls_client.mjs's. Every constrained
// answer is validated against its schema with ajv; every forced tool call must parse and validate.
// Bad input must be a 400 naming the field, and a constrained request must give the same bytes on
// every server of the run. Run by run_agents.sh:
//   URL        the server (--parallel 1), started with --api-key $API_KEY
//   PAR_URL    the same model with --parallel 2
//   SPEC_URL   the same model with --spec (every draft the history offers is tried)
//   RANKS_URL  the same model on 2 ranks with --parallel 2 --spec (empty: not built with MPI)
//   CLI, CLI_RANKS  JSON lists: the command that runs r1pi on the model, on one rank and on two
//   GEMMA_URL  a server with Gemma 2's template, which refuses a system message (empty: not run)
//   KIND       qwen3, llama or stories: the model (its template: Qwen3's, Llama 3.1's, ChatML)
// All servers take $API_KEY. Prints PASS:/FAIL: lines; exits 1 when a check failed.
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { ChatOpenAI } from "@langchain/openai";
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { API_KEY, KIND, ask, callsOf, check, finish, forced, post, postJson, streamed, tools, valid,
         validCalls } from "./agents_common.mjs";

const { URL, PAR_URL, SPEC_URL, RANKS_URL, GEMMA_URL } = process.env;
const CLI = JSON.parse(process.env.CLI), CLI_RANKS = RANKS_URL ? JSON.parse(process.env.CLI_RANKS) : null;
const openai = new OpenAI({ baseURL: URL + "/v1", apiKey: API_KEY, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: URL, apiKey: API_KEY, maxRetries: 0 });
const Weather = z.object({
  city: z.enum(["Paris", "Rome", "Oslo"]),
  days: z.number().int().min(1).max(7),
  sunny: z.boolean(),
  note: z.string().max(12),
});

// ---- openai ----

await check("openai: chat.completions.parse with zodResponseFormat gives a valid parsed object", async () => {
  const format = zodResponseFormat(Weather, "weather");
  const answer = await openai.chat.completions.parse({ messages: ask, response_format: format, temperature: 0, max_tokens: 200 });
  const message = answer.choices[0].message;
  assert.equal(answer.choices[0].finish_reason, "stop", JSON.stringify(message));
  assert.ok(message.parsed, "parsed: " + JSON.stringify(message));
  valid(format.json_schema.schema, message.parsed, "the parsed object");
  assert.deepEqual(message.parsed, JSON.parse(message.content));
  // Sampled too: still valid.
  const sampled = await openai.chat.completions.parse({ messages: ask, response_format: format, temperature: 0.8, seed: 5, max_tokens: 200 });
  valid(format.json_schema.schema, sampled.choices[0].message.parsed, "the sampled parsed object");
});

await check("openai: response_format json_object answers JSON, whatever the bias", async () => {
  // Its keys and strings are free, and a random model's free strings run on past any budget
  // (llama's and stories' do here): a bias of 100 on "}" ends the answer as soon as the grammar
  // lets it. Unconstrained, the bias writes "}" at once; constrained, the answer is "{}".
  const brace = (await postJson(URL, "/tokenize", { content: "}" })).tokens.at(-1);  // SentencePiece: after "▁"
  assert.equal((await postJson(URL, "/detokenize", { tokens: [brace] })).content, "}");
  const body = { messages: ask, temperature: 0, max_tokens: 8, logit_bias: { [brace]: 100 } };
  const free = (await openai.chat.completions.create({ ...body, max_tokens: 2 })).choices[0].message;
  assert.ok(((free.reasoning_content ?? "") + (free.content ?? "")).startsWith("}"), JSON.stringify(free));
  const answer = await openai.chat.completions.create({ ...body, response_format: { type: "json_object" } });
  const content = answer.choices[0].message.content;
  assert.equal(answer.choices[0].finish_reason, "stop", JSON.stringify(content));
  assert.deepEqual(JSON.parse(content), {});
});

await check("openai: logprobs with top_logprobs 3, one entry per token, whole and streamed", async () => {
  const body = { messages: [{ role: "user", content: "Tell me a story." }], temperature: 0, max_tokens: 6, logprobs: true, top_logprobs: 3 };
  const whole = await openai.chat.completions.create(body);
  const entries = whole.choices[0].logprobs.content;
  assert.equal(entries.length, whole.usage.completion_tokens);
  for (const e of entries) {
    assert.equal(typeof e.token, "string");
    assert.ok(typeof e.logprob === "number" && e.logprob <= 0, JSON.stringify(e));
    assert.ok(e.bytes.every(b => Number.isInteger(b) && b >= 0 && b < 256), JSON.stringify(e));
    assert.equal(e.top_logprobs.length, 3);
    for (const t of e.top_logprobs) assert.ok(typeof t.token === "string" && t.logprob <= 0 && Array.isArray(t.bytes));
    // Greedy: the token taken is the likeliest.
    assert.equal(e.top_logprobs[0].logprob, e.logprob, JSON.stringify(e));
    assert.ok(e.top_logprobs[1].logprob <= e.top_logprobs[0].logprob && e.top_logprobs[2].logprob <= e.top_logprobs[1].logprob);
  }
  // The tokens' bytes are the answer (the reasoning, where there is one, and the content).
  const text = Buffer.concat(entries.map(e => Buffer.from(e.bytes))).toString("utf8");
  const m = whole.choices[0].message;
  assert.ok(text.endsWith(m.content ?? "") && text.includes(m.reasoning_content ?? ""), JSON.stringify({ text, m }));
  const s = await streamed(openai, body);
  assert.deepEqual(s.logprobs, entries);
  // Completions: the legacy shape.
  const c = await openai.completions.create({ prompt: "Once upon a time", temperature: 0, max_tokens: 6, logprobs: 3 });
  const lp = c.choices[0].logprobs;
  assert.equal(lp.tokens.length, c.usage.completion_tokens);
  assert.equal(lp.tokens.join(""), c.choices[0].text);
  assert.equal(lp.token_logprobs.length, lp.tokens.length);
  assert.ok(lp.top_logprobs.every(t => Object.keys(t).length >= 1 && Object.keys(t).length <= 3));
});

await check("openai: logit_bias 100 on a token makes that token come; -100 on the greedy one keeps it away", async () => {
  const [id] = (await postJson(URL, "/tokenize", { content: "Hello" })).tokens;
  const expected = (await postJson(URL, "/detokenize", { tokens: [id, id, id] })).content;
  const biased = await openai.completions.create({ prompt: "Once upon a time", temperature: 0, max_tokens: 3, logit_bias: { [id]: 100 } });
  assert.equal(biased.choices[0].text, expected);
  const chat = await openai.chat.completions.create({ messages: [{ role: "user", content: "Hi" }], temperature: 0, max_tokens: 3,
                                                     logit_bias: { [id]: 100 }, logprobs: true });
  const taken = chat.choices[0].logprobs.content;
  assert.equal(taken.length, 3);
  assert.equal(Buffer.concat(taken.map(e => Buffer.from(e.bytes))).toString("utf8"), expected);
  const free = { messages: [{ role: "user", content: "Hi" }], temperature: 0, max_tokens: 1, logprobs: true };
  const greedy = (await openai.chat.completions.create(free)).choices[0].logprobs.content[0].id;
  const banned = await openai.chat.completions.create({ ...free, logit_bias: { [greedy]: -100 } });
  assert.notEqual(banned.choices[0].logprobs.content[0].id, greedy);
});

// ---- @langchain/openai ----

// One call is asked for: a random model given the choice calls its function again and again.
const langchain = new ChatOpenAI({ model: KIND, apiKey: API_KEY, configuration: { baseURL: URL + "/v1" },
                                   temperature: 0, maxTokens: 200, maxRetries: 0, modelKwargs: { parallel_tool_calls: false } });

await check("@langchain/openai: withStructuredOutput(zod) returns a valid object (jsonSchema and functionCalling)", async () => {
  for (const method of [undefined, "functionCalling"]) {
    const structured = langchain.withStructuredOutput(Weather, { name: "weather", ...(method ? { method } : {}) });
    const answer = await structured.invoke("What is the weather in Paris?");
    valid(z.toJSONSchema(Weather), answer, `the ${method ?? "default"} answer`);
  }
});

// ---- @anthropic-ai/sdk ----

const textOf = message => message.content.filter(b => b.type === "text").map(b => b.text).join("");
const thinkingOf = message => message.content.filter(b => b.type === "thinking").map(b => b.thinking).join("");

await check("@anthropic-ai/sdk: messages.create gives the OpenAI route's text", async () => {
  const message = await anthropic.messages.create({ model: KIND, max_tokens: 16, temperature: 0, system: "Be kind.",
                                                    messages: [{ role: "user", content: "Tell me a story." }] });
  assert.equal(message.type, "message");
  assert.equal(message.role, "assistant");
  assert.equal(message.stop_reason, "max_tokens");
  assert.equal(message.usage.output_tokens, 16);
  const same = await openai.chat.completions.create({ max_tokens: 16, temperature: 0,
                                                      messages: [{ role: "system", content: "Be kind." }, { role: "user", content: "Tell me a story." }] });
  assert.equal(textOf(message), same.choices[0].message.content ?? "");
  assert.equal(thinkingOf(message), same.choices[0].message.reasoning_content ?? "");
});

await check("@anthropic-ai/sdk: messages.stream sends its events and assembles the message", async () => {
  const body = { model: KIND, max_tokens: 16, temperature: 0, messages: [{ role: "user", content: "Tell me a story." }] };
  const stream = anthropic.messages.stream(body);
  const events = [];
  stream.on("streamEvent", e => events.push(e.type));
  const final = await stream.finalMessage();
  assert.equal(events[0], "message_start");
  assert.equal(events.at(-1), "message_stop");
  for (const type of ["content_block_start", "content_block_delta", "content_block_stop", "message_delta"])
    assert.ok(events.includes(type), `no ${type} among ${events}`);
  const whole = await anthropic.messages.create(body);
  assert.deepEqual(final.content, whole.content);
  assert.equal(final.stop_reason, whole.stop_reason);
  assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
});

await check("@anthropic-ai/sdk: x-api-key is the key; a wrong one is a 401; count_tokens counts", async () => {
  await assert.rejects(() => new Anthropic({ baseURL: URL, apiKey: "wrong", maxRetries: 0 }).messages.create(
                         { model: KIND, max_tokens: 4, messages: [{ role: "user", content: "Hi" }] }),
                       e => e.status === 401);
  const res = await fetch(URL + "/v1/messages/count_tokens", {
    method: "POST", headers: { "Content-Type": "application/json", "x-api-key": API_KEY, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: KIND, messages: [{ role: "user", content: "Hi" }] }) });
  assert.equal(res.status, 200);
  const counted = await res.json();
  assert.ok(Number.isInteger(counted.input_tokens) && counted.input_tokens > 0, JSON.stringify(counted));
  const sdk = await anthropic.messages.countTokens({ model: KIND, messages: [{ role: "user", content: "Hi" }] });
  assert.equal(sdk.input_tokens, counted.input_tokens);
});

// ---- bad input: a 400 naming the field; the server goes on ----

await check("bad input is a 400 naming the field", async () => {
  const chat = { messages: [{ role: "user", content: "x" }], max_tokens: 4 };
  const schema = s => ({ ...chat, response_format: { type: "json_schema", json_schema: { name: "x", schema: s } } });
  const cases = [
    ["an invalid schema", schema({ type: "object", properties: { a: { type: "strnig" } } }), [/'response_format'/, /strnig/, /\/properties\/a/]],
    ["an unsupported keyword", schema({ type: "object", properties: { a: { type: "string", not: { const: "x" } } } }),
     [/'response_format'/, /'not'/, /\/properties\/a/]],
    ["llama.cpp's json_schema field", { ...chat, json_schema: { type: "object", patternProperties: { a: {} } } }, [/json_schema/, /patternProperties/]],
    ["a GBNF syntax error", { ...chat, grammar: 'root ::= "a" (\n  "b" | ' }, [/'grammar'/, /line 2/, /column \d+/]],
    ["tools not a list", { ...chat, tools: { type: "function" } }, [/'tools'/]],
    ["a tool_choice naming no given tool", { ...chat, tools, tool_choice: { type: "function", function: { name: "nope" } } }, [/'tool_choice'/, /nope/]],
    ["a tool message without tool_call_id", { ...chat, messages: [...chat.messages, { role: "tool", content: "1" }] }, [/tool_call_id/]],
    ["logit_bias off the vocabulary", { ...chat, logit_bias: { "999999999": 5 } }, [/'logit_bias'/]],
  ];
  for (const [what, body, patterns] of cases) {
    const res = await post(URL, "/v1/chat/completions", body);
    const answer = await res.json();
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(answer)}`);
    for (const p of patterns) assert.match(answer.error.message, p, what);
  }
  const anthropicBad = await post(URL, "/v1/messages", { model: KIND, max_tokens: 4, messages: ask, tools: "x" });
  assert.equal(anthropicBad.status, 400);
  const error = await anthropicBad.json();
  assert.equal(error.type, "error");
  assert.match(error.error.message, /'tools'/);
  assert.equal((await openai.chat.completions.create({ ...chat, temperature: 0 })).choices.length, 1);
});

if (GEMMA_URL)
  await check("a template's raise_exception is a 400 with its message (Gemma 2 refuses a system message)", async () => {
    const res = await post(GEMMA_URL, "/v1/chat/completions", { messages: [{ role: "system", content: "Be kind." }, ...ask], max_tokens: 4 });
    const answer = await res.json();
    assert.equal(res.status, 400, JSON.stringify(answer));
    assert.match(answer.error.message, /System role not supported/);
    const applied = await post(GEMMA_URL, "/apply-template", { messages: [{ role: "system", content: "Be kind." }, ...ask] });
    assert.equal(applied.status, 400);
    const fine = await post(GEMMA_URL, "/v1/chat/completions", { messages: ask, max_tokens: 4 });
    assert.equal(fine.status, 200);
  });

await check("a grammar that cannot finish within max_tokens ends with finish_reason length", async () => {
  const digits = "0123456789".repeat(6);
  const body = { prompt: "Count:", max_tokens: 4, temperature: 0, grammar: `root ::= "${digits}"` };
  const whole = await openai.completions.create(body);
  assert.equal(whole.choices[0].finish_reason, "length");
  assert.equal(whole.usage.completion_tokens, 4);
  assert.ok(digits.startsWith(whole.choices[0].text) && whole.choices[0].text.length > 0, whole.choices[0].text);
  const chat = await openai.chat.completions.create({ ...forced, max_tokens: 3 });
  assert.equal(chat.choices[0].finish_reason, "length");
});

// ---- the same bytes everywhere: --parallel 2 (with another request beside), --spec, the CLI ----
// One rank's answers are the reference for --parallel 2 and --spec. Two ranks round their partial
// sums (docs/cluster.md: the sha256 belongs to the rank count), so there the reference is the same
// server's answer alone and the CLI on as many ranks.

// The constrained requests (greedy, and sampled with a seed) and what of their answers is compared.
const weatherFormat = zodResponseFormat(Weather, "weather");
const yesNo = 'root ::= ("yes" | "no" | "maybe") (", " [a-z]+){0,3} "."';
const constrained = [
  ["tools, greedy", "/v1/chat/completions", forced],
  ["tools, seeded", "/v1/chat/completions", { ...forced, temperature: 0.8, seed: 11 }],
  ["json_schema, greedy", "/v1/chat/completions", { messages: ask, temperature: 0, max_tokens: 200, response_format: weatherFormat }],
  ["json_schema, seeded", "/v1/chat/completions", { messages: ask, temperature: 0.8, seed: 11, max_tokens: 200, response_format: weatherFormat }],
  ["grammar, greedy", "/v1/completions", { prompt: "The answer is", temperature: 0, max_tokens: 24, grammar: yesNo }],
  ["grammar, seeded", "/v1/completions", { prompt: "The answer is", temperature: 0.8, seed: 3, max_tokens: 24, grammar: yesNo }],
  ["json_schema completion, seeded", "/v1/completions",
   { prompt: "The weather:", temperature: 0.8, seed: 5, max_tokens: 200, json_schema: weatherFormat.json_schema.schema }],
];
async function bytesOf(base, path, body) {
  const a = await postJson(base, path, body);
  const c = a.choices[0];
  if (c.message?.tool_calls) validCalls(callsOf(c.message));
  if (body.response_format) valid(body.response_format.json_schema.schema, JSON.parse(c.message.content), "the answer");
  return JSON.stringify({ text: c.text, content: c.message?.content, reasoning: c.message?.reasoning_content,
                          calls: c.message?.tool_calls?.map(t => t.function), finish: c.finish_reason, tokens: a.usage.completion_tokens });
}
const answersOf = base => Promise.all(constrained.map(([, path, body]) => bytesOf(base, path, body)));
async function sameBytes(base, reference, label) {
  const got = await answersOf(base);  // all at once: batched where the server has slots
  constrained.forEach(([name], i) => assert.equal(got[i], reference[i], `${label}: ${name}`));
}
// Each answered while a long request runs beside it (the server has two slots).
async function besideALongOne(base, reference) {
  const beside = await post(base, "/v1/completions", { prompt: "Long", max_tokens: 1500, ignore_eos: true, stream: true });
  const reader = beside.body.getReader();
  await reader.read();  // it is generating: the requests below share the batch with it
  try {
    for (const [i, [name, path, body]] of constrained.entries())
      assert.equal(await bytesOf(base, path, body), reference[i], `beside a running request: ${name}`);
  } finally {
    await reader.cancel();
  }
}
const reference = [];
for (const [, path, body] of constrained) reference.push(await bytesOf(URL, path, body));

await check("--parallel 2: constrained answers are the solo ones, beside a running request and together", async () => {
  await besideALongOne(PAR_URL, reference);
  await sameBytes(PAR_URL, reference, "all at once");
});

await check("--spec: constrained answers are the ones without speculation", async () => sameBytes(SPEC_URL, reference, "--spec"));

// What r1pi -p prints (its final newline removed) for a completion request's prompt and constraint.
const execFileAsync = promisify(execFile);
async function cliText(command, body) {
  const constraint = body.grammar ? ["--grammar", body.grammar] : ["--json-schema", JSON.stringify(body.json_schema)];
  const { stdout } = await execFileAsync(command[0], [...command.slice(1), "-p", body.prompt, "-n", String(body.max_tokens),
    "--temp", String(body.temperature), "--seed", String(body.seed ?? 0), ...constraint],
    { encoding: "buffer", timeout: 120000, maxBuffer: 1 << 24 });
  return new TextDecoder("utf-8").decode(stdout.subarray(0, stdout.length - 1));
}
async function cliAgrees(base, command) {
  for (const [name, path, body] of constrained) {
    if (path !== "/v1/completions") continue;
    const server = (await postJson(base, path, body)).choices[0].text;
    assert.equal(server, await cliText(command, body), `the CLI: ${name}`);
  }
}

await check("the CLI with --grammar / --json-schema gives the server's constrained completions", async () => cliAgrees(URL, CLI));

if (RANKS_URL)
  await check("2 ranks (--parallel 2 --spec): constrained answers valid, the same beside a running request and together, and the 2-rank CLI's", async () => {
    const alone = [];
    for (const [, path, body] of constrained) alone.push(await bytesOf(RANKS_URL, path, body));
    await besideALongOne(RANKS_URL, alone);
    await sameBytes(RANKS_URL, alone, "all at once");
    await cliAgrees(RANKS_URL, CLI_RANKS);
    // With log-probabilities rank 0 gathers every row whole and masks it; without, the ranks send
    // their best candidates and whole rows only where the grammar refuses one: the same picks.
    for (const [i, [name, path, body]] of constrained.entries()) {
      const logprobs = path === "/v1/completions" ? { logprobs: 2 } : { logprobs: true, top_logprobs: 2 };
      assert.equal(await bytesOf(RANKS_URL, path, { ...body, ...logprobs }), alone[i], `whole rows (logprobs): ${name}`);
    }
  });

finish("agents client");
