import type { ModelDefinition } from "@gw/config";
import { listModels, type ModelListEntry } from "@gw/providers";

// The routes that serve each model (CONTRACT 9: `endpoints` of the /v1/models entries), as the routes decide it.

/** Every text model, whatever its upstream's protocol (the OpenAI and Anthropic shapes are translated both ways). */
const TEXT = ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens", "/api/v1/task"];

export function modelEndpoints(model: ModelDefinition): string[] {
  switch (model.type) {
    case "text":
      return TEXT;
    case "embedding":
      return ["/v1/embeddings"];
    case "image":
      // the task endpoint's image answer needs both a URL and the data, which only Flux's answer gives (routes/task.ts)
      if (model.protocol !== "flux") return ["/v1/images/generations", "/api/v1/imageA/generate"];
      return ["/v1/images/generations", "/api/v1/task", ...(model.provider === "imageB" ? ["/api/v1/imageB.1"] : [])];
    case "speech":
      // told apart by the id's suffix, as the task endpoint does
      if (model.id.endsWith("-stt")) return ["/v1/audio/transcriptions", "/api/v1/task"];
      if (model.id.endsWith("-sts")) return ["/api/v1/task"];
      return ["/v1/audio/speech", "/api/v1/task"];
  }
}

export type ModelEntry = ModelListEntry & { endpoints: string[] };

/** The /v1/models entries, each with its endpoints. */
export function modelEntries(models: ModelDefinition[]): ModelEntry[] {
  const byId = new Map(models.map((m) => [m.id, m]));
  return listModels({ models }).map((entry) => {
    const model = byId.get(entry.id);
    return { ...entry, endpoints: model ? modelEndpoints(model) : [] };
  });
}
