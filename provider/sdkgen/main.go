// Command sdkgen writes the warmpool package's SDKs from its schema (../schema.json) with
// Pulumi's own code generators, as `pulumi package gen-sdk` does; that command needs each
// language's plugin, which the Go module proxy does not serve.
//
//	cd provider/sdkgen && go run . --out ../../sdk            # go, nodejs, python
//	cd provider/sdkgen && go run . --out ../../sdk --language go
//
// A module of its own: the generators (pulumi/pkg/v3) stay out of the program's build.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	schemaPath := flag.String("schema", filepath.Join("..", "schema.json"), "the package schema")
	out := flag.String("out", "sdk", "where each language's SDK goes (<out>/go, <out>/nodejs, <out>/python)")
	languages := flag.String("language", strings.Join(Languages, ","), "the languages to generate, comma-separated")
	flag.Parse()
	if err := run(*schemaPath, *out, strings.Split(*languages, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, out string, languages []string) error {
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	for _, lang := range languages {
		files, err := Generate(b, lang)
		if err != nil {
			return err
		}
		dir := filepath.Join(out, lang)
		if err := Write(dir, files); err != nil {
			return err
		}
		fmt.Printf("%s: %d files in %s\n", lang, len(files), dir)
	}
	return nil
}
