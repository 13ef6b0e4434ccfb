import type { Ledger, UsageFilter, UsageRecord, UsageRepository, UsageTotalsRow } from "@gw/billing";
import { setRateLimitHeaders } from "@gw/limits";
import { AppError, microsToDollars, type Clock } from "@gw/shared";
import type { Response } from "express";
import type { RateLimits } from "../app-context";
import { usageRecordSchema, type UsageAnswer, type UsageQuery, type UsageRecordBody, type UsageSums } from "./schemas";

// The one reading of a caller's usage, for GET /api/usage (and its CSV) and the `usage.list` procedure.

const DAY_MS = 86_400_000;
const MAX_RANGE_DAYS = 366;

/** Counts a usage read against the `usage` limit (not the plan's requests per minute) and states it in X-RateLimit-*. */
export async function countUsageRead(limits: RateLimits, res: Response, userId: string): Promise<void> {
  setRateLimitHeaders(res, await limits.consume("usage", userId));
}

/**
 * The caller's records the query asks for (default range: the last 30 days), once the charges still queued on this
 * instance (with their usage records) are written: read-your-writes.
 */
export async function usageFilter(deps: { ledger: Ledger; clock: Clock }, userId: string, q: UsageQuery): Promise<UsageFilter> {
  const to = q.to ?? new Date(deps.clock.now() + 1);
  const from = q.from ?? new Date(to.getTime() - 30 * DAY_MS);
  if (from.getTime() >= to.getTime()) throw new AppError("invalid_parameter", "Invalid parameter 'from': must be before 'to'.");
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw new AppError("invalid_parameter", `Invalid parameter 'from': the range is at most ${MAX_RANGE_DAYS} days.`);
  }
  await deps.ledger.flushCharges(userId);
  return { userId, from, to, model: q.model, keyId: q.key_id, endpoint: q.endpoint, status: q.status };
}

export function recordBody(r: UsageRecord): UsageRecordBody {
  return {
    id: r.id,
    request_id: r.requestId,
    created_at: r.createdAt.toISOString(),
    endpoint: r.endpoint,
    model: r.model,
    deployment: r.deployment ?? null,
    type: r.type,
    key_id: r.keyId ?? null,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.promptTokens + r.completionTokens,
    characters: r.characters,
    audio_seconds: r.audioSeconds,
    images: r.images,
    processing_ms: r.processingMs,
    output_bytes: r.outputBytes,
    cost: microsToDollars(r.costMicros),
    status: r.status,
  };
}

/** The CSV's columns: the record's field names, in its order. */
export const USAGE_CSV_FIELDS = Object.keys(usageRecordSchema.shape);

type Sums = Omit<UsageSums, "cost"> & { costMicros: number };

const emptySums = (): Sums => ({ requests: 0, costMicros: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters: 0, audio_seconds: 0, images: 0 });

/** Sums micro-dollars exactly, converting to dollars once at the end. */
function addRow(into: Sums, row: UsageTotalsRow): void {
  into.requests += row.requests;
  into.costMicros += row.costMicros;
  into.prompt_tokens += row.promptTokens;
  into.completion_tokens += row.completionTokens;
  into.total_tokens += row.promptTokens + row.completionTokens;
  into.characters += row.characters;
  into.audio_seconds += row.audioSeconds;
  into.images += row.images;
}

function finish<T extends Sums>(s: T): Omit<T, "costMicros"> & { cost: number } {
  const { costMicros, ...rest } = s;
  return { ...rest, cost: microsToDollars(costMicros) };
}

/** A page of the filtered records, newest first, with the totals of the whole filter per day, per model and per key. */
export async function usagePage(repo: UsageRepository, filter: UsageFilter, q: Pick<UsageQuery, "page" | "per_page">): Promise<UsageAnswer> {
  const [{ records, total }, rows] = await Promise.all([
    repo.list({ ...filter, skip: (q.page - 1) * q.per_page, limit: q.per_page }),
    repo.totals(filter),
  ]);
  const all = emptySums();
  const byDay = new Map<string, Sums & { date: string }>();
  const byModel = new Map<string, Sums & { model: string }>();
  const byKey = new Map<string | null, Sums & { key_id: string | null }>();
  for (const row of rows) {
    addRow(all, row);
    const day = byDay.get(row.day) ?? { date: row.day, ...emptySums() };
    addRow(day, row);
    byDay.set(row.day, day);
    const model = byModel.get(row.model) ?? { model: row.model, ...emptySums() };
    addRow(model, row);
    byModel.set(row.model, model);
    const keyId = row.keyId ?? null;
    const key = byKey.get(keyId) ?? { key_id: keyId, ...emptySums() };
    addRow(key, row);
    byKey.set(keyId, key);
  }
  return {
    object: "list",
    data: records.map(recordBody),
    pagination: { page: q.page, per_page: q.per_page, total, total_pages: Math.ceil(total / q.per_page) },
    range: { from: filter.from.toISOString(), to: filter.to.toISOString() },
    totals: {
      ...finish(all),
      by_day: [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date)).map(finish),
      by_model: [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model)).map(finish),
      // requests made with a session (the playground) are those of key_id null, listed last
      by_key: [...byKey.values()].sort((a, b) => (a.key_id ?? "\uffff").localeCompare(b.key_id ?? "\uffff")).map(finish),
    },
  };
}
