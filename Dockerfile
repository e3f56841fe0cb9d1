# syntax=docker/dockerfile:1
# One image for both modes of the server; MODE (http | grpc | both) selects at run time.
# Build: bash build.sh   Run: bash starthttp.sh | bash startgrpc.sh   (see README.md, Docker)

# The Node release the project pins (NODE_PIN in scripts/ensure-tool.sh), on Debian 12; build and
# runtime share it so native add-ons would match.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, exactly as locked.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
# tini as PID 1 forwards SIGTERM/SIGINT to the cluster primary (which drains its
# workers) and reaps orphans, two jobs PID 1 has that Node does not do.
# Unpinned on purpose: the base tag fixes the Debian release, and its security fixes are wanted.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# Settings the server reads (server/settings.js), at its own defaults; WORKERS is
# left unset so it follows the CPUs the container gets.
ENV NODE_ENV=production \
    MODE=both \
    HOST=0.0.0.0 \
    HTTP_PORT=3000 \
    GRPC_PORT=4000 \
    LOG_LEVEL=info

WORKDIR /app
# Only what the server needs at run time; files stay root-owned, so read-only to the server.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY proto ./proto
COPY server ./server

# The base image's unprivileged `node` user, by number so runtimes can verify it is not root.
USER 1000:1000
EXPOSE 3000 4000

# Probes every listener of MODE on 127.0.0.1 (HTTP /health, grpc.health.v1.Health).
HEALTHCHECK --interval=10s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "server/healthcheck.js"]

# No -g: only the primary gets the signal and shuts its workers down in order.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "server"]
