import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { moderateImagePrompt, textsToModerate } from "./index";

const logger = pino({ level: "silent" });

describe("image prompt moderation", () => {
  it("checks the prompt and the style, which reach the upstream", async () => {
    await expect(moderateImagePrompt({ prompt: "a N.U.D.E portrait" }, { logger })).rejects.toMatchObject({ code: "content_policy_violation" });
    await expect(moderateImagePrompt({ prompt: "a calm lake", style: "gore" }, { logger })).rejects.toMatchObject({ code: "content_policy_violation" });
  });

  it("rejects evasions and context violations with their category, and lets ordinary prompts through", async () => {
    const rejected: Array<[string, string | undefined, string]> = [
      ["nu\u200bde woman", undefined, "sexual"],
      ["nud\u0435 woman", undefined, "sexual"],
      ["a calm lake", "g\u2060ore", "violence"],
      ["a terrorist beheads a hostage", undefined, "violence"],
      ["a racist cartoon of black people as monkeys", undefined, "hate"],
      ["Elsa from Disney's Frozen", undefined, "intellectual_property"],
      ["a passport scan with number", undefined, "personal_information"],
    ];
    for (const [prompt, style, category] of rejected) {
      await expect(moderateImagePrompt({ prompt, style }, { logger })).rejects.toMatchObject({
        code: "content_policy_violation",
        message: expect.stringContaining(`'${category}'`),
      });
    }
    for (const prompt of ["a bridge, a marvel of modern engineering", "a pizza restaurant called Luigi's", "a travel passport lying on a map, stock photo"]) {
      await expect(moderateImagePrompt({ prompt, style: "photorealistic" }, { logger })).resolves.toBeUndefined();
    }
  });

  it("leaves the negative prompt out: it lists what must not be shown and is never sent upstream", async () => {
    await expect(moderateImagePrompt({ prompt: "a landscape", negativePrompt: "nude" }, { logger })).resolves.toBeUndefined();
    expect(textsToModerate({ prompt: "a landscape", negativePrompt: "nude, gore", style: "watercolor" })).toEqual(["a landscape", "watercolor"]);
  });
});
