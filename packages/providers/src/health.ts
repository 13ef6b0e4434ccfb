// Cheap reachability checks of the text and speech upstreams for /api/status/external.
import type { Config, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";
import type { UpstreamClient } from "./http/upstream-client";
import { ANTHROPIC_VERSION } from "./anthropic/transform";

export type HealthStatus = "healthy" | "degraded" | "unhealthy" | "unknown";

export interface HealthReport {
  status: HealthStatus;
  responseTimeMs: number;
  issue?: string;
}

interface Probe {
  path: string;
  headers: (apiKey: string) => Record<string, string>;
}

const PROBES: Partial<Record<ProviderName, Probe>> = {
  textA: { path: "/v1/models", headers: (key) => ({ authorization: `Bearer ${key}` }) },
  textB: { path: "/v1/models", headers: (key) => ({ "x-api-key": key, "anthropic-version": ANTHROPIC_VERSION }) },
  textC: { path: "/v1/models", headers: (key) => ({ authorization: `Bearer ${key}` }) },
  speech: { path: "/v1/voices", headers: (key) => ({ "xi-api-key": key }) },
};

/** The text check looks at the first configured text provider, in this order. */
const CANDIDATES: Record<"text" | "speech", ProviderName[]> = { text: ["textA", "textB", "textC"], speech: ["speech"] };

const statusError = (status: number) => new AppError("upstream_error", `HTTP ${status}`);

export async function checkProviderHealth(client: UpstreamClient, config: Config, kind: "text" | "speech", timeoutMs: number): Promise<HealthReport> {
  const provider = CANDIDATES[kind].find((name) => config.providers[name].baseUrl);
  const probe = provider && PROBES[provider];
  const endpoint = provider && config.providers[provider];
  if (!probe || !endpoint?.baseUrl) return { status: "unknown", responseTimeMs: 0, issue: "not configured" };
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    await client.json({
      url: `${endpoint.baseUrl.replace(/\/+$/, "")}${probe.path}`,
      method: "GET",
      headers: { accept: "application/json", ...probe.headers(endpoint.apiKey ?? "") },
      signal: AbortSignal.timeout(timeoutMs + 1_000),
      parseError: statusError,
      timeoutMs,
      retry: false,
    });
  } catch (err) {
    const issue = err instanceof AppError && err.code === "upstream_timeout" ? "timed out" : err instanceof AppError ? err.message : "unreachable";
    return { status: "unhealthy", responseTimeMs: elapsed(), issue };
  }
  const responseTimeMs = elapsed();
  // slower than half the allowed time: answering, but not as it should
  if (responseTimeMs > timeoutMs / 2) return { status: "degraded", responseTimeMs, issue: "slow response" };
  return { status: "healthy", responseTimeMs };
}
