// The chat page in a real browser: Debian's headless Chromium driven by puppeteer-core.
//  1. The empty state: a hint naming the model from /v1/models; nothing loaded from elsewhere.
//  2. A reply from the server streams in (several updates), the reasoning in its collapsible
//     block, the tokens/s line; Stop ends an answer (the server counts a cancelled generation);
//     New chat clears the page and brings the hint back.
//  3. The settings drawer: temperature, max tokens and system prompt survive a reload, go into the
//     request's body (seen by intercepting it), and the server honours max_tokens; empty or
//     invalid fields leave them out.
//  4. Markdown: a scripted SSE answer (served by request interception: the test model's output is
//     noise) renders as headings, lists, code, links; HTML and javascript: links in it stay text,
//     and no dialog fires. Rendering in small deltas gives the same DOM as rendering at once.
//  5. A phone-size viewport (390x844): the header is one short line, the input stays in view.
// Screenshots go to $ARTIFACTS. Run by run_page.sh with BASE_URL (a server on an R1-template model
// started with -n 300).
import puppeteer from "puppeteer-core";
import assert from "node:assert/strict";

const { BASE_URL, ARTIFACTS } = process.env;
const shot = name => `${ARTIFACTS}/${name}.png`;

async function cancelled() {
  const text = await (await fetch(BASE_URL + "/metrics")).text();
  return Number(text.split("\n").find(l => l.startsWith("r1pi_generations_cancelled_total ")).split(" ")[1]);
}

// An OpenAI chat stream: the reasoning in one delta, the answer in deltas of 5 characters.
function sse(reasoning, answer) {
  const chunk = delta => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta }] })}\n\n`;
  let body = chunk({ role: "assistant" }) + chunk({ reasoning_content: reasoning });
  for (let i = 0; i < answer.length; i += 5) body += chunk({ content: answer.slice(i, i + 5) });
  body += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 123, total_tokens: 132 },
                                  timings: { predicted_per_second: 42 } })}\n\n`;
  return body + "data: [DONE]\n\n";
}
const REASONING = "Plain **reasoning** <i>stays</i> text.";
const CODE = "def scatter(wavelength_nm):\n" +
             "    return (550 / wavelength_nm) ** 4  # <b>not bold</b>; a long line " + ".".repeat(120);
const MARKDOWN = `## Why the sky is blue

Sunlight is **scattered** by the air's molecules, and *shorter* wavelengths scatter most: as \`1/λ^4\`.
See [Rayleigh scattering](https://en.wikipedia.org/wiki/Rayleigh_scattering), not [this](javascript:window.__xss=3).

Three reasons:
- blue light scatters about 5.5 times more than red
- violet scatters more still, but
  - the Sun emits less of it
  - our eyes are less sensitive to it
3. a numbered item
4. and the next

\`\`\`python
${CODE}
\`\`\`

Raw HTML stays text: <img src=x onerror="window.__xss=1;alert(1)"> and <script>window.__xss=2;alert(2)</script>; snake_case_names stay whole.`;

const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = false;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 700 });
  const requests = [], dialogs = [];
  page.on("request", r => requests.push(r.url()));
  page.on("dialog", d => { dialogs.push(d.message()); d.dismiss(); });
  // The first answer on the page has ended (its stats line says how fast it went).
  const answered = timeout => page.waitForFunction(
    () => /tok\/s/.test(document.querySelector(".assistant .stats")?.textContent ?? ""), { timeout });
  const visible = sel => page.$eval(sel, e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden");

  // ---- 1. The empty state.
  const model = (await (await fetch(BASE_URL + "/v1/models")).json()).data[0].id;
  await page.goto(BASE_URL + "/", { waitUntil: "networkidle0" });
  assert.ok(requests.every(u => u.startsWith(BASE_URL)), "no external resources: " + requests.join(" "));
  assert.ok(await visible("#hint"), "the hint shows before the first message");
  const hint = await page.$eval("#hint", e => e.textContent.replace(/\s+/g, " "));
  assert.ok(hint.includes(`${model} runs locally`) && /Enter sends/.test(hint), "the hint: " + hint);
  console.log(`PASS: chat page: the empty state's hint ("…${model} runs locally…"), no external resources`);

  // ---- 2. A streamed reply from the server; Stop; New chat.
  await page.evaluate(() => {
    window.updates = 0;
    new MutationObserver(() => ++window.updates).observe(document.getElementById("log"),
                                                        { childList: true, subtree: true, characterData: true });
  });
  await page.click(".example");  // the hint's first example fills the input
  assert.equal(await page.$eval("#input", e => e.value), "Why is the sky blue?");
  await page.keyboard.press("Enter");
  await answered(120000);
  const seen = await page.evaluate((log = document.getElementById("log")) => ({
    updates: window.updates,
    user: document.querySelector(".user").textContent,
    reasoningShown: !document.querySelector(".assistant details.reasoning").hidden,
    reasoning: document.querySelector(".assistant details.reasoning div").textContent,
    stats: document.querySelector(".assistant .stats").textContent,
    overflow: log.scrollHeight - log.clientHeight, below: log.scrollHeight - log.scrollTop - log.clientHeight,
  }));
  assert.equal(seen.user, "Why is the sky blue?");
  assert.ok(!(await visible("#hint")), "the hint hides once the conversation starts");
  assert.ok(seen.updates >= 5, `the reply streamed in pieces (${seen.updates} updates)`);
  assert.ok(seen.reasoningShown && seen.reasoning.length > 0, "R1's reasoning is in its block");
  // The page sends no seed, so the server samples with a random one: the test model may draw its
  // end token before the server's -n 300.
  const shown = Number(seen.stats.match(/^([0-9]+) tokens, [0-9.]+ tok\/s$/)?.[1]);
  assert.ok(shown > 0 && shown <= 300, "the stats line: " + seen.stats);
  assert.ok(seen.below < 2, `the view followed the reply to its end (${seen.below} px below of ${seen.overflow})`);
  // The block folds and unfolds.
  const open = () => page.evaluate(() => document.querySelector(".assistant details.reasoning").open);
  const before = await open();
  await page.click(".assistant details.reasoning summary");
  assert.equal(await open(), !before);
  await page.click(".assistant details.reasoning summary");
  await page.screenshot({ path: shot("chat_page") });
  console.log(`PASS: chat page: streamed reply (${seen.updates} updates), reasoning block, "${seen.stats}", scrolled ${seen.overflow} px to its end; screenshot ${shot("chat_page")}`);

  const cancelledBefore = await cancelled();
  await page.type("#input", "Tell me more.");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".assistant")[1]?.querySelector("details div").textContent.length > 0,
                             { timeout: 60000 });
  await page.click("#stop");
  await page.waitForFunction(() => document.querySelectorAll(".assistant")[1].querySelector(".stats").textContent === "stopped",
                             { timeout: 60000 });
  for (let i = 0; i < 600 && (await cancelled()) === cancelledBefore; ++i) await new Promise(r => setTimeout(r, 100));
  assert.equal(await cancelled(), cancelledBefore + 1, "the server cancelled the generation");
  await page.click("#new");
  assert.equal(await page.evaluate(() => document.querySelectorAll("#log .msg").length), 0);
  assert.ok(await visible("#hint"), "New chat brings the hint back");
  console.log("PASS: chat page: Stop ends the answer and its generation, New chat clears the conversation");

  // ---- 3. Settings. From here every chat request is intercepted: its body recorded, and either
  // passed on to the server or answered with the scripted stream.
  const bodies = [];
  let scripted = false;
  await page.setRequestInterception(true);
  page.on("request", r => {
    if (!r.url().endsWith("/v1/chat/completions")) return r.continue();
    bodies.push(JSON.parse(r.postData()));
    if (!scripted) return r.continue();
    r.respond({ status: 200, contentType: "text/event-stream", body: sse(REASONING, MARKDOWN) });
  });
  assert.ok(!(await visible("#settings")), "the drawer starts closed");
  await page.click("#settings-button");
  assert.ok(await visible("#settings"), "Settings opens the drawer");
  assert.equal(await page.$eval("#settings-button", e => e.getAttribute("aria-expanded")), "true");
  await page.type("#temperature", "0.5");
  await page.type("#max-tokens", "20");
  await page.type("#system", "Answer in one word.");
  await page.screenshot({ path: shot("chat_page_settings") });
  await page.reload({ waitUntil: "networkidle0" });
  assert.ok(!(await visible("#settings")), "the drawer is closed after a reload");
  const kept = await page.evaluate(() => ["temperature", "max-tokens", "system"].map(id => document.getElementById(id).value));
  assert.deepEqual(kept, ["0.5", "20", "Answer in one word."], "the settings survive a reload");
  await page.type("#input", "Hello");
  await page.keyboard.press("Enter");
  await answered(60000);
  const sent = bodies.at(-1);
  assert.equal(sent.temperature, 0.5);
  assert.equal(sent.max_tokens, 20);
  assert.deepEqual(sent.messages, [{ role: "system", content: "Answer in one word." }, { role: "user", content: "Hello" }]);
  assert.equal(sent.stream, true);
  const stats20 = await page.$eval(".assistant .stats", e => e.textContent);
  assert.match(stats20, /^20 tokens, /, "the server honoured max_tokens");
  // Emptied fields (and an invalid one): the server's defaults again.
  await page.click("#settings-button");
  for (const id of ["#temperature", "#max-tokens", "#system"]) {
    await page.click(id);
    await page.keyboard.down("Control"); await page.keyboard.press("a"); await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
  }
  await page.type("#temperature", "-1");  // out of range: shown red, and left out too
  assert.ok(await page.$eval("#temperature", e => e.matches(":invalid")));
  await page.click("#settings-close");
  assert.ok(!(await visible("#settings")), "Close closes the drawer");
  console.log(`PASS: chat page: settings survive a reload and go into the request (temperature 0.5, max_tokens 20, system message); "${stats20}"`);

  // ---- 4. Markdown, from the scripted answer.
  scripted = true;
  await page.click("#new");
  await page.type("#input", "Why is the sky blue? Use Markdown.");
  await page.keyboard.press("Enter");
  await answered(60000);
  const plain = bodies.at(-1);
  assert.ok(!("temperature" in plain) && !("max_tokens" in plain), "empty and invalid fields are left out: " + JSON.stringify(plain));
  assert.deepEqual(plain.messages, [{ role: "user", content: "Why is the sky blue? Use Markdown." }], "no system message");
  await new Promise(r => setTimeout(r, 300));  // time for an injected handler, had one got through, to run
  const md = await page.evaluate(() => {
    const box = document.querySelector(".assistant"), answer = box.querySelector(".answer");
    const texts = sel => [...answer.querySelectorAll(sel)].map(e => e.textContent);
    return {
      html: answer.innerHTML,
      h2: texts("h2"), strong: texts("strong"), em: texts("em"), inlineCode: texts(":not(pre) > code"),
      pre: texts("pre > code"),
      links: [...answer.querySelectorAll("a")].map(a => [a.textContent, a.getAttribute("href"), a.rel]),
      outer: [...answer.querySelectorAll(":scope > ul > li")].map(li => li.firstChild.textContent),
      inner: texts("ul ul > li"), ol: texts("ol > li"), olStart: answer.querySelector("ol")?.start,
      injected: box.querySelectorAll("img, script, iframe, b, i").length,
      text: answer.textContent,
      reasoningElements: box.querySelector("details div").children.length,
      reasoning: box.querySelector("details div").textContent,
      xss: window.__xss,
    };
  });
  assert.deepEqual(md.h2, ["Why the sky is blue"]);
  assert.deepEqual(md.strong, ["scattered"]);
  assert.deepEqual(md.em, ["shorter"]);
  assert.deepEqual(md.inlineCode, ["1/λ^4"]);
  assert.deepEqual(md.pre, [CODE]);
  assert.deepEqual(md.links, [["Rayleigh scattering", "https://en.wikipedia.org/wiki/Rayleigh_scattering", "noopener noreferrer"]]);
  assert.deepEqual(md.outer, ["blue light scatters about 5.5 times more than red", "violet scatters more still, but"]);
  assert.deepEqual(md.inner, ["the Sun emits less of it", "our eyes are less sensitive to it"]);
  assert.deepEqual([md.olStart, md.ol], [3, ["a numbered item", "and the next"]]);
  assert.equal(md.injected, 0, "no element from the answer's HTML");
  for (const s of ['<img src=x onerror="window.__xss=1;alert(1)">', "<script>window.__xss=2;alert(2)</script>",
                   "[this](javascript:window.__xss=3)", "snake_case_names"])
    assert.ok(md.text.includes(s), "shown as text: " + s);
  assert.equal(md.xss, undefined, "no injected script ran");
  assert.deepEqual(dialogs, [], "no dialog fired");
  assert.equal(md.reasoningElements, 0);
  assert.equal(md.reasoning, REASONING, "the reasoning stays plain text");
  await page.screenshot({ path: shot("chat_page_markdown") });

  // Streaming re-renders only what changed: deltas of 1 to 7 characters, rendered after each one,
  // end in the same DOM as the page's answer; and the cost of a frame late in a long answer.
  const stream = await page.evaluate((text, expected) => {
    const box = document.createElement("div");
    for (let at = 0, i = 0; at < text.length; ++i) { at += 1 + i % 7; renderMarkdown(box, text.slice(0, at)); }
    const long = Array.from({ length: 40 }, (_, i) => `### Part ${i}\n\n` + text).join("\n\n");
    const live = document.createElement("div");
    const t = performance.now();
    let frames = 0;
    for (let at = 0; at < long.length; at += 64, ++frames) renderMarkdown(live, long.slice(0, at));  // ~16 deltas a frame
    const whole = performance.now() - t;
    const median = render => {  // of 21 runs: one can meet a garbage collection
      const times = Array.from({ length: 21 }, (_, k) => { const t0 = performance.now(); render(k); return performance.now() - t0; });
      return times.sort((a, b) => a - b)[10];
    };
    // What keeps a late frame cheap, checked without a clock: the earlier blocks' nodes survive it.
    const first = live.firstElementChild;
    const last = median(k => renderMarkdown(live, long + " more".repeat(k + 1)));
    const kept = live.firstElementChild === first;
    const fresh = median(() => renderMarkdown(document.createElement("div"), long));
    // Random text of Markdown's characters and HTML (a fixed-seed generator): in deltas the same DOM
    // as at once, only the renderer's own tags, the only attributes an http(s) link's and a list's.
    let seed = 1, odd = [];
    const random = n => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const bits = ["*", "**", "_", "`", "```", "~~~", "\n", "\n\n", "  ", "- ", "1. ", "# ", "[a](", "https://x.y", "javascript:", ")",
                  "]", "\\", "<img src=x onerror=alert(9)>", "<script>alert(9)</script>", "word", "---", "> "];
    const tags = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "LI", "PRE", "CODE", "STRONG", "EM", "A", "HR"]);
    for (let n = 0; n < 300; ++n) {
      const text = Array.from({ length: 40 }, () => bits[random(bits.length)]).join("");
      const once = document.createElement("div"), parts = document.createElement("div");
      renderMarkdown(once, text);
      for (let at = 0; at < text.length;) { at += 1 + random(6); renderMarkdown(parts, text.slice(0, at)); }
      const bad = [...once.querySelectorAll("*")].filter(e => !tags.has(e.tagName) ||
        [...e.attributes].some(a => !(e.tagName === "A" && ["target", "rel"].includes(a.name) ||
                                      e.tagName === "A" && a.name === "href" && /^https?:\/\//.test(a.value) ||
                                      e.tagName === "OL" && a.name === "start")));
      if (parts.innerHTML !== once.innerHTML || bad.length) odd.push(text);
    }
    return { same: box.innerHTML === expected, odd, kb: long.length / 1024, frames, whole, last, fresh, kept };
  }, MARKDOWN, md.html);
  assert.ok(stream.same, "rendering in deltas gives the DOM of rendering at once");
  assert.deepEqual(stream.odd, [], "random Markdown: the same DOM in deltas, and no foreign tag or attribute");
  // Timings are printed, never asserted (a busy machine); the kept nodes are the property behind them.
  assert.ok(stream.kept, "a late frame keeps the DOM of the blocks before it");
  console.log(`PASS: chat page: Markdown (heading, emphasis, code, lists, http link), HTML and javascript: stay text, no dialog; ` +
              `screenshot ${shot("chat_page_markdown")}`);
  console.log(`PASS: chat page: streamed Markdown equals one render (also for 300 random texts); a ${stream.kb.toFixed(0)} KB answer: ${stream.frames} renders ` +
              `${stream.whole.toFixed(0)} ms in all, a late one ${stream.last.toFixed(2)} ms (a fresh render ${stream.fresh.toFixed(2)} ms; medians of 21)`);

  // ---- 5. A phone.
  // (Not isMobile: puppeteer reloads the page to change that, which would empty the conversation.)
  await page.setViewport({ width: 390, height: 844 });
  const layout = () => page.evaluate(() => {
    const rect = sel => document.querySelector(sel).getBoundingClientRect().toJSON();
    const header = rect("header");
    return {
      header: header.height,
      oneLine: [...document.querySelector("header").children].every(c => {
        const r = c.getBoundingClientRect();
        return r.top >= header.top && r.bottom <= header.bottom && r.right <= header.right;
      }),
      input: rect("#input"), send: rect("#send"), hint: rect("#hint"),
      width: document.documentElement.scrollWidth, height: innerHeight,
    };
  });
  let phone = await layout();
  assert.ok(phone.header <= 44, `the header is ${phone.header} px high`);
  assert.ok(phone.oneLine, "the header's title and buttons sit on one line");
  assert.ok(phone.input.top >= phone.header && phone.input.bottom <= phone.height && phone.send.right <= 390,
            "the input is in view: " + JSON.stringify(phone.input));
  assert.ok(phone.width <= 390, `nothing widens the page (${phone.width} px): long code lines scroll in their block`);
  await page.screenshot({ path: shot("chat_page_phone") });
  await page.click("#new");
  phone = await layout();
  assert.ok(phone.hint.bottom <= phone.input.top, "the hint fits above the input");
  await page.screenshot({ path: shot("chat_page_phone_empty") });
  console.log(`PASS: chat page: at 390x844 the header is one ${phone.header} px line and the input in view; ` +
              `screenshots ${shot("chat_page_phone")}, ${shot("chat_page_phone_empty")}`);
} catch (e) {
  failed = true;
  console.log(`FAIL: chat page: ${e.stack || e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
