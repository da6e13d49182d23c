# Cairn: one binary for the server (API + worker), agents and the CLI.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/cairn ./cmd/cairn

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/cairn cairn \
    && mkdir -p /var/lib/cairn && chown cairn /var/lib/cairn
COPY --from=build /out/cairn /usr/local/bin/cairn
USER cairn
WORKDIR /var/lib/cairn
ENV CAIRN_DATA_DIR=/var/lib/cairn
EXPOSE 8080
ENTRYPOINT ["cairn"]
CMD ["server"]
