import { Agent, fetch } from "undici";
import type { Logger } from "pino";
import type { ModerationVerdict } from "./policy";
import type { ModerationCategory } from "./terms";

export interface UpstreamModerationConfig {
  url: string;
  apiKey?: string;
  timeoutMs: number;
}

// OpenAI moderation categories -> SPEC 4.3 categories.
function mapCategory(name: string): ModerationCategory | undefined {
  if (name.startsWith("sexual")) return "sexual";
  if (name.startsWith("violence") || name.startsWith("self-harm") || name.startsWith("illicit")) return "violence";
  if (name.startsWith("hate") || name.startsWith("harassment")) return "hate";
  return undefined;
}

interface ModerationAnswer {
  results?: Array<{ flagged?: boolean; categories?: Record<string, boolean> }>;
}

/**
 * A moderation answer is a few hundred bytes per input: undici stops reading one far larger (it is not a moderation
 * answer, and is not kept in memory), which fails open like any other bad answer.
 */
const MAX_ANSWER_BYTES = 256 * 1024;
const moderationAgent = new Agent({ maxResponseSize: MAX_ANSWER_BYTES });

/**
 * Optional second opinion from an OpenAI-compatible `POST {url}/v1/moderations`. Off unless
 * MODERATION_UPSTREAM_URL is set. It fails open (logged): the local policy has already run, and an outage of
 * the moderation service should not take image generation down with it.
 */
export async function checkUpstreamModeration(cfg: UpstreamModerationConfig, input: string, logger: Logger): Promise<ModerationVerdict> {
  try {
    const res = await fetch(`${cfg.url.replace(/\/$/, "")}/v1/moderations`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
      body: JSON.stringify({ input }),
      signal: AbortSignal.timeout(cfg.timeoutMs),
      dispatcher: moderationAgent,
    });
    if (!res.ok) throw new Error(`moderation answered ${res.status}`);
    const answer = (await res.json()) as ModerationAnswer;
    const result = answer.results?.[0];
    if (!result?.flagged) return { flagged: false };
    const hit = Object.entries(result.categories ?? {}).find(([name, on]) => on && mapCategory(name));
    return { flagged: true, category: (hit && mapCategory(hit[0])) ?? "violence", match: hit?.[0] ?? "upstream" };
  } catch (err) {
    logger.warn({ err: (err as Error).message }, "upstream moderation unavailable; local policy only");
    return { flagged: false };
  }
}
