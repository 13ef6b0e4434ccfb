import { newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { credit, postJson } from "./support/gateway-fixtures";

// issue 31: `usage.list` (the dashboard's client) answers what GET /api/usage answers, with its credentials,
// limit and refusals.

describe("usage.list: GET /api/usage's answer through tRPC", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  const userId = newId("usr");
  let key: { id: string; key: string };

  const procedure = (input: Record<string, string>, headers: Record<string, string>) =>
    fetch(`${server.url}/api/trpc/usage.list?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
  const rest = (query: string, headers: Record<string, string>) => fetch(`${server.url}/api/usage?${query}`, { headers });

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: fakes.env });
    key = await server.app.context.apiKeys.create(userId, { name: "a" });
    await credit(server, userId, 5);
    const chat = await postJson(server, "/v1/chat/completions", key.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(200);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("answers the same records, totals and pagination, counted against the same `usage` limit", async () => {
    const auth = { authorization: `Bearer ${key.key}` };
    const viaRest = await rest("per_page=5", auth);
    expect(viaRest.status).toBe(200);
    const viaProcedure = await procedure({ per_page: "5" }, auth);
    expect(viaProcedure.status).toBe(200);
    const answer = ((await viaProcedure.json()) as { result: { data: unknown } }).result.data;
    const expected = (await viaRest.json()) as { data: unknown[]; range: { to: string } };
    expect(expected.data).toHaveLength(1);
    // the default `to` is now: the two reads only differ by it
    expect({ ...(answer as object), range: expected.range }).toEqual(expected);
    const restLeft = Number(viaRest.headers.get("x-ratelimit-remaining"));
    expect(viaProcedure.headers.get("x-ratelimit-limit")).toBe(viaRest.headers.get("x-ratelimit-limit"));
    expect(Number(viaProcedure.headers.get("x-ratelimit-remaining"))).toBe(restLeft - 1);
  });

  it("refuses as the route does: no credentials, a bad key, a bad parameter", async () => {
    const cases: Array<[Record<string, string>, Record<string, string>, string]> = [
      [{}, {}, ""],
      [{}, { authorization: "Bearer ak-live-nope" }, ""],
      [{ per_page: "0" }, { authorization: `Bearer ${key.key}` }, "per_page=0"],
    ];
    for (const [input, headers, query] of cases) {
      const viaRest = await rest(query, headers);
      const viaProcedure = await procedure(input, headers);
      expect(viaProcedure.status).toBe(viaRest.status);
      const { error } = (await viaRest.json()) as { error: { code: string; message: string } };
      const body = (await viaProcedure.json()) as { error: { data: { error: { code: string; message: string } } } };
      expect(body.error.data.error).toMatchObject({ code: error.code, message: error.message });
    }
  });
});
