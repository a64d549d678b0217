// `npm run build` (run from the project root): web/ → dist/web, served by src/http/dashboard.ts.
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    target: 'es2022',
    // The dashboard is small: one script and one stylesheet, no inlined assets (the CSP allows none).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  // `npx vite --config web/vite.config.ts` serves the dashboard with hot reload; /api goes to Vitals.
  server: {
    proxy: { '/api': 'http://127.0.0.1:3000', '/docs': 'http://127.0.0.1:3000' },
  },
});
