import { describe, expect, it } from "vitest";
import { Cancellation, type CancelSignal } from "./cancellation";

describe("Cancellation", () => {
  it("fires each listener once, with an AbortError reason by default", () => {
    const c = new Cancellation();
    const calls: string[] = [];
    c.addEventListener("abort", () => calls.push("a"));
    c.addEventListener("abort", () => calls.push("b"));
    expect(c.aborted).toBe(false);
    c.abort();
    c.abort();
    expect(calls).toEqual(["a", "b"]);
    expect(c.aborted).toBe(true);
    expect(c.reason).toBeInstanceOf(DOMException);
    expect((c.reason as DOMException).name).toBe("AbortError");
  });

  it("does not call removed listeners, nor listeners added after the abort", () => {
    const c = new Cancellation();
    let removed = 0;
    let late = 0;
    const listener = () => removed++;
    c.addEventListener("abort", listener);
    c.removeEventListener("abort", listener);
    c.abort(new Error("gone"));
    c.addEventListener("abort", () => late++);
    expect([removed, late]).toEqual([0, 0]);
    expect((c.reason as Error).message).toBe("gone");
  });

  it("follows a parent until unlinked, and at once when the parent already aborted", () => {
    const parent = new Cancellation();
    const child = new Cancellation();
    const unlink = child.follow(parent);
    parent.abort(new Error("client gone"));
    expect(child.aborted).toBe(true);
    expect((child.reason as Error).message).toBe("client gone");

    const other = new Cancellation();
    const loose = new Cancellation();
    loose.follow(other)();
    other.abort();
    expect(loose.aborted).toBe(false);

    const late = new Cancellation();
    late.follow(parent);
    expect(late.aborted).toBe(true);
    unlink();
  });

  it("accepts a real AbortSignal where a CancelSignal is expected", () => {
    const controller = new AbortController();
    const signal: CancelSignal = controller.signal;
    controller.abort();
    expect(signal.aborted).toBe(true);
  });
});
