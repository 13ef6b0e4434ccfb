import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startFerretdb } from "@gw/db";
import { startStripeMock } from "@gw/test-support";

declare module "vitest" {
  export interface ProvidedContext {
    mongoUri: string;
    stripeMockUrl: string;
  }
}

/** One FerretDB and one stripe-mock for the whole run; every test file gets its own database. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gw-test-db-"));
  const [mongo, stripe] = await Promise.all([startFerretdb({ dir }), startStripeMock()]);
  project.provide("mongoUri", mongo.uri);
  project.provide("stripeMockUrl", stripe.url);
  return async () => {
    await Promise.all([mongo.stop(), stripe.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
}
