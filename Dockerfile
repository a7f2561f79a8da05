# hermit in a container: one adapter's shared service on Streamable HTTP, for agents elsewhere.
#
#   deno task build --target linux-x64            # or download hermit-linux-x64 into dist/
#   docker build -t team-memory .                 # --build-arg ADAPTER=… PACKAGES=… for yours
#   openssl rand -base64 32 > token               # at least 16 characters
#   docker run -d --name team-memory -p 8080:8080 \
#     -v "$PWD/token:/run/secrets/hermit_token:ro" team-memory
#
# Clients then reach http://HOST:8080/mcp with "Authorization: Bearer <token>"; GET /health is
# open. README.md ("Containers") covers TLS behind a reverse proxy and running several replicas.
# tests/e2e/container.test.ts runs this file's layout (the same files at the same paths, the same
# user, ENTRYPOINT, CMD and HEALTHCHECK) in a chroot, since the test machines have no Docker.

FROM debian:12-slim

# The binary links only glibc (README.md, "Platforms"); tini becomes PID 1, forwards signals and
# reaps orphaned grandchildren of the tools' process groups (hermit as PID 1 would not).
# PACKAGES: what the adapter's tools and upstream servers run (the default adapter's memory
# server comes from npm via npx).
ARG PACKAGES="nodejs npm"
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates ${PACKAGES} \
 && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 hermit \
 && useradd --system --uid 10001 --gid hermit --home-dir /home/hermit --create-home \
      --shell /usr/sbin/nologin hermit

COPY dist/hermit-linux-x64 /usr/local/bin/hermit

# The adapter stays root's and read-only to the service; only .serve/ (the endpoint file that
# `hermit status`, the health check, reads) belongs to the service user.
ARG ADAPTER=examples/team-memory
COPY ${ADAPTER} /adapter
RUN chmod -R a+rX /adapter && install -d -o hermit -g hermit -m 0700 /adapter/.serve

USER hermit
WORKDIR /home/hermit
ENV HOME=/home/hermit HERMIT_LOG=info
EXPOSE 8080

# `hermit status` exits 0 when the service in .serve/endpoint runs and answers /health, 5 when
# not: no curl needed in the image.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["hermit", "status", "/adapter"]

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/hermit"]
CMD ["serve", "/adapter", "--standalone", "--host", "0.0.0.0", "--port", "8080", "--token-file", "/run/secrets/hermit_token"]
