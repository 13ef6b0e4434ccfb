import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_MODELS } from "./defaults";
import { loadConfig } from "./load";

/** Loads the config with this CONFIG_FILE content. */
function load(json: unknown) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gw-config-"));
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify(json));
  return loadConfig({ DATA_DIR: dir, CONFIG_FILE: file });
}

const deployment = { id: "east", baseUrl: "https://east.example.com/v1", apiKey: "sk-east" };

describe("CONFIG_FILE models patch the defaults by id (CONTRACT 13)", () => {
  it("changes only the fields an entry names, keeps the other defaults in order, adds new ids at the end and drops removed ones", () => {
    const custom = { id: "my-model", type: "text", provider: "textA", protocol: "openai", pricing: { inputPer1k: 10 }, ownedBy: "me" };
    const models = load({ models: [{ id: "textA-4", upstreamModel: "gpt-4o" }, { id: "textB-2", remove: true }, custom] }).models;
    expect(models.map((m) => m.id)).toEqual([...DEFAULT_MODELS.map((m) => m.id).filter((id) => id !== "textB-2"), "my-model"]);
    expect(models[0]).toEqual({ ...DEFAULT_MODELS[0], upstreamModel: "gpt-4o" });
    expect(models.at(-1)).toEqual(custom);
  });

  it("gives the same catalog for a complete list of the defaults, as before patches", () => {
    expect(load({ models: DEFAULT_MODELS }).models).toEqual(DEFAULT_MODELS);
  });

  it("takes deployments (weight 1 and an empty key by default) and fallbacks", () => {
    const [model] = load({ models: [{ id: "textA-4", deployments: [deployment, { id: "west", baseUrl: "https://west.example.com", weight: 3, requestsPerMinute: 60, upstreamModel: "gpt-4o-mini" }], fallbacks: ["textA-4-turbo", "textB-3-opus"] }] }).models;
    expect(model?.deployments).toEqual([
      { ...deployment, weight: 1 },
      { id: "west", baseUrl: "https://west.example.com", apiKey: "", weight: 3, requestsPerMinute: 60, upstreamModel: "gpt-4o-mini" },
    ]);
    expect(model?.fallbacks).toEqual(["textA-4-turbo", "textB-3-opus"]);
  });

  it("refuses a bad entry at start naming it: a new model without prices, a removal naming no model, bad deployments or fallbacks", () => {
    const cases: Array<[unknown[], RegExp]> = [
      [[{ id: "mine", type: "text", provider: "textA", protocol: "openai", ownedBy: "me" }], /expected object, received undefined[^]*at models\[0\]\.pricing/],
      [[{ id: "textA-4" }, { id: "nope", remove: true }], /there is no model "nope" to remove[^]*at models\[1\]\.id/],
      [[{ id: "textA-4", remove: true, upstreamModel: "x" }], /only its id[^]*at models\[0\]/],
      [[{ id: "textA-4", pricing: { inputPer1k: 0.5 } }], /whole micro-dollars[^]*at models\[0\]\.pricing\.inputPer1k/],
      [[{ id: "textA-4", deployments: [] }], /at least one deployment[^]*at models\[0\]\.deployments/],
      [[{ id: "textA-4", deployments: [deployment, deployment] }], /already taken in this model[^]*at models\[0\]\.deployments\[1\]\.id/],
      [[{ id: "textA-4", deployments: [{ ...deployment, baseUrl: "east.example.com" }] }], /http:\/\/ or https:\/\/[^]*at models\[0\]\.deployments\[0\]\.baseUrl/],
      [[{ id: "textA-4", deployments: [{ ...deployment, weight: 0 }] }], /at models\[0\]\.deployments\[0\]\.weight/],
      [[{ id: "textA-4", deployments: [{ ...deployment, key: "x" }] }], /Unrecognized key: "key"[^]*at models\[0\]\.deployments\[0\]/],
      [[{ id: "textA-4", baseUrl: "https://a.example.com", deployments: [deployment] }], /either baseUrl\/apiKey or deployments/],
      [[{ id: "textA-4", fallbacks: ["textA-4"] }], /cannot fall back on itself[^]*at models\[0\]\.fallbacks/],
      [[{ id: "textA-4", fallbacks: ["textZ"] }], /"textZ" is no model of the catalog/],
      [[{ id: "textA-4", fallbacks: ["imageA"] }], /"imageA" serves image, not text/],
      [[{ id: "textA-4", fallbacks: ["textB-2"] }, { id: "textB-2", remove: true }], /"textB-2" is no model of the catalog/],
    ];
    for (const [models, error] of cases) expect(() => load({ models }), String(error)).toThrow(error);
  });

  it("config.example.json at the repository root loads, and names an upstream model for every default", () => {
    const example = fileURLToPath(new URL("../../../config.example.json", import.meta.url));
    const json = JSON.parse(readFileSync(example, "utf8")) as { models: Array<{ id: string; upstreamModel?: string; versions?: Record<string, string> }> };
    const models = load(json).models;
    expect(models.map((m) => m.id)).toEqual(DEFAULT_MODELS.map((m) => m.id));
    for (const model of models) expect(model.upstreamModel ?? model.versions?.["5"], model.id).toMatch(/\S/);
    for (const model of models) expect(model.upstreamModel ?? model.id, model.id).not.toBe(model.id);
  });
});
