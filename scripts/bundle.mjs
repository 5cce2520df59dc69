#!/usr/bin/env node
// bundle: the last step of `npm run build`. tsc emits each module of src/ as an ES module importing
// the others (over 300 files, 200 of them TypeBox's). This replaces the two that are loaded from
// outside, each with one file holding it and everything it imports, bundled by esbuild from the
// same sources:
//   dist/server.js  the `hangar` command (`npm start`, the Docker image);
//   dist/index.js   the in-process API, `import { startHangar } from 'hangar'`, which a test suite
//                   loads in every test file's process.
// Loading one file instead of hundreds is most of what either spends before it can serve
// (bench/startup.mjs): ~350 ms to import the API from tsc's modules, ~120 ms from the bundle.
// The two bundles are independent copies (esbuild's code splitting would share one, but it is
// still marked as work in progress for ES modules, and a process loads only one of them anyway).
// The rest of dist/ stays as tsc emits it: the type declarations (dist/index.d.ts and the files it
// names) come from there, and the tests import src/ itself.
//
// Left out of the bundles, found in node_modules at run time as before:
//   better-sqlite3        a native addon;
//   @fastify/swagger(-ui) they read their own package files relative to themselves (__dirname);
//   pino-pretty           loaded only for pretty logs (src/logging.ts).
// Files hangar reads itself (fixtures, the inspector's files, package.json) are found from the
// package root, one level above dist/ (src/package-root.ts), so they are found from a bundle too.
//
// Usage: node scripts/bundle.mjs   (after tsc; exit status 1 on a failed bundle)
import { build } from 'esbuild'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

for (const entry of ['server', 'index']) {
  await build({
    entryPoints: [join(ROOT, 'src', `${entry}.ts`)],
    outfile: join(ROOT, 'dist', `${entry}.js`),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3', '@fastify/swagger', '@fastify/swagger-ui', 'pino-pretty'],
    // The CommonJS packages bundled into an ES module call require() for node's own modules.
    banner: { js: "import { createRequire as hangarRequire } from 'node:module'; const require = hangarRequire(import.meta.url);" },
    // Stack traces of hangar's bugs name the source files and lines.
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  })
}
