import { describe, expect, it } from "vitest";
import { RequestObservation, type ObservationSink } from "./request-observation";

describe("RequestObservation with tracing off", () => {
  const calls: unknown[][] = [];
  const sink: ObservationSink = {
    upstreamCall: (...args) => void calls.push(["upstream", ...args]),
    charge: (...args) => void calls.push(["charge", ...args]),
  };
  const observation = new RequestObservation(sink, (model) => (model === "textA-4" ? "textA" : "unknown"), undefined, undefined);

  it("makes no span, context or wrapper: a step is the promise it was given, a callback runs as it is", async () => {
    const work = Promise.resolve(1);
    expect(observation.step("hold", work)).toBe(work);
    const settle = Promise.resolve(2);
    expect(observation.step("settle", settle)).toBe(settle);
    expect(observation.settling).toBe(settle);
    expect(observation.inContext(() => 3)).toBe(3);
    expect(observation.span).toBeUndefined();
  });

  it("records upstream attempts under the model's provider and the deployment given (default: `default`), with the error code", () => {
    calls.length = 0;
    observation.upstreamEnded("textA-4", observation.upstreamStarted());
    observation.upstreamEnded("textA-4", observation.upstreamStarted(), new Error("boom"), "eu-1");
    expect(calls.map((c) => [c[1], c[2], c[4]])).toEqual([["textA", "default", undefined], ["textA", "eu-1", "internal_error"]]);
    expect(observation.upstreamMs).toBeGreaterThanOrEqual(0);
  });

  it("notes the charge for the access log line and the money series", () => {
    calls.length = 0;
    observation.charged({ model: "textA-4", promptTokens: 3, completionTokens: 4 }, 11);
    expect(observation.cost).toBe(11);
    expect(calls).toEqual([["charge", { model: "textA-4", promptTokens: 3, completionTokens: 4 }, 11]]);
  });
});
