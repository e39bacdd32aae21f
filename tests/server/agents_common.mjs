// What the agents' client scripts share (agents_client.mjs, tool_calls_client.mjs): the checks'
// runner, ajv validation, the tools and schemas they ask with, HTTP helpers and a streamed chat
// answer put back together. API_KEY and KIND come from the environment (run_agents.sh).
import Ajv2020 from "ajv/dist/2020.js";
import assert from "node:assert/strict";

export const { API_KEY, KIND } = process.env;
const ajv = new Ajv2020({ strict: false, allErrors: true });
let failures = 0;

export async function check(name, body) {
  try {
    await body();
    console.log(`PASS: ${KIND}: ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL: ${KIND}: ${name}: ${e.stack || e}`);
  }
}

// The last line, and the exit status: 1 when a check failed.
export function finish(what) {
  console.log(failures ? `FAIL: ${what} (${KIND}): ${failures} check(s) failed` : `PASS: ${what} (${KIND}, all checks)`);
  process.exit(failures ? 1 : 0);
}

// (zod's schemas name their draft in $schema, which ajv's 2020-12 build does not load: the
// keywords used here mean the same in both.)
export function valid({ $schema, ...schema }, value, what) {
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `${what} ${JSON.stringify(value)} is not valid: ${ajv.errorsText(validate.errors)}`);
}

// A random-weight model writes whatever a constraint lets it, so every schema here is bounded
// (enums, integer ranges, short strings): the answer ends well within max_tokens.
export const weatherSchema = {
  type: "object",
  properties: {
    city: { type: "string", enum: ["Paris", "Rome", "Oslo"] },
    days: { type: "integer", minimum: 1, maximum: 7 },
    unit: { type: "string", enum: ["c", "f"] },
  },
  required: ["city", "days", "unit"],
  additionalProperties: false,
};
export const timeSchema = {
  type: "object",
  properties: { zone: { type: "string", enum: ["UTC", "CET"] }, military: { type: "boolean" } },
  required: ["zone", "military"],
  additionalProperties: false,
};
export const tools = [
  { type: "function", function: { name: "get_weather", description: "The forecast for a city", parameters: weatherSchema } },
  { type: "function", function: { name: "get_time", description: "The time in a zone", parameters: timeSchema } },
];
export const schemaOf = { get_weather: weatherSchema, get_time: timeSchema };
export const ask = [{ role: "user", content: "What is the weather in Paris for the next 3 days?" }];
export const forced = { messages: ask, tools, tool_choice: "required", parallel_tool_calls: false, temperature: 0, max_tokens: 200 };

export function validCalls(calls, names = ["get_weather", "get_time"]) {
  assert.ok(calls.length >= 1, "no tool call");
  for (const call of calls) {
    assert.ok(names.includes(call.name), `called '${call.name}', not one of ${names}`);
    valid(schemaOf[call.name], JSON.parse(call.arguments), `${call.name}'s arguments`);
  }
}

export function post(base, path, body, headers = {}) {
  return fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}`, ...headers },
    body: JSON.stringify(body),
  });
}
export async function postJson(base, path, body) {
  const res = await post(base, path, body);
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer;
}

// A streamed chat answer put back together: text, reasoning and the calls (by index) from their deltas.
export async function streamed(openai, body) {
  const stream = await openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  const out = { reasoning: "", content: "", calls: [], finish: null, usage: null, logprobs: [] };
  for await (const chunk of stream) {
    if (chunk.usage) out.usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    out.reasoning += c.delta.reasoning_content ?? "";
    out.content += c.delta.content ?? "";
    for (const d of c.delta.tool_calls ?? []) {
      const call = (out.calls[d.index] ??= { id: "", name: "", arguments: "" });
      if (d.id) call.id = d.id;
      call.name += d.function?.name ?? "";
      call.arguments += d.function?.arguments ?? "";
    }
    out.logprobs.push(...(c.logprobs?.content ?? []));
    out.finish = c.finish_reason ?? out.finish;
  }
  return out;
}
export const callsOf = message => (message.tool_calls ?? []).map(c => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
export const withoutIds = calls => calls.map(({ name, arguments: args }) => ({ name, arguments: args }));
