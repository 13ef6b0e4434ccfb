import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer, type TestServerOptions } from "../harness";
import { fundedUser, type FundedUser } from "./gateway-fixtures";

export interface SdkHarness {
  fakes: FakeUpstreams;
  server: TestServer;
  /** funded with $10 */
  user: FundedUser;
  /** the official SDK pointed at the gateway's /v1, without retries */
  client: OpenAI;
}

/**
 * For a describe block: fake upstreams, a gateway, a funded user and an official `openai` client, started before its
 * tests and stopped after them; the fakes' records and faults are cleared before each test. Read the fields inside tests.
 * `config` overrides the gateway's (plans with higher limits, say).
 */
export function useSdkHarness(config?: TestServerOptions["config"]): SdkHarness {
  const h = {} as SdkHarness;
  beforeAll(async () => {
    h.fakes = await startFakeUpstreams();
    h.server = await startTestServer({ env: h.fakes.env, config });
    h.user = await fundedUser(h.server, 10);
    h.client = new OpenAI({ apiKey: h.user.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await h.server.close();
    await h.fakes.close();
  });
  beforeEach(() => h.fakes.clearAll());
  return h;
}
