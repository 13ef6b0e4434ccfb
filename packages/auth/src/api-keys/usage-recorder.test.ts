import pino from "pino";
import { describe, expect, it } from "vitest";
import type { UsageDelta } from "./repository";
import { UsageRecorder } from "./usage-recorder";

describe("UsageRecorder", () => {
  it("while the database refuses, ticks queue no flushes behind the one writing, and stop() waits for one more attempt, not for a backlog", async () => {
    // each write waits 100 ms and fails, as a database that is down does after its server-selection wait
    const attempts: string[] = [];
    const write = async (delta: UsageDelta) => {
      attempts.push(delta.keyId);
      await new Promise((r) => setTimeout(r, 100));
      throw new Error("database unreachable");
    };
    const recorder = new UsageRecorder(write, pino({ level: "silent" }), 20);
    for (const keyId of ["key_a", "key_b", "key_c"]) recorder.record(keyId, new Date());
    recorder.start();
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    await recorder.stop();
    // chained one per tick, 25 flushes of three 100 ms writes each stood between stop() and its end
    expect(Date.now() - started).toBeLessThan(1_500); // ~200 ms; the old backlog took several seconds
    // a refused write leaves the rest of the batch untried (and kept)
    expect(attempts.every((keyId) => keyId === "key_a")).toBe(true);
  });

  it("a use recorded while a flush writes is written by the next flush", async () => {
    const written: string[] = [];
    const recorder = new UsageRecorder(async (delta) => { await new Promise((r) => setTimeout(r, 50)); written.push(delta.keyId); }, pino({ level: "silent" }), 1_000);
    recorder.record("key_a", new Date());
    const first = recorder.flush();
    recorder.record("key_b", new Date());
    await recorder.flush();
    await first;
    expect(written).toEqual(["key_a", "key_b"]);
  });
});
