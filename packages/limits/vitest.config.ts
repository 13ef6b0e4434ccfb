import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "limits", include: ["src/**/*.test.ts"], testTimeout: 30_000 },
});
