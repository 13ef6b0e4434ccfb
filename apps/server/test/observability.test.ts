import { DEFAULT_PLANS } from "@gw/config";
import { isSpanContextValid, trace } from "@opentelemetry/api";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/http/logger";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser, postJson, readJson, type FundedUser } from "./support/gateway-fixtures";
import { LogCapture, OtlpCollector, Scrape, type OtlpSpan } from "./support/observability";

const METRICS_TOKEN = "metrics-token-for-tests";
const CHAT = "/v1/chat/completions";
const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: "textA-4", messages: [{ role: "user", content }], max_tokens: 50, ...extra });

async function scrape(server: TestServer): Promise<Scrape> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return Scrape.parse(await res.text());
}

/** The settle entries of a user, written (the ledger writes charges in batches). */
async function settledCosts(server: TestServer, userId: string): Promise<number[]> {
  await server.app.context.ledger.flushCharges(userId);
  return (await server.app.context.ledger.entries(userId, { kinds: ["settle"] })).map((e) => e.cost ?? 0);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const accessLines = (logs: LogCapture): any[] => logs.lines.filter((l) => l.msg === "gateway request");

describe("GET /metrics and the access log (tracing off)", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  const logs = new LogCapture();

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // three requests a minute on the free plan: the fourth is a limit's refusal
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 3 } : p));
    server = await startTestServer({
      env: { ...fakes.env, METRICS_TOKEN, UPSTREAM_MAX_RETRIES: "0" },
      config: { plans },
      logger: createLogger("info", false, logs),
    });
  });
  afterAll(async () => {
    await server?.close();
    await fakes?.close();
  });

  it("without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry SDK is registered: spans are the API's no-op ones", () => {
    const span = trace.getTracer("probe").startSpan("probe");
    expect(isSpanContextValid(span.spanContext())).toBe(false);
    span.end();
  });

  it("answers 401 unauthorized (the spec's error shape) without the token or with another one", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong-token" }, { authorization: METRICS_TOKEN }] as Array<Record<string, string>>) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      const body = await readJson(res);
      expect(body.error).toMatchObject({ code: "unauthorized", type: "authentication_error" });
      expect(typeof body.error.message).toBe("string");
    }
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain("# TYPE gateway_requests_total counter");
    // Node process metrics
    const parsed = await Scrape.parse(text);
    expect(parsed.type("process_cpu_user_seconds_total")).toBe("counter");
    expect(parsed.type("nodejs_heap_size_used_bytes")).toBe("gauge");
    expect(parsed.type("gateway_http_request_duration_seconds")).toBe("histogram");
    for (const name of ["gateway_ledger_queued_entries", "gateway_ledger_open_holds", "gateway_ledger_reserved_microdollars"]) expect(parsed.type(name)).toBe("gauge");
  });

  it("a chat completion moves the counters by exactly one request, its tokens and the micro-dollars the ledger charged", async () => {
    const user = await fundedUser(server, 1);
    const before = await scrape(server);
    const res = await postJson(server, CHAT, user.key, chat("hello observability world"));
    expect(res.status).toBe(200);
    const body = await readJson(res);
    const [charged] = await settledCosts(server, user.userId);
    expect(charged).toBeGreaterThan(0);
    expect(Number(res.headers.get("x-request-cost")) * 1e6).toBeCloseTo(charged ?? 0, 6);
    await server.app.context.ledger.flush();
    const after = await scrape(server);

    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    const model = { model: "textA-4" };
    expect(delta("gateway_requests_total", { ...model, endpoint: CHAT, outcome: "success" })).toBe(1);
    expect(delta("gateway_prompt_tokens_total", model)).toBe(body.usage.prompt_tokens);
    expect(delta("gateway_completion_tokens_total", model)).toBe(body.usage.completion_tokens);
    expect(delta("gateway_charged_microdollars_total", model)).toBe(charged);
    expect(delta("gateway_http_requests_total", { route: CHAT, method: "POST", status_class: "2xx" })).toBe(1);
    expect(after.count("gateway_http_request_duration_seconds", { route: CHAT, method: "POST", status_class: "2xx" })
      - before.count("gateway_http_request_duration_seconds", { route: CHAT, method: "POST", status_class: "2xx" })).toBe(1);
    const upstream = { provider: "textA", deployment: "default", outcome: "success" };
    expect(after.count("gateway_upstream_request_duration_seconds", upstream) - before.count("gateway_upstream_request_duration_seconds", upstream)).toBe(1);
    // the charge was written by a flush, and nothing is left queued or held
    expect(after.count("gateway_ledger_flush_duration_seconds")).toBeGreaterThan(before.count("gateway_ledger_flush_duration_seconds"));
    expect(after.value("gateway_ledger_queued_entries")).toBe(0);
    expect(after.value("gateway_ledger_open_holds")).toBe(0);
    // no user or key in any label
    const labels = after.labelValues("gateway_");
    for (const secret of [user.userId, user.keyId, user.key, user.key.slice(0, 12)]) expect(labels).not.toContain(secret);
  });

  it("a streamed chat completion: its access log line and counters carry the charge settled after the last byte", async () => {
    const user = await fundedUser(server, 1);
    const before = await scrape(server);
    const res = await postJson(server, CHAT, user.key, chat("streamed observability", { stream: true, stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    const events = (await res.text()).trim().split("\n\n");
    const usage = JSON.parse(events.at(-2)?.slice(6) ?? "{}").usage as { prompt_tokens: number; completion_tokens: number };
    const [charged] = await settledCosts(server, user.userId);
    const requestId = res.headers.get("x-request-id");
    await expect.poll(() => accessLines(logs).find((l) => l.requestId === requestId)).toBeDefined();
    const line = accessLines(logs).find((l) => l.requestId === requestId);
    expect(line).toMatchObject({ status: 200, model: "textA-4", costMicros: charged, units: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } });
    const after = await scrape(server);
    expect(after.value("gateway_charged_microdollars_total", { model: "textA-4" }) - before.value("gateway_charged_microdollars_total", { model: "textA-4" })).toBe(charged);
    expect(after.value("gateway_completion_tokens_total", { model: "textA-4" }) - before.value("gateway_completion_tokens_total", { model: "textA-4" })).toBe(usage.completion_tokens);
  });

  it("one access log line per gateway request, with its facts and without secrets or bodies", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, CHAT, user.key, chat("a very private prompt"));
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id");
    const [charged] = await settledCosts(server, user.userId);
    await expect.poll(() => accessLines(logs).filter((l) => l.requestId === requestId).length).toBe(1);
    const line = accessLines(logs).find((l) => l.requestId === requestId);
    expect(line).toMatchObject({
      level: 30, requestId, userId: user.userId, keyPrefix: user.key.slice(0, 12), model: "textA-4", endpoint: CHAT, method: "POST", status: 200,
      units: { promptTokens: expect.any(Number), completionTokens: expect.any(Number) }, costMicros: charged,
    });
    expect(line.latencyMs).toBeGreaterThanOrEqual(line.upstreamMs);
    expect(line.upstreamMs).toBeGreaterThan(0);
    const raw = logs.raw.join("\n");
    expect(raw).not.toContain(user.key);
    expect(raw).not.toContain("very private prompt");
  });

  it("a client that leaves while the upstream works: a 499 line, a cancelled upstream call, no upstream error", async () => {
    const user = await fundedUser(server, 1);
    const before = await scrape(server);
    fakes.textA.failNext(1, { kind: "delay", ms: 5_000 });
    const reached = fakes.textA.requests.length;
    const abort = new AbortController();
    const pending = postJson(server, CHAT, user.key, chat("leaving early"), {}, abort.signal).catch(() => undefined);
    await expect.poll(() => fakes.textA.requests.length, { timeout: 10_000 }).toBeGreaterThan(reached);
    abort.abort();
    await pending;
    await expect.poll(() => accessLines(logs).find((l) => l.userId === user.userId), { timeout: 10_000 }).toBeDefined();
    // the line waited for the hold's release: nothing charged
    const line = accessLines(logs).find((l) => l.userId === user.userId);
    expect(line).toMatchObject({ status: 499, model: "textA-4", upstreamMs: expect.any(Number) });
    expect(line.costMicros).toBeUndefined();
    const cancelled = { provider: "textA", deployment: "default", outcome: "cancelled" };
    await expect.poll(async () => (await scrape(server)).count("gateway_upstream_request_duration_seconds", cancelled) - before.count("gateway_upstream_request_duration_seconds", cancelled), { timeout: 10_000 }).toBe(1);
    const after = await scrape(server);
    expect(after.value("gateway_upstream_errors_total", { provider: "textA" }) - before.value("gateway_upstream_errors_total", { provider: "textA" })).toBe(0);
    expect(after.value("gateway_requests_total", { model: "textA-4", endpoint: CHAT, outcome: "client_closed" })
      - before.value("gateway_requests_total", { model: "textA-4", endpoint: CHAT, outcome: "client_closed" })).toBe(1);
  });

  it("a client that leaves mid-stream: its line and counters say partial, with what the ledger charged for the output sent", async () => {
    const user = await fundedUser(server, 1);
    const before = await scrape(server);
    fakes.textA.chunkDelayMs = 100;
    try {
      const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
      const abort = new AbortController();
      const res = await postJson(server, CHAT, user.key, chat(words, { stream: true }), {}, abort.signal);
      const reader = res.body?.getReader();
      let received = "";
      while (reader && !received.includes("w1")) received += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      const requestId = res.headers.get("x-request-id");
      await expect.poll(() => accessLines(logs).find((l) => l.requestId === requestId), { timeout: 10_000 }).toBeDefined();
      const [charged] = await settledCosts(server, user.userId);
      expect(charged).toBeGreaterThan(0);
      expect(accessLines(logs).find((l) => l.requestId === requestId)).toMatchObject({ status: 200, usageStatus: "partial", costMicros: charged });
      const after = await scrape(server);
      const partial = { model: "textA-4", endpoint: CHAT, outcome: "partial" };
      expect(after.value("gateway_requests_total", partial) - before.value("gateway_requests_total", partial)).toBe(1);
      expect(after.value("gateway_charged_microdollars_total", { model: "textA-4" }) - before.value("gateway_charged_microdollars_total", { model: "textA-4" })).toBe(charged);
    } finally {
      fakes.textA.chunkDelayMs = 0;
    }
  });

  it("a 401, a 402, a 429 and a 502 each leave their line and count as their outcome; 402 and 429 as limit refusals", async () => {
    const before = await scrape(server);
    const broke = await fundedUser(server, 0);
    const funded: FundedUser = await fundedUser(server, 1);
    const badKey = await postJson(server, CHAT, `ak-live-${"0".repeat(40)}` /* a well-formed key that no account has */, chat("hi"));
    expect(badKey.status).toBe(401);
    const noCredits = await postJson(server, CHAT, broke.key, chat("hi"));
    expect(noCredits.status).toBe(402);
    fakes.textA.failStatus(1, 500);
    const upstreamDown = await postJson(server, CHAT, funded.key, chat("hi"));
    expect(upstreamDown.status).toBe(502);
    // the free plan's three requests a minute: `funded` has made one
    const models = () => fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${funded.key}` } });
    expect((await models()).status).toBe(200);
    expect((await models()).status).toBe(200);
    const limited = await models();
    expect(limited.status).toBe(429);

    const expected = [
      [badKey, 401, "invalid_api_key"], [noCredits, 402, "insufficient_credits"], [upstreamDown, 502, "upstream_error"], [limited, 429, "rate_limit_exceeded"],
    ] as const;
    for (const [res, status, errorCode] of expected) {
      const requestId = res.headers.get("x-request-id");
      await expect.poll(() => accessLines(logs).filter((l) => l.requestId === requestId).length).toBe(1);
      expect(accessLines(logs).find((l) => l.requestId === requestId)).toMatchObject({ status, errorCode });
    }
    const byId = (res: Response) => accessLines(logs).find((l) => l.requestId === res.headers.get("x-request-id"));
    expect(byId(badKey)).toMatchObject({ model: "none", endpoint: CHAT });
    expect(byId(badKey).userId).toBeUndefined();
    expect(byId(noCredits)).toMatchObject({ userId: broke.userId, keyPrefix: broke.key.slice(0, 12), model: "textA-4" });
    expect(byId(noCredits).costMicros).toBeUndefined();
    expect(byId(upstreamDown)).toMatchObject({ userId: funded.userId, model: "textA-4", upstreamMs: expect.any(Number) });
    expect(byId(limited)).toMatchObject({ endpoint: "/v1/models", model: "none" });

    const after = await scrape(server);
    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    // refused before its body was read: no model is known
    expect(delta("gateway_requests_total", { model: "none", endpoint: CHAT, outcome: "invalid_api_key" })).toBe(1);
    expect(delta("gateway_requests_total", { model: "textA-4", endpoint: CHAT, outcome: "insufficient_credits" })).toBe(1);
    expect(delta("gateway_requests_total", { model: "textA-4", endpoint: CHAT, outcome: "upstream_error" })).toBe(1);
    expect(delta("gateway_requests_total", { model: "none", endpoint: "/v1/models", outcome: "rate_limit_exceeded" })).toBe(1);
    expect(delta("gateway_limit_refusals_total", { reason: "insufficient_credits" })).toBe(1);
    expect(delta("gateway_limit_refusals_total", { reason: "rate_limit_exceeded" })).toBe(1);
    expect(delta("gateway_upstream_errors_total", { provider: "textA", deployment: "default", reason: "upstream_error" })).toBe(1);
    expect(delta("gateway_http_requests_total", { route: CHAT, method: "POST", status_class: "4xx" })).toBe(2);
    expect(delta("gateway_http_requests_total", { route: CHAT, method: "POST", status_class: "5xx" })).toBe(1);
    expect(delta("gateway_charged_microdollars_total", { model: "textA-4" })).toBe(0);
  });
});

describe("OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT set) and GET /metrics without METRICS_TOKEN", () => {
  let fakes: FakeUpstreams;
  let collector: OtlpCollector;
  let server: TestServer | undefined;
  const logs = new LogCapture();

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    collector = await new OtlpCollector().start();
    server = await startTestServer({
      env: { ...fakes.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: "gateway-under-test" },
      logger: createLogger("info", true, logs),
    });
  });
  afterAll(async () => {
    await server?.close();
    await collector?.close();
    await fakes?.close();
  });

  it("GET /metrics does not exist without METRICS_TOKEN: 404, whatever the request bears", async () => {
    if (!server) throw new Error("no server");
    for (const headers of [{}, { authorization: `Bearer ${METRICS_TOKEN}` }] as Array<Record<string, string>>) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(404);
      expect((await readJson(res)).error).toMatchObject({ code: "not_found" });
    }
  });

  it("log lines written while a request is handled carry its trace id (a stream cut after output began)", async () => {
    if (!server) throw new Error("no server");
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(1, { kind: "truncate", at: "half" });
    const res = await postJson(server, CHAT, user.key, chat("a stream cut in the middle of its answer", { stream: true }));
    expect(res.status).toBe(200);
    await res.text();
    const requestId = res.headers.get("x-request-id");
    await expect.poll(() => accessLines(logs).find((l) => l.requestId === requestId)).toBeDefined();
    const access = accessLines(logs).find((l) => l.requestId === requestId);
    expect(access).toMatchObject({ usageStatus: "partial", traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const cut = logs.lines.find((l) => l.msg === "stream cut after output began" && l.requestId === requestId);
    expect(cut?.traceId).toBe(access.traceId);
  });

  it("a chat completion is one trace: the request span with key check, limits, hold, upstream attempt and settle under it", async () => {
    if (!server) throw new Error("no server");
    const user = await fundedUser(server, 1);
    const res = await postJson(server, CHAT, user.key, chat("traced hello"));
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id");
    await expect.poll(() => accessLines(logs).find((l) => l.requestId === requestId)).toBeDefined();
    // the shutdown flushes the batched spans to the collector
    await server.close();
    server = undefined;

    const root = collector.spans.find((s) => s.name === `POST ${CHAT}` && s.attributes.some((a) => a.key === "gateway.request_id" && a.value.stringValue === requestId));
    expect(root).toBeDefined();
    if (!root) return;
    expect(root.kind).toBe(2); // SERVER
    expect(root.parentSpanId ?? "").toBe("");
    const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;
    expect(attribute(root, "http.route")?.stringValue).toBe(CHAT);
    expect(Number(attribute(root, "http.response.status_code")?.intValue)).toBe(200);
    const children = collector.spans.filter((s) => s.traceId === root.traceId && s.parentSpanId === root.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(["gateway.hold", "gateway.key_check", "gateway.limits", "gateway.settle", "gateway.upstream"]);
    const upstream = children.find((s) => s.name === "gateway.upstream");
    expect(upstream && attribute(upstream, "gateway.provider")?.stringValue).toBe("textA");
    expect(upstream && attribute(upstream, "gateway.deployment")?.stringValue).toBe("default");
    expect(collector.contentTypes[0]).toMatch(/^application\/json/);
    // the log line names the trace
    expect(accessLines(logs).find((l) => l.requestId === requestId)?.traceId).toBe(root.traceId);
  });
});
