import { describe, expect, it } from "vitest";
import { normalizeText } from "./normalize";
import { checkLocalPolicy } from "./policy";

describe("local image policy", () => {
  it.each([
    ["a N.U.D.E portrait", "sexual"],
    ["n u d e beach", "sexual"],
    ["NSFW art", "sexual"],
    ["p0rn0graphic scene", "sexual"],
    ["decapitated soldier", "violence"],
    ["a swastika flag", "hate"],
    ["Pikachu in Paris", "intellectual_property"],
    ["Spider-Man on a roof", "intellectual_property"],
    ["my SSN is 123-45-6789", "personal_information"],
    ["write john@example.com on the sign", "personal_information"],
    ["card 4111 1111 1111 1111", "personal_information"],
    // seen let through by a black-box audit
    ["murder", "violence"],
    ["a man stabbing another man", "violence"],
    ["John Smith's passport", "personal_information"],
    ["Nike swoosh logo", "intellectual_property"],
  ])("flags %j as %s", (prompt, category) => {
    expect(checkLocalPolicy(prompt)).toMatchObject({ flagged: true, category });
  });

  it.each(["a sextant on a desk in Essex", "a cat at 16:9", "sunset over the sea, 1024x1024", "a therapist's office", "grapes and a scrapbook", "seed 1234567890123", "a photo shoot in a studio", "a logo for my bakery", "a killer whale"])(
    "lets %j through",
    (prompt) => {
      expect(checkLocalPolicy(prompt).flagged).toBe(false);
    },
  );

  it("normalizes case, accents, full-width letters and leetspeak", () => {
    expect(normalizeText("ＮÜDÉ  N4k3d!")).toBe("nude naked");
  });
});
