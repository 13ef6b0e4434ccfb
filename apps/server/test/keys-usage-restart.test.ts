import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApiKeyService } from "@gw/auth";
import { randomBase62 } from "@gw/shared";
import { afterAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser } from "./support/gateway-fixtures";

/** A key's usage rows: one per writer that has used it. */
async function usageRows(server: TestServer, keyId: string): Promise<number> {
  return server.db.connection.collection("api_key_usage").countDocuments({ keyId });
}

async function use(server: TestServer, key: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  }
  await (server.app.context.apiKeys as ApiKeyService).flushUsage();
}

describe("a key's usage rows across restarts on one DATA_DIR", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-restart-"));
  const databaseName = `t_${randomBase62(12)}`;
  const env = { DATA_DIR: dataDir };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("a restarted server counts on in the row its previous run wrote; two at once write two rows; the count is every use", async () => {
    const first = await startTestServer({ env, databaseName });
    const user = await fundedUser(first, 1);
    await use(first, user.key, 2);
    await first.close();

    const restarted = await startTestServer({ env, databaseName });
    await use(restarted, user.key, 3);
    expect(await usageRows(restarted, user.keyId)).toBe(1);

    const alongside = await startTestServer({ env, databaseName });
    await use(alongside, user.key, 4);
    expect(await usageRows(restarted, user.keyId)).toBe(2);
    const [listed] = await restarted.app.context.apiKeys.listActive(user.userId);
    expect(listed?.usageCount).toBe(9);
    await alongside.close();
    await restarted.close();
  });
});
