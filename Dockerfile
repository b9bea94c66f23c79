# Build: static binaries from the module (no cgo), cached module downloads.
FROM golang:1.26 AS build
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
FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/manager /out/transcript-store /
USER 65532:65532
ENTRYPOINT ["/manager"]
