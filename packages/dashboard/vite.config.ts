import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

// Relative asset paths: the control plane serves dist/ at `/`, and at `/api-host/` too.
export default defineConfig({
  base: "./",
  plugins: [react()],
  // Berth's own packages from their TypeScript sources: the build of their dist/ may run beside this one.
  resolve: { conditions: ["berth-source", ...defaultClientConditions] },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
});
