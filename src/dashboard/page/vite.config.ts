// Builds the dashboard page (React 18 + PatternFly 6) into dist/dashboard-page, which `tessera dashboard` serves.
// `npm run build` runs it after tsc; the browser test builds it itself when the bundle is missing or older than
// its sources.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: path.resolve(here, '../../../dist/dashboard-page'),
    emptyOutDir: true,
    // Served from loopback: one chunk is fine; no source maps in the shipped page.
    chunkSizeWarningLimit: 4_000,
    sourcemap: false,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
