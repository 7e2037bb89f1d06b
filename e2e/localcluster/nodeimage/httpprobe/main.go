// Command httpprobe makes one HTTP GET, for images whose busybox wget cannot
// (busybox 1.35's wget segfaults on these machines):
//
//	httpprobe URL
//
// On an answer it prints "HTTP <status>" and exits 0, whatever the status;
// when no answer comes it prints Go's error text and exits 1. Sandbox checks
// (an outbound request must fail) read exactly that: the name, the output
// and the exit code are an interface.
//
// With HTTPPROBE_TOKEN_FILE set, the file's contents go as a bearer token (a
// pod's projected ServiceAccount token, to ask the API server).
package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: httpprobe URL")
		os.Exit(2)
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		// An answer is what is asked about, not whether its certificate is trusted.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
	}
	req, err := http.NewRequest(http.MethodGet, os.Args[1], nil)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	if f := os.Getenv("HTTPPROBE_TOKEN_FILE"); f != "" {
		token, err := os.ReadFile(f)
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	resp.Body.Close()
	fmt.Printf("HTTP %d\n", resp.StatusCode)
}
