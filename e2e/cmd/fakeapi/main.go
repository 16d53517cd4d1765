// Command fakeapi runs the fake Anthropic Messages API of package
// e2e/fakeapi for manual sessions with a real Claude Code client:
//
//	go run ./e2e/cmd/fakeapi -record /tmp/api-requests.jsonl -dump /tmp/bodies
//	ANTHROPIC_BASE_URL=<printed URL> ANTHROPIC_API_KEY=dummy claude -p 'BASH: ls'
//
// It prints one line per request and runs until interrupted.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

func main() {
	record := flag.String("record", "", "append every request to this JSONL file")
	dump := flag.String("dump", "", "write each request body to DIR/<n>.json")
	flag.Parse()
	srv, err := fakeapi.New(fakeapi.Options{Logf: log.Printf, RecordPath: *record})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Printf("ANTHROPIC_BASE_URL=%s\n", srv.URL)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	seen := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			for _, r := range srv.Since(seen) {
				fmt.Printf("%3d %s %s model=%s stream=%v msgs=%d tools=%d -> %d %s\n",
					r.N, r.Method, r.URL, r.Model, r.Stream, len(r.Messages), len(r.Tools), r.Status, r.Reply)
				seen = r.N
				if *dump != "" {
					if err := os.WriteFile(fmt.Sprintf("%s/%03d.json", *dump, r.N), r.Body, 0o644); err != nil {
						log.Print(err)
					}
				}
			}
		}
	}
}
