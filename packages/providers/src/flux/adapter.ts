// Flux adapter: N images = N submissions in parallel, each polled until ready.
import { Cancellation } from "@gw/shared";
import type { EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import { sleep, timeoutError, cancelledError, type UpstreamClient } from "../http/upstream-client";
import { requireImage } from "../media-check";
import type { ImageAdapter } from "../openai-images/adapter";
import type { GeneratedImage, ImageRequest } from "../types";
import { buildSubmitRequest, parseError, parsePollResponse, parseSampleError, parseSubmitResponse, toGeneratedImage } from "./transform";

export interface FluxTiming {
  pollIntervalMs: number;
  /** the whole generation, polls included */
  timeoutMs: number;
}

export function createFluxAdapter(client: UpstreamClient, endpointFor: EndpointResolver, timing: FluxTiming): ImageAdapter {
  async function generateOne(req: ImageRequest, index: number): Promise<GeneratedImage> {
    const endpoint = endpointFor(req.model);
    const deadline = performance.now() + timing.timeoutMs;
    const task = parseSubmitResponse(
      await client.json({ ...buildSubmitRequest(endpoint, req.upstreamModel ?? upstreamModelName(req.model), req, index), signal: req.signal, parseError }),
      endpoint,
    );
    const pollHeaders = { "x-key": endpoint.apiKey, accept: "application/json" };
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw timeoutError();
      await sleep(Math.min(timing.pollIntervalMs, remaining), req.signal).catch(() => { throw cancelledError(); });
      const outcome = parsePollResponse(await client.json({
        url: task.pollingUrl, method: "GET", headers: pollHeaders, signal: req.signal, parseError,
        timeoutMs: Math.max(1, deadline - performance.now()),
      }));
      if (outcome.state === "ready") {
        const image = toGeneratedImage(outcome, req, index);
        if (req.responseFormat !== "b64_json") return image;
        // Flux answers with a short-lived signed URL; the image data is fetched so the caller keeps it.
        const sample = await client.bytes({
          // a signed delivery URL may redirect to the storage that holds the image, as a browser would follow
          url: outcome.url, method: "GET", headers: { accept: "image/*" }, signal: req.signal, parseError: parseSampleError, maxRedirects: 5,
          timeoutMs: Math.max(1, deadline - performance.now()),
        });
        requireImage(sample.data);
        return { ...image, b64Json: sample.data.toString("base64") };
      }
    }
  }

  return {
    async generateImage(req) {
      // The first failure stops the sibling submissions instead of letting them poll on unseen.
      const siblings = new Cancellation();
      const unlink = siblings.follow(req.signal);
      const shared = { ...req, signal: siblings };
      try {
        const images = await Promise.all(Array.from({ length: req.count }, (_, index) =>
          generateOne(shared, index).catch((err: unknown) => { siblings.abort(); throw err; })));
        return { images };
      } finally {
        unlink();
      }
    },
  };
}
