import { z } from "zod";

/** What a request was: the modality its usage is counted in. */
export const USAGE_TYPES = ["text", "embedding", "image", "tts", "sts", "stt"] as const;
export const usageTypeSchema = z.enum(USAGE_TYPES);
export type UsageType = z.infer<typeof usageTypeSchema>;

/** `partial`: a stream cut after output began, charged for what was produced. */
export const usageStatusSchema = z.enum(["success", "partial"]);
export type UsageStatus = z.infer<typeof usageStatusSchema>;

const count = z.number().int().nonnegative();

/**
 * The usage record of one request, as its `settle` ledger entry's `meta` stores it: the one declaration of what a
 * usage record holds. Counters that are 0 and a `success` status are left out: the embedded database's cost per write
 * grows with the number of values, and most counters are 0 for any one modality.
 */
export const storedUsageSchema = z.object({
  requestId: z.string(),
  /** absent: a request made with a session (the playground) */
  keyId: z.string().optional(),
  endpoint: z.string(),
  model: z.string(),
  /** CONTRACT 13: the deployment of `model` that served (`default` for a model without a deployments list) */
  deployment: z.string().optional(),
  type: usageTypeSchema,
  promptTokens: count.optional(),
  completionTokens: count.optional(),
  characters: count.optional(),
  audioSeconds: z.number().nonnegative().optional(),
  images: count.optional(),
  processingMs: count,
  outputBytes: count,
  status: z.literal("partial").optional(),
  /** when the request finished (the entry itself is written up to a flush interval later) */
  createdAt: z.date(),
});
export type StoredUsage = z.infer<typeof storedUsageSchema>;

/** The counters a stored record leaves out when they are 0. */
export type UsageCounter = "promptTokens" | "completionTokens" | "characters" | "audioSeconds" | "images";

/** One usage record as the queries return it: counters and status filled in. Money in micro-dollars. */
export type UsageRecord = Omit<StoredUsage, UsageCounter | "status"> & Required<Pick<StoredUsage, UsageCounter>> & {
  /** the request's hold id, which its settle entry carries */
  id: string;
  userId: string;
  /** the charge: the settle entry's `cost` */
  costMicros: number;
  status: UsageStatus;
};
