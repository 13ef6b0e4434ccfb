import { defineProject } from "vitest/config";

// JSX is compiled by vitest's own transform (automatic runtime); the React plugin is only needed for the app build.
export default defineProject({
  test: {
    name: "web",
    environment: "jsdom",
    setupFiles: ["./src/test-setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
