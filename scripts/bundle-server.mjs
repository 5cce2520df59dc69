#!/usr/bin/env node
// bundle-server: the last step of `npm run build`. It replaces dist/server.js, which tsc emits as
// one ES module importing the others (over 300 files, 200 of them TypeBox's), with one file holding
// src/server.ts and everything it imports, bundled by esbuild from the same sources. Loading one
// file instead of hundreds is most of what `node dist/server.js` spends before it listens
// (bench/startup.mjs). The rest of dist/ stays as tsc emits it: `import { startHangar } from
// 'hangar'` (dist/index.js) and the tests use the modules.
//
// Left out of the bundle, found in node_modules at run time as before:
//   better-sqlite3        a native addon;
//   @fastify/swagger(-ui) they read their own package files relative to themselves (__dirname);
//   pino-pretty           loaded only for pretty logs (src/logging.ts).
// Files hangar reads itself (fixtures, the inspector's files, package.json) are found from the
// package root, one level above dist/ (src/package-root.ts), so they are found from the bundle too.
//
// Usage: node scripts/bundle-server.mjs   (after tsc; exit status 1 on a failed bundle)
import { build } from 'esbuild'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

await build({
  entryPoints: [join(ROOT, 'src', 'server.ts')],
  outfile: join(ROOT, 'dist', 'server.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', '@fastify/swagger', '@fastify/swagger-ui', 'pino-pretty'],
  // The CommonJS packages bundled into this ES module call require() for node's own modules.
  banner: { js: "import { createRequire as hangarRequire } from 'node:module'; const require = hangarRequire(import.meta.url);" },
  // Stack traces of hangar's bugs name the source files and lines.
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
})
