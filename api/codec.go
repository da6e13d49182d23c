package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// DefaultCodecBodyLimit caps a codec request: Temporal refuses payloads
// over 2 MiB, which base64 and JSON make about 2.7 MiB.
const DefaultCodecBodyLimit = 4 << 20

// serveCodec hands a codec request to the codec handler once the API's
// middleware let it through (Host, Origin, token, content type), with its
// body read under the codec's limit and the path seen below /codec.
func (s *server) serveCodec(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		data, err := readBody(c)
		if err != nil {
			return err
		}
		req := c.Request().Clone(c.Request().Context())
		req.Body = http.NoBody
		if len(data) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(data))
		}
		req.ContentLength = int64(len(data))
		req.URL.Path = "/" + strings.TrimPrefix(req.URL.Path, CodecPrefix)
		req.URL.RawPath = ""
		h.ServeHTTP(c.Response(), req)
		return nil
	}
}
