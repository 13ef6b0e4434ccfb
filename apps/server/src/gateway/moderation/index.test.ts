import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { moderateImagePrompt, textsToModerate } from "./index";

const logger = pino({ level: "silent" });

describe("image prompt moderation", () => {
  it("checks the prompt and the style, which reach the upstream", async () => {
    await expect(moderateImagePrompt({ prompt: "a N.U.D.E portrait" }, { logger })).rejects.toMatchObject({ code: "content_policy_violation" });
    await expect(moderateImagePrompt({ prompt: "a calm lake", style: "gore" }, { logger })).rejects.toMatchObject({ code: "content_policy_violation" });
  });

  it("leaves the negative prompt out: it lists what must not be shown and is never sent upstream", async () => {
    await expect(moderateImagePrompt({ prompt: "a landscape", negativePrompt: "nude" }, { logger })).resolves.toBeUndefined();
    expect(textsToModerate({ prompt: "a landscape", negativePrompt: "nude, gore", style: "watercolor" })).toEqual(["a landscape", "watercolor"]);
  });
});
