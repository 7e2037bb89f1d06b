// Package docs holds the repository's reference documents (the Markdown beside this file) and,
// in docscheck_test.go, the check that every document in the repository says only what resolves:
// each relative link and anchor, each picture, each `go test -run`/`-bench` pattern and each flag
// given to one of the project's `go run` commands. It has no code of its own.
package docs
