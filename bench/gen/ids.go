package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// isUUID reports whether s has the 8-4-4-4-12 hex form of a UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// idPrefixes are the prefixes of the API's ids that entries repeat: tool
// calls (toolu_), messages (msg_) and requests (req_).
var idPrefixes = []string{"toolu_", "msg_", "req_"}

// isID reports whether s is a value the generator gives a fresh value per
// copy: a UUID, or a toolu_/msg_/req_ id.
func isID(s string) bool {
	if isUUID(s) {
		return true
	}
	if len(s) > 80 {
		return false
	}
	for _, p := range idPrefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			for i := len(p); i < len(s); i++ {
				c := s[i]
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
					return false
				}
			}
			return true
		}
	}
	return false
}

// newID returns the fresh value of id in the namespace ns: the same inputs
// always give the same value, different namespaces give unrelated values.
// It keeps the shape of id: a version 4 UUID for a UUID, the same prefix
// and a random-looking tail for toolu_/msg_/req_ ids.
func newID(ns, id string) string {
	h := sha256.Sum256([]byte(ns + "\x00" + id))
	if isUUID(id) {
		return formatUUID(h[:16])
	}
	p := id[:strings.IndexByte(id, '_')+1]
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := []byte(p + "01")
	for _, c := range h[:22] {
		b = append(b, alnum[int(c)%len(alnum)])
	}
	return string(b)
}

// formatUUID formats 16 bytes as a version 4, variant 1 UUID.
func formatUUID(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return string(s[:])
}

// newAgentID returns a fresh agent id shaped like old: "a" and hex digits
// (7 or 17 characters), or "acompact-" and hex digits.
func newAgentID(ns, old string) string {
	prefix := "a"
	if strings.HasPrefix(old, "acompact-") {
		prefix = "acompact-"
	}
	n := len(old) - len(prefix)
	if n < 6 {
		n = 6
	}
	h := sha256.Sum256([]byte(ns + "\x00agent\x00" + old))
	return prefix + hex.EncodeToString(h[:])[:n]
}

// replacePath replaces the whole path old in s by new, and paths under it:
// "/a/foo" becomes "/b/x" in "/a/foo" and "/a/foo/bar" but "/a/foobar" is
// left alone.
func replacePath(s, old, new string) string {
	if !strings.Contains(s, old) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		end := i + len(old)
		b.WriteString(s[:i])
		if end < len(s) && isNameByte(s[end]) {
			b.WriteString(old) // only a prefix of a longer name
		} else {
			b.WriteString(new)
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

// isNameByte reports whether c can continue a path component's name.
func isNameByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-'
}
