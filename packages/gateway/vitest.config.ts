import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "gateway", include: ["src/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 120_000 },
});
