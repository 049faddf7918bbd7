package a2a

import (
	"regexp"

	"github.com/jetgraph/jetgraph/engine/streaming"
)

// redacted replaces what an error message must not show.
const redacted = "<redacted>"

// What Sanitize removes besides streaming.Sanitize's connection strings: every URL, addresses
// (an IP, a host with a port), host names under the usual public and internal suffixes, and
// absolute file paths.
var hiddenPatterns = []*regexp.Regexp{
	regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]*[^\s'"<>.,;:!?)\]]`),
	regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?\b`),
	regexp.MustCompile(`\[[0-9A-Fa-f:]*:[0-9A-Fa-f:]*\](:\d{1,5})?`),
	regexp.MustCompile(`\b[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)*:\d{2,5}\b`),
	regexp.MustCompile(`(?i)\b([a-z0-9-]+\.)+(com|net|org|io|dev|ai|cloud|internal|local|localdomain|lan|corp|intra|svc|cluster|amazonaws|azure|gcp)\b(\.[a-z0-9-]+)*`),
	regexp.MustCompile(`(^|[\s'"(=])(/[A-Za-z0-9._-]+){2,}/?`),
}

// Sanitize returns an error message fit for an A2A client: without connection strings, URLs,
// host names, addresses or file paths, which say how jetgraph's infrastructure is laid out.
func Sanitize(msg string) string {
	msg = streaming.Sanitize(msg)
	for i, re := range hiddenPatterns {
		if i == len(hiddenPatterns)-1 {
			msg = re.ReplaceAllString(msg, "${1}"+redacted)
			continue
		}
		msg = re.ReplaceAllString(msg, redacted)
	}
	return msg
}
