# modelgate as a container: the release binary in an empty image.
#
# The image is built from a release archive's contents, not from source: the binary in the image
# is the very one the archive for that platform holds (built once, attested once). The build
# context is a folder with one subfolder per platform, each an unpacked release archive:
#
#   ctx/linux-amd64/{modelgate,README.md,LICENSE,SECURITY.md}   (x86_64-unknown-linux-musl)
#   ctx/linux-arm64/{modelgate,README.md,LICENSE,SECURITY.md}   (aarch64-unknown-linux-musl)
#
#   docker build -f Dockerfile --build-arg TARGETARCH=amd64 -t modelgate ctx   # one platform
#   docker buildx build --platform linux/amd64,linux/arm64 -f Dockerfile ctx  # release.yml
#   docker run --rm -v "$PWD:/scan:ro" modelgate                                # scan /scan
#   docker run --rm -v "$PWD:/scan:ro" -v "$PWD/out:/out" modelgate scan /scan --sarif /out/m.sarif
#
# The binary must be static (musl in releases; `.ci/run` builds the glibc target with
# `-C target-feature=+crt-static`): the image has no libc, no shell, no CA files and no NSS
# configuration. Remote scans need none of them: TLS trusts the Mozilla roots built into the
# binary (webpki-roots; SSL_CERT_FILE names a private CA's bundle instead), and names resolve
# without NSS modules: musl has none, and glibc >= 2.34 carries its `files` and `dns` lookups
# inside libc, so a static glibc binary reads /etc/hosts and /etc/resolv.conf itself. Those two
# files come from the container runtime (Docker, Podman and Kubernetes mount them into every
# container); `.ci/run` scans hf:// from a loopback Hub reached as `localhost` to show it.
# Nothing is pulled: `FROM scratch` is no image.
FROM scratch
# Set by BuildKit per platform; give it with --build-arg on the classic builder.
ARG TARGETARCH=amd64
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="modelgate" \
      org.opencontainers.image.description="Supply-chain policy gate for machine-learning model repositories" \
      org.opencontainers.image.source="https://github.com/modelgate/modelgate" \
      org.opencontainers.image.documentation="https://github.com/modelgate/modelgate#container" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="modelgate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY linux-${TARGETARCH}/modelgate /usr/local/bin/modelgate
COPY linux-${TARGETARCH}/README.md linux-${TARGETARCH}/LICENSE linux-${TARGETARCH}/SECURITY.md /usr/share/doc/modelgate/
ENV PATH=/usr/local/bin
# Not root: "nonroot" of the distroless images, numeric (there is no /etc/passwd). Mounted
# repositories are only read; reports go to a mounted folder the user may write.
USER 65532:65532
WORKDIR /scan
ENTRYPOINT ["modelgate"]
CMD ["scan", "/scan"]
