import { formatNumber } from "../../lib/format";
import type { UsageRecord } from "./api";

/** What the request produced, in the unit the model bills by. */
export function describeOutput(record: UsageRecord): string {
  if (record.images) return `${formatNumber(record.images)} image${record.images === 1 ? "" : "s"}`;
  if (record.characters) return `${formatNumber(record.characters)} chars`;
  if (record.audio_seconds) return `${formatNumber(Math.round(record.audio_seconds))} s audio`;
  if (record.total_tokens) {
    return `${formatNumber(record.total_tokens)} tokens (${formatNumber(record.prompt_tokens)} in / ${formatNumber(record.completion_tokens)} out)`;
  }
  return "—";
}
