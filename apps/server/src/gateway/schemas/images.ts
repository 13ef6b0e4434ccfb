import { IMAGE_A_DEFAULT_VERSION } from "@gw/config";
import { z } from "zod";
import { imagePrompt, safeString, withDefault } from "./common";
import { IMAGE_MAX_SIDE, IMAGE_MIN_SIDE, seed } from "./task";

const side = z.number().int().min(IMAGE_MIN_SIDE).max(IMAGE_MAX_SIDE);

/** SPEC 4.2 */
export const imageABody = z.compile(z.object({
  prompt: imagePrompt,
  style: safeString(64).nullish(),
  width: withDefault(side, 512),
  height: withDefault(side, 512),
  // the upstream version; which ones exist is configuration (modelVersions), checked by the route
  model: withDefault(z.string(), IMAGE_A_DEFAULT_VERSION),
  num_outputs: withDefault(z.number().int().min(1).max(4), 1),
}));
export type ImageABody = z.output<typeof imageABody>;

/** `<w>:<h>` with both sides 1..9999 (16:9, 1920:1080) and a ratio between 1:4 and 4:1. */
export const aspectRatio = z.string()
  .regex(/^\d{1,4}:\d{1,4}$/, "must look like <w>:<h> with whole numbers up to 9999, e.g. 16:9")
  .refine((s) => {
    const [w, h] = s.split(":").map(Number);
    return w !== undefined && h !== undefined && w >= 1 && h >= 1 && w / h <= 4 && h / w <= 4;
  }, { message: "must be a ratio between 1:4 and 4:1" });

/** SPEC 4.3 + CONTRACT 5 */
export const imageBBody = z.compile(z.object({
  prompt: imagePrompt,
  negative_prompt: safeString(4_000).nullish(),
  style: safeString(64).nullish(),
  seed: seed.nullish(),
  steps: withDefault(z.number().int().min(1).max(50), 30),
  aspect_ratio: withDefault(aspectRatio, "1:1"),
  model: withDefault(z.string(), "imageB-1-dev"),
}));
export type ImageBBody = z.output<typeof imageBBody>;
