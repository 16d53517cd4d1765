package secrets

import (
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/plant"
)

// TestAWSSecretAccessKey: an AWS secret access key under its usual name is
// found however it starts, as a .env file and a JSON string hold it
// (gitleaks's generic-api-key alone missed 13 of these 300).
func TestAWSSecretAccessKey(t *testing.T) {
	f, err := NewFilter(RedactorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 300; i++ {
		key := plant.Seeded(i).AWSSecret
		for _, text := range []string{
			"aws_secret_access_key=" + key + "\n",
			"AWS_SECRET_ACCESS_KEY: " + key,
			`{"aws_secret_access_key": "` + key + `"}`,
			`export AWS_SECRET_ACCESS_KEY="` + key + `"; aws s3 ls`,
		} {
			if out, _ := f.Text(text); strings.Contains(out, key) {
				t.Errorf("not found in %q: %q", text, out)
			}
		}
	}
	// Not a key: the name without a value of its shape.
	for _, text := range []string{"aws_secret_access_key=changeme", "aws_secret_access_key = ${AWS_SECRET}"} {
		if out, n := f.Text(text); n != 0 {
			t.Errorf("%q: %d found (%q)", text, n, out)
		}
	}
}
