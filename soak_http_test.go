//go:build soak

package xray_test

import (
	"net/http"
	"net/http/httptest"

	"github.com/goxray/xray"
	"github.com/goxray/xray/xrayhttp"
)

func init() {
	xray.SoakHTTP = func() (string, func()) {
		mux := http.NewServeMux()
		xrayhttp.Register(mux)
		srv := httptest.NewServer(mux)
		return srv.URL, srv.Close
	}
}
