// CONTRACT 12 "catalog at run time" over real HTTP, on two instances sharing one database: admin edits of models,
// plans and credit packages, validated as CONFIG_FILE is, in force on the other instance within 5 s, never changing
// a request already held, one of two racing edits refused 409, every edit in the audit log.
import { DEFAULT_PLANS } from "@gw/config";
import { randomBase62 } from "@gw/shared";
import { FAKE_KEYS, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { textCost } from "@gw/gateway";
import { call, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { holdPoint } from "./support/hold-point";

let fakes: FakeUpstreams;
let a: TestServer;
let b: TestServer;
let admin: { email: string; cookie: string; id: string };
const ADMIN_EMAIL = uniqueEmail("admin");

const adminCall = (server: TestServer, method: string, route: string, body?: unknown, headers?: Record<string, string>) =>
  call(server, method, route, { cookie: admin.cookie, body, headers });

const chat = (model: string) => ({ model, messages: [{ role: "user", content: "hello there" }], max_tokens: 50 });

beforeAll(async () => {
  fakes = await startFakeUpstreams();
  const databaseName = `t_${randomBase62(12)}`;
  const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
  const options = { env: { ...RELAXED_LIMITS, ...fakes.env, ADMIN_EMAILS: ADMIN_EMAIL }, config: { plans }, databaseName };
  a = await startTestServer(options);
  b = await startTestServer(options);
  admin = await verifiedUser(a, ADMIN_EMAIL);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await fakes?.close();
});

describe("who may read and edit the catalog", () => {
  it("no session: 401; a customer's session: 403 admin_required, nothing changed", async () => {
    expect((await call(a, "GET", "/api/admin/models")).status).toBe(401);
    const customer = await verifiedUser(a, uniqueEmail("customer"));
    const before = await adminCall(a, "GET", "/api/admin/models/textA-4");
    for (const [method, route, body] of [
      ["GET", "/api/admin/models", undefined], ["PATCH", "/api/admin/models/textA-4", { enabled: false }],
      ["GET", "/api/admin/plans", undefined], ["PUT", "/api/admin/plans", { plans: [] }], ["PUT", "/api/admin/credit-packages", { credit_packages: [] }],
    ] as const) {
      const res = await call(a, method, route, { cookie: customer.cookie, body });
      expect(res.status, `${method} ${route}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: "admin_required", type: "permission_error" });
    }
    expect((await adminCall(a, "GET", "/api/admin/models/textA-4")).body).toEqual(before.body);
  });
});

describe("reading the catalog", () => {
  it("lists every model with enabled and prices in micro-dollars; one model by id; an unknown id is 404", async () => {
    const list = await adminCall(a, "GET", "/api/admin/models");
    expect(list.status).toBe(200);
    expect(list.body.version).toBeGreaterThanOrEqual(1);
    const model = (list.body.models as Array<{ id: string }>).find((m) => m.id === "textB-3-haiku");
    expect(model).toMatchObject({ id: "textB-3-haiku", enabled: true, type: "text", pricing: { inputPer1k: 1_000, outputPer1k: 2_000 } });
    const one = await adminCall(a, "GET", "/api/admin/models/textB-3-haiku");
    expect(one.body.model).toEqual(model);
    const unknown = await adminCall(a, "GET", "/api/admin/models/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });

  it("shows each deployment's state as /api/status/external does (CONTRACT 13)", async () => {
    const list = await adminCall(a, "GET", "/api/admin/models");
    const external = await fetch(`${a.url}/api/status/external`);
    const states = ((await external.json()) as { deployments: unknown[] }).deployments;
    expect(list.body.deployments).toEqual(states);
    expect(list.body.deployments).toContainEqual({ model: "textA-4", deployment: "default", status: "healthy" });
  });
});

describe("every edit is checked as CONFIG_FILE is", () => {
  it.each([
    ["a fraction of a micro-dollar", { pricing: { inputPer1k: 1.5 } }, "pricing.inputPer1k"],
    ["an unknown field", { colour: "blue" }, "colour"],
    ["an unknown price", { pricing: { inputPer1K: 5 } }, "inputPer1K"],
    ["a deployment without a URL", { deployments: [{ id: "x", baseUrl: "not a url" }] }, "deployments[0].baseUrl"],
    ["two deployments with one id", { deployments: [{ id: "x", baseUrl: "http://127.0.0.1:1" }, { id: "x", baseUrl: "http://127.0.0.1:2" }] }, "deployments[1].id"],
    ["a fallback that is no model", { fallbacks: ["nope"] }, "fallbacks"],
    ["a fallback of another type", { fallbacks: ["text-embedding-ada-002"] }, "fallbacks"],
  ])("%s: 400 invalid_parameter naming the field, nothing written", async (_what, body, field) => {
    const before = await adminCall(a, "GET", "/api/admin/models/textA-4");
    const res = await adminCall(a, "PATCH", "/api/admin/models/textA-4", body);
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("invalid_request_error");
    expect(res.body.error.message).toContain(field);
    expect(await adminCall(a, "GET", "/api/admin/models/textA-4")).toMatchObject({ body: before.body });
  });

  it("plans and credit packages: bad lists are 400 naming the entry's field", async () => {
    const plans = (await adminCall(a, "GET", "/api/admin/plans")).body.plans as Array<Record<string, unknown>>;
    const fraction = await adminCall(a, "PUT", "/api/admin/plans", { plans: plans.map((p, i) => (i === 1 ? { ...p, monthlyCreditsMicros: 0.5 } : p)) });
    expect(fraction.status).toBe(400);
    expect(fraction.body.error.message).toContain("plans[1].monthlyCreditsMicros");
    const twice = await adminCall(a, "PUT", "/api/admin/plans", { plans: [...plans, plans[0]] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toContain(`plans[${plans.length}].id`);
    const total = await adminCall(a, "PUT", "/api/admin/credit-packages", { credit_packages: [{ amount: 10, bonus: 1, total: 10 }] });
    expect(total.status).toBe(400);
    expect(total.body.error.message).toContain("credit_packages[0].total");
  });
});

describe("an edit is in force on every instance", () => {
  it("a disabled model is refused as an unknown one and gone from /v1/models, on the other instance within 5 s", async () => {
    const user = await fundedUser(b, 1);
    const bearer = { authorization: `Bearer ${user.key}` };
    expect((await postJson(b, "/v1/chat/completions", user.key, chat("textA-3.5-turbo"))).status).toBe(200);

    const res = await adminCall(a, "PATCH", "/api/admin/models/textA-3.5-turbo", { enabled: false });
    expect(res.status).toBe(200);
    expect(res.body.model.enabled).toBe(false);
    const at = performance.now();
    await vi.waitFor(async () => {
      const models = await call(b, "GET", "/v1/models", { headers: bearer });
      expect((models.body.data as Array<{ id: string }>).map((m) => m.id)).not.toContain("textA-3.5-turbo");
    }, { timeout: 5_000, interval: 100 });
    expect(performance.now() - at).toBeLessThan(5_000);
    const refused = await postJson(b, "/v1/chat/completions", user.key, chat("textA-3.5-turbo"));
    expect(refused.status).toBe(400);
    expect((await readJson(refused)).error).toMatchObject({ code: "unsupported_model", type: "invalid_request_error" });
    expect((await call(b, "GET", "/v1/models/textA-3.5-turbo", { headers: bearer })).status).toBe(404);

    expect((await adminCall(a, "PATCH", "/api/admin/models/textA-3.5-turbo", { enabled: true })).status).toBe(200);
    await vi.waitFor(async () => {
      expect((await postJson(b, "/v1/chat/completions", user.key, chat("textA-3.5-turbo"))).status).toBe(200);
    }, { timeout: 5_000, interval: 100 });
  });

  it("a new price is charged on the other instance within 5 s; plans and packages show in /api/billing/config there", async () => {
    const user = await fundedUser(b, 1);
    const pricing = { inputPer1k: 7_000, outputPer1k: 9_000 };
    expect((await adminCall(a, "PATCH", "/api/admin/models/textC-8x7b", { pricing })).status).toBe(200);
    await vi.waitFor(async () => {
      const before = await balanceMicros(b, user.userId);
      const res = await postJson(b, "/v1/chat/completions", user.key, chat("textC-8x7b"));
      const body = await readJson(res);
      const usage = { promptTokens: body.usage.prompt_tokens as number, completionTokens: body.usage.completion_tokens as number };
      expect(before - (await balanceMicros(b, user.userId))).toBe(textCost({ pricing } as never, usage));
    }, { timeout: 5_000, interval: 100 });

    const packages = [{ amount: 20, bonus: 2, total: 22 }];
    expect((await adminCall(a, "PUT", "/api/admin/credit-packages", { credit_packages: packages })).status).toBe(200);
    await vi.waitFor(async () => {
      const config = await call(b, "GET", "/api/billing/config", { headers: { authorization: `Bearer ${user.key}` } });
      expect(config.body.credit_packages).toEqual(packages);
    }, { timeout: 5_000, interval: 100 });
  });
});

describe("a request already held keeps its prices", () => {
  it("a price raised while a call waits on the upstream: that call is charged the old price, the next one the new", async () => {
    const user = await fundedUser(a, 1);
    const old = (await adminCall(a, "GET", "/api/admin/models/textA-4-turbo")).body.model.pricing as { inputPer1k: number; outputPer1k: number };
    const hold = holdPoint();
    fakes.textA.failNext(1, { kind: "hold", pass: hold.pass });
    const held = postJson(a, "/v1/chat/completions", user.key, chat("textA-4-turbo"));
    await hold.reached;
    const raised = { inputPer1k: old.inputPer1k * 10, outputPer1k: old.outputPer1k * 10 };
    expect((await adminCall(a, "PATCH", "/api/admin/models/textA-4-turbo", { pricing: raised })).status).toBe(200);
    hold.release();
    const res = await held;
    expect(res.status).toBe(200);
    const body = await readJson(res);
    const usage = { promptTokens: body.usage.prompt_tokens as number, completionTokens: body.usage.completion_tokens as number };
    expect(1_000_000 - (await balanceMicros(a, user.userId))).toBe(textCost({ pricing: old } as never, usage));

    const before = await balanceMicros(a, user.userId);
    expect((await postJson(a, "/v1/chat/completions", user.key, chat("textA-4-turbo"))).status).toBe(200);
    expect(before - (await balanceMicros(a, user.userId))).toBe(textCost({ pricing: raised } as never, usage));
  });
});

describe("two admins editing at once", () => {
  it("two edits of the plans made on one version: one is written, the other 409 conflict; a stale If-Match is 409", async () => {
    const read = await adminCall(a, "GET", "/api/admin/plans");
    const plans = read.body.plans as Array<Record<string, unknown>>;
    const edit = (name: string) => plans.map((p) => (p.id === "pro" ? { ...p, name } : p));
    const results = await Promise.all([
      adminCall(a, "PUT", "/api/admin/plans", { plans: edit("Pro A"), version: read.body.version }),
      adminCall(b, "PUT", "/api/admin/plans", { plans: edit("Pro B"), version: read.body.version }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const lost = results.find((r) => r.status === 409);
    expect(lost?.body.error).toMatchObject({ code: "conflict" });
    const won = results.find((r) => r.status === 200);
    const name = (won?.body.plans as Array<{ id: string; name: string }>).find((p) => p.id === "pro")?.name;
    // the other instance serves the written version within its refresh (CONTRACT 12: within 5 s)
    let now = await adminCall(b, "GET", "/api/admin/plans");
    await vi.waitFor(async () => {
      now = await adminCall(b, "GET", "/api/admin/plans");
      expect((now.body.plans as Array<{ id: string; name: string }>).find((p) => p.id === "pro")?.name).toBe(name);
    }, { timeout: 5_000, interval: 100 });

    const stale = await adminCall(a, "PATCH", "/api/admin/models/textA-4", { enabled: true }, { "if-match": `"${read.body.version}"` });
    expect(stale.status).toBe(409);
    const current = await adminCall(a, "PATCH", "/api/admin/models/textA-4", { enabled: true }, { "if-match": `"${now.body.version}"` });
    expect(current.status).toBe(200);
    expect(current.body.version).toBe(now.body.version + 1);
  });

  it("edits without a version apply to the newest: racing edits of two models on two instances are both kept", async () => {
    const results = await Promise.all([
      adminCall(a, "PATCH", "/api/admin/models/textB-2", { maxOutputTokens: 1_111 }),
      adminCall(b, "PATCH", "/api/admin/models/textB-3-opus", { maxOutputTokens: 2_222 }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results[0]?.body.version).not.toBe(results[1]?.body.version);
    await vi.waitFor(async () => {
      const models = (await adminCall(a, "GET", "/api/admin/models")).body.models as Array<{ id: string; maxOutputTokens?: number }>;
      expect(models.find((m) => m.id === "textB-2")?.maxOutputTokens).toBe(1_111);
      expect(models.find((m) => m.id === "textB-3-opus")?.maxOutputTokens).toBe(2_222);
    }, { timeout: 5_000, interval: 100 });
  });
});

describe("deployments and the audit log", () => {
  it("new deployments and upstream model serve the next request; the edit is audited with before and after, keys hidden", async () => {
    const deployments = [{ id: "east", baseUrl: fakes.textB.url, apiKey: FAKE_KEYS.textB, weight: 2 }];
    const res = await adminCall(a, "PATCH", "/api/admin/models/textB-instant-1", { deployments, upstreamModel: "instant-upstream" });
    expect(res.status).toBe(200);
    expect(res.body.model).toMatchObject({ upstreamModel: "instant-upstream", deployments: [{ id: "east", weight: 2 }] });
    const user = await fundedUser(a, 1);
    fakes.textB.clear();
    const served = await postJson(a, "/v1/chat/completions", user.key, chat("textB-instant-1"));
    expect(served.status).toBe(200);
    expect(fakes.textB.lastRequest()?.json).toMatchObject({ model: "instant-upstream" });
    // the key is shown by its last 4 characters; sent back as shown, it is kept
    const read = await adminCall(a, "GET", "/api/admin/models/textB-instant-1");
    const hidden = `…${FAKE_KEYS.textB.slice(-4)}`;
    expect(read.body.model.deployments).toEqual([{ id: "east", baseUrl: fakes.textB.url, apiKey: hidden, weight: 2 }]);
    expect(JSON.stringify((await adminCall(a, "GET", "/api/admin/models")).body)).not.toContain(FAKE_KEYS.textB);
    const reweighted = await adminCall(a, "PATCH", "/api/admin/models/textB-instant-1", { deployments: [{ ...read.body.model.deployments[0], weight: 3 }] });
    expect(reweighted.status).toBe(200);
    expect((await postJson(a, "/v1/chat/completions", user.key, chat("textB-instant-1"))).status).toBe(200);
    expect(fakes.textB.lastRequest()?.headers["x-api-key"]).toBe(FAKE_KEYS.textB);
    const audit = await adminCall(a, "GET", "/api/admin/audit?limit=100");
    type Entry = { action: string; target: { id: string }; before: Record<string, unknown>; after: Record<string, unknown> };
    const entry = (audit.body.entries as Entry[]).findLast((e) => e.action === "model.update" && e.target.id === "textB-instant-1");
    expect(entry).toMatchObject({ actor: { user_id: admin.id, email: admin.email, via: "api" }, target: { type: "model", id: "textB-instant-1" } });
    expect(entry?.before.upstreamModel).toBeUndefined();
    expect(entry?.after).toMatchObject({ upstreamModel: "instant-upstream", deployments: [{ id: "east", apiKey: `…${FAKE_KEYS.textB.slice(-4)}` }] });
    expect(JSON.stringify(audit.body)).not.toContain(FAKE_KEYS.textB);
    const actions = (audit.body.entries as Array<{ action: string }>).map((e) => e.action);
    expect(actions).toContain("plans.update");
    expect(actions).toContain("credit_packages.update");
  });
});
