// The translated streams (/v1/messages, /v1/responses) are metered as chat streams are (CONTRACT 6): cut after output
// began, charged for what was produced, with a partial usage record naming the endpoint; failed before output, a JSON
// error that costs nothing; with Idempotency-Key, a completed stream replayed without a second charge.
import { describe, expect, it } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { countTokens } from "@gw/providers";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

const textCost = (prompt: number, completion: number) => prompt + 2 * completion;

/** The JSON data of each named event, in order. */
function events(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text.split("\n\n").filter((block) => block.includes("data: ")).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
    return { event, data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}") as Record<string, unknown> };
  });
}

const ROUTES = [
  {
    path: "/v1/messages",
    body: (model: string) => ({ model, max_tokens: 100, stream: true, messages: [{ role: "user", content: "one two three four five six seven eight" }] }),
    text: (e: { data: Record<string, unknown> }) => (e.data.type === "content_block_delta" ? String((e.data.delta as { text?: string }).text ?? "") : ""),
    errorEvent: "error",
  },
  {
    path: "/v1/responses",
    body: (model: string) => ({ model, max_output_tokens: 100, stream: true, input: "one two three four five six seven eight" }),
    text: (e: { data: Record<string, unknown> }) => (e.data.type === "response.output_text.delta" ? String(e.data.delta) : ""),
    errorEvent: "error",
  },
];

describe("translated streams: metering", () => {
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 1_000 })) });

  for (const route of ROUTES) {
    it.each([["textA-4", "textA"], ["textB-3-haiku", "textB"]] as const)(`${route.path} %s: a stream cut after output began is charged for what was produced`, async (model, upstream) => {
      const user = await fundedUser(h.server, 1);
      h.fakes[upstream].failNext(1, { kind: "truncate" });
      const res = await postJson(h.server, route.path, user.key, route.body(model));
      expect(res.status).toBe(200);
      const all = events(await res.text());
      expect(all.at(-1)?.event).toBe(route.errorEvent);
      const produced = all.map(route.text).join("");
      expect(produced.length).toBeGreaterThan(0);
      const usage = await readJson(await fetch(`${h.server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } }));
      const record = usage.data[0];
      expect(record).toMatchObject({ endpoint: route.path, model, status: "partial", completion_tokens: countTokens(produced) });
      expect(1_000_000 - (await balanceMicros(h.server, user.userId))).toBe(textCost(record.prompt_tokens, record.completion_tokens));
    });
  }

  it("/v1/messages: an upstream failure before output is Anthropic's JSON error and costs nothing", async () => {
    const user = await fundedUser(h.server, 1);
    h.fakes.textB.failStatus(5, 500);
    const res = await postJson(h.server, "/v1/messages", user.key, ROUTES[0]?.body("textB-3-haiku"));
    expect(res.status).toBe(502);
    expect(await readJson(res)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(await balanceMicros(h.server, user.userId)).toBe(1_000_000);
  });

  for (const route of ROUTES) {
    it(`${route.path}: Idempotency-Key replays a completed stream event for event, charged once`, async () => {
      const user = await fundedUser(h.server, 1);
      const headers = { "idempotency-key": `k-${route.path}` };
      const first = await (await postJson(h.server, route.path, user.key, route.body("textB-3-haiku"), headers)).text();
      const charged = 1_000_000 - (await balanceMicros(h.server, user.userId));
      expect(charged).toBeGreaterThan(0);
      const again = await postJson(h.server, route.path, user.key, route.body("textB-3-haiku"), headers);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(first);
      expect(1_000_000 - (await balanceMicros(h.server, user.userId))).toBe(charged);
      expect(h.fakes.textB.requests).toHaveLength(1);
    });
  }
});
