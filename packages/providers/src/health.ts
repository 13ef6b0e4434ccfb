// Cheap reachability checks of the text and speech upstreams for /api/status/external.
import type { Config, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";
import type { UpstreamClient } from "./http/upstream-client";
import { ANTHROPIC_VERSION } from "./anthropic/transform";
import { baseUrlOf } from "./endpoint";

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

/** Every configured provider of the kind is probed (in parallel); the text check covers textA, textB and textC. */
const CANDIDATES: Record<"text" | "speech", ProviderName[]> = { text: ["textA", "textB", "textC"], speech: ["speech"] };

const statusError = (status: number) => new AppError("upstream_error", `HTTP ${status}`);

async function probeProvider(client: UpstreamClient, probe: Probe, endpoint: { baseUrl: string; apiKey?: string }, timeoutMs: number, slowMs: number): Promise<HealthReport> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    await client.json({
      url: `${baseUrlOf(endpoint.baseUrl)}${probe.path}`,
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
  // slower than `slowMs` (by default half the allowed time): answering, but not as it should
  if (responseTimeMs > slowMs) return { status: "degraded", responseTimeMs, issue: "slow response" };
  return { status: "healthy", responseTimeMs };
}

/**
 * One status for all configured providers of a kind: healthy when all are; unhealthy when none answers; degraded
 * otherwise (some models work, some don't), the issue naming each provider that is not healthy.
 */
export async function checkProviderHealth(client: UpstreamClient, config: Config, kind: "text" | "speech", timeoutMs: number, slowMs = timeoutMs / 2): Promise<HealthReport> {
  const configured = CANDIDATES[kind].flatMap((name) => {
    const probe = PROBES[name];
    const { baseUrl, apiKey } = config.providers[name];
    return probe && baseUrl ? [{ name, probe, endpoint: { baseUrl, apiKey } }] : [];
  });
  if (configured.length === 0) return { status: "unknown", responseTimeMs: 0, issue: "not configured" };
  const reports = await Promise.all(configured.map(({ probe, endpoint }) => probeProvider(client, probe, endpoint, timeoutMs, slowMs)));
  const responseTimeMs = Math.max(...reports.map((r) => r.responseTimeMs));
  const failing = reports.flatMap((r, i) => (r.status === "healthy" ? [] : [`${configured[i]?.name}: ${r.issue ?? r.status}`]));
  if (failing.length === 0) return { status: "healthy", responseTimeMs };
  const issue = configured.length === 1 ? reports[0]?.issue : failing.join("; ");
  const status = reports.every((r) => r.status === "unhealthy") ? "unhealthy" : "degraded";
  return { status, responseTimeMs, ...(issue ? { issue } : {}) };
}
