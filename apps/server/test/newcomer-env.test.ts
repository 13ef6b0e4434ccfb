// CONTRACT 13 and 15, as a new user meets them: the built server started with nothing but an env file (a copy of
// .env.example's first lines pointed at a local OpenAI-compatible server) reaches that upstream with the real model
// names of config.example.json.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { newId } from "@gw/shared";
import { FakeOpenAi } from "@gw/test-support";
import { call, verifiedUser } from "./auth-helpers";
import { freshDatabaseUri, openLedger } from "./support/direct-ledger";
import { startServerProcess, type ServerProcess } from "./support/server-process";

const EXAMPLE_CONFIG = fileURLToPath(new URL("../../../config.example.json", import.meta.url));

describe("a first run: one .env and the example config reach a real-looking OpenAI-compatible upstream", () => {
  let upstream: FakeOpenAi;
  let server: ServerProcess;
  let db: Database;
  let ledger: Ledger;
  let dir: string;

  beforeAll(async () => {
    upstream = await new FakeOpenAi("sk-newcomer").start();
    const mongoUri = freshDatabaseUri("newcomer");
    dir = mkdtempSync(path.join(os.tmpdir(), "gw-newcomer-"));
    const envFile = path.join(dir, ".env");
    // as an OpenAI SDK user writes it: the base URL with its /v1
    writeFileSync(envFile, [
      "# my gateway",
      `TEXTA_BASE_URL=${upstream.url}/v1`,
      "TEXTA_API_KEY=sk-newcomer",
      `CONFIG_FILE=${EXAMPLE_CONFIG}`,
      `MONGODB_URI=${mongoUri}`,
      "SESSION_SECRET=newcomer-secret-newcomer-secret-0001",
      // the process environment wins over the file
      "LOG_LEVEL=not-a-level",
      "",
    ].join("\n"));
    server = await startServerProcess({ ENV_FILE: envFile, LOG_LEVEL: "silent" });
    ({ db, ledger } = await openLedger(mongoUri));
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await ledger?.close();
    await db?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends textA-4 as gpt-4o with the key from the file, and answers as textA-4", async () => {
    const user = await verifiedUser(server);
    const created = await call(server, "POST", "/api/keys", { cookie: user.cookie, body: { name: "first" } });
    expect(created.status).toBe(201);
    await ledger.credit(user.id, 1_000_000, { kind: "adjustment", idempotencyKey: newId("newcomer") });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${String(created.body.key)}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "Hello" }], max_tokens: 10 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-model")).toBe("textA-4");
    expect(((await res.json()) as { model: string }).model).toBe("textA-4");
    const sent = upstream.lastRequest();
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer sk-newcomer");
    expect(sent?.json).toMatchObject({ model: "gpt-4o" });
  });
});
