# The whole workspace (sandbox, salesintel CLI, salesintel-pg loader, source) as one image, for
# docker-compose.yml. Installed and built inside the image, so nothing is written into the
# checkout, and run as the unprivileged `node` user. The Airbyte connector image is
# packages/source/Dockerfile, which carries the source alone.
#   docker build -t salesintel/workspace:0.1.0 .

FROM node:24-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npx tsc -b \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY --from=build /app/spec ./spec
USER node
ENTRYPOINT []
CMD ["node", "packages/sandbox/dist/bin.js", "--host", "0.0.0.0", "--port", "8787"]
