import type { Clock } from "@gw/shared";

/** SPEC 3 service health values. */
export type HealthStatus = "healthy" | "degraded" | "unhealthy" | "unknown";

export interface HealthCheckResult {
  status: HealthStatus;
  /** why the dependency is degraded or unhealthy */
  issue?: string;
}

/** One dependency probe. It should honour `signal`; the registry stops waiting at the timeout either way. */
export type HealthCheck = (signal: AbortSignal) => Promise<HealthCheckResult>;

/** SPEC 2.14 service health entry. */
export interface HealthEntry {
  status: HealthStatus;
  response_time: number;
  last_check: string;
  issue?: string;
}

export interface HealthReport {
  services: Record<string, HealthEntry>;
  overall_status: HealthStatus;
  timestamp: string;
  /** ms epoch at which the cached report is refreshed */
  expiresAt: number;
}

/** CONTRACT 13: one upstream deployment of a model as /api/status/external lists it (never an upstream's error text). */
export interface DeploymentEntry {
  model: string;
  deployment: string;
  status: "healthy" | "cooling_down" | "rate_limited";
  /** ISO 8601, while cooling down */
  cooling_until?: string;
}

/** Named dependency probes behind GET /api/status/external. Features register their checks at start-up. */
export interface HealthChecks {
  register(name: string, check: HealthCheck): void;
  report(): Promise<HealthReport>;
  /** where the upstream deployments' states come from (the gateway's router); read on every request, from memory */
  registerDeployments(source: () => DeploymentEntry[]): void;
  deployments(): DeploymentEntry[];
}

/** The dependencies SPEC 4.9 always lists; those without a registered check report `unknown`. */
export const STANDARD_SERVICES = ["database", "text_provider", "speech_provider", "payment_provider"] as const;

export interface HealthCheckOptions {
  clock: Clock;
  /** per-check budget; keeps the whole answer within SPEC 8's 500 ms */
  timeoutMs?: number;
  /** a healthy answer slower than this is reported degraded */
  slowMs?: number;
  cacheMs?: number;
}

/**
 * overall_status: unhealthy when the database is (nothing works without it); degraded when any other dependency is
 * degraded or unhealthy; healthy otherwise. `unknown` (not configured) never lowers the overall status.
 */
export function overallStatus(services: Record<string, HealthEntry>): HealthStatus {
  if (services.database?.status === "unhealthy") return "unhealthy";
  const statuses = Object.values(services).map((s) => s.status);
  if (statuses.some((s) => s === "degraded" || s === "unhealthy")) return "degraded";
  return "healthy";
}

/**
 * After the registry's deadline a check still gets this long to answer. A check with a deadline of its own just under
 * the registry's (the providers' probes) has its timer fire in the same event-loop turn as the registry's when the
 * process was busy; its answer ("textB: timed out", the others' results) then needs a few more turns to come back,
 * and without this grace the registry's blanket "no answer" replaced it. Small against SPEC 8's 500 ms.
 */
const LATE_ANSWER_GRACE_MS = 25;

async function runCheck(check: HealthCheck, timeoutMs: number, slowMs: number, clock: Clock): Promise<HealthEntry> {
  const controller = new AbortController();
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HealthCheckResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      timer = setTimeout(() => resolve({ status: "unhealthy", issue: `no answer within ${timeoutMs} ms` }), LATE_ANSWER_GRACE_MS);
    }, timeoutMs);
  });
  let result: HealthCheckResult;
  try {
    result = await Promise.race([check(controller.signal), timeout]);
  } catch (err) {
    result = { status: "unhealthy", issue: err instanceof Error ? err.message : "check failed" };
  } finally {
    clearTimeout(timer);
  }
  const responseTime = Math.round(performance.now() - started);
  if (result.status === "healthy" && responseTime > slowMs) {
    result = { status: "degraded", issue: `slow response (${responseTime} ms)` };
  }
  const entry: HealthEntry = { status: result.status, response_time: responseTime, last_check: new Date(clock.now()).toISOString() };
  if (result.issue && result.status !== "healthy") entry.issue = result.issue;
  return entry;
}

/** Runs every check in parallel, bounded by a timeout each, and caches the report (SPEC 8: 30 s). */
export function createHealthChecks(options: HealthCheckOptions): HealthChecks {
  const { clock } = options;
  // 300 ms leaves room under SPEC 8's 500 ms for the HTTP round trip on a loaded machine.
  const timeoutMs = options.timeoutMs ?? 300;
  const slowMs = options.slowMs ?? 250;
  const cacheMs = options.cacheMs ?? 30_000;
  const checks = new Map<string, HealthCheck>();
  let cached: HealthReport | undefined;
  // Concurrent callers during a refresh share one run instead of stampeding the dependencies.
  let inFlight: Promise<HealthReport> | undefined;
  let deployments: () => DeploymentEntry[] = () => [];

  async function refresh(): Promise<HealthReport> {
    const names = [...new Set<string>([...STANDARD_SERVICES, ...checks.keys()])];
    const entries = await Promise.all(names.map(async (name): Promise<[string, HealthEntry]> => {
      const check = checks.get(name);
      if (!check) return [name, { status: "unknown", response_time: 0, last_check: new Date(clock.now()).toISOString() }];
      return [name, await runCheck(check, timeoutMs, slowMs, clock)];
    }));
    const services = Object.fromEntries(entries);
    const now = clock.now();
    return { services, overall_status: overallStatus(services), timestamp: new Date(now).toISOString(), expiresAt: now + cacheMs };
  }

  return {
    register(name, check) {
      checks.set(name, check);
      cached = undefined;
    },
    registerDeployments(source) {
      deployments = source;
    },
    deployments: () => deployments(),
    async report() {
      if (cached && clock.now() < cached.expiresAt) return cached;
      inFlight ??= refresh().then((report) => {
        cached = report;
        return report;
      }).finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
  };
}
