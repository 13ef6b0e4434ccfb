import type { Request, Response } from "express";
import { countUsageRead, recordBody, USAGE_CSV_FIELDS, usageFilter, usagePage, usageQuerySchema } from "@gw/api";
import type { UsageRecord } from "@gw/billing";
import type { AppContext } from "../../context";
import { principalOf } from "../http/auth";
import { parseOrThrow } from "../http/validate";
import { streamCsv } from "./csv";

async function* recordBodies(records: AsyncIterable<UsageRecord>): AsyncGenerator<Record<string, unknown>> {
  for await (const record of records) yield recordBody(record);
}

/**
 * GET /api/usage (API key or session): the caller's usage records, newest first, paginated, with totals per day,
 * per model and per key over the same range (default: the last 30 days), filtered by model, key, endpoint and status;
 * or every record of the range as CSV. Counted against the `usage` limit, whose
 * X-RateLimit-* it carries; mounted with no-store (per-user data). Its query and answer: @gw/api's usage schemas.
 */
export function usageRoute(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const { userId } = principalOf(res);
    await countUsageRead(ctx.limits, res, userId);
    const q = parseOrThrow(usageQuerySchema, req.query);
    const filter = await usageFilter(ctx, userId, q);
    // CONTRACT 11: `format=csv`, or a client that accepts CSV rather than JSON, gets every record of the range
    if (q.format === "csv" || (q.format === undefined && req.accepts(["application/json", "text/csv"]) === "text/csv")) {
      await streamCsv(res, "usage.csv", USAGE_CSV_FIELDS, recordBodies(ctx.usage.stream(filter)));
      return;
    }
    res.json(await usagePage(ctx.usage, filter, q));
  };
}
