# syntax=docker/dockerfile:1
# modelgate as a container: a static musl binary in an empty image.
#
#   docker build -t modelgate .
#   docker run --rm -v "$PWD:/scan:ro" --user "$(id -u):$(id -g)" modelgate        # scan /scan
#   docker run --rm -v "$PWD:/scan" modelgate scan /scan --format sarif -o /scan/out.sarif
#
# The builder compiles the dist profile on Alpine, whose Rust targets musl and links statically by
# default (C dependencies included). The final image holds only the binary and its documents: no
# shell, no package manager, nothing else to exploit or to scan. release.yml builds it for
# linux/amd64 and linux/arm64 and pushes it to ghcr.io with a provenance attestation.

# The crate's rust-version (Cargo.toml); a test keeps the two equal.
ARG RUST_VERSION=1.88

FROM rust:${RUST_VERSION}-alpine AS builder
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY policies ./policies
# Cargo.toml declares the examples (`[[example]]`), so their sources must be in the context
# (.dockerignore keeps only `examples/*.rs`).
COPY examples ./examples
COPY README.md LICENSE SECURITY.md ./
RUN cargo build --locked --profile dist && \
    ./target/dist/modelgate --version

FROM scratch
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="modelgate" \
      org.opencontainers.image.description="Supply-chain policy gate for machine-learning model repositories" \
      org.opencontainers.image.source="https://github.com/modelgate/modelgate" \
      org.opencontainers.image.documentation="https://github.com/modelgate/modelgate#install" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="modelgate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=builder /src/target/dist/modelgate /usr/local/bin/modelgate
COPY --from=builder /src/README.md /src/LICENSE /src/SECURITY.md /usr/share/doc/modelgate/
ENV PATH=/usr/local/bin
# Not root: "nonroot" of the distroless images. Mounted repositories are only read.
USER 65532:65532
WORKDIR /scan
ENTRYPOINT ["modelgate"]
CMD ["scan", "/scan"]
