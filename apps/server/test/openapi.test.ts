import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

describe("OpenAPI document and reference page", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: "https://gateway.example" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("GET /api/openapi.json is generated from the routers", async () => {
    const res = await http(`${server.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "https://gateway.example/api" }]);
    expect(Object.keys(doc.paths["/keys"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/keys/{id}"])).toEqual(["delete"]);
    for (const path of ["/status", "/status/external"]) expect(doc.paths[path].get).toBeDefined();
    expect(Object.keys(doc.paths["/example"]).sort()).toEqual(["get", "post"]);
  });

  it("documents the real statuses and the spec's error shapes", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const create = doc.paths["/keys"].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "429"]));
    expect(create.responses["200"]).toBeUndefined();
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["name"]);
    expect(create.responses["403"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NestedError" });
    expect(doc.paths["/keys/{id}"].delete.responses["404"].description).toContain("key_not_found");
    expect(doc.paths["/status"].get.responses["503"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/StatusError" });
    expect(doc.paths["/status"].get.security).toBeUndefined();
    expect(doc.components.schemas.NestedError.properties.error.required).toEqual(["message", "type", "code"]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("GET /api/docs renders a readable reference without scripts", async () => {
    const res = await http(`${server.url}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("<code>/api/keys/{id}</code>");
    expect(html).toContain("/api/openapi.json");
    expect(html).toContain("/api/status/external");
    expect(html).not.toContain("<script");
  });
});
