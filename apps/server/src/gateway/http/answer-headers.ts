import type { Served } from "@gw/providers";
import { microsToDollars } from "@gw/shared";
import type { Response } from "express";

/** What the answer was charged, in dollars (a stream reports it in its usage chunk instead). */
export function setCostHeader(res: Response, costMicros: number): void {
  res.setHeader("X-Request-Cost", microsToDollars(costMicros).toFixed(6));
}

/** CONTRACT 13: the model that served (the one asked for, or a fallback), as the answer's `model` names it too. */
export const GATEWAY_MODEL_HEADER = "X-Gateway-Model";

export function setServedHeader(res: Response, served: Served): void {
  res.setHeader(GATEWAY_MODEL_HEADER, served.model.id);
}
