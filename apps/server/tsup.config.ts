import { defineConfig } from "tsup";

// Workspace packages ship TypeScript sources; the server bundle compiles them in and keeps
// registry dependencies external (native modules such as argon2 must stay in node_modules).
export default defineConfig({
  entry: { main: "src/main.ts", reconcile: "src/reconcile.ts", admin: "src/admin-cli.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  sourcemap: true,
  clean: true,
  noExternal: [/^@gw\//],
  external: [/^(?!@gw\/)[^./]/],
});
