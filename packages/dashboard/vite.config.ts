import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Relative asset paths: the control plane serves dist/ at `/`, and at `/api-host/` too.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
});
