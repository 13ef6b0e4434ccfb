// README: on SIGTERM the requests in flight get up to 20 s to be answered and are charged as usual, and the gateway
// exits within 30 s in all. A stream that keeps sending outlives the drain: it is cut then and charged for what it
// produced (CONTRACT 6), and the instance exits, also with MONGODB_URI set (an instance of a multi-instance setup).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { dollarsToMicros, newId } from "@gw/shared";
import { call, verifiedUser } from "./auth-helpers";
import { freshDatabaseUri, openLedger } from "./support/direct-ledger";
import { startServerProcess, type ServerProcess } from "./support/server-process";
import { startEndlessChatUpstream, type EndlessUpstream } from "./support/endless-upstream";

describe("SIGTERM with a stream that keeps sending past the drain", () => {
  let upstream: EndlessUpstream;
  let gateway: ServerProcess;
  let db: Database;
  let ledger: Ledger;

  beforeAll(async () => {
    upstream = await startEndlessChatUpstream(200);
    const mongoUri = freshDatabaseUri("drain");
    gateway = await startServerProcess({
      MONGODB_URI: mongoUri,
      TEXTA_BASE_URL: upstream.url,
      TEXTA_API_KEY: "sk-test",
      SESSION_SECRET: "shutdown-long-stream-secret-000000001",
      LIMIT_REGISTER: "1000/3600",
      LIMIT_LOGIN_IP: "1000/3600",
    });
    ({ db, ledger } = await openLedger(mongoUri));
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await ledger?.close();
    await db?.close();
    upstream?.close();
  });

  it("cuts the stream at the drain's end, charges what it sent, and exits", async () => {
    const user = await verifiedUser(gateway);
    const created = await call(gateway, "POST", "/api/keys", { cookie: user.cookie, body: { name: "drain" } });
    expect(created.status).toBe(201);
    const credits = dollarsToMicros(1);
    await ledger.credit(user.id, credits, { kind: "adjustment", idempotencyKey: newId("drain") });

    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${created.body.key as string}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "go on" }], max_tokens: 4000, stream: true }),
    });
    expect(res.status).toBe(200);
    let received = "";
    const reading = (async () => {
      for await (const part of res.body ?? []) received += Buffer.from(part as Uint8Array).toString();
    })().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1_000));

    const signalled = Date.now();
    const exited = new Promise<number>((resolve) => gateway.process.once("exit", () => resolve(Date.now() - signalled)));
    gateway.process.kill("SIGTERM");
    const exitAfterMs = await Promise.race([exited, new Promise<number>((r) => setTimeout(() => r(Infinity), 35_000))]);
    await reading;

    expect(exitAfterMs).toBeLessThan(31_000);
    expect(received).toContain('"content":"word "');
    expect(received).not.toContain("[DONE]");
    const entries = await ledger.entries(user.id, { limit: 100 });
    const settles = entries.filter((e) => e.kind === "settle");
    expect(settles).toHaveLength(1);
    expect(settles[0]?.meta).toMatchObject({ status: "partial", endpoint: "/v1/chat/completions" });
    const cost = settles[0]?.cost ?? 0;
    expect(cost).toBeGreaterThan(0);
    expect(entries[0]?.balanceAfter).toBe(credits - cost);
    expect((await ledger.verify(user.id)).ok).toBe(true);
  }, 60_000);
});
