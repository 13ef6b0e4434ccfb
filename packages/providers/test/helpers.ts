// Shared setup of the provider suites: every fake upstream on real HTTP and a gateway with short timings.
import { loadConfig, type Config, type ModelDefinition } from "@gw/config";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { findModel } from "../src/catalog";
import { createProviderGateway } from "../src/create-provider-gateway";
import type { ProviderGateway } from "../src/types";

export interface ProviderHarness {
  fakes: FakeUpstreams;
  config: Config;
  gateway: ProviderGateway;
  model(id: string): ModelDefinition;
  close(): Promise<void>;
}

export async function startProviderHarness(env: Record<string, string> = {}): Promise<ProviderHarness> {
  const fakes = await startFakeUpstreams();
  const config = loadConfig({
    NODE_ENV: "test",
    SESSION_SECRET: "test-secret-test-secret-test-secret-0123",
    UPSTREAM_TIMEOUT_MS: "1500",
    UPSTREAM_CONNECT_TIMEOUT_MS: "500",
    UPSTREAM_MAX_RETRIES: "2",
    FLUX_POLL_INTERVAL_MS: "10",
    ...fakes.env,
    ...env,
  });
  const gateway = createProviderGateway(config, { retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  return {
    fakes,
    config,
    gateway,
    model(id) {
      const found = findModel(config, id);
      if (!found) throw new Error(`unknown model ${id}`);
      return found;
    },
    async close() {
      await gateway.close();
      await fakes.close();
    },
  };
}

/** A signal nobody aborts. */
export const noAbort = (): AbortSignal => new AbortController().signal;

/** Runs fn and returns what it threw (fails the test when it did not throw). */
export async function caught(fn: () => Promise<unknown>): Promise<{ code?: string; status?: number; message: string } & Record<string, unknown>> {
  try {
    await fn();
  } catch (err) {
    return err as { code?: string; status?: number; message: string };
  }
  throw new Error("expected an error");
}

/** A stream's events, without the `served` every one carries (these suites test the adapters; routing has its own). */
export async function collect<T extends object>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(unrouted(item));
  return out;
}

/** A result without its `served` (the model and deployment that answered). */
export function unrouted<T extends object>(result: T): T {
  const { served: _served, ...rest } = result as T & { served?: unknown };
  return rest as T;
}
