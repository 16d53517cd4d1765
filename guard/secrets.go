package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/secrets"
)

// secretsName is the file in the state folder that says whether the
// SessionEnd hook scans for secrets, and what it found.
const secretsName = "guard-secrets.json"

// maxSecretRuns bounds the sessions the secrets file remembers.
const maxSecretRuns = 50

// SecretsRun is what the SessionEnd hook found in one session.
type SecretsRun struct {
	At       time.Time `json:"at"`
	Session  string    `json:"session"`
	Root     string    `json:"root"`
	Path     string    `json:"path"`
	Findings int       `json:"findings"`
	Secrets  int       `json:"secrets"`
	Rules    []string  `json:"rules"`
	// Warned says a SessionStart hook has told of it.
	Warned bool `json:"warned,omitempty"`
}

// SecretsState is the secrets file: whether the scan is on (cfix guard
// install --secrets), and the sessions it found secrets in.
type SecretsState struct {
	On    bool         `json:"on"`
	Found []SecretsRun `json:"found,omitempty"`
}

// ReadSecrets reads the secrets file in dir (off when there is none).
func ReadSecrets(dir string) (SecretsState, error) {
	var st SecretsState
	p := filepath.Join(dir, secretsName)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %v", p, err)
	}
	return st, nil
}

// writeSecrets writes the secrets file (a temporary file renamed over it).
func writeSecrets(dir string, st SecretsState) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if len(st.Found) > maxSecretRuns {
		st.Found = st.Found[len(st.Found)-maxSecretRuns:]
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".guard-secrets-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, secretsName))
}

// SetSecrets turns the SessionEnd scan for secrets on or off (cfix guard
// install --secrets, cfix guard uninstall).
func SetSecrets(dir string, on bool) error {
	st, err := ReadSecrets(dir)
	if err != nil {
		st = SecretsState{}
	}
	if st.On == on {
		return nil
	}
	st.On = on
	if !on {
		st.Found = nil
	}
	return writeSecrets(dir, st)
}

// scanSecrets scans the session that just ended (its family, and the
// files of the store that belong to it) and keeps what it found for the
// next SessionStart to tell of.
func scanSecrets(dir, root, path string, input Input) error {
	target := input.SessionID
	if target == "" {
		target = path
	}
	run := SecretsRun{At: time.Now().UTC(), Session: input.SessionID, Root: root, Path: path}
	distinct := map[string]bool{}
	rules := map[string]bool{}
	_, err := secrets.Scan(secrets.Options{Root: root, Targets: []string{target}}, func(f *secrets.Finding) error {
		run.Findings++
		distinct[f.SecretKey()] = true
		rules[f.Rule] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if run.Findings == 0 {
		return nil
	}
	run.Secrets = len(distinct)
	for r := range rules {
		run.Rules = append(run.Rules, r)
	}
	sort.Strings(run.Rules)
	st, err := ReadSecrets(dir)
	if err != nil {
		return err
	}
	// The last scan of a session is what counts.
	keep := st.Found[:0]
	for _, r := range st.Found {
		if r.Session != run.Session || r.Root != run.Root {
			keep = append(keep, r)
		}
	}
	st.Found = append(keep, run)
	return writeSecrets(dir, st)
}

// secretsWarning is what a SessionStart says of the sessions the
// SessionEnd hook found secrets in since the last start that told of
// them, which it marks told; "" when there are none.
func secretsWarning(dir string) (string, error) {
	st, err := ReadSecrets(dir)
	if err != nil || !st.On {
		return "", err
	}
	var b strings.Builder
	n := 0
	for i := range st.Found {
		r := &st.Found[i]
		if r.Warned {
			continue
		}
		r.Warned = true
		if n == 0 {
			b.WriteString("cfix: secrets are kept in plain text in the store:\n")
		}
		n++
		cmd := "cfix redact"
		if r.Root != "" {
			cmd += " --root " + shell.Quote(r.Root)
		}
		id := r.Session
		if id == "" {
			id = r.Path
		}
		fmt.Fprintf(&b, "- session %s holds %d %s (%s): %s %s shows how they go, --apply takes them out\n",
			id, r.Secrets, plural.Of(r.Secrets, "secret"), strings.Join(r.Rules, ", "), cmd, shell.Quote(id))
	}
	if n == 0 {
		return "", nil
	}
	return strings.TrimSuffix(b.String(), "\n"), writeSecrets(dir, st)
}
