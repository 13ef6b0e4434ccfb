import { usageStatusSchema, usageTypeSchema } from "@gw/billing";
import { z } from "zod";

// GET /api/usage (the gateway's Express route) and the `usage.list` procedure: their query and answer, declared once.

const DAY_MS = 86_400_000;

// ISO 8601 only (Date.parse alone also takes "Tue, 1 Jan 2030" or "1"): a date, or a date and time with an offset.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
/**
 * The text of an ISO 8601 date or date-time as the query reads it (a space for an unencoded `+` after an upper-case
 * T), stated in the OpenAPI document; whether the day exists, and the range, are checked beside.
 */
const ISO_DATE_TEXT = "^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+ -]\\d{2}:?\\d{2})|t\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:?\\d{2}))?$";
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
const isoDate = (description: string) => z.string().max(40).meta({ pattern: ISO_DATE_TEXT, description }).transform(plusFromSpace)
  .refine((s) => (ISO_DATE.test(s) || ISO_DATE_TIME.test(s)) && !Number.isNaN(Date.parse(s)) && isCalendarDay(s), { message: "must be an ISO 8601 date (2026-11-01 or 2026-11-01T12:00:00Z)" });
/** A whole number written plainly (no sign, hex, exponent or spaces); an integer in the OpenAPI document. */
const countParam = (max: number, fallback: number) =>
  z.string().regex(/^\d{1,9}$/, "must be a whole number").transform(Number).pipe(z.number().int().min(1).max(max)).default(fallback)
    .meta({ type: "integer", minimum: 1, maximum: max, default: fallback });

/** The query of GET /api/usage (strings, as a query string carries them), also the input of `usage.list`. */
export const usageQuerySchema = z.object({
  page: countParam(100_000, 1),
  per_page: countParam(100, 50),
  /** the instant given (a date alone is its start, 00:00 UTC) */
  from: isoDate("ISO 8601 date or date-time; default 30 days before `to`").transform((s) => new Date(s)).optional(),
  /** exclusive, except that a date alone includes that whole day (UTC) */
  to: isoDate("ISO 8601, exclusive (a date alone includes that day); at most 366 days after `from`")
    .transform((s) => new Date(Date.parse(s) + (ISO_DATE.test(s) ? DAY_MS : 0))).optional(),
  model: z.string().min(1).max(100).optional(),
  key_id: z.string().min(1).max(100).optional().meta({ description: "records of this API key" }),
  endpoint: z.string().min(1).max(100).optional().meta({ description: "records of this route, e.g. /v1/chat/completions" }),
  status: usageStatusSchema.optional(),
  format: z.enum(["json", "csv"]).optional().meta({ description: "csv (or `Accept: text/csv`): every record of the range, no pagination" }),
});
export type UsageQueryInput = z.input<typeof usageQuerySchema>;
export type UsageQuery = z.output<typeof usageQuerySchema>;

const integer = z.number().int();
const dollars = z.number().meta({ description: "dollars" });
const dateTime = z.iso.datetime();

/** One usage record on the wire; its fields, in this order, are also the CSV's columns. */
export const usageRecordSchema = z.object({
  id: z.string(),
  /** the X-Request-Id the call was answered with */
  request_id: z.string(),
  created_at: dateTime,
  endpoint: z.string(),
  model: z.string(),
  deployment: z.string().nullable().meta({ description: "the deployment of the model that served" }),
  type: usageTypeSchema,
  /** null: made with a session (the dashboard) */
  key_id: z.string().nullable(),
  prompt_tokens: integer,
  completion_tokens: integer,
  total_tokens: integer,
  characters: integer,
  audio_seconds: integer,
  images: integer,
  processing_ms: integer,
  output_bytes: integer,
  cost: dollars,
  status: usageStatusSchema,
});
export type UsageRecordBody = z.infer<typeof usageRecordSchema>;

/** The sums of a set of records: how many, and the sums of the records' amounts. */
export const usageSumsSchema = z.object({
  requests: integer,
  cost: dollars,
  ...usageRecordSchema.pick({ prompt_tokens: true, completion_tokens: true, total_tokens: true, characters: true, audio_seconds: true, images: true }).shape,
});
export type UsageSums = z.infer<typeof usageSumsSchema>;

/** A page of records, newest first, with the totals of the whole range by day, model and key. */
export const usageAnswerSchema = z.object({
  object: z.literal("list"),
  data: z.array(usageRecordSchema),
  pagination: z.object({ page: integer, per_page: integer, total: integer, total_pages: integer }),
  range: z.object({ from: dateTime, to: dateTime }),
  totals: usageSumsSchema.extend({
    by_day: z.array(usageSumsSchema.extend({ date: z.string() })),
    by_model: z.array(usageSumsSchema.extend({ model: z.string() })),
    /** requests made with a session (the playground) are those of key_id null, listed last */
    by_key: z.array(usageSumsSchema.extend({ key_id: z.string().nullable().meta({ description: "null: session requests" }) })),
  }),
});
export type UsageAnswer = z.infer<typeof usageAnswerSchema>;
