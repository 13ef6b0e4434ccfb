import { DEFAULT_PLANS } from "@gw/config";
import { LEDGER_COLLECTION } from "@gw/billing";
import { newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { credit, postJson, readJson } from "./support/gateway-fixtures";

// CONTRACT 11, first bullet: GET /api/usage filters by key, endpoint and status, totals by key, CSV streaming.

const chat = (extra: Record<string, unknown> = {}) => ({ model: "textA-4", messages: [{ role: "user", content: "one two three four five six" }], max_tokens: 50, ...extra });

describe("GET /api/usage: key, endpoint and status filters, totals by key, CSV", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  const userId = newId("usr");
  let keyA: { id: string; key: string };
  let keyB: { id: string; key: string };

  const usage = async (query: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/api/usage${query}`, { headers: { authorization: `Bearer ${keyA.key}`, ...headers } });
    return res;
  };

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 1000, concurrentRequests: 100 } : p));
    server = await startTestServer({ env: fakes.env, config: { plans } });
    keyA = await server.app.context.apiKeys.create(userId, { name: "a" });
    keyB = await server.app.context.apiKeys.create(userId, { name: "b" });
    await credit(server, userId, 5);
    // key A: two chats, one of them a stream the upstream cuts (partial); key B: one image
    expect((await postJson(server, "/v1/chat/completions", keyA.key, chat())).status).toBe(200);
    server.clock.advance(1000);
    fakes.textA.failNext(1, { kind: "truncate" });
    const cut = await postJson(server, "/v1/chat/completions", keyA.key, chat({ stream: true }));
    await cut.text();
    server.clock.advance(1000);
    expect((await postJson(server, "/api/v1/imageA/generate", keyB.key, { prompt: "a kite" })).status).toBe(200);
    server.clock.advance(1000);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("key_id, endpoint and status filter the records and the totals; records carry key_id and processing_ms", async () => {
    const all = await readJson(await usage(""));
    expect(all.data).toHaveLength(3);
    expect(all.data.map((r: { key_id: string }) => r.key_id)).toEqual([keyB.id, keyA.id, keyA.id]);
    for (const record of all.data) expect(record.processing_ms).toEqual(expect.any(Number));

    const byKey = await readJson(await usage(`?key_id=${keyA.id}`));
    expect(byKey.data).toHaveLength(2);
    expect(byKey.totals.requests).toBe(2);
    expect(byKey.totals.by_key).toEqual([expect.objectContaining({ key_id: keyA.id, requests: 2 })]);

    const images = await readJson(await usage("?endpoint=/api/v1/imageA/generate"));
    expect(images.data.map((r: { key_id: string }) => r.key_id)).toEqual([keyB.id]);
    expect(images.totals).toMatchObject({ requests: 1, cost: 0.1 });

    const partial = await readJson(await usage("?status=partial"));
    expect(partial.data).toHaveLength(1);
    expect(partial.data[0]).toMatchObject({ status: "partial", key_id: keyA.id });
    const success = await readJson(await usage("?status=success"));
    expect(success.data.map((r: { status: string }) => r.status)).toEqual(["success", "success"]);

    const none = await readJson(await usage(`?key_id=${keyA.id}&endpoint=/api/v1/imageA/generate`));
    expect(none.data).toEqual([]);
    expect(none.totals.by_key).toEqual([]);
  });

  it("totals.by_key: one entry per key with its requests, cost and sums, adding up to the totals", async () => {
    const { totals } = await readJson(await usage(""));
    expect(totals.by_key.map((k: { key_id: string }) => k.key_id).sort()).toEqual([keyA.id, keyB.id].sort());
    const a = totals.by_key.find((k: { key_id: string }) => k.key_id === keyA.id);
    const b = totals.by_key.find((k: { key_id: string }) => k.key_id === keyB.id);
    expect(b).toEqual({ key_id: keyB.id, requests: 1, cost: 0.1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters: 0, audio_seconds: 0, images: 1 });
    expect(a.requests).toBe(2);
    expect(a.prompt_tokens).toBeGreaterThan(0);
    expect(Math.round((a.cost + b.cost) * 1e6)).toBe(Math.round(totals.cost * 1e6));
  });

  it("bad filters: 400 invalid_parameter", async () => {
    for (const query of ["?status=failed", "?format=xml", `?key_id=${"k".repeat(101)}`, "?endpoint="]) {
      const res = await usage(query);
      expect(res.status, query).toBe(400);
      expect((await readJson(res)).error.code).toBe("invalid_parameter");
    }
  });

  it("format=csv and Accept: text/csv: a header of the record's field names, one row per record, newest first", async () => {
    const json = await readJson(await usage(""));
    for (const res of [await usage("?format=csv"), await usage("", { accept: "text/csv" })]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      const lines = (await res.text()).trimEnd().split("\r\n");
      expect(lines[0]).toBe(Object.keys(json.data[0]).join(","));
      expect(lines).toHaveLength(4);
      const header = (lines[0] ?? "").split(",");
      const ids = lines.slice(1).map((line) => line.split(",")[header.indexOf("request_id")]);
      expect(ids).toEqual(json.data.map((r: { request_id: string }) => r.request_id));
    }
    // the filters apply to the CSV too
    const filtered = await (await usage(`?format=csv&key_id=${keyB.id}`)).text();
    expect(filtered.trimEnd().split("\r\n")).toHaveLength(2);
  });

  it("a large range streams as CSV in chunks, every record once, newest first", async () => {
    const manyUser = newId("usr");
    const key = await server.app.context.apiKeys.create(manyUser, { name: "many" });
    const N = 3000;
    const start = server.clock.now() - N * 1000;
    const docs = Array.from({ length: N }, (_, i) => ({
      _id: `${manyUser}:${String(i + 1).padStart(12, "0")}`, userId: manyUser, seq: i + 1, kind: "settle", amount: 0, balanceAfter: 0,
      idempotencyKey: `many-${manyUser}-${i}`, holdId: `hold_${i}`, cost: 7, createdAt: new Date(start + i * 1000),
      meta: { requestId: `req_${String(i).padStart(5, "0")}`, keyId: key.id, endpoint: "/v1/chat/completions", model: "textA-4", type: "text", processingMs: 5, outputBytes: 10, createdAt: new Date(start + i * 1000) },
    }));
    for (let i = 0; i < N; i += 1000) await server.db.connection.collection<{ _id: string }>(LEDGER_COLLECTION).insertMany(docs.slice(i, i + 1000));

    const res = await fetch(`${server.url}/api/usage?format=csv`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expect(res.headers.get("content-length")).toBeNull();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    let chunks = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks += 1;
      text += decoder.decode(value, { stream: true });
    }
    // written as the cursor is read: many writes, not one answer built in memory
    expect(chunks).toBeGreaterThan(5);
    const lines = text.trimEnd().split("\r\n");
    expect(lines).toHaveLength(N + 1);
    const header = (lines[0] ?? "").split(",");
    const requestIds = lines.slice(1).map((line) => line.split(",")[header.indexOf("request_id")]);
    expect(requestIds[0]).toBe(`req_${String(N - 1).padStart(5, "0")}`);
    expect(requestIds.at(-1)).toBe("req_00000");
    expect(new Set(requestIds).size).toBe(N);
  });
});
