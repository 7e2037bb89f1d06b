package framework

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/exporter"
)

// HTTPGet is one GET with a 5 s bound: the status code and body, or 0 and the error's text.
func HTTPGet(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Demand reads the exporter's /demand answer at url; an error when it did not answer 200 with
// a count (an answer without one is never 0 claims).
func Demand(url string) (exporter.DemandResponse, error) {
	code, body := HTTPGet(url)
	var d exporter.DemandResponse
	if code != http.StatusOK {
		return d, fmt.Errorf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		return d, fmt.Errorf("GET %s: %w", url, err)
	}
	return d, nil
}
