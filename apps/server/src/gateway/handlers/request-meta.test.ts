import { EventEmitter } from "node:events";
import type { Request, Response } from "express";
import { describe, expect, it } from "vitest";
import type { GatewayDeps } from "../deps";
import { requestMeta } from "./request-meta";

function fakeResponse(destroyed: boolean): Response {
  const res = Object.assign(new EventEmitter(), { destroyed, writableFinished: false, locals: { requestId: "req_1", principal: { userId: "u1" } } });
  return res as unknown as Response;
}
const req = { path: "/v1/chat/completions" } as Request;
const deps = {} as GatewayDeps;

describe("requestMeta", () => {
  it("cancels the request's signal when the client goes away before the answer", () => {
    const res = fakeResponse(false);
    const meta = requestMeta(deps, req, res);
    expect(meta.signal.aborted).toBe(false);
    res.emit("close");
    expect(meta.signal.aborted).toBe(true);
  });

  it("starts cancelled when the client already left before the handler ran (no upstream call, no charge)", () => {
    const meta = requestMeta(deps, req, fakeResponse(true));
    expect(meta.signal.aborted).toBe(true);
  });
});
