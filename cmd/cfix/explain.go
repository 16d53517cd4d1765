package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/validate"
)

func newExplainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain CODE...",
		Short: "Say what a finding code means and which command fixes it",
		Long: `Explain prints what validate's finding codes mean: the severity, what the
code says of the store (and what Claude Code does with it on resume), and the
command that fixes it, as validate's hints give it (FILE stands for the file
the finding names). docs/codes.md lists every code.`,
		Example: `  cfix explain line-torn
  cfix explain tool-result-missing parent-missing`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError(errors.New("cfix explain needs a finding code, such as line-torn (cfix validate prints them; docs/codes.md lists them)"))
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var out []string
			for _, c := range validate.Codes {
				out = append(out, string(c.Code)+"\t"+c.Severity.String())
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			for i, a := range args {
				c, ok := validate.Lookup(validate.Code(strings.ToLower(a)))
				if !ok {
					return usageError(fmt.Errorf("explain: %q is not a finding code%s", a, closeCodes(a)))
				}
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "%s (%s)\n", c.Code, c.Severity)
				fmt.Fprintf(w, "  %s\n", c.Meaning)
				if fix := validate.FixFor(c.Code); fix != "" {
					fmt.Fprintf(w, "fix: %s\n", fix)
				} else {
					fmt.Fprintf(w, "fix: no command fixes it safely; cfix show and cfix export read what is there\n")
				}
			}
			return nil
		},
	}
	return cmd
}

// closeCodes suggests the codes a mistyped one was likely meant as.
func closeCodes(a string) string {
	near := validate.Near(a)
	if len(near) == 0 {
		return "; cfix validate prints the codes, docs/codes.md lists them"
	}
	words := make([]string, len(near))
	for i, c := range near {
		words[i] = string(c)
	}
	return "; did you mean " + strings.Join(words, " or ") + "?"
}
