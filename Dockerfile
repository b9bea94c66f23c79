# Build: static binaries from the module (no cgo), cached module downloads.
# Images are pinned: the builder by exact Go release, the base by digest (the tag says what
# it is, the digest decides which image it is). test/cluster/images checks that the cluster
# test's offline image matches the final stage below (user, entrypoint, files).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
COPY webhook/ webhook/
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/manager ./cmd/transcript-store

# Run: distroless static, non-root; the Pod runs /manager and /transcript-store from it.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639
COPY --from=build /out/manager /out/transcript-store /
USER 65532:65532
ENTRYPOINT ["/manager"]
