import { Readable } from "node:stream";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bodyIdleTimeout } from "./body";

/** A request whose body has `arrived` of its `declared` bytes buffered, none read yet. */
function request(declared: number, arrived: number): Request {
  const req = Object.assign(new Readable({ read() {} }), { headers: { "content-length": String(declared) }, complete: false });
  if (arrived > 0) req.push(Buffer.alloc(arrived, 0x20));
  return req as unknown as Request;
}
const res = { setHeader: vi.fn() } as unknown as Response;

describe("bodyIdleTimeout", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("a body that has arrived whole is read without a timer or a data listener (the usual request)", () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    const req = request(81, 81);
    const next: NextFunction = vi.fn();
    const read = vi.fn<RequestHandler>((_req, _res, done) => done());
    bodyIdleTimeout(30_000, read)(req, res, next);
    expect(timers).not.toHaveBeenCalled();
    expect(req.listenerCount("data")).toBe(0);
    expect(read.mock.calls[0]?.[2]).toBe(next);
    expect(next).toHaveBeenCalledWith();
  });

  it("a body still arriving that then stalls: request_timeout after the idle time", () => {
    vi.useFakeTimers();
    const req = request(81, 20);
    const next: NextFunction = vi.fn();
    bodyIdleTimeout(600, () => undefined)(req, res, next);
    vi.advanceTimersByTime(599);
    expect(next).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(next).toHaveBeenCalledWith(expect.objectContaining({ code: "request_timeout" }));
    expect(req.listenerCount("data")).toBe(0);
  });

  it("a body that keeps trickling: request_timeout at the total deadline, however often bytes arrive", () => {
    vi.useFakeTimers();
    const req = request(81, 20);
    const next: NextFunction = vi.fn();
    bodyIdleTimeout(600, () => undefined, 2_000)(req, res, next);
    for (let i = 0; i < 3; i++) {
      vi.advanceTimersByTime(500);
      req.emit("data", Buffer.from(" "));
    }
    vi.advanceTimersByTime(499);
    expect(next).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(next).toHaveBeenCalledWith(expect.objectContaining({ code: "request_timeout", message: expect.stringContaining("longer than 2 s") }));
    expect(req.listenerCount("data")).toBe(0);
  });
});
