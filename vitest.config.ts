import { defineConfig } from "vitest/config";

// One vitest run covers every workspace; each app/package declares its own project.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
    reporters: ["default"],
  },
});
