package search

import (
	"fmt"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/repair"
)

// ParseTime reads a --since or --until value: an RFC 3339 time
// (2026-01-29T10:00:00Z), a plain date (2026-01-29, in the local time
// zone: its start, or with until its end), a date and a time without a
// zone (2026-01-29T10:00, 2026-01-29 10:00:00, local), or a duration
// back from now as --older-than takes it (repair.ParseAge: 7d, 2w, 12h,
// 90m, 1.5h).
func ParseTime(v string, now time.Time, until bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		if until {
			return t.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
		}
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	if d, err := repair.ParseAge(v); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("time %q: want an RFC 3339 time (2026-01-29T10:00:00Z), a date (2026-01-29) or a duration back from now (7d, 12h, 30m)", v)
}
