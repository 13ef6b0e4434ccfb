import type { ProviderGateway } from "@gw/providers";
import { describe, expect, it, vi } from "vitest";
import { completionPromptTokens } from "./text-budget";

describe("completionPromptTokens", () => {
  it("tokenizes the prompt once for both the window check and the hold (a prompt may be a megabyte)", () => {
    const countTokens = vi.fn((text: string) => text.length);
    const providers = { countTokens } as unknown as ProviderGateway;
    expect(completionPromptTokens({ providers }, "x".repeat(100))).toEqual({ tokens: 100, held: 103 });
    expect(countTokens).toHaveBeenCalledTimes(1);
  });
});
