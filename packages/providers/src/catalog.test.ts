import { loadConfig } from "@gw/config";
import { describe, expect, it } from "vitest";
import { CATALOG_CREATED, findModel, listModels } from "./catalog";

const config = loadConfig({ NODE_ENV: "test", SESSION_SECRET: "x".repeat(32) });

describe("catalog", () => {
  it("finds models by exact id", () => {
    expect(findModel(config, "textA-4")?.provider).toBe("textA");
    expect(findModel(config, "TEXTA-4")).toBeUndefined();
    expect(findModel(config, "nope")).toBeUndefined();
  });

  it("lists every model with dollar pricing and SPEC 4.4 context windows", () => {
    const models = listModels(config);
    expect(models).toHaveLength(config.models.length);
    expect(models.find((m) => m.id === "textA-4")).toEqual({
      id: "textA-4", object: "model", created: CATALOG_CREATED, owned_by: "textA", type: "text", context_window: 8192,
      pricing: { input_per_1k_tokens: 0.001, output_per_1k_tokens: 0.002 },
    });
    expect(models.find((m) => m.id === "text-embedding-ada-002")).toMatchObject({ type: "embedding", context_window: 8191 });
    expect(models.find((m) => m.id === "imageB-1-pro")).toMatchObject({ type: "image", context_window: null, pricing: { image_standard: 0.1, image_high_res: 0.2 } });
    expect(models.find((m) => m.id === "speechvendor-stt")?.pricing).toEqual({ per_minute: 0.006 });
  });
});
