# syntax=docker/dockerfile:1
#
# Production image of the v2a HTTP service (`npm start` = node dist/server/main.cjs).
#
#   docker build -t v2a:0.3.0 .
#   docker run --rm --init -p 8080:8080 v2a:0.3.0     # --init: see deploy/README.md, "Image"
#
# Node 24 LTS (the reference runtime; CI runs the suite on it) on glibc Debian trixie: sharp's
# prebuilt libvips binaries for linux-x64/arm64 are the glibc ones picked by npm from
# package-lock.json (the musl/Alpine ones would need another lock).
# Pin the base by digest in your own build pipeline (node:24-trixie-slim@sha256:...).
ARG NODE_IMAGE=node:24-trixie-slim

# ---- build: dev dependencies + tsc -> dist/ -------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency of the build needs an install script (esbuild and sharp ship
# their binaries as optional dependencies); the build runs explicitly below, once sources are in.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# The WebAssembly kernels (AssemblyScript) and their compile step, and the CLI bundler, both run
# by `npm run build`.
COPY assembly ./assembly
COPY scripts/build-wasm.mjs scripts/build-tables.ts scripts/bundle-cli.ts ./scripts/
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies + dist/ only ------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# MALLOC_ARENA_MAX=2: glibc's default of 8 arenas per core keeps freed native memory of the render
# threads (libvips) mapped; bench:soak measured RSS +32 % over 10 minutes with it, -3 % with 2 arenas.
ENV NODE_ENV=production PORT=8080 MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no production dependency has an install script: sharp 0.35 ships libvips as
# optionalDependencies (@img/sharp-linux-*), which npm selects by os/cpu/libc without running
# anything.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# The server's span export (PLATFORM_API_KEY set): the OpenTelemetry SDK is an optional peer
# dependency of the package (the CLI and the core never need it), so --omit=dev leaves it out.
# The build stage installed it from package-lock.json; every package it needs is in this scope.
COPY --from=build /app/node_modules/@opentelemetry ./node_modules/@opentelemetry
COPY --from=build /app/dist ./dist
# What `npm start` runs first (prestart): with no src/ here it does nothing, but without it
# `npm start` (a compose file's or an ECS task's command) failed to start at all.
COPY scripts/build-if-stale.mjs ./scripts/
# Files stay root-owned and read-only for the service user; nothing is written at run time
# (Kubernetes runs it with a read-only root filesystem and an emptyDir on /tmp).
USER node
EXPOSE 8080
# No curl in the slim image: Node's own fetch, to the address HOST names (loopback when HOST is every
# interface or unset). 503 while shutting down counts as unhealthy.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "const h = process.env.HOST || '', a = !h || h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? '[' + h + ']' : h; fetch('http://' + a + ':' + (process.env.PORT || 8080) + '/api/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# main.ts handles SIGTERM: stop accepting, finish in-flight renders (V2A_SHUTDOWN_TIMEOUT_MS), exit 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/server/main.cjs"]
