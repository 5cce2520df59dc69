# hangar container image: two stages.
#   build   - installs every dependency, compiles better-sqlite3 and the TypeScript, then prunes
#             to production dependencies;
#   runtime - the same slim base with only node_modules, dist, package.json, the fixtures and the
#             inspector page's static files, run as `node`.
# `npm run docker:check` rehearses these steps without Docker (scripts/docker-check.mjs reads this
# file), so keep to the instructions that script understands.

FROM node:20-bookworm-slim AS build
# Toolchain for node-gyp: better-sqlite3 compiles its native addon from source whenever no
# prebuilt binary can be fetched for this platform and Node version.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Manifests alone first, so the slow `npm ci` layer is reused until they change. Lifecycle scripts
# are skipped there (the package's own `prepare` build needs src/, copied below); better-sqlite3's
# install script, which fetches or compiles its native addon, is then run on its own.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json tsconfig.ui.json ./
COPY src ./src
COPY ui ./ui
COPY scripts/bundle.mjs ./scripts/
# tsconfig.build.json has rootDir src, so this emits dist/; tsconfig.ui.json emits the inspector
# page's scripts to dist/ui; scripts/bundle.mjs then makes dist/server.js and dist/index.js one file each.
RUN npm run build
# Drop devDependencies (typescript, esbuild, tap, @types/*); the compiled addon stays in place.
RUN npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8123 HANGAR_DB=/data/hangar.db
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# src/version.ts reads ../package.json relative to dist/.
COPY --from=build --chown=node:node /app/package.json ./package.json
# The seed data (OAuth providers, integrations, workspaces); HANGAR_FIXTURES may point elsewhere.
COPY --chown=node:node fixtures ./fixtures
# The inspector page's markup and styles (/_hangar/ui); its scripts are in dist/ui.
COPY --chown=node:node ui ./ui
# A fresh named volume takes its ownership from the image's directory; without this /data would
# be root-owned and the `node` user could not create the database in it.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
# `node` (uid 1000) is the unprivileged user the official Node images ship.
USER node
EXPOSE 8123
# Slim images have no curl, so node itself asks /ok. Shell form: $PORT is expanded by sh when the
# check runs, so a container started with another PORT is still checked on the right port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD node -e "require('node:http').get('http://127.0.0.1:$PORT/ok', (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"
# Exec form: node is PID 1 and receives SIGTERM itself, which hangar handles with a graceful close.
CMD ["node", "dist/server.js"]
