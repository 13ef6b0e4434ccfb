import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

describe("server skeleton", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("answers unknown routes with 404 not_found in the nested error form and an X-Request-Id", async () => {
    const res = await fetch(`${server.url}/api/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      error: { message: "No route for GET /api/nope.", type: "not_found_error", code: "not_found" },
    });
  });

  it("echoes a valid incoming X-Request-Id", async () => {
    const res = await fetch(`${server.url}/nothing`, { headers: { "X-Request-Id": "abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("abc-123");
  });
});
