import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

/** What the fake moderation service does with the next request. */
type Behaviour = "clean" | "flag-sexual" | "flag-harassment" | "flag-unknown" | "500" | "hang" | "huge";

/**
 * An OpenAI-compatible `POST /v1/moderations` (OpenAI's answer shape: one result per input, `flagged`, boolean
 * `categories` with OpenAI's names, `category_scores`).
 */
function moderationAnswer(flagged: string | undefined): unknown {
  const names = ["sexual", "sexual/minors", "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
    "self-harm", "self-harm/intent", "self-harm/instructions", "violence", "violence/graphic"];
  const categories = Object.fromEntries(names.map((n) => [n, n === flagged]));
  const scores = Object.fromEntries(names.map((n) => [n, n === flagged ? 0.97 : 0.0001]));
  return { id: "modr-1", model: "omni-moderation-latest", results: [{ flagged: flagged !== undefined, categories, category_scores: scores }] };
}

describe("the optional upstream moderation check (MODERATION_UPSTREAM_URL)", () => {
  let fakes: FakeUpstreams;
  let moderation: Server;
  let server: TestServer;
  let behaviour: Behaviour = "clean";
  const seen: Array<{ auth: string | undefined; body: unknown }> = [];

  const answer = (req: IncomingMessage, res: ServerResponse, body: string) => {
    seen.push({ auth: req.headers.authorization, body: JSON.parse(body) });
    if (behaviour === "hang") return;
    if (behaviour === "500") {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "boom", type: "server_error" } }));
      return;
    }
    if (behaviour === "huge") {
      // a flagged verdict buried in an answer far larger than any moderation answer: not read to its end
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...(moderationAnswer("sexual") as object), padding: "x".repeat(2 * 1024 * 1024) }));
      return;
    }
    const flagged = { clean: undefined, "flag-sexual": "sexual", "flag-harassment": "harassment/threatening", "flag-unknown": "custom/other" }[behaviour];
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(moderationAnswer(flagged)));
  };

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    moderation = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (c: string) => { body += c; }).on("end", () => answer(req, res, body));
    });
    await new Promise<void>((resolve) => moderation.listen(0, "127.0.0.1", resolve));
    server = await startTestServer({
      env: {
        ...fakes.env,
        MODERATION_UPSTREAM_URL: `http://127.0.0.1:${(moderation.address() as AddressInfo).port}`,
        MODERATION_UPSTREAM_API_KEY: "sk-moderation",
        MODERATION_UPSTREAM_TIMEOUT_MS: "300",
      },
    });
  });
  afterAll(async () => {
    await server.close();
    moderation.closeAllConnections();
    await new Promise<void>((resolve) => moderation.close(() => resolve()));
    await fakes.close();
  });
  beforeEach(() => {
    fakes.clearAll();
    seen.length = 0;
    behaviour = "clean";
  });

  it("asks the service with the prompt and the style, one per line, and generates when it flags nothing", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse at dusk", style: "watercolor" });
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ auth: "Bearer sk-moderation", body: { input: "a lighthouse at dusk\nwatercolor" } }]);
    expect(fakes.imageA.requests).toHaveLength(1);
  });

  it.each([
    ["flag-sexual", "sexual"],
    ["flag-harassment", "hate"],
    ["flag-unknown", "violence"],
  ] as const)("%s: 400 content_policy_violation with the mapped category '%s'; the image upstream is never called and nothing is charged", async (flag, category) => {
    const user = await fundedUser(server, 1);
    behaviour = flag;
    for (const [path, body] of [
      ["/api/v1/imageA/generate", { prompt: "a lighthouse" }],
      ["/api/v1/imageB.1", { prompt: "a lighthouse" }],
      ["/api/v1/task", { model: "imageB-1-schnell", prompt: "a lighthouse" }],
    ] as const) {
      const res = await postJson(server, path, user.key, body);
      expect(res.status, path).toBe(400);
      const error = (await readJson(res)).error;
      expect(error.code, path).toBe("content_policy_violation");
      expect(error.message, path).toContain(`(category '${category}')`);
    }
    expect(seen).toHaveLength(3);
    expect(fakes.imageA.requests).toHaveLength(0);
    expect(fakes.imageB.requests).toHaveLength(0);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  it("a prompt the local policy refuses never reaches the service", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a nude portrait" });
    expect(res.status).toBe(400);
    expect((await readJson(res)).error.code).toBe("content_policy_violation");
    expect(seen).toHaveLength(0);
  });

  it.each(["500", "hang", "huge"] as const)("fails open when the service answers %s: the image is generated and charged as usual", async (fault) => {
    const user = await fundedUser(server, 1);
    behaviour = fault;
    const started = Date.now();
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse" });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
    expect(fakes.imageA.requests).toHaveLength(1);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - Math.round(Number(res.headers.get("x-request-cost")) * 1e6));
  });
});
