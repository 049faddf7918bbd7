// Package seal encrypts the control plane's secret values at rest (AES-256-GCM): a deployment's
// secrets are sealed before they are appended to the log, so that neither the stream's files nor
// the control projection (controlplane.db) hold them in clear text, and opened only where a
// process or a manifest needs them.
//
// A sealed value is "jgsealed:v1:<key id>:<base64 of nonce and ciphertext>". A Keyring holds the
// current key, which seals, and the older ones, which still open what they sealed: rotation adds
// a key in front and keeps the others (the log keeps every value sealed with them). A value
// without the prefix is one written before sealing existed and opens as itself.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyEnv holds the keyring instead of the key file: base64 keys separated by commas, the
// current one first.
const KeyEnv = "JETGRAPH_SECRETS_KEY"

// KeyFileName is the key file in the data folder: one base64 key a line, the current one first.
const KeyFileName = "secrets.key"

// Prefix starts every sealed value.
const Prefix = "jgsealed:v1:"

// KeySize is the size of a key: AES-256.
const KeySize = 32

// Keyring seals with its current key and opens with any of its keys.
type Keyring struct {
	current key
	byID    map[string]key
}

type key struct {
	id   string
	aead cipher.AEAD
	mac  []byte // derives a value's nonce: the same value seals the same way (folds stay deterministic)
}

// New builds a keyring from raw keys, the current one first.
func New(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	k := &Keyring{byID: map[string]key{}}
	for i, raw := range keys {
		if len(raw) != KeySize {
			return nil, fmt.Errorf("seal: key %d is %d bytes, want %d", i+1, len(raw), KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("seal: key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: key %d: %w", i+1, err)
		}
		sum := sha256.Sum256(append([]byte("jetgraph key id\x00"), raw...))
		m := hmac.New(sha256.New, raw)
		m.Write([]byte("jetgraph nonce key"))
		kk := key{id: hex.EncodeToString(sum[:4]), aead: aead, mac: m.Sum(nil)}
		if _, dup := k.byID[kk.id]; dup {
			return nil, fmt.Errorf("seal: key %d is listed twice", i+1)
		}
		if i == 0 {
			k.current = kk
		}
		k.byID[kk.id] = kk
	}
	return k, nil
}

// ParseKeys reads keys written one per line or separated by commas (base64, standard or URL
// alphabet); blank lines and lines starting with # are skipped.
func ParseKeys(text string) ([][]byte, error) {
	var out [][]byte
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' }) {
		f = strings.TrimSpace(f)
		if f == "" || strings.HasPrefix(f, "#") {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(f)
		if err != nil {
			if raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(f, "=")); err != nil {
				return nil, fmt.Errorf("seal: key %d is not base64", len(out)+1)
			}
		}
		out = append(out, raw)
	}
	return out, nil
}

// NewKey returns a new random key, base64.
func NewKey() (string, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("seal: new key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// Load returns the keyring of a process whose data folder is dir: from KeyEnv when it is set
// (env is os.Getenv in production), else from dir's key file, which is created with a new key
// (mode 0600) on first start. A key file readable by others is refused.
func Load(dir string, env func(string) string) (*Keyring, error) {
	if v := strings.TrimSpace(env(KeyEnv)); v != "" {
		keys, err := ParseKeys(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyEnv, err)
		}
		return New(keys...)
	}
	path := filepath.Join(dir, KeyFileName)
	if err := create(path); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("seal: %s is mode %04o: it holds the secrets key, make it 0600 (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	keys, err := ParseKeys(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return New(keys...)
}

// create writes a key file with one new key unless path exists.
func create(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	k, err := NewKey()
	if err == nil {
		_, err = fmt.Fprintf(f, "%s\n", k)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("seal: writing %s: %w", path, err)
	}
	return nil
}

// Rotate puts a new key in front of dir's key file (which must exist): new values are sealed
// with it from the next start on; the older keys stay, to open what they sealed. It returns the
// new key's id.
func Rotate(dir string) (string, error) {
	path := filepath.Join(dir, KeyFileName)
	old, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("seal: rotate: %w", err)
	}
	prev, err := ParseKeys(string(old))
	if err != nil {
		return "", fmt.Errorf("seal: rotate: %s: %w", path, err)
	}
	k, err := NewKey()
	if err != nil {
		return "", err
	}
	raw, _ := base64.StdEncoding.DecodeString(k)
	ring, err := New(append([][]byte{raw}, prev...)...)
	if err != nil {
		return "", fmt.Errorf("seal: rotate: %w", err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(k+"\n"+string(old)), 0o600); err != nil {
		return "", fmt.Errorf("seal: rotate: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("seal: rotate: %w", err)
	}
	return ring.current.id, nil
}

// CurrentID is the id of the key that seals.
func (k *Keyring) CurrentID() string { return k.current.id }

// Sealed reports whether v is a sealed value (of any key).
func Sealed(v string) bool { return strings.HasPrefix(v, Prefix) }

// Seal returns v sealed with the current key. A sealed value is returned as it is, whichever
// key sealed it (a PATCH keeps a secret by sending back its mask, which is replaced by the
// stored, sealed value; a value of a key this keyring lacks must fail where it is opened, not
// be sealed again and handed out as its sealed text). The nonce is derived from the value by a
// keyed hash: sealing the same value twice gives the same text, which reveals only that two
// values are equal.
func (k *Keyring) Seal(v string) string {
	if Sealed(v) {
		return v
	}
	m := hmac.New(sha256.New, k.current.mac)
	m.Write([]byte(v))
	nonce := m.Sum(nil)[:k.current.aead.NonceSize()]
	out := k.current.aead.Seal(nonce, nonce, []byte(v), []byte(k.current.id))
	return Prefix + k.current.id + ":" + base64.RawStdEncoding.EncodeToString(out)
}

// Open returns v's clear text: v itself when it is not sealed (written before sealing existed).
func (k *Keyring) Open(v string) (string, error) {
	if !Sealed(v) {
		return v, nil
	}
	id, body, ok := strings.Cut(strings.TrimPrefix(v, Prefix), ":")
	if !ok {
		return "", errors.New("seal: a sealed value without its key id")
	}
	kk, ok := k.byID[id]
	if !ok {
		return "", fmt.Errorf("seal: a value sealed with key %s, which is not in the keyring (%s or %s)", id, KeyEnv, KeyFileName)
	}
	raw, err := base64.RawStdEncoding.DecodeString(body)
	n := kk.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", fmt.Errorf("seal: a sealed value of key %s is damaged", id)
	}
	plain, err := kk.aead.Open(nil, raw[:n], raw[n:], []byte(id))
	if err != nil {
		return "", fmt.Errorf("seal: a sealed value of key %s does not open: %w", id, err)
	}
	return string(plain), nil
}
