import { randomInt } from "node:crypto";
import type { Request, Response } from "express";
import { IMAGE_A_MODEL_ID, modelVersions } from "@gw/config";
import { imageFormat, sizeForAspectRatio, type GeneratedImage } from "@gw/providers";
import { AppError, invalidParameter, newId } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { requireConfigured } from "../deps";
import { admitKeyForModel } from "../limits/key-gate";
import { setCostHeader } from "../http/answer-headers";
import { runImages } from "../handlers/media";
import { requestMeta } from "../handlers/request-meta";
import { parseOrThrow, requireObject } from "../http/validate";
import { imageABody, imageBBody } from "../schemas/images";
import { unixSeconds } from "./shapes";

/**
 * An image's `url`: the upstream's URL, else its data as a `data:` URL typed by its magic number (an OpenAI-compatible
 * upstream may answer JPEG or WebP data, which `image/png` would mislabel).
 */
export function imageUrl(img: GeneratedImage): string {
  if (img.url !== undefined) return img.url;
  const b64 = img.b64Json ?? "";
  const format = imageFormat(Buffer.from(b64.slice(0, 128), "base64")) ?? "png";
  return `data:image/${format};base64,${b64}`;
}

/** POST /api/v1/imageA/generate (SPEC 4.2); `model` is the upstream version: it picks the upstream model name, and is reported back. */
export function imageAGenerate(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const body = parseOrThrow(imageABody, requireObject(req.body));
    const model = deps.ctx.config.models.find((m) => m.id === IMAGE_A_MODEL_ID && m.type === "image");
    if (!model) throw new AppError("unsupported_model", `Unsupported model: '${IMAGE_A_MODEL_ID}' is not configured.`);
    await admitKeyForModel(deps, res, model.id);
    const versions = modelVersions(model);
    const upstreamModel = versions.get(body.model);
    if (upstreamModel === undefined) {
      throw invalidParameter("model", `must be one of the versions ${[...versions.keys()].map((v) => JSON.stringify(v)).join(", ")}`);
    }
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const { images, cost } = await runImages(deps, meta, {
      model, upstreamModel, prompt: body.prompt, width: body.width, height: body.height, count: body.num_outputs, style: body.style ?? undefined,
    });
    const createdAt = new Date(deps.ctx.clock.now()).toISOString();
    setCostHeader(res, cost);
    res.json({
      status: "success",
      images: images.map((img) => ({ url: imageUrl(img), id: newId("img"), created_at: createdAt })),
      prompt: body.prompt,
      model: body.model,
    });
  };
}

/** POST /api/v1/imageB.1 (SPEC 4.3, CONTRACT 5): aspect ratio mapped to about one megapixel within Flux's side bounds. */
export function imageBGenerate(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const body = parseOrThrow(imageBBody, requireObject(req.body));
    const model = deps.ctx.config.models.find((m) => m.id === body.model && m.type === "image" && m.provider === "imageB");
    if (!model) throw new AppError("unsupported_model", `Unsupported model: '${body.model.slice(0, 100)}' is not an imageB model.`);
    await admitKeyForModel(deps, res, model.id);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const size = sizeForAspectRatio(body.aspect_ratio);
    if (!size) throw invalidParameter("aspect_ratio", "must be a ratio between 1:4 and 4:1");
    const { width, height } = size;
    // A seed is always chosen and returned, so any answer can be reproduced.
    const seed = body.seed ?? randomInt(0, 2 ** 31);
    const { images, cost } = await runImages(deps, meta, {
      model, prompt: body.prompt, negativePrompt: body.negative_prompt ?? undefined, style: body.style ?? undefined,
      width, height, count: 1, seed, steps: body.steps,
    });
    setCostHeader(res, cost);
    res.json({
      id: newId("img"),
      created: unixSeconds(deps.ctx.clock.now()),
      images: images.map((img) => ({ url: imageUrl(img), width: img.width || width, height: img.height || height })),
      prompt: body.prompt,
      model: model.id,
      seed: images[0]?.seed ?? seed,
      status: "complete",
    });
  };
}
