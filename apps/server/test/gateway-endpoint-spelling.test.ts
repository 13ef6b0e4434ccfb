import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { authHeaders, balanceMicros, fundedUser, postJson, readJson, type FundedUser } from "./support/gateway-fixtures";

// The router also serves a gateway route under other spellings of its path (letter case, a trailing slash). They are
// the same endpoint: an Idempotency-Key replays across them, and usage records name the route, not the spelling.
describe("gateway routes reached by another spelling of their path", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;
  const embedding = { model: "text-embedding-ada-002", input: "hello" };

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: fakes.env });
    user = await fundedUser(server, 5);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  it("an Idempotency-Key replays the answer, once charged, when the retry spells the path differently", async () => {
    const headers = { "idempotency-key": `spelling-${Date.now()}` };
    const first = await postJson(server, "/v1/embeddings", user.key, embedding, headers);
    expect(first.status).toBe(200);
    const firstBody = await readJson(first);
    const balance = await balanceMicros(server, user.userId);
    for (const spelling of ["/V1/Embeddings", "/v1/embeddings/"]) {
      const again = await postJson(server, spelling, user.key, embedding, headers);
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("x-request-cost")).toBe(first.headers.get("x-request-cost"));
      expect(await readJson(again)).toEqual(firstBody);
    }
    expect(fakes.textA.requests.filter((r) => r.path === "/v1/embeddings")).toHaveLength(1);
    expect(await balanceMicros(server, user.userId)).toBe(balance);
  });

  it("a usage record names the route's endpoint whatever spelling the request used", async () => {
    const other = await fundedUser(server, 5);
    expect((await postJson(server, "/V1/EMBEDDINGS", other.key, embedding)).status).toBe(200);
    expect((await postJson(server, "/API/V1/task/", other.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 5 })).status).toBe(200);
    const res = await fetch(`${server.url}/api/usage`, { headers: authHeaders(other.key, false) });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.data.map((r: { endpoint: string }) => r.endpoint).sort()).toEqual(["/api/v1/task", "/v1/embeddings"]);
  });
});
