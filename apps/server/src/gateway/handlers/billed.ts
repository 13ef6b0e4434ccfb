import type { Served } from "@gw/providers";
import { microsToDollars } from "@gw/shared";
import type { Response } from "express";
import type { GatewayDeps } from "../deps";
import { CreditHold } from "../money/hold";
import { usageRecord, type RequestMeta, type UsageFields } from "./request-meta";

/**
 * CONTRACT 6 for one non-streamed request: hold the worst case, call upstream, settle to the real cost with the
 * request's usage record. Any failure releases the hold, so a failed request costs nothing.
 */
export async function billed<T>(
  deps: GatewayDeps,
  meta: RequestMeta,
  worstCase: number,
  model: string,
  run: () => Promise<T>,
  costOf: (result: T) => number,
  usageOf: (result: T) => UsageFields,
): Promise<{ result: T; cost: number }> {
  const hold = await meta.observation.step("hold", CreditHold.open(deps.ctx.ledger, meta.userId, worstCase, { requestId: meta.requestId, model, endpoint: meta.endpoint }, meta.keyBudget));
  let result: T;
  let cost: number;
  let usage: UsageFields;
  let upstreamAt: number | undefined = meta.observation.upstreamStarted();
  try {
    result = await run();
    // the deployment that answered (CONTRACT 13), when the call went through the router
    const served = (result as { served?: Served } | null)?.served;
    meta.observation.upstreamEnded(served?.model.id ?? model, upstreamAt, undefined, served?.deploymentId);
    upstreamAt = undefined;
    cost = costOf(result);
    usage = usageOf(result);
  } catch (err) {
    if (upstreamAt !== undefined) meta.observation.upstreamEnded(model, upstreamAt, err);
    await hold.release().catch((releaseErr: unknown) => {
      // The hold expires on its own (HOLD_TTL_SECONDS); the client still gets the real error.
      deps.ctx.logger.error({ err: (releaseErr as Error).message, holdId: hold.holdId }, "hold release failed");
    });
    meta.observation.released();
    throw err;
  }
  const record = usageRecord(deps, meta, usage);
  const charged = await meta.observation.step("settle", hold.settle(cost, record));
  meta.observation.charged(record, charged);
  return { result, cost: charged };
}

export function setCostHeader(res: Response, costMicros: number): void {
  res.setHeader("X-Request-Cost", microsToDollars(costMicros).toFixed(6));
}

/** CONTRACT 13: the model that served (the one asked for, or a fallback), as the answer's `model` names it too. */
export const GATEWAY_MODEL_HEADER = "X-Gateway-Model";

export function setServedHeader(res: Response, served: Served): void {
  res.setHeader(GATEWAY_MODEL_HEADER, served.model.id);
}
