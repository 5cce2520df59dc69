/**
 * hangar's package root: one level above both src/ and dist/, so also above dist/server.js and
 * dist/index.js, which are each one bundled file (scripts/bundle.mjs), where every module's
 * `import.meta.url` is the bundle's. A module below src/ finds package files from here, never
 * relative to itself.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url)
