// The chat page in a real browser: Debian's headless Chromium driven by puppeteer-core. Opens /,
// types a message, and watches the reply stream in (several updates before the end), the
// reasoning in its collapsible block, the tokens/s line; writes a screenshot to $SCREENSHOT;
// then Stop ends an answer (the server counts a cancelled generation) and New chat clears the page.
// Run by run_page.sh with BASE_URL (a server on an R1-template model started with -n 300).
import puppeteer from "puppeteer-core";
import assert from "node:assert/strict";

const { BASE_URL, SCREENSHOT } = process.env;

async function cancelled() {
  const text = await (await fetch(BASE_URL + "/metrics")).text();
  return Number(text.split("\n").find(l => l.startsWith("r1pi_generations_cancelled_total ")).split(" ")[1]);
}

const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = false;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 700 });
  const requests = [];
  page.on("request", r => requests.push(r.url()));
  await page.goto(BASE_URL + "/", { waitUntil: "networkidle0" });
  assert.ok(requests.every(u => u.startsWith(BASE_URL)), "no external resources: " + requests.join(" "));

  // Count the updates of the answer while it streams.
  await page.evaluate(() => {
    window.updates = 0;
    new MutationObserver(() => ++window.updates).observe(document.getElementById("log"),
                                                        { childList: true, subtree: true, characterData: true });
  });
  await page.type("#input", "Why is the sky blue?");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => /tok\/s/.test(document.querySelector(".assistant .stats")?.textContent ?? ""),
                             { timeout: 120000 });
  const seen = await page.evaluate(() => ({
    updates: window.updates,
    user: document.querySelector(".user").textContent,
    reasoningShown: !document.querySelector(".assistant details.reasoning").hidden,
    reasoning: document.querySelector(".assistant details.reasoning div").textContent,
    stats: document.querySelector(".assistant .stats").textContent,
  }));
  assert.equal(seen.user, "Why is the sky blue?");
  assert.ok(seen.updates >= 5, `the reply streamed in pieces (${seen.updates} updates)`);
  assert.ok(seen.reasoningShown && seen.reasoning.length > 0, "R1's reasoning is in its block");
  assert.match(seen.stats, /^300 tokens, [0-9.]+ tok\/s$/);
  // The block folds and unfolds.
  const open = () => page.evaluate(() => document.querySelector(".assistant details.reasoning").open);
  const before = await open();
  await page.click(".assistant details.reasoning summary");
  assert.equal(await open(), !before);
  await page.click(".assistant details.reasoning summary");
  await page.screenshot({ path: SCREENSHOT });
  console.log(`PASS: chat page: streamed reply (${seen.updates} updates), reasoning block, "${seen.stats}"; screenshot ${SCREENSHOT}`);

  // Stop: the answer ends early, and so does the generation on the server.
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
  assert.equal(await page.evaluate(() => document.getElementById("log").children.length), 0);
  console.log("PASS: chat page: Stop ends the answer and its generation, New chat clears the conversation");
} catch (e) {
  failed = true;
  console.log(`FAIL: chat page: ${e.stack || e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
