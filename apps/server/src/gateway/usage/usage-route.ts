import type { Request, Response } from "express";
import { setRateLimitHeaders } from "@gw/limits";
import { AppError, microsToDollars } from "@gw/shared";
import { z } from "zod";
import type { AppContext } from "../../context";
import { principalOf } from "../http/auth";
import { parseOrThrow } from "../http/validate";
import { streamCsv } from "./csv";
import type { UsageRecord, UsageTotalsRow } from "@gw/billing";

const DAY_MS = 86_400_000;
const MAX_RANGE_DAYS = 366;

// ISO 8601 only (Date.parse alone also takes "Tue, 1 Jan 2030" or "1"): a date, or a date and time with an offset.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
/** A day that exists: Date.parse rolls 2026-02-30 over to March 2 instead of refusing it. */
const isCalendarDay = (s: string): boolean => {
  const day = s.slice(0, 10);
  const parsed = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed) && new Date(parsed).toISOString().slice(0, 10) === day;
};
/**
 * A `+` offset sent unencoded reaches the query as a space (form decoding): "…T12:00:00 01:00" can only have meant
 * +01:00, so it reads as that rather than failing a caller who forgot to write %2B.
 */
const plusFromSpace = (s: string): string => s.replace(/^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}:?\d{2})$/, "$1+$2");
const isoDate = z.string().max(40).transform(plusFromSpace)
  .refine((s) => (ISO_DATE.test(s) || ISO_DATE_TIME.test(s)) && !Number.isNaN(Date.parse(s)) && isCalendarDay(s), { message: "must be an ISO 8601 date (2026-11-01 or 2026-11-01T12:00:00Z)" });
/** `from`: the instant given (a date alone is its start, 00:00 UTC). */
const fromParam = isoDate.transform((s) => new Date(s));
/** `to` is exclusive, except that a date alone includes that whole day (UTC). */
const toParam = isoDate.transform((s) => new Date(Date.parse(s) + (ISO_DATE.test(s) ? DAY_MS : 0)));
/** A whole number written plainly (no sign, hex, exponent or spaces). */
const countParam = (max: number, fallback: number) =>
  z.string().regex(/^\d{1,9}$/, "must be a whole number").transform(Number).pipe(z.number().int().min(1).max(max)).default(fallback);

const usageQuery = z.object({
  page: countParam(100_000, 1),
  per_page: countParam(100, 50),
  from: fromParam.optional(),
  to: toParam.optional(),
  model: z.string().min(1).max(100).optional(),
  key_id: z.string().min(1).max(100).optional(),
  endpoint: z.string().min(1).max(100).optional(),
  status: z.enum(["success", "partial"]).optional(),
  format: z.enum(["json", "csv"]).optional(),
});

function recordBody(r: UsageRecord) {
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
const CSV_FIELDS = Object.keys(recordBody({
  id: "", userId: "", requestId: "", endpoint: "", model: "", type: "text", promptTokens: 0, completionTokens: 0, characters: 0,
  audioSeconds: 0, images: 0, processingMs: 0, outputBytes: 0, costMicros: 0, status: "success", createdAt: new Date(0),
}));

async function* recordBodies(records: AsyncIterable<UsageRecord>): AsyncGenerator<Record<string, unknown>> {
  for await (const record of records) yield recordBody(record);
}

interface Sums { requests: number; cost: number; prompt_tokens: number; completion_tokens: number; total_tokens: number; characters: number; audio_seconds: number; images: number }

const emptySums = (): Sums => ({ requests: 0, cost: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters: 0, audio_seconds: 0, images: 0 });

/** Sums micro-dollars exactly, converting to dollars once at the end. */
function addRow(into: Sums & { costMicros?: number }, row: UsageTotalsRow): void {
  into.requests += row.requests;
  into.costMicros = (into.costMicros ?? 0) + row.costMicros;
  into.prompt_tokens += row.promptTokens;
  into.completion_tokens += row.completionTokens;
  into.total_tokens += row.promptTokens + row.completionTokens;
  into.characters += row.characters;
  into.audio_seconds += row.audioSeconds;
  into.images += row.images;
}

function finish<T extends Sums & { costMicros?: number }>(s: T): Omit<T, "costMicros"> {
  const { costMicros, ...rest } = s;
  return { ...rest, cost: microsToDollars(costMicros ?? 0) };
}

/**
 * GET /api/usage (API key or session): the caller's usage records, newest first, paginated, with totals per day,
 * per model and per key over the same range (default: the last 30 days), filtered by model, key, endpoint and status;
 * or every record of the range as CSV. Counted against the `usage` limit, whose
 * X-RateLimit-* it carries; mounted with no-store (per-user data).
 */
export function usageRoute(ctx: AppContext) {
  const repo = ctx.usage;
  return async (req: Request, res: Response) => {
    const { userId } = principalOf(res);
    setRateLimitHeaders(res, await ctx.limits.consume("usage", userId));
    const q = parseOrThrow(usageQuery, req.query);
    const to = q.to ?? new Date(ctx.clock.now() + 1);
    const from = q.from ?? new Date(to.getTime() - 30 * DAY_MS);
    if (from.getTime() >= to.getTime()) throw new AppError("invalid_parameter", "Invalid parameter 'from': must be before 'to'.");
    if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
      throw new AppError("invalid_parameter", `Invalid parameter 'from': the range is at most ${MAX_RANGE_DAYS} days.`);
    }
    // Read-your-writes on this instance: charges (with their usage records) still queued are written first.
    await ctx.ledger.flushCharges(userId);
    const filter = { userId, from, to, model: q.model, keyId: q.key_id, endpoint: q.endpoint, status: q.status };
    // CONTRACT 11: `format=csv`, or a client that accepts CSV rather than JSON, gets every record of the range
    if (q.format === "csv" || (q.format === undefined && req.accepts(["application/json", "text/csv"]) === "text/csv")) {
      await streamCsv(res, "usage.csv", CSV_FIELDS, recordBodies(repo.stream(filter)));
      return;
    }
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
    res.json({
      object: "list",
      data: records.map(recordBody),
      pagination: { page: q.page, per_page: q.per_page, total, total_pages: Math.ceil(total / q.per_page) },
      range: { from: from.toISOString(), to: to.toISOString() },
      totals: {
        ...finish(all),
        by_day: [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date)).map(finish),
        by_model: [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model)).map(finish),
        // requests made with a session (the playground) are those of key_id null, listed last
        by_key: [...byKey.values()].sort((a, b) => (a.key_id ?? "\uffff").localeCompare(b.key_id ?? "\uffff")).map(finish),
      },
    });
  };
}
