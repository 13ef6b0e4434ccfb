import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev -w @gw/web` proxies the API to a server started with `PUBLIC_URL=http://localhost:5173 npm start`
// (PORT 3000 by default): the server's CSRF check compares a signed-in POST's Origin (this dev server) with PUBLIC_URL.
const apiTarget = process.env.GW_API_URL ?? "http://localhost:3000";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022" },
  server: {
    proxy: {
      "/api": { target: apiTarget, changeOrigin: false },
      "/v1": { target: apiTarget, changeOrigin: false },
    },
  },
});
