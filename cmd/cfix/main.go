// Command cfix finds and fixes damage in Claude Code's session store.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
