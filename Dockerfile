# Vitals as a container image (docs/operations.md, "Containers"). Two stages on one base: the first
# installs every dependency and builds the dashboard and the typed client; the last holds the
# production dependencies, the source Node runs as it is (TypeScript, type stripping) and the
# built files, run by a user without privileges, with its data in the volume /data.
#
#   podman build --format docker -t vitals .        (or docker build -t vitals .)
#
# NODE_IMAGE picks another base with Node 24 and npm in /usr/local (test/image/base.sh makes one
# where no registry is reachable). Where TLS to the npm registry goes through a certificate
# authority of the network's own, give it as the build secret `ca`; it is used by npm during the
# build and never kept in the image:
#
#   podman build --format docker --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t vitals .
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# Dependencies first, without their scripts (the package's own `prepare` needs the sources; the
# `node` devDependency would download a second Node): this layer is reused while the lockfile stays.
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    if [ -f /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
    && npm ci --ignore-scripts \
    && rm -rf node_modules/node node_modules/.bin/node
COPY . .
# What `prepare` does (web/prepare.mjs): the patches, the dashboard, the typed client. Then only
# the production dependencies stay, patched.
RUN node_modules/.bin/patch-package --error-on-fail \
    && npm run build \
    && npm run build:client \
    && npm prune --omit=dev --ignore-scripts \
    && rm -rf node_modules/.cache

FROM ${NODE_IMAGE}
ARG VERSION=0.2.0
LABEL org.opencontainers.image.title="Vitals" \
      org.opencontainers.image.description="Self-hosted customer health service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"
ENV NODE_ENV=production \
    VITALS_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/src ./src
COPY --from=build /app/dist ./dist
COPY --from=build /app/examples ./examples
# `vitals …` on the PATH, for `docker compose exec vitals vitals keys create`; /data belongs to
# the `node` user (uid 1000) the base image has, so a new volume mounted there does too.
RUN ln -s /app/src/cli.ts /usr/local/bin/vitals \
    && mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["vitals", "healthcheck"]
ENTRYPOINT ["vitals"]
CMD ["serve"]
