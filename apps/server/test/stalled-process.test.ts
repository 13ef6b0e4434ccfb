// A gateway process stalled (SIGSTOP) past the dead-instance limit while a request held credits: another process
// sweeps its reservation; once resumed, it must reserve again only under a new identity, or those credits stay held
// for good (an identity is swept once) and its own requests are refused with the user's balance sitting in them.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { dollarsToMicros, newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, verifiedUser } from "./auth-helpers";
import { freshDatabaseUri, openLedger } from "./support/direct-ledger";
import { startServerProcess, type ServerProcess } from "./support/server-process";

describe("a gateway process stalled past the hold TTL", () => {
  let fakes: FakeUpstreams;
  let sweeper: ServerProcess;
  let stalled: ServerProcess;
  let db: Database;
  let ledger: Ledger;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const mongoUri = freshDatabaseUri("stall");
    const env = {
      ...fakes.env,
      MONGODB_URI: mongoUri,
      HOLD_TTL_SECONDS: "5",
      SESSION_SECRET: "stalled-process-secret-stalled-process",
      LIMIT_REGISTER: "1000/3600",
      LIMIT_LOGIN_IP: "1000/3600",
    };
    [sweeper, stalled] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    ({ db, ledger } = await openLedger(mongoUri));
  }, 120_000);

  afterAll(async () => {
    stalled?.process.kill("SIGCONT");
    await Promise.all([sweeper?.stop(), stalled?.stop()]);
    await ledger?.close();
    await db?.close();
    await fakes?.close();
  });

  it("after the sweep it reserves under a new identity: its requests are served and its credits go back", async () => {
    const user = await verifiedUser(sweeper);
    const created = await call(sweeper, "POST", "/api/keys", { cookie: user.cookie, body: { name: "stall" } });
    const key = created.body.key as string;
    // less than a reservation chunk: the stalled process holds all of it
    await ledger.credit(user.id, dollarsToMicros(1), { kind: "adjustment", idempotencyKey: newId("stall") });
    const chat = () => fetch(`${stalled.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "Grüße aus Zürich" }], max_tokens: 50 }),
    });
    fakes.textA.failNext(1, { kind: "delay", ms: 1_500 }, { path: "/v1/chat/completions" });
    // The upstream reports more prompt than the gateway counted (an image, another tokenizer): the settle tops the
    // hold up from the balance, the first reservation the process makes once it runs again.
    fakes.textA.usageDetails = { prompt_tokens: 5_000 };
    const chatsUpstream = () => fakes.textA.requests.filter((r) => r.path === "/v1/chat/completions").length;
    const before = chatsUpstream();
    const inFlight = chat();
    // stalled only once it holds the credits and waits on the upstream (a fixed pause could stop it before it reserved)
    await vi.waitFor(async () => {
      expect(chatsUpstream()).toBe(before + 1);
      expect(await ledger.balance(user.id)).toBeLessThan(dollarsToMicros(1));
    }, { timeout: 10_000, interval: 20 });
    stalled.process.kill("SIGSTOP");
    // min(HOLD_TTL_SECONDS, 120 s) plus up to one 5 s check: the sweeper gives the held credits back (bound: slack for a loaded machine)
    const start = Date.now();
    while ((await ledger.balance(user.id)) !== dollarsToMicros(1) && Date.now() - start < 30_000) await new Promise((r) => setTimeout(r, 250));
    expect(await ledger.balance(user.id)).toBe(dollarsToMicros(1));
    stalled.process.kill("SIGCONT");
    expect((await inFlight).status).toBe(200);
    fakes.textA.usageDetails = undefined;

    const costs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat();
      expect(res.status).toBe(200);
      costs.push(Math.round(Number(res.headers.get("x-request-cost")) * 1_000_000));
    }
    await stalled.stop();
    // A clean stop writes the charges and gives the rest back: nothing stays held.
    const spent = costs.reduce((s, c) => s + c, 0);
    expect(spent).toBeGreaterThan(0);
    expect(await ledger.balance(user.id)).toBe(dollarsToMicros(1) - spent);
    const entries = await ledger.entries(user.id, { limit: 500 });
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(dollarsToMicros(1) - spent);
    expect((await ledger.verify(user.id)).problems).toEqual([]);
  }, 60_000);
});
