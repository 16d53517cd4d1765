package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/store"
)

// completeSessions completes a SESSION argument (or a --session flag's
// value, through cmd.RegisterFlagCompletionFunc): the ids of the store's
// sessions that start with what is typed, newest first, each described by
// its title as cfix ls shows it, then latest. The store is the command's
// --root, else as everywhere. What looks like a path (it holds a slash or
// starts with a dot or ~) completes as a file name instead. Any command
// that takes a session hooks it as its ValidArgsFunction.
func completeSessions(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.ContainsAny(toComplete, `/\`) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	flag := ""
	if f := cmd.Flags().Lookup("root"); f != nil {
		flag = f.Value.String()
	}
	root, err := store.Resolve(flag)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cat := catalog.Open(root)
	defer cat.Close()
	want := strings.ToLower(toComplete)
	ss, err := cat.Matching(want)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	seen := map[string]bool{}
	for i := range ss {
		s := &ss[i]
		if seen[s.Session] || s.Warmup {
			continue
		}
		seen[s.Session] = true
		desc := cut(textCell(s.Title), 60)
		if desc == "" {
			desc = "(untitled)"
		}
		out = append(out, cobra.CompletionWithDesc(s.Session, desc))
	}
	if strings.HasPrefix(store.Latest, want) {
		out = append(out, cobra.CompletionWithDesc(store.Latest, "the newest session of the current directory's project"))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeDirs completes a DIR|PROJECT argument: directories.
func completeDirs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completeFirstSession completes the SESSION that is a command's first
// argument, and directories after it (clone and move: SESSION --to DIR).
func completeFirstSession(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeSessions(cmd, args, toComplete)
}
