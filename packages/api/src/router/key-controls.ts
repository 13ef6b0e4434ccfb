import { z } from "zod";
import { parseIpOrCidr, type ApiKeySummary, type KeyControls } from "@gw/auth";
import type { KeyUsage } from "@gw/billing";
import { AppError, LIMIT_RESETS, dollarsToMicros, invalidParameter, microsToDollars } from "@gw/shared";
import type { AppContext } from "../app-context";

// CONTRACT 10: the key controls as the API reads and writes them, and their validation.

const MAX_LIMIT_USD = 1_000_000;
const MAX_LIST = 100;

/** USD with at most two decimals, above 0: `0.1` and `10.25`, not `0`, `-1`, `1.005` or `"5"`. */
const limitField = z.number()
  .refine((v) => v > 0 && v <= MAX_LIMIT_USD, { message: `must be above 0 and at most ${MAX_LIMIT_USD}` })
  .refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, { message: "must have at most two decimals" })
  .nullable()
  .describe("USD per period (above 0, two decimals); null: no limit");

const rateLimitField = z.object({
  requests_per_minute: z.number().int().min(1).describe("at most the plan's"),
  concurrent_requests: z.number().int().min(1).describe("at most the plan's"),
}).strict().nullable().describe("null: the plan's limits alone");

/** The form as a pattern (the document states it: no flags, ASCII digits as Python reads `[0-9]`), the calendar by Date.parse (Feb 30 is refused). */
const ISO_DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})$/;
const ISO_DATE_TIME_RULE = "must be an ISO 8601 date and time with an offset (2027-01-01T00:00:00Z)";
const expiresField = z.string().max(40).regex(ISO_DATE_TIME, ISO_DATE_TIME_RULE)
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: ISO_DATE_TIME_RULE })
  .meta({ format: "date-time" })
  .nullable()
  .describe("ISO 8601; null: never expires");

const allowedIpsField = z.array(z.string().max(64).refine((s) => parseIpOrCidr(s) !== null, { message: "must be IP addresses or CIDRs (v4 or v6)" }))
  .min(1).max(MAX_LIST).nullable().describe("IPs or CIDRs (v4, v6); null: any address");

const allowedModelsField = z.array(z.string().min(1).max(100)).min(1).max(MAX_LIST).nullable().describe("model ids; null: every model");

/** The controls a create or PATCH may set; a field left out keeps its value (create: none). */
export const keyControlsInput = {
  limit: limitField.optional(),
  limit_reset: z.enum(LIMIT_RESETS).optional().describe("period boundaries at 00:00 UTC, weeks from Monday; default never"),
  allowed_models: allowedModelsField.optional(),
  rate_limit: rateLimitField.optional(),
  expires_at: expiresField.optional(),
  allowed_ips: allowedIpsField.optional(),
};

type ControlsInput = { [K in keyof typeof keyControlsInput]?: z.infer<(typeof keyControlsInput)[K]> };

/**
 * The controls after applying `input` to `current`, checked as a whole (400 invalid_parameter naming the field):
 * a reset needs a limit, models must exist, the expiry lie ahead, the rate limit stay within the plan's.
 */
export async function resolveControls(app: AppContext, userId: string, current: KeyControls, input: ControlsInput): Promise<KeyControls> {
  const next: KeyControls = {
    limitMicros: input.limit === undefined ? current.limitMicros : input.limit === null ? null : dollarsToMicros(input.limit),
    limitReset: input.limit_reset ?? current.limitReset,
    allowedModels: input.allowed_models === undefined ? current.allowedModels : input.allowed_models && [...new Set(input.allowed_models)],
    rateLimit: input.rate_limit === undefined ? current.rateLimit
      : input.rate_limit && { requestsPerMinute: input.rate_limit.requests_per_minute, concurrentRequests: input.rate_limit.concurrent_requests },
    expiresAt: input.expires_at === undefined ? current.expiresAt : input.expires_at === null ? null : new Date(input.expires_at),
    allowedIps: input.allowed_ips === undefined ? current.allowedIps : input.allowed_ips,
  };
  if (next.limitReset !== "never" && next.limitMicros === null) throw invalidParameter("limit_reset", "a reset other than 'never' needs a limit");
  if (input.allowed_models) {
    const known = new Set(app.config.models.map((m) => m.id));
    const unknown = input.allowed_models.find((id) => !known.has(id));
    if (unknown !== undefined) throw invalidParameter("allowed_models", `'${unknown.slice(0, 100)}' is not a model of this gateway`);
  }
  if (input.expires_at && (next.expiresAt?.getTime() ?? 0) <= app.clock.now()) throw invalidParameter("expires_at", "must be in the future");
  if (input.rate_limit) {
    const plan = await app.plans.planFor(userId);
    if (input.rate_limit.requests_per_minute > plan.requestsPerMinute) {
      throw invalidParameter("rate_limit.requests_per_minute", `must be at most the ${plan.name} plan's ${plan.requestsPerMinute}`);
    }
    if (input.rate_limit.concurrent_requests > plan.concurrentRequests) {
      throw invalidParameter("rate_limit.concurrent_requests", `must be at most the ${plan.name} plan's ${plan.concurrentRequests}`);
    }
  }
  return next;
}

/** The controls and usage of a key as every key answer shows them. */
export const keyControlsOutput = {
  limit: z.number().nullable().describe("USD per period; null: no limit"),
  limit_reset: z.enum(LIMIT_RESETS),
  allowed_models: z.array(z.string()).nullable(),
  rate_limit: z.object({ requests_per_minute: z.number().int(), concurrent_requests: z.number().int() }).nullable(),
  expires_at: z.string().nullable().describe("ISO 8601"),
  allowed_ips: z.array(z.string()).nullable(),
  usage: z.object({
    spent_period: z.number().describe("USD charged in the current period"),
    spent_total: z.number().describe("USD charged in all"),
    requests_total: z.number().int().describe("charged requests"),
  }),
  limit_remaining: z.number().nullable().describe("USD the key may still spend this period (requests in flight counted); null without a limit"),
};

export const keyDetails = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  prefix: z.string().describe("first 12 characters of the key"),
  created_at: z.string().describe("ISO 8601"),
  last_used: z.string().nullable().describe("ISO 8601; null when the key was never used"),
  usage_count: z.number().int(),
  status: z.literal("active"),
  ...keyControlsOutput,
});

const NO_USAGE: KeyUsage = { spentPeriod: 0, spentTotal: 0, requestsTotal: 0 };

export function controlsBody(controls: KeyControls, usage: KeyUsage = NO_USAGE, remainingMicros: number | null = controls.limitMicros) {
  return {
    limit: controls.limitMicros === null ? null : microsToDollars(controls.limitMicros),
    limit_reset: controls.limitReset,
    allowed_models: controls.allowedModels,
    rate_limit: controls.rateLimit && { requests_per_minute: controls.rateLimit.requestsPerMinute, concurrent_requests: controls.rateLimit.concurrentRequests },
    expires_at: controls.expiresAt?.toISOString() ?? null,
    allowed_ips: controls.allowedIps,
    usage: { spent_period: microsToDollars(usage.spentPeriod), spent_total: microsToDollars(usage.spentTotal), requests_total: usage.requestsTotal },
    limit_remaining: remainingMicros === null ? null : microsToDollars(remainingMicros),
  };
}

/**
 * Keys as the API shows them, with their spend read from the usage records (`totals`: the user's, read beside the keys
 * by a list) and the limit's chain.
 */
export async function keyBodies(app: AppContext, userId: string, keys: ApiKeySummary[], totals = app.keySpend.totals(userId)): Promise<Array<z.infer<typeof keyDetails>>> {
  const [spend, remaining] = await Promise.all([
    totals,
    Promise.all(keys.map(({ id, controls: { limitMicros, limitReset } }) =>
      limitMicros === null ? null : app.keySpend.remaining({ userId, keyId: id, limitMicros, reset: limitReset }))),
  ]);
  const usage = app.keySpend.usage(spend, keys.map((k) => ({ keyId: k.id, reset: k.controls.limitReset })));
  return keys.map((k, i) => ({
    id: k.id,
    name: k.name,
    description: k.description,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used: k.lastUsedAt?.toISOString() ?? null,
    usage_count: k.usageCount,
    status: "active" as const,
    ...controlsBody(k.controls, usage.get(k.id), remaining[i] ?? null),
  }));
}

export async function keyBody(app: AppContext, userId: string, key: ApiKeySummary): Promise<z.infer<typeof keyDetails>> {
  const [body] = await keyBodies(app, userId, [key]);
  if (!body) throw new AppError("internal_error", "key body missing");
  return body;
}
