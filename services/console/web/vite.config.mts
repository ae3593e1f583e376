import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built as static files served under /console/ behind the edge; JSX compiled by Vite's own transform
// (React's automatic runtime), so no framework plugin is needed.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: { outDir: fileURLToPath(new URL('../dist', import.meta.url)), emptyOutDir: true, sourcemap: false },
  logLevel: 'warn',
});
