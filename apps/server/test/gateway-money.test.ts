import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { countTokens } from "@gw/providers";
import { FAKE_IMAGE_TOKENS, fakeChatReply, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { IMAGE_PART_TOKENS, IdempotencyStore } from "@gw/gateway";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: "textA-4", messages: [{ role: "user", content }], max_tokens: 100, ...extra });

/** The text a stream's chunks carried. */
const deltaText = (sse: string): string => sse.split("\n\n").filter((e) => e.startsWith("data: {") && e.includes('"delta"'))
  .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string | null } }> }).choices[0]?.delta.content ?? "").join("");

describe("money: failures cost nothing, cut streams charge what was produced, holds never overdraw", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({ env: { ...fakes.env, UPSTREAM_MAX_RETRIES: "1", UPSTREAM_TIMEOUT_MS: "1500" }, config: { plans } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  it("upstream 500 after retries: 502 upstream_error, balance unchanged", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failStatus(5, 500);
    const res = await postJson(server, "/v1/chat/completions", user.key, chat("hello"));
    expect(res.status).toBe(502);
    expect((await readJson(res)).error).toMatchObject({ code: "upstream_error", type: "api_error" });
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  it("garbage and wrong-shape answers: 502, nothing charged", async () => {
    const user = await fundedUser(server, 1);
    for (const kind of ["garbage", "wrong-shape"] as const) {
      fakes.textA.failNext(1, { kind });
      const res = await postJson(server, "/v1/chat/completions", user.key, chat("hello"));
      expect(res.status).toBe(502);
    }
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  it("a hanging upstream: 504 upstream_timeout, nothing charged", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(5, { kind: "hang" });
    const res = await postJson(server, "/v1/chat/completions", user.key, chat("hello"));
    expect(res.status).toBe(504);
    expect((await readJson(res)).error.code).toBe("upstream_timeout");
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  it("a stream the upstream truncates after output began is charged for the produced text only", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(1, { kind: "truncate" });
    const res = await postJson(server, "/v1/chat/completions", user.key, chat("one two three four five six seven eight", { stream: true }));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"error"');
    expect(text).not.toContain("[DONE]");
    // the upstream was reached and then broke: the final error event says so
    expect(text).toContain("The upstream stream broke off before it finished.");
    expect(text).not.toContain("could not be reached");
    const produced = deltaText(text);
    expect(produced.length).toBeGreaterThan(0);
    const spent = 1_000_000 - (await balanceMicros(server, user.userId));
    // prompt (counted with the tokenizer plus chat framing) + 2 per produced token
    expect(spent).toBe(countTokens("one two three four five six seven eight") + 4 + 3 + 2 * countTokens(produced));
  });

  it("a cut stream that asked for usage gets a usage chunk with what it was charged, before the error event", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(1, { kind: "truncate" });
    const res = await postJson(server, "/v1/chat/completions", user.key, chat("one two three four five six seven eight", { stream: true, stream_options: { include_usage: true } }));
    const events = (await res.text()).trim().split("\n\n");
    expect(events.at(-1)).toContain('"error"');
    const usage = JSON.parse(events.at(-2)?.slice(6) ?? "{}") as { choices: unknown[]; usage: Record<string, number> };
    expect(usage.choices).toEqual([]);
    const spent = 1_000_000 - (await balanceMicros(server, user.userId));
    const produced = countTokens(deltaText(events.join("\n\n")));
    expect(usage.usage).toEqual({ prompt_tokens: spent - 2 * produced, completion_tokens: produced, total_tokens: spent - produced, cost: spent / 1e6 });
  });

  it("a cut textB stream charges the prompt Anthropic reported in message_start (images included), not the gateway's count", async () => {
    const user = await fundedUser(server, 1);
    fakes.textB.failNext(1, { kind: "truncate" });
    const content = [{ type: "text", text: "what is on this picture" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }];
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textB-3-haiku", messages: [{ role: "user", content }], max_tokens: 100, stream: true });
    const text = await res.text();
    expect(text).toContain('"error"');
    const produced = deltaText(text);
    expect(produced.length).toBeGreaterThan(0);
    const reported = fakeChatReply([{ role: "user", content }]).promptTokens;
    expect(reported).toBe(5 + FAKE_IMAGE_TOKENS);
    const spent = 1_000_000 - (await balanceMicros(server, user.userId));
    expect(spent).toBe(reported + 2 * countTokens(produced));
  });

  it("a cut OpenAI-protocol stream, whose usage comes last, counts each image part at the least an image costs there", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(1, { kind: "truncate" });
    const content = [{ type: "text", text: "what is on this picture" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }];
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content }], max_tokens: 100, stream: true });
    const produced = deltaText(await res.text());
    expect(produced.length).toBeGreaterThan(0);
    const spent = 1_000_000 - (await balanceMicros(server, user.userId));
    // text + chat framing + one image at OpenAI's low-detail price, then 2 per produced token
    expect(spent).toBe(countTokens("what is on this picture") + 4 + 3 + IMAGE_PART_TOKENS + 2 * countTokens(produced));
  });

  it.each([
    ["textA-4", "the usage chunk"],
    ["textB-3-haiku", "message_delta"],
  ])("%s: a stream cut after its finish reason and %s, before the end marker, is complete and charged the upstream's usage", async (model) => {
    const user = await fundedUser(server, 1);
    const fake = model === "textA-4" ? fakes.textA : fakes.textB;
    fake.failNext(1, { kind: "truncate", at: "end" });
    const messages = [{ role: "user", content: "one two three" }];
    const res = await postJson(server, "/v1/chat/completions", user.key, { model, messages, max_tokens: 100, stream: true, stream_options: { include_usage: true } });
    const events = (await res.text()).trim().split("\n\n");
    expect(events.some((e) => e.includes('"error"'))).toBe(false);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(events.some((e) => e.includes('"finish_reason":"stop"'))).toBe(true);
    const reply = fakeChatReply(messages, 100);
    const usage = JSON.parse(events.at(-2)?.slice(6) ?? "{}").usage;
    expect(usage).toMatchObject({ prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens });
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(reply.promptTokens + 2 * reply.completionTokens);
  });

  it.each([false, true])("textB (stream %s): prompt tokens Anthropic reports as cache writes and reads are prompt tokens, shown and charged", async (stream) => {
    const user = await fundedUser(server, 1);
    // of the prompt's 8 words, Messages reports 2 in input_tokens, 2 written to and 4 read from its cache
    fakes.textB.cachedPromptTokens = { creation: 2, read: 4 };
    const messages = [{ role: "user", content: "one two three four five six seven eight" }];
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textB-3-haiku", messages, max_tokens: 100, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
    expect(res.status).toBe(200);
    const usage = stream
      ? JSON.parse((await res.text()).trim().split("\n\n").at(-2)?.slice(6) ?? "{}").usage
      : (await readJson(res)).usage;
    const reply = fakeChatReply(messages, 100);
    expect(reply.promptTokens).toBe(8);
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: reply.completionTokens, total_tokens: 8 + reply.completionTokens });
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(8 + 2 * reply.completionTokens);
  });

  it.each([false, true])("a cost above what the balance covers charges the balance and records the rest as uncharged; the usage record's cost is the charge (stream %s)", async (stream) => {
    const user = await fundedUser(server, 0);
    const messages = [{ role: "user", content: [{ type: "text", text: "what is on this picture" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }];
    const held = countTokens("what is on this picture") + 4 + 3 + IMAGE_PART_TOKENS + 2 * 100;
    const reply = fakeChatReply(messages, 100);
    const cost = reply.promptTokens + 2 * reply.completionTokens;
    await server.app.context.ledger.credit(user.userId, held, { kind: "adjustment", idempotencyKey: `exact-${user.userId}` });
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
    expect(res.status).toBe(200);
    const text = await res.text();
    const reported = stream ? JSON.parse(text.trim().split("\n\n").at(-2)?.slice(6) ?? "{}").usage.cost : Number(res.headers.get("x-request-cost"));
    expect(reported).toBe(held / 1e6);
    expect(await balanceMicros(server, user.userId)).toBe(0);
    const usage = await readJson(await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } }));
    expect(usage.data.map((r: { cost: number }) => r.cost)).toEqual([held / 1e6]);
    const [settle] = await server.app.context.ledger.entries(user.userId, { kinds: ["settle"] });
    expect(settle?.cost).toBe(held);
    expect(settle?.meta?.uncharged).toBe(cost - held);
    expect(await server.app.context.ledger.verify(user.userId)).toMatchObject({ ok: true });
  });

  it.each([false, true])("a cost above the hold is charged in full from the balance, also when the request outlasts the instance's idle reservation (stream %s)", async (stream) => {
    const user = await fundedUser(server, 1);
    // An image part: held at the least an image costs, reported by the upstream at FAKE_IMAGE_TOKENS.
    const messages = [{ role: "user", content: [{ type: "text", text: "what is on this picture" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }];
    const held = countTokens("what is on this picture") + 4 + 3 + IMAGE_PART_TOKENS + 2 * 100;
    const reply = fakeChatReply(messages, 100);
    const cost = reply.promptTokens + 2 * reply.completionTokens;
    expect(cost).toBeGreaterThan(held);
    // A slow upstream; meanwhile the user looks idle and the instance gives its unused reserved credits back.
    fakes.textA.failNext(1, { kind: "delay", ms: 1_000 });
    const reached = fakes.textA.requests.length;
    const pending = postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
    // once the request holds its credits and waits at the upstream (a fixed wait could miss that on a loaded machine)
    await vi.waitFor(() => expect(fakes.textA.requests.length).toBeGreaterThan(reached), { timeout: 10_000, interval: 10 });
    server.clock.advance(5_000);
    await server.app.context.ledger.flush();
    const res = await pending;
    expect(res.status).toBe(200);
    const text = await res.text();
    const reported = stream ? JSON.parse(text.trim().split("\n\n").at(-2)?.slice(6) ?? "{}").usage.cost : Number(res.headers.get("x-request-cost"));
    expect(reported).toBe(cost / 1e6);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(cost);
    await server.app.context.ledger.flushCharges(user.userId);
    const [settle] = await server.app.context.ledger.entries(user.userId, { kinds: ["settle"] });
    expect(settle?.cost).toBe(cost);
    expect(settle?.meta?.uncharged).toBeUndefined();
    expect(await server.app.context.ledger.verify(user.userId)).toMatchObject({ ok: true });
  });

  it("a client that disconnects mid-stream is charged only for what was produced", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.chunkDelayMs = 150;
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST", signal: controller.signal,
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body: JSON.stringify(chat(words, { stream: true })),
    });
    const reader = res.body?.getReader();
    let received = "";
    while (reader && !received.includes("w1")) {
      const { value } = await reader.read();
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    const full = 40 + 2 * 41; // what the whole answer would have cost at the fake's usage
    // until the request settles: its hold (max_tokens 100) is more than the full answer costs; a fixed wait was too
    // short on a loaded machine
    const spentNow = async () => 1_000_000 - (await balanceMicros(server, user.userId));
    await vi.waitFor(async () => expect(await spentNow()).toBeLessThan(full), { timeout: 10_000, interval: 50 });
    expect(await spentNow()).toBeGreaterThan(0);
    expect((await server.app.context.ledger.verify(user.userId)).ok).toBe(true);
  });

  const policyLabel = {
    violence: "violence and gore", hate: "hateful or discriminatory imagery", sexual: "explicit sexual content",
    intellectual_property: "content infringing intellectual property", personal_information: "personal or private information",
  };
  type PolicyCategory = keyof typeof policyLabel;

  /** Each request is 400 content_policy_violation naming its category; none reaches an image upstream, none costs anything. */
  async function expectRefusedFree(key: string, userId: string, cases: Array<[string, Record<string, unknown>, PolicyCategory]>): Promise<void> {
    const before = await balanceMicros(server, userId);
    for (const [path, body, category] of cases) {
      const res = await postJson(server, path, key, body);
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual({ error: {
        message: `The prompt violates the usage policy: ${policyLabel[category]} (category '${category}').`,
        type: "invalid_request_error", code: "content_policy_violation",
      } });
    }
    expect(fakes.imageA.requests).toHaveLength(0);
    expect(fakes.imageB.requests).toHaveLength(0);
    expect(await balanceMicros(server, userId)).toBe(before);
  }

  it("image prompts that break the policy: 400 content_policy_violation naming the category, never sent upstream", async () => {
    const user = await fundedUser(server, 1);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/api/v1/imageB.1", { prompt: "a N.U.D.E portrait" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "decapitated soldier, gore everywhere" }, "violence"],
      ["/api/v1/imageB.1", { prompt: "a poster with a swastika" }, "hate"],
      ["/api/v1/imageA/generate", { prompt: "Mickey Mouse on a skateboard" }, "intellectual_property"],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: "a card showing SSN 123-45-6789" }, "personal_information"],
      ["/api/v1/imageB.1", { prompt: "a calm lake", style: "porn" }, "sexual"],
      // evasions and context cases a black-box audit saw answered 200, charged and sent upstream
      ["/api/v1/imageB.1", { prompt: "nu\u200bde woman" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "nud\u0435 woman" }, "sexual"],
      ["/api/v1/imageB.1", { prompt: "a soldier killing a child" }, "violence"],
      ["/api/v1/imageA/generate", { prompt: "Mario from Nintendo jumping" }, "intellectual_property"],
    ];
    for (const [path, body, category] of cases) {
      const res = await postJson(server, path, user.key, body);
      expect(res.status).toBe(400);
      const json = await readJson(res);
      expect(json.error.code).toBe("content_policy_violation");
      expect(json.error.message).toContain(category);
    }
    expect(fakes.imageA.requests).toHaveLength(0);
    expect(fakes.imageB.requests).toHaveLength(0);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    // word boundaries: innocent words that contain a term pass
    const ok = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a sextant on a desk in Essex" });
    expect(ok.status).toBe(200);
    // a word that is a violation only in context passes alone
    const prop = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a travel passport lying on a map, stock photo" });
    expect(prop.status).toBe(200);
    // a negative prompt lists what must not be shown and is never sent upstream: not moderated
    const negative = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a landscape", negative_prompt: "nude" });
    expect(negative.status).toBe(200);
    expect(fakes.imageB.requests.every((r) => !r.body.toString("utf8").includes("nude"))).toBe(true);
  });

  it("explicit sexual slang is 400 content_policy_violation (sexual) on every image route, never sent upstream, free", async () => {
    const user = await fundedUser(server, 1);
    const cases: Array<[string, Record<string, unknown>]> = [
      ["/api/v1/imageB.1", { prompt: "a dick pic" }],
      ["/api/v1/imageA/generate", { prompt: "a bukkake scene", num_outputs: 4 }],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: "a woman giving a blow job" }],
      ["/api/v1/imageB.1", { prompt: "a cumshot, photorealistic" }],
      ["/api/v1/imageA/generate", { prompt: "an upskirt photo" }],
    ];
    await expectRefusedFree(user.key, user.userId, cases.map(([path, body]) => [path, body, "sexual"]));
    // the birds and the rooster are not slang
    const birds = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a great tit and a cock in a farmyard" });
    expect(birds.status).toBe(200);
  });

  it("a person killed by a violent act, told in the passive, is 400 content_policy_violation (violence), never sent upstream, free", async () => {
    const user = await fundedUser(server, 1);
    const cases: Array<[string, Record<string, unknown>]> = [
      ["/api/v1/imageB.1", { prompt: "a woman strangled to death" }],
      ["/api/v1/imageA/generate", { prompt: "a prisoner hacked to death with a machete", num_outputs: 2 }],
      ["/api/v1/task", { model: "imageB-1-pro", prompt: "a man burned to death, photorealistic" }],
    ];
    await expectRefusedFree(user.key, user.userId, cases.map(([path, body]) => [path, body, "violence"]));
    // idioms are not violence
    const idiom = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a cat bored to death on a rainy afternoon" });
    expect(idiom.status).toBe(200);
  });

  it("harmless phrases with a listed word pass on the image routes: corpse pose, stabbing pain, stripper clips, sex education", async () => {
    const user = await fundedUser(server, 1);
    for (const prompt of ["a woman in corpse pose at the end of a yoga class", "a stabbing pain illustration for a medical ad", "stripper clips for a rifle on a table", "a sex education textbook cover"]) {
      const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt });
      expect(res.status).toBe(200);
      expect(await readJson(res)).toMatchObject({ status: "complete", prompt, images: [{ width: 1024, height: 1024 }] });
    }
    expect(fakes.imageB.requests.filter((r) => r.method === "POST")).toHaveLength(4);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - 4 * 100_000);
    // the rest of the prompt is still read
    const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a corpse pose next to a real corpse" });
    expect(res.status).toBe(400);
    expect((await readJson(res)).error).toMatchObject({ code: "content_policy_violation", message: expect.stringContaining("'violence'") });
  });

  it("the fifth audit's misses are 400 content_policy_violation naming their category on every image route, never sent upstream, free; their near misses are served", async () => {
    const user = await fundedUser(server, 1);
    const cases: Array<[string, Record<string, unknown>, PolicyCategory]> = [
      ["/api/v1/imageB.1", { prompt: "children killed in war" }, "violence"],
      ["/api/v1/imageA/generate", { prompt: "a dead baby", num_outputs: 2 }, "violence"],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: "a man with his throat cut" }, "violence"],
      ["/api/v1/imageB.1", { prompt: "SS insignia on a banner" }, "hate"],
      ["/api/v1/imageA/generate", { prompt: "the n word painted on a wall" }, "hate"],
      ["/api/v1/imageB.1", { prompt: "a man with an erection" }, "sexual"],
      ["/api/v1/imageB.1", { prompt: "a calm lake", style: "s e x" }, "sexual"],
      ["/api/v1/task", { model: "imageB-1-pro", prompt: "nuuude woman on a beach" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "pr0n" }, "sexual"],
    ];
    await expectRefusedFree(user.key, user.userId, cases);
    const harmless = ["a dead tree on a dead end street", "cut the cake, she killed it on stage", "the SS Titanic leaving Essex", "the erection of a building"];
    for (const prompt of harmless) {
      const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt });
      expect(res.status).toBe(200);
      expect(await readJson(res)).toMatchObject({ status: "complete", prompt });
    }
    expect(fakes.imageB.requests.filter((r) => r.method === "POST")).toHaveLength(harmless.length);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - harmless.length * 100_000);
  });

  it("the style is read with the prompt it is folded into upstream: a context split between the two is 400 content_policy_violation, never sent upstream, free", async () => {
    const user = await fundedUser(server, 1);
    await expectRefusedFree(user.key, user.userId, [
      ["/api/v1/imageB.1", { prompt: "a sexy woman on a bed", style: "lingerie" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "Elsa in a snowy castle", style: "frozen" }, "intellectual_property"],
      ["/api/v1/imageB.1", { prompt: "a superhero flying over a city", style: "marvel" }, "intellectual_property"],
      ["/api/v1/imageA/generate", { prompt: "a Hindu swastika on a flag", style: "nazi propaganda poster" }, "hate"],
    ]);
    // each half alone is harmless, and so is a harmless style with either
    for (const [prompt, style] of [["a sexy red sports car", "photorealistic"], ["a snowy castle", "frozen"], ["a woman in a bathrobe", "watercolor"]]) {
      const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt, style });
      expect(res.status).toBe(200);
    }
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - 3 * 100_000);
  });

  it("prompts typed in small capitals, negative squared or parenthesized letters are 400 content_policy_violation, never sent upstream, free", async () => {
    const user = await fundedUser(server, 1);
    await expectRefusedFree(user.key, user.userId, [
      ["/api/v1/imageB.1", { prompt: "a \u0274\u1d1c\u1d05\u1d07 woman on a beach" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "\u1d18\u1d0f\u0280\u0274", num_outputs: 4 }, "sexual"],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: "\u0262\u1d0f\u0280\u1d07 everywhere" }, "violence"],
      ["/api/v1/imageB.1", { prompt: "a \u0274\u1d00\u1d22\u026a \ua730\u029f\u1d00\u0262" }, "hate"],
      ["/api/v1/imageA/generate", { prompt: "\u{1F17F}\u{1F178}\u{1F17A}\u{1F170}\u{1F172}\u{1F177}\u{1F184} in Paris" }, "intellectual_property"],
      ["/api/v1/imageB.1", { prompt: "a \u24a9\u24b0\u249f\u24a0 woman" }, "sexual"],
      ["/api/v1/imageA/generate", { prompt: "a \u{1F11D}\u{1F124}\u{1F113}\u{1F114} woman" }, "sexual"],
    ]);
    const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a \u1d04\u1d00\u1d1b on a \ua731\u1d0f\ua730\u1d00" });
    expect(res.status).toBe(200);
  });

  it("a named person's home address, phone number or medical records asked for with a possessive, or a phone number in the international form, is 400 content_policy_violation, never sent upstream, free", async () => {
    const user = await fundedUser(server, 1);
    await expectRefusedFree(user.key, user.userId, [
      ["/api/v1/imageB.1", { prompt: "Taylor Swift's home address written on an envelope" }, "personal_information"],
      ["/api/v1/imageA/generate", { prompt: "John Smith's phone number on a sticky note" }, "personal_information"],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: "Jane Doe's medical records on a desk" }, "personal_information"],
      // and a phone number in the international form
      ["/api/v1/imageB.1", { prompt: "a business card with +44 20 7946 0958" }, "personal_information"],
    ]);
    const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "the restaurant's phone number on a neon sign" });
    expect(res.status).toBe(200);
  });

  it("a 402 under concurrency says what could be spent when it was refused: current_balance < required_amount", async () => {
    const user = await fundedUser(server, 0);
    await server.app.context.ledger.credit(user.userId, 7 * 2_010, { kind: "adjustment", idempotencyKey: `few-${user.userId}` });
    // Slow answers keep the first holds in flight while the rest arrive; some settle while others are refused.
    fakes.textA.failNext(30, { kind: "delay", ms: 150 });
    const results = await Promise.all(Array.from({ length: 60 }, () => postJson(server, "/v1/chat/completions", user.key, chat("hello", { max_tokens: 1000 }))));
    const refusals = await Promise.all(results.filter((r) => r.status === 402).map(async (r) => (await readJson(r)).error));
    expect(refusals.length).toBeGreaterThan(0);
    for (const error of refusals) {
      expect(error.code).toBe("insufficient_credits");
      expect(error.current_balance).toBeLessThan(error.required_amount);
    }
    expect(results.every((r) => r.status === 200 || r.status === 402)).toBe(true);
  });

  it("THE CONCURRENCY PROOF: a balance for exactly K requests, 4K concurrent -> at most K succeed, never negative, ledger consistent", async () => {
    const K = 5;
    const user = await fundedUser(server, 0);
    // one imageA request holds and costs exactly $0.10
    await server.app.context.ledger.credit(user.userId, K * 100_000, { kind: "adjustment", idempotencyKey: `proof-${user.userId}` });
    const results = await Promise.all(Array.from({ length: 4 * K }, () => postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a small boat" })));
    const statuses = results.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeLessThanOrEqual(K);
    expect(ok).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    const balance = await balanceMicros(server, user.userId);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(balance).toBe((K - ok) * 100_000);
    const verified = await server.app.context.ledger.verify(user.userId);
    expect(verified).toMatchObject({ ok: true });
  });

  it.each([
    // the output cap (4096) is below what the window leaves: an OpenAI upstream told nothing writes past the cap
    ["textA-4-turbo", 5_000, false],
    ["textA-4-turbo", 5_000, true],
    // the window leaves less than the cap: a Messages upstream used to be sent the cap
    ["textB-2", 97_000, false],
  ] as const)("%s without max_tokens (%i words, stream %s): the upstream gets the held budget, so a balance of exactly the hold pays the whole answer", async (model, words, stream) => {
    const user = await fundedUser(server, 0);
    const content = Array.from({ length: words }, () => "a").join(" ");
    const body = { model, messages: [{ role: "user", content }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) };
    const definition = server.app.context.config.models.find((m) => m.id === model);
    const counted = countTokens(content) + 4 + 3;
    const budget = Math.min(definition?.maxOutputTokens ?? 0, (definition?.contextWindow ?? 0) - counted);
    const held = counted + 2 * budget;
    const refused = await postJson(server, "/v1/chat/completions", user.key, body);
    expect(refused.status).toBe(402);
    expect((await readJson(refused)).error).toMatchObject({ current_balance: 0, required_amount: held / 1e6 });
    await server.app.context.ledger.credit(user.userId, held, { kind: "adjustment", idempotencyKey: `hold-${user.userId}` });

    const res = await postJson(server, "/v1/chat/completions", user.key, body);
    expect(res.status).toBe(200);
    const text = await res.text();
    const fake = model === "textB-2" ? fakes.textB : fakes.textA;
    expect(JSON.parse(fake.requests.at(-1)?.body.toString("utf8") ?? "{}").max_tokens).toBe(budget);
    // the fake writes the whole echo unless told a max_tokens: now cut at the budget
    const cost = words + 2 * budget;
    expect(cost).toBeLessThanOrEqual(held);
    const reported = stream ? JSON.parse(text.trim().split("\n\n").at(-2)?.slice(6) ?? "{}").usage.cost : Number(res.headers.get("x-request-cost"));
    expect(reported).toBe(cost / 1e6);
    expect(await balanceMicros(server, user.userId)).toBe(held - cost);
    await server.app.context.ledger.flushCharges(user.userId);
    const [settle] = await server.app.context.ledger.entries(user.userId, { kinds: ["settle"] });
    expect(settle?.cost).toBe(cost);
    expect(settle?.meta).toMatchObject({ promptTokens: words, completionTokens: budget });
    expect(settle?.meta?.uncharged).toBeUndefined();
  }, 30_000);
});

describe("limits, idempotency and the usage API", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 5, concurrentRequests: 2 } : p));
    server = await startTestServer({ env: fakes.env, config: { plans } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("requests per minute: X-RateLimit-* on every answer, then 429 with Retry-After", async () => {
    const user = await fundedUser(server, 1);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const refused = await postJson(server, "/v1/chat/completions", user.key, chat("x"));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 1);
    const body = await readJson(refused);
    expect(body.error).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error" });
    expect(body.error.message).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
  });

  it("a caller refused for its key (401) is told a new account's allowance, nothing counted, on every task endpoint", async () => {
    const paths: Array<[string, string]> = [["POST", "/v1/chat/completions"], ["POST", "/api/v1/task"], ["POST", "/api/v1/imageB.1"], ["GET", "/v1/models"]];
    for (const [method, path] of paths) {
      for (const authorization of [undefined, "Bearer sk-not-a-real-key-0000000000000000", "Basic abc"]) {
        const res = await fetch(`${server.url}${path}`, {
          method, headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
          body: method === "POST" ? JSON.stringify(chat("x")) : undefined,
        });
        expect(res.status).toBe(401);
        expect((await readJson(res)).error.code).toBe("invalid_api_key");
        expect(res.headers.get("x-ratelimit-limit")).toBe("5");
        expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
        expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(server.clock.now() / 1000);
      }
    }
  });

  it("a plan change within the minute keeps the requests already made", async () => {
    const user = await fundedUser(server, 1);
    const models = () => fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
    for (let i = 0; i < 5; i++) expect((await models()).status).toBe(200);
    const plans = server.app.context.plans;
    const planFor = plans.planFor.bind(plans);
    plans.planFor = async (userId) => ({ ...(await planFor(userId)), ...(userId === user.userId ? { id: "bigger", requestsPerMinute: 8 } : {}) });
    try {
      const headers = [];
      for (let i = 0; i < 4; i++) {
        const res = await models();
        headers.push([res.status, res.headers.get("x-ratelimit-limit"), res.headers.get("x-ratelimit-remaining")]);
      }
      expect(headers).toEqual([[200, "8", "2"], [200, "8", "1"], [200, "8", "0"], [429, "8", "0"]]);
    } finally {
      plans.planFor = planFor;
    }
  });

  it("concurrent requests over the plan: 429 rate_limit_exceeded", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(2, { kind: "delay", ms: 500 });
    const results = await Promise.all(Array.from({ length: 3 }, () => postJson(server, "/v1/chat/completions", user.key, chat("x"))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("a client that leaves while its limits are checked does not keep a concurrency slot", async () => {
    const user = await fundedUser(server, 1);
    const plans = server.app.context.plans;
    const planFor = plans.planFor.bind(plans);
    // a slow plan lookup (a cache miss reads the database) keeps the request in admission while the client leaves
    let looked = 0;
    plans.planFor = async (userId) => {
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return await planFor(userId);
      } finally {
        looked++;
      }
    };
    try {
      for (let i = 0; i < 2; i++) {
        const aborted = postJson(server, "/v1/chat/completions", user.key, chat("gone"), {}, AbortSignal.timeout(100));
        await expect(aborted).rejects.toThrow();
      }
      // until both admissions are past their plan lookup (a fixed wait was too short on a loaded machine), then a
      // moment for the rest of the admission
      await vi.waitFor(() => expect(looked).toBe(2), { timeout: 10_000, interval: 25 });
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      plans.planFor = planFor;
    }
    const res = await postJson(server, "/v1/chat/completions", user.key, chat("still served"));
    expect(res.status).toBe(200);
  });

  it("Idempotency-Key replays the first answer without a second charge; a concurrent duplicate gets 409", async () => {
    const user = await fundedUser(server, 1);
    const headers = { "idempotency-key": "order-1" };
    const first = await postJson(server, "/v1/chat/completions", user.key, chat("pay once"), headers);
    const after = await balanceMicros(server, user.userId);
    const second = await postJson(server, "/v1/chat/completions", user.key, chat("pay once"), headers);
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(await readJson(second)).toEqual(await readJson(first));
    expect(await balanceMicros(server, user.userId)).toBe(after);
    fakes.textA.failNext(1, { kind: "delay", ms: 2_000 });
    // the duplicate is sent once the first request has reached the upstream (so holds the key): a fixed head start
    // was not always enough on a loaded machine
    const reached = fakes.textA.requests.length;
    const first2 = postJson(server, "/v1/chat/completions", user.key, chat("slow"), { "idempotency-key": "order-2" });
    await vi.waitFor(() => expect(fakes.textA.requests.length).toBeGreaterThan(reached), { timeout: 10_000, interval: 10 });
    const [a, b] = await Promise.all([first2, postJson(server, "/v1/chat/completions", user.key, chat("slow"), { "idempotency-key": "order-2" })]);
    expect([a.status, b.status]).toEqual([200, 409]);
    expect((await readJson(b)).error.code).toBe("conflict");
    // a duplicate in progress may be retried shortly
    expect(b.headers.get("retry-after")).toBe("1");
  });

  it("Idempotency-Key compares the request, not its bytes; a key reused for another request is final (x-should-retry: false)", async () => {
    const user = await fundedUser(server, 1);
    const headers = { "idempotency-key": "order-3" };
    const first = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "same" }], max_tokens: 50 }, headers);
    expect(first.status).toBe(200);
    const after = await balanceMicros(server, user.userId);
    // the same JSON with its keys in another order
    const reordered = await postJson(server, "/v1/chat/completions", user.key, { max_tokens: 50, messages: [{ content: "same", role: "user" }], model: "textA-4" }, headers);
    expect(reordered.status).toBe(200);
    expect(reordered.headers.get("idempotent-replayed")).toBe("true");
    expect(await balanceMicros(server, user.userId)).toBe(after);
    const other = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "different" }], max_tokens: 50 }, headers);
    expect(other.status).toBe(409);
    expect(other.headers.get("x-should-retry")).toBe("false");
    expect(await readJson(other)).toEqual({ error: { message: "This Idempotency-Key was already used with a different request.", type: "invalid_request_error", code: "conflict" } });
  });

  it("Idempotency-Key: an answer larger than a database document (long speech-to-speech audio) is replayed, not a 409 then a second charge", async () => {
    const user = await fundedUser(server, 1);
    // 7 MB of audio comes back inline twice (`url` and `b64_json`, base64): about 19 MB, over the 16 MiB a document holds
    const audio = Buffer.alloc(7_000_000, 3);
    const send = () => {
      const form = new FormData();
      form.append("model", "speechvendor-sts");
      form.append("voice", "Adam");
      form.append("audio", new Blob([audio], { type: "audio/mpeg" }), "long.mp3");
      return fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}`, "idempotency-key": "long-audio" }, body: form });
    };
    const first = await send();
    expect(first.status).toBe(200);
    const body = await readJson(first);
    expect(body.object).toBe("speech.generation");
    expect(body.audio.b64_json.length).toBeGreaterThan(9_000_000);
    const after = await balanceMicros(server, user.userId);
    expect(after).toBeLessThan(1_000_000);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-request-cost")).toBe(first.headers.get("x-request-cost"));
    expect(await readJson(again)).toEqual(body);
    expect(await balanceMicros(server, user.userId)).toBe(after);
    expect(fakes.speech.requests.filter((r) => r.path.startsWith("/v1/speech-to-speech/"))).toHaveLength(1);
  }, 30_000);

  it("Idempotency-Key on a stream: a completed stream is replayed event for event without a second charge; a cut one runs again", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.clear();
    const streamed = chat("stream once", { stream: true, stream_options: { include_usage: true } });
    const headers = { "idempotency-key": "stream-1" };
    const first = await postJson(server, "/v1/chat/completions", user.key, streamed, headers);
    expect(first.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = await first.text();
    expect(events.endsWith("data: [DONE]\n\n")).toBe(true);
    const after = await balanceMicros(server, user.userId);
    expect(after).toBeLessThan(1_000_000);
    // a retry as soon as the stream ended (the SDKs retry at once) replays it: the closing event waited for the record
    const again = await postJson(server, "/v1/chat/completions", user.key, streamed, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(events);
    expect(await balanceMicros(server, user.userId)).toBe(after);
    expect(fakes.textA.requests).toHaveLength(1);
    // the same key on the same messages without `stream` is another request
    const unstreamed = await postJson(server, "/v1/chat/completions", user.key, chat("stream once"), headers);
    expect(unstreamed.status).toBe(409);
    expect(unstreamed.headers.get("x-should-retry")).toBe("false");

    // a stream cut after output began is charged for what it produced, and not stored: the retry streams again
    fakes.textA.failNext(1, { kind: "truncate" });
    const cut = await postJson(server, "/v1/chat/completions", user.key, streamed, { "idempotency-key": "stream-2" });
    expect(await cut.text()).not.toContain("[DONE]");
    const afterCut = await balanceMicros(server, user.userId);
    expect(afterCut).toBeLessThan(after);
    const retried = await postJson(server, "/v1/chat/completions", user.key, streamed, { "idempotency-key": "stream-2" });
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect((await retried.text()).endsWith("data: [DONE]\n\n")).toBe(true);
    // charged like the first, complete stream (the same prompt and answer)
    expect(afterCut - (await balanceMicros(server, user.userId))).toBe(1_000_000 - after);
    expect(fakes.textA.requests).toHaveLength(3);
  });

  it("a failed answer frees its Idempotency-Key before it is sent: a retry right after it runs, never a 409", async () => {
    // A slow database: the key's release takes a while. The failure must not reach the client before it is done.
    const abandon = IdempotencyStore.prototype.abandon;
    const slowed = vi.spyOn(IdempotencyStore.prototype, "abandon").mockImplementation(async function (this: IdempotencyStore, id: string) {
      await new Promise((r) => setTimeout(r, 300));
      return abandon.call(this, id);
    });
    try {
      const user = await fundedUser(server, 1);
      const headers = { "idempotency-key": "retry-after-failure" };
      const wrong = { model: "no-such-model", messages: [{ role: "user", content: "x" }] };
      const failed = await postJson(server, "/api/v1/task", user.key, wrong, headers);
      expect(failed.status).toBe(400);
      const again = await postJson(server, "/api/v1/task", user.key, wrong, headers);
      expect((await readJson(again)).error.code).toBe("unsupported_model");
      // the corrected request is a new one, not "the same key with a different request"
      const fixed = await postJson(server, "/api/v1/task", user.key, chat("fixed"), headers);
      expect(fixed.status).toBe(200);
    } finally {
      slowed.mockRestore();
    }
  });

  it("expired Idempotency-Key records are swept: a done one after its TTL, a pending one after the pending TTL", async () => {
    const store = new IdempotencyStore(server.db, { ttlMs: 60_000, pendingTtlMs: 10_000, now: () => server.clock.now() });
    const prefix = `sweep-${Date.now()}`;
    const stored = async () => (await server.db.connection.collection<{ _id: string }>("gateway_idempotency")
      .find({ _id: { $in: ["done", "pending", "fresh"].map((k) => `${prefix}:${k}`) } }).toArray()).map((d) => d._id.slice(prefix.length + 1)).sort();
    await store.begin(`${prefix}:done`, "f1");
    await store.complete(`${prefix}:done`, { format: "json", status: 200, body: { ok: true }, headers: {} });
    await store.begin(`${prefix}:pending`, "f2");
    server.clock.advance(30_000);
    await store.begin(`${prefix}:fresh`, "f3");
    // 30 s later only the pending record is past its TTL
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    expect(await stored()).toEqual(["done", "fresh"]);
    expect(await store.begin(`${prefix}:done`, "f1")).toMatchObject({ kind: "replay" });
    server.clock.advance(40_000);
    await store.sweep();
    expect(await stored()).toEqual([]);
  });

  it("GET /api/usage: records newest first, paginated, totals per day and model", async () => {
    const user = await fundedUser(server, 1);
    await postJson(server, "/v1/chat/completions", user.key, chat("one two"));
    server.clock.advance(1_000);
    await postJson(server, "/api/v1/task", user.key, { model: "textB-3-haiku", messages: [{ role: "user", content: "three" }], max_tokens: 10 });
    const res = await fetch(`${server.url}/api/usage?per_page=1`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(res.status).toBe(200);
    // per-user data: never cached; counted against its own `usage` limit, not the plan's requests per minute
    const usageLimit = server.app.context.config.limits.usage.points;
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(usageLimit));
    expect(res.headers.get("x-ratelimit-remaining")).toBe(String(usageLimit - 1));
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 1);
    const body = await readJson(res);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ model: "textB-3-haiku", type: "text", prompt_tokens: 1, completion_tokens: 2, cost: 0.000005, status: "success", key_id: user.keyId });
    expect(body.pagination).toEqual({ page: 1, per_page: 1, total: 2, total_pages: 2 });
    expect(body.totals).toMatchObject({ requests: 2, cost: 0.000013 });
    expect(body.totals.by_model.map((m: { model: string }) => m.model)).toEqual(["textA-4", "textB-3-haiku"]);
    expect(body.totals.by_day).toHaveLength(1);
    // one ledger entry per request: the charge, carrying the request's usage record
    const settles = await server.app.context.ledger.entries(user.userId, { kinds: ["settle"] });
    expect(settles.map((e) => [e.cost, e.meta?.model, e.meta?.requestId])).toEqual([
      [5, "textB-3-haiku", body.data[0].request_id],
      [8, "textA-4", expect.stringMatching(/\S/)],
    ]);
    const bad = await fetch(`${server.url}/api/usage?per_page=1000`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("cache-control")).toBe("no-store");
    expect(bad.headers.get("x-ratelimit-remaining")).toBe(String(usageLimit - 2));
    const anonymous = await fetch(`${server.url}/api/usage`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("cache-control")).toBe("no-store");
    // a session-or-key route of /api, like /api/billing/*: no credentials (or a cookie that is no session) is
    // `unauthorized`, not a missing API key; a key that is sent and refused stays `invalid_api_key`
    expect((await readJson(anonymous)).error).toEqual({ message: expect.any(String), type: "authentication_error", code: "unauthorized" });
    const noSession = await fetch(`${server.url}/api/usage`, { headers: { cookie: "gw_session=not-a-session" } });
    expect(noSession.status).toBe(401);
    expect((await readJson(noSession)).error.code).toBe("unauthorized");
    const badKey = await fetch(`${server.url}/api/usage`, { headers: { authorization: "Bearer ak-live-unknown" } });
    expect(badKey.status).toBe(401);
    expect((await readJson(badKey)).error.code).toBe("invalid_api_key");
  });

  it("GET /api/usage: later pages asked with the first page's range list exactly the rest while new requests arrive", async () => {
    const user = await fundedUser(server, 1);
    const usage = async (query: string) => readJson(await fetch(`${server.url}/api/usage?${query}`, { headers: { authorization: `Bearer ${user.key}` } }));
    for (const word of ["one", "two", "three"]) {
      expect((await postJson(server, "/v1/chat/completions", user.key, chat(word))).status).toBe(200);
      server.clock.advance(1_000);
    }
    const first = await usage("per_page=2");
    const all = [...first.data];
    server.clock.advance(1_000);
    expect((await postJson(server, "/v1/chat/completions", user.key, chat("four"))).status).toBe(200);
    const { from, to } = first.range as { from: string; to: string };
    const second = await usage(`per_page=2&page=2&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    all.push(...second.data);
    expect(second.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(all.map((r: { id: string }) => r.id)).toHaveLength(new Set(all.map((r: { id: string }) => r.id)).size);
    expect(all).toHaveLength(3);
    // the new request is on the first page of a fresh listing
    expect((await usage("per_page=1")).pagination.total).toBe(4);
  });

  it("GET /api/usage: output_bytes is the text produced, streamed or not", async () => {
    const user = await fundedUser(server, 1);
    expect((await postJson(server, "/v1/chat/completions", user.key, chat("same words"))).status).toBe(200);
    const streamed = await postJson(server, "/v1/chat/completions", user.key, chat("same words", { stream: true }));
    expect(streamed.status).toBe(200);
    await streamed.text();
    const res = await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } });
    const { data } = await readJson(res);
    expect(data.map((r: { output_bytes: number }) => r.output_bytes)).toEqual([Buffer.byteLength("Echo: same words"), Buffer.byteLength("Echo: same words")]);
  });

  it("GET /api/usage: an image task's output_bytes is the image's size, its base64 padding not counted", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a red fox in snow" });
    expect(res.status).toBe(200);
    const image = Buffer.from((await readJson(res)).data[0].b64_json, "base64");
    const { data } = await readJson(await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } }));
    expect(data[0]).toMatchObject({ type: "image", images: 1, output_bytes: image.length });
  });

  it("GET /api/usage: ISO 8601 dates and plain whole numbers only; a date-only `to` includes its day", async () => {
    const user = await fundedUser(server, 1);
    await postJson(server, "/v1/chat/completions", user.key, chat("one"));
    const usage = (query: string) => fetch(`${server.url}/api/usage?${query}`, { headers: { authorization: `Bearer ${user.key}` } });
    const refused: Array<[string, RegExp]> = [
      ["to=Tue,%201%20Jan%202030", /'to'.*ISO 8601/],
      ["from=1", /'from'.*ISO 8601/],
      ["from=12345", /'from'.*ISO 8601/],
      ["from=2026-13-01", /'from'.*ISO 8601/],
      // days that do not exist are refused, not rolled over into the next month
      ["from=2026-02-30", /'from'.*ISO 8601/],
      ["to=2026-04-31T10:00:00Z", /'to'.*ISO 8601/],
      ["to=2026-01-01T10:00", /'to'.*ISO 8601/],
      ["page=0x10", /'page'.*whole number/],
      ["per_page=1e1", /'per_page'.*whole number/],
      ["page=%2B1", /'page'.*whole number/],
      ["per_page=%205", /'per_page'.*whole number/],
      ["page=1&page=2", /'page'/],
      ["page=0", /'page'/],
    ];
    for (const [query, message] of refused) {
      const res = await usage(query);
      const body = await readJson(res);
      expect({ query, status: res.status, code: body.error?.code }).toEqual({ query, status: 400, code: "invalid_parameter" });
      expect(body.error.message).toMatch(message);
    }
    const today = new Date(server.clock.now()).toISOString().slice(0, 10);
    const sameDay = await usage(`from=${today}&to=${today}`);
    expect(sameDay.status).toBe(200);
    const body = await readJson(sameDay);
    expect(body.range).toEqual({ from: `${today}T00:00:00.000Z`, to: new Date(Date.parse(today) + 86_400_000).toISOString() });
    expect(body.totals.requests).toBe(1);
    expect((await usage(`from=${today}T00:00:00%2B02:00&page=1&per_page=5`)).status).toBe(200);
    // a + offset sent unencoded arrives as a space: read as the + it was
    const unencoded = await usage(`from=${today}T12:00:00+02:00&to=${today}T13:00:00+02:00`);
    expect(unencoded.status).toBe(200);
    expect((await readJson(unencoded)).range).toEqual({ from: `${today}T10:00:00.000Z`, to: `${today}T11:00:00.000Z` });
  });
});
