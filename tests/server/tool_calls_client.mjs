// Tool calls as agents make them, through the npm clients they use, on one server: forced calls
// (whole, streamed, a named function), tool results going back in, two calls at once, through the
// openai client, @langchain/openai's bindTools and @anthropic-ai/sdk's tool use. Every call must
// parse and its arguments validate with ajv. Run by run_agents.sh:
//   URL     the server, started with --api-key $API_KEY
//   SYNTAX  how its template's model writes calls (src/chat/tool_call_format.cpp's formats):
//           hermes, qwen3-coder, generic, or one call at a time: llama3 (whose template refuses two
//           in a turn of the history) or harmony (r1pi's template writes each as a message of its
//           own, gpt-oss's own the first; LABEL "gpt-oss's template" says which)
//   LABEL   what the PASS:/FAIL: lines call the server
// Prints PASS:/FAIL: lines; exits 1 when a check failed.
import OpenAI from "openai";
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "@langchain/core/tools";
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import assert from "node:assert/strict";
import { API_KEY, KIND, ask, callsOf, check, finish, forced, post, postJson, schemaOf, streamed, tools, valid,
         validCalls, weatherSchema, withoutIds } from "./agents_common.mjs";

const { URL, SYNTAX, LABEL } = process.env;
const openai = new OpenAI({ baseURL: URL + "/v1", apiKey: API_KEY, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: URL, apiKey: API_KEY, maxRetries: 0 });
const named = name => `${LABEL}: ${name}`;

// ---- openai ----

await check(named("openai: tools with tool_choice required give valid tool_calls, whole and streamed"), async () => {
  const whole = await openai.chat.completions.create(forced);
  const choice = whole.choices[0];
  assert.equal(choice.finish_reason, "tool_calls", JSON.stringify(choice.message));
  const calls = callsOf(choice.message);
  validCalls(calls);
  for (const c of choice.message.tool_calls) {
    assert.equal(c.type, "function");
    assert.ok(typeof c.id === "string" && c.id.length > 0, "a call id");
  }
  const s = await streamed(openai, forced);
  assert.equal(s.finish, "tool_calls");
  validCalls(s.calls);
  for (const c of s.calls) assert.ok(c.id.length > 0, "a streamed call id");
  assert.deepEqual(withoutIds(s.calls), withoutIds(calls), "the streamed calls are the whole answer's");
  assert.equal(s.content, choice.message.content ?? "");
  assert.equal(s.usage.completion_tokens, whole.usage.completion_tokens);
});

await check(named("openai: a named function is the one called"), async () => {
  const body = { ...forced, tool_choice: { type: "function", function: { name: "get_time" } } };
  const choice = (await openai.chat.completions.create(body)).choices[0];
  assert.equal(choice.finish_reason, "tool_calls", JSON.stringify(choice.message));
  validCalls(callsOf(choice.message), ["get_time"]);
  // The client's own stream helper assembles the same calls.
  const final = await openai.chat.completions.stream(body).finalChatCompletion();
  assert.deepEqual(withoutIds(callsOf(final.choices[0].message)), withoutIds(callsOf(choice.message)));
  assert.equal(final.choices[0].finish_reason, "tool_calls");
});

await check(named("openai: a tool-result turn (role tool) and a developer message go through"), async () => {
  const first = (await openai.chat.completions.create(forced)).choices[0].message;
  validCalls(callsOf(first));
  const messages = [{ role: "developer", content: "Answer in one word." }, ...ask,
                    { role: "assistant", content: first.content, tool_calls: first.tool_calls },
                    ...first.tool_calls.map(c => ({ role: "tool", tool_call_id: c.id, content: "18 C and sunny" }))];
  const second = await openai.chat.completions.create({ messages, tools, max_tokens: 8, temperature: 0 });
  assert.equal(second.object, "chat.completion");
  assert.ok(["stop", "length", "tool_calls"].includes(second.choices[0].finish_reason));
  // The result is in the prompt, where the template puts it.
  const { prompt } = await postJson(URL, "/apply-template", { messages, tools });
  assert.ok(prompt.includes("18 C and sunny"), prompt);
  assert.ok(prompt.includes("Answer in one word."), prompt);
});

await check(named("/apply-template: the tools reach the prompt through the template"), async () => {
  const { prompt } = await postJson(URL, "/apply-template", { messages: ask, tools });
  assert.ok(prompt.includes("get_weather") && prompt.includes("get_time"), prompt);
  assert.ok(prompt.includes(ask[0].content), prompt);
});

// ---- two calls at once ----
// A random model left to choose calls one function or calls on until max_tokens, so llama.cpp's
// `grammar` field makes it write two calls, get_weather's then get_time's, in the model's own
// syntax with the arguments' values free within their schemas. The server must still read them back
// as two calls (tool_choice is auto), stream them as two, and take both results back.
const lit = text => JSON.stringify(text);  // a GBNF literal: JSON's escapes are GBNF's
const json = {
  get_weather: [lit('{"city": "'), '("Paris" | "Rome" | "Oslo")', lit('", "days": '), "[1-7]", lit(', "unit": "'),
                '("c" | "f")', lit('"}')],
  get_time: [lit('{"zone": "'), '("UTC" | "CET")', lit('", "military": '), '("true" | "false")', lit("}")],
};
const xml = {  // Qwen3-Coder's parameters: text bare, other values JSON
  get_weather: [lit("<parameter=city>\n"), '("Paris" | "Rome" | "Oslo")', lit("\n</parameter>\n<parameter=days>\n"), "[1-7]",
                lit("\n</parameter>\n<parameter=unit>\n"), '("c" | "f")', lit("\n</parameter>\n")],
  get_time: [lit("<parameter=zone>\n"), '("UTC" | "CET")', lit("\n</parameter>\n<parameter=military>\n"), '("true" | "false")',
             lit("\n</parameter>\n")],
};
const call = {
  hermes: name => [lit(`<tool_call>\n{"name": "${name}", "arguments": `), ...json[name], lit("}\n</tool_call>")],
  "qwen3-coder": name => [lit(`<tool_call>\n<function=${name}>\n`), ...xml[name], lit("</function>\n</tool_call>")],
  generic: name => [lit(`{"name": "${name}", "arguments": `), ...json[name], lit("}")],
};
const [around, between] = SYNTAX === "generic" ? [['{"tool_calls": [', "]}"], ", "] : [["", ""], "\n"];
const twoCalls = call[SYNTAX] &&
  ["root ::=", lit(around[0]), ...call[SYNTAX]("get_weather"), lit(between), ...call[SYNTAX]("get_time"), lit(around[1])].join(" ");
const twoResults = calls => calls.map((c, i) => ({ role: "tool", tool_call_id: c.id, content: `result ${i + 1} of ${c.function.name}` }));

if (twoCalls) {
  await check(named("openai: two calls at once, whole, streamed, assembled by the client, and both results back"), async () => {
    const body = { messages: ask, tools, temperature: 0, max_tokens: 200, grammar: twoCalls };
    const whole = (await openai.chat.completions.create(body)).choices[0];
    assert.equal(whole.finish_reason, "tool_calls", JSON.stringify(whole.message));
    const calls = callsOf(whole.message);
    assert.deepEqual(calls.map(c => c.name), ["get_weather", "get_time"], JSON.stringify(whole.message));
    validCalls(calls);
    assert.notEqual(calls[0].id, calls[1].id, "each call has its own id");
    const s = await streamed(openai, body);
    assert.equal(s.finish, "tool_calls");
    assert.deepEqual(withoutIds(s.calls), withoutIds(calls), "the streamed calls (indices 0 and 1) are the whole answer's");
    assert.notEqual(s.calls[0].id, s.calls[1].id);
    const final = await openai.chat.completions.stream(body).finalChatCompletion();
    assert.deepEqual(withoutIds(callsOf(final.choices[0].message)), withoutIds(calls), "the stream helper's calls");
    const messages = [...ask, { role: "assistant", content: whole.message.content, tool_calls: whole.message.tool_calls },
                      ...twoResults(whole.message.tool_calls)];
    const { prompt } = await postJson(URL, "/apply-template", { messages, tools });
    for (const text of ["result 1 of get_weather", "result 2 of get_time"]) assert.ok(prompt.includes(text), prompt);
    const next = await openai.chat.completions.create({ messages, tools, max_tokens: 8, temperature: 0 });
    assert.equal(next.object, "chat.completion");
  });
} else {
  await check(named("openai: a format of one call at a time gives one call; two in the history as the template takes them"), async () => {
    const choice = (await openai.chat.completions.create({ ...forced, parallel_tool_calls: true })).choices[0];
    assert.equal(choice.finish_reason, "tool_calls", JSON.stringify(choice.message));
    const calls = callsOf(choice.message);
    assert.equal(calls.length, 1, JSON.stringify(calls));
    validCalls(calls);
    const two = [0, 1].map(i => ({ id: `call_${i}`, type: "function", function: { name: "get_time", arguments: '{"zone": "UTC", "military": true}' } }));
    const messages = [...ask, { role: "assistant", content: null, tool_calls: two }, ...twoResults(two)];
    const res = await post(URL, "/v1/chat/completions", { messages, tools, max_tokens: 4 });
    const answer = await res.json();
    if (SYNTAX === "harmony") {  // r1pi's template: each call a message; gpt-oss's own: the first
      assert.equal(res.status, 200, JSON.stringify(answer));
      const { prompt } = await postJson(URL, "/apply-template", { messages, tools });
      const calls = prompt.split("<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>").length - 1;
      assert.equal(calls, LABEL === "gpt-oss's template" ? 1 : 2, prompt);
      for (const text of ["result 1 of get_time", "result 2 of get_time"]) assert.ok(prompt.includes(text), prompt);
      return;
    }
    assert.equal(res.status, 400, JSON.stringify(answer));
    assert.match(answer.error.message, /single tool-calls/);  // Llama 3.1's template refuses them
  });
}

// ---- @langchain/openai ----

const getWeather = tool(async () => "18 C", {
  name: "get_weather", description: "The forecast for a city",
  schema: z.object({ city: z.enum(["Paris", "Rome", "Oslo"]), days: z.number().int().min(1).max(7), unit: z.enum(["c", "f"]) }),
});
const getTime = tool(async () => "12:00", {
  name: "get_time", description: "The time in a zone",
  schema: z.object({ zone: z.enum(["UTC", "CET"]), military: z.boolean() }),
});
const chatModel = modelKwargs => new ChatOpenAI({ model: KIND, apiKey: API_KEY, configuration: { baseURL: URL + "/v1" },
                                                  temperature: 0, maxTokens: 200, maxRetries: 0, modelKwargs });

await check(named("@langchain/openai: bindTools with tool_choice required returns tool_calls"), async () => {
  // One call is asked for: a random model given the choice calls its function again and again.
  const bound = chatModel({ parallel_tool_calls: false }).bindTools([getWeather], { tool_choice: "required" });
  const message = await bound.invoke("What is the weather in Paris?");
  assert.ok(message.tool_calls.length >= 1, JSON.stringify(message));
  for (const c of message.tool_calls) {
    assert.equal(c.name, "get_weather");
    valid(weatherSchema, c.args, "the call's args");
  }
});

if (twoCalls)
  await check(named("@langchain/openai: bindTools reads two calls at once"), async () => {
    const message = await chatModel({ grammar: twoCalls }).bindTools([getWeather, getTime]).invoke("Weather and time in Paris?");
    assert.deepEqual(message.tool_calls.map(c => c.name), ["get_weather", "get_time"], JSON.stringify(message));
    for (const c of message.tool_calls) valid(schemaOf[c.name], c.args, `${c.name}'s args`);
  });

// ---- @anthropic-ai/sdk ----

const anthropicTools = tools.map(t => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }));

await check(named("@anthropic-ai/sdk: tool_choice any gives a tool_use block whose input validates, whole and streamed"), async () => {
  const body = { model: KIND, max_tokens: 200, temperature: 0, messages: ask, tools: anthropicTools,
                 tool_choice: { type: "any", disable_parallel_tool_use: true } };
  const message = await anthropic.messages.create(body);
  assert.equal(message.stop_reason, "tool_use", JSON.stringify(message.content));
  const uses = message.content.filter(b => b.type === "tool_use");
  assert.ok(uses.length >= 1, JSON.stringify(message.content));
  for (const u of uses) {
    assert.ok(u.id.length > 0);
    valid(schemaOf[u.name], u.input, `${u.name}'s input`);
  }
  const final = await anthropic.messages.stream(body).finalMessage();
  assert.equal(final.stop_reason, "tool_use");
  assert.deepEqual(final.content.filter(b => b.type === "tool_use").map(u => [u.name, u.input]), uses.map(u => [u.name, u.input]));
  // The result goes back in as a tool_result block.
  const next = await anthropic.messages.create({ ...body, tool_choice: { type: "auto" }, max_tokens: 8,
    messages: [...ask, { role: "assistant", content: message.content },
               { role: "user", content: uses.map(u => ({ type: "tool_result", tool_use_id: u.id, content: "18 C" })) }] });
  assert.equal(next.type, "message");
});

await check(named("@anthropic-ai/sdk: two tool_use blocks and their two tool_result blocks go back in"), async () => {
  const uses = [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Rome", days: 2, unit: "c" } },
                { type: "tool_use", id: "toolu_2", name: "get_time", input: { zone: "CET", military: false } }];
  const turns = answer => [...ask, { role: "assistant", content: uses },
                           { role: "user", content: uses.map(u => ({ type: "tool_result", tool_use_id: u.id, content: answer })) }];
  const messages = turns("sunny");
  const body = { model: KIND, max_tokens: 8, temperature: 0, tools: anthropicTools, messages };
  if (SYNTAX === "llama3") {  // Llama 3.1's template refuses two calls in one turn: a 400 with its message
    await assert.rejects(() => anthropic.messages.create(body), e => e.status === 400 && /single tool-calls/.test(e.message));
    return;
  }
  assert.equal((await anthropic.messages.create(body)).type, "message");
  // Both results are in the prompt: five more words in each count in the tokens.
  const count = async answer => (await anthropic.messages.countTokens({ model: KIND, tools: anthropicTools, messages: turns(answer) })).input_tokens;
  assert.ok(await count("sunny and warm all day long") >= (await count("sunny")) + 2 * 5, "both results count");
});

finish(`tool calls client, ${LABEL}`);
