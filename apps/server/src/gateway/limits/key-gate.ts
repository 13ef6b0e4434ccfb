import type { Response } from "express";
import { checkKeyModel } from "@gw/auth";
import { setRateLimitHeaders } from "@gw/limits";
import type { GatewayDeps } from "../deps";
import { principalOf } from "../http/auth";
import { accountLimitOf } from "./middleware";

/**
 * CONTRACT 10's refusals that need the model, in its order: 403 model_not_allowed (the key's allowed_models), then
 * 429 rate_limit_exceeded (the key's own rate limit; its X-RateLimit-* shown when stricter than the plan's). Every
 * model route calls it once it knows the model id, before anything is held; a session (the playground) has no key
 * and passes. Expiry and IP were checked when the key was verified (@gw/auth credential verifier); the key's spend limit is held with
 * the credits (money/hold.ts). No database round trip: the controls come from the verifier's cache.
 */
export async function admitKeyForModel(deps: GatewayDeps, res: Response, modelId: string): Promise<void> {
  const { key } = principalOf(res);
  if (!key) return;
  checkKeyModel(key, modelId);
  const rate = key.controls.rateLimit;
  if (!rate) return;
  const { state, slot } = await deps.limits.admitKey(key.keyId, rate);
  if (res.destroyed) {
    slot.release();
    return;
  }
  res.once("close", () => slot.release());
  // the stricter of the account's and the key's X-RateLimit-* is shown
  if (state.remaining <= (accountLimitOf(res)?.remaining ?? Number.POSITIVE_INFINITY)) setRateLimitHeaders(res, state);
}
