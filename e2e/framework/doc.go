// Package framework is what the end-to-end test, the benchmarks and the demo share: waiting
// (Eventually, Consistently), deploying the program and reading its outputs, ServiceAccount
// tokens, claims, free ports and builds. Test helpers take the test's t as their first argument;
// the demo, which has no t, uses the functions that return an error.
package framework
