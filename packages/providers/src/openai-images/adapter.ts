// OpenAI Images adapter (imageA).
import type { EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import type { UpstreamClient } from "../http/upstream-client";
import type { ImageRequest, ImageResult } from "../types";
import { buildImagesRequest, parseError, parseImagesResponse } from "./transform";

export interface ImageAdapter {
  generateImage(req: ImageRequest): Promise<ImageResult>;
}

export function createOpenAiImagesAdapter(client: UpstreamClient, endpointFor: EndpointResolver): ImageAdapter {
  return {
    async generateImage(req) {
      const built = buildImagesRequest(endpointFor(req.model), req.upstreamModel ?? upstreamModelName(req.model), req);
      return parseImagesResponse(await client.json({ ...built, signal: req.signal, parseError }), req);
    },
  };
}
