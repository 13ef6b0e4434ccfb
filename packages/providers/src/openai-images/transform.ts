// OpenAI Images protocol (imageA): POST {base}/v1/images/generations. Pure transforms.
import { AppError } from "@gw/shared";
import { z } from "zod";
import type { Endpoint } from "../endpoint";
import type { BuiltRequest } from "../openai/transform";
import { errorMessage } from "../openai/schemas";
import { requireImage } from "../media-check";
import type { ImageRequest, ImageResult } from "../types";
import { pickPath, readErrorMessage, sentence, upstreamStatusError, wrongShape } from "../upstream-errors";

const imagesResponseSchema = z.compile(z.looseObject({
  // compatible servers (proxies serializing OpenAI's SDK types) send the field not asked for as null
  data: z.array(z.looseObject({ url: z.string().nullish(), b64_json: z.string().nullish() })
    .refine((image) => image.url != null || image.b64_json != null)),
}));

/** Style presets are not an OpenAI field; they travel as part of the prompt so any compatible upstream understands them. */
export const promptWithStyle = (prompt: string, style: string | undefined): string =>
  style ? `${prompt}, in ${style} style` : prompt;

/** OpenAI's GPT image models always answer `b64_json` and refuse a `response_format` field with 400. */
const answersOnlyBase64 = (upstreamModel: string): boolean => /^gpt-image/i.test(upstreamModel);

export function buildImagesRequest(endpoint: Endpoint, upstreamModel: string, req: ImageRequest): BuiltRequest {
  const body: Record<string, unknown> = {
    model: upstreamModel,
    prompt: promptWithStyle(req.prompt, req.style),
    n: req.count,
    size: `${req.width}x${req.height}`,
  };
  if (!answersOnlyBase64(upstreamModel)) body.response_format = req.responseFormat ?? "url";
  return {
    url: `${endpoint.baseUrl}/v1/images/generations`,
    headers: { "content-type": "application/json", authorization: `Bearer ${endpoint.apiKey}` },
    body: JSON.stringify(body),
  };
}

/** The caller gets the URL as the image's `url`: only an absolute http(s) URL is one (not "", "javascript:…", "file:…"). */
function imageUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw wrongShape("image (its url is not a URL)");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw wrongShape("image (its url is not an http(s) URL)");
  return parsed.href;
}

export function parseImagesResponse(json: unknown, req: ImageRequest): ImageResult {
  const parsed = imagesResponseSchema.safeParse(json);
  if (!parsed.success || parsed.data.data.length === 0) throw wrongShape("images");
  // the leading bytes are enough for the magic number; decoding all of a large image twice is not
  for (const image of parsed.data.data) if (image.b64_json != null) requireImage(Buffer.from(image.b64_json.slice(0, 128), "base64"));
  return {
    images: parsed.data.data.map((image) => ({
      url: image.url == null ? undefined : imageUrl(image.url), b64Json: image.b64_json ?? undefined, width: req.width, height: req.height,
    })),
  };
}

/** OpenAI's `error.code`, when the body is its error object. */
function errorCode(body: string): unknown {
  try {
    return pickPath(JSON.parse(body) as unknown, "error", "code");
  } catch {
    return undefined;
  }
}

/**
 * OpenAI refuses unsafe prompts with 400 code content_policy_violation; keep that meaning. Its images endpoint also
 * answers 400 `billing_hard_limit_reached` when the operator's account hit its spending limit: that is our account
 * failing to pay, as a 402 would be, not the caller's request being wrong.
 */
export function parseError(status: number, body: string): AppError {
  const message = readErrorMessage(body, errorMessage);
  if (status === 400 && errorCode(body) === "billing_hard_limit_reached") return upstreamStatusError(402, message);
  if (status === 400 && /content_policy_violation|safety system/i.test(body)) {
    return new AppError("content_policy_violation", `The image provider refused the prompt: ${sentence(message ?? "content policy")}`);
  }
  return upstreamStatusError(status, message);
}
