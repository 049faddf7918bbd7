package tracingapi

import (
	"bytes"
	"strings"
)

// splitTraceMultipart hands every part of a multipart body to add when the body has the plain
// form the langsmith clients send, and reports whether it had: no preamble; CRLF line ends;
// delimiter lines of exactly --boundary (the last --boundary--, ending the body or its line);
// header lines "Name: value" of printable ASCII, none
// continued; a Content-Disposition of exactly form-data; name="<printable ASCII>", when present. add is not
// called unless the whole body has that form: on false, parse it with mime/multipart, which
// reads every form (the parts and names are the same where both read a body).
//
// mime/multipart costs several microseconds a part (a header map, the disposition's parsing,
// the part copied); this costs a scan for each delimiter.
func splitTraceMultipart(body []byte, boundary string, add func(name, ctype string, data []byte)) bool {
	type part struct {
		name, ctype string
		data        []byte
	}
	open := "--" + boundary
	if !bytes.HasPrefix(body, []byte(open+"\r\n")) {
		return false
	}
	delim := []byte("\r\n" + open)
	rest := body[len(open)+2:]
	var parts []part
	for {
		// Headers, up to an empty line.
		var p part
		for {
			eol := bytes.Index(rest, []byte("\r\n"))
			if eol < 0 {
				return false
			}
			line := rest[:eol]
			rest = rest[eol+2:]
			if len(line) == 0 {
				break
			}
			if line[0] == ' ' || line[0] == '\t' {
				return false // a continued header
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 || !plainHeader(line, colon) {
				return false
			}
			key, value := string(line[:colon]), strings.Trim(string(line[colon+1:]), " \t")
			switch {
			case strings.EqualFold(key, "Content-Disposition"):
				name, ok := plainFormName(value)
				if !ok || p.name != "" {
					return false
				}
				p.name = name
			case strings.EqualFold(key, "Content-Type"):
				if p.ctype == "" {
					p.ctype = value
				}
			}
		}
		// The data, up to the next delimiter, which must end its line or the body.
		if bytes.HasPrefix(rest, delim[2:]) {
			return false // a delimiter right after the headers
		}
		end := bytes.Index(rest, delim)
		if end < 0 {
			return false
		}
		p.data = rest[:end:end]
		parts = append(parts, p)
		rest = rest[end+len(delim):]
		switch {
		case bytes.HasPrefix(rest, []byte("\r\n")):
			rest = rest[2:]
		case bytes.HasPrefix(rest, []byte("--")) && (len(rest) == 2 || bytes.HasPrefix(rest[2:], []byte("\r\n"))):
			for _, p := range parts {
				add(p.name, p.ctype, p.data)
			}
			return true
		default:
			return false
		}
	}
}

// plainFormName returns the name of a Content-Disposition of exactly form-data; name="<name>",
// the name printable ASCII without quotes or backslashes.
func plainFormName(v string) (string, bool) {
	const prefix = `form-data; name="`
	if len(v) < len(prefix)+1 || !strings.EqualFold(v[:len(prefix)], prefix) || v[len(v)-1] != '"' {
		return "", false
	}
	name := v[len(prefix) : len(v)-1]
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return name, true
}

// plainHeader reports whether a header line is a token, a colon (at colon) and a value of
// printable ASCII and tabs.
func plainHeader(line []byte, colon int) bool {
	for i, c := range line {
		switch {
		case i < colon:
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
				return false
			}
		case i > colon:
			if (c < 0x20 || c > 0x7e) && c != '\t' {
				return false
			}
		}
	}
	return true
}
