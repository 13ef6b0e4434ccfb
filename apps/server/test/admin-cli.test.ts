// `npm run admin`: the built CLI (dist/admin.js) against the test server's database, without going through the server.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { expectLedgerConsistent } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/admin.js");

describe("npm run admin", () => {
  let server: TestServer;
  let dataDir: string;
  const adminEmail = uniqueEmail("admin");

  beforeAll(async () => {
    server = await startTestServer({ env: { ...RELAXED_LIMITS, ADMIN_EMAILS: adminEmail } });
    dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-admin-cli-"));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function admin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env = { NODE_ENV: "test", DATA_DIR: dataDir, MONGODB_URI: server.config.mongodbUri ?? "", LOG_LEVEL: "silent" };
    // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
    const child = spawn(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on("data", (chunk: Buffer) => { stderr += chunk.toString(); });
    return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  }

  it("credits, refuses bad input with named errors and exit codes, suspends and unsuspends, lists users; all audited", async () => {
    const customer = await verifiedUser(server, uniqueEmail("cli-customer"));
    const key = (await call(server, "POST", "/api/keys", { cookie: customer.cookie, body: { name: "cli" } })).body.key as string;
    const bearer = { authorization: `Bearer ${key}` };

    const credited = await admin("credit", customer.email, "5", "first", "try");
    expect(credited.code, credited.stderr).toBe(0);
    expect(credited.stdout).toContain(`Credited $5.00 to ${customer.email}`);
    expect(credited.stdout).toContain("balance $5.00");
    expect((await call(server, "GET", "/api/billing/credits", { cookie: customer.cookie })).body.balance).toBe(5);

    const unknown = await admin("credit", "nobody@example.com", "5", "x");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("not_found");
    expect(unknown.stderr).toContain("nobody@example.com");
    for (const amount of ["1.234", "0"]) {
      const bad = await admin("credit", customer.email, amount, "x");
      expect(bad.code, amount).toBe(2);
      expect(bad.stderr).toContain("bad amount");
    }
    expect((await admin("credit", customer.email, "5")).code).toBe(2);
    const tooMuch = await admin("credit", customer.email, "-10", "take back");
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr).toContain("conflict");
    expect(tooMuch.stderr).toContain("$5.00");
    expect((await admin("frobnicate")).code).toBe(2);

    const listed = await admin("users", "cli-customer", "--json");
    expect(listed.code).toBe(0);
    const rows = (JSON.parse(listed.stdout) as { users: Array<{ email: string; balance: number }> }).users;
    expect(rows.find((u) => u.email === customer.email)?.balance).toBe(5);

    expect((await admin("suspend", customer.email)).stdout).toContain("is suspended");
    await vi.waitFor(async () => expect((await call(server, "GET", "/v1/models", { headers: bearer })).status).toBe(403), { timeout: 2_000, interval: 50 });
    expect((await call(server, "GET", "/api/auth/me", { cookie: customer.cookie })).status).toBe(401);
    expect((await admin("unsuspend", customer.email)).stdout).toContain("is active");
    await vi.waitFor(async () => expect((await call(server, "GET", "/v1/models", { headers: bearer })).status).toBe(200), { timeout: 2_000, interval: 50 });

    const adminUser = await verifiedUser(server, adminEmail);
    const audit = await call(server, "GET", "/api/admin/audit?limit=3", { cookie: adminUser.cookie });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(["user.unsuspend", "user.suspend", "user.credit"]);
    expect(audit.body.entries[2]).toMatchObject({ actor: { user_id: null, via: "cli" }, ip: null, after: { balance: 5, reason: "first try" } });
    await expectLedgerConsistent(server, [customer.id]);
  }, 120_000);
});
