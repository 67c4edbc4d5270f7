package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"regexp"
	"testing"
)

type publicKeyEqualer interface {
	Equal(crypto.PublicKey) bool
}

func TestDecryptSampleRows(t *testing.T) {
	rows := sampleKeyPairs(t)
	for _, row := range rows {
		t.Run("row "+row.ID, func(t *testing.T) {
			kp := KeyPair{CertPEM: []byte(row.Cert), KeyPEM: []byte(row.Key), Passphrase: []byte(row.Passphrase)}
			key, err := kp.PrivateKey()
			if err != nil {
				t.Fatalf("decrypt: %v", err)
			}
			cert := mustCert(t, kp.CertPEM)
			if !cert.PublicKey.(publicKeyEqualer).Equal(key.Public()) {
				t.Fatal("private key does not match the row's certificate")
			}
			if _, err := DecryptPKCS8PEM([]byte(row.Key), []byte("wrong-pass")); err == nil {
				t.Fatal("decrypt with a wrong passphrase succeeded")
			}
			// The stored format is the one we write: PBES2, PBKDF2
			// HMAC-SHA256, 2048 iterations, AES-256-CBC.
			block, _ := pem.Decode(kp.KeyPEM)
			ours, err := EncryptPKCS8PEM(key, kp.Passphrase)
			if err != nil {
				t.Fatal(err)
			}
			oblock, _ := pem.Decode(ours)
			if block.Type != oblock.Type || !bytes.Equal(algorithmPrefix(block.Bytes), algorithmPrefix(oblock.Bytes)) {
				t.Fatal("encryption parameters differ from the stored row")
			}
			if len(block.Bytes) != len(oblock.Bytes) {
				t.Fatalf("encrypted key length %d, want %d", len(oblock.Bytes), len(block.Bytes))
			}
		})
	}
	if len(rows) != 12 {
		t.Errorf("sample rows = %d, want 12", len(rows))
	}
}

// algorithmPrefix returns the algorithm identifier with the salt and IV
// blanked: the bytes that must match between two encryptions.
func algorithmPrefix(der []byte) []byte {
	// Layout: 30 82 LL LL 30 5f [06 09 PBES2] 30 52 30 31 06 09 PBKDF2 30 24
	// 04 10 <salt> 02 02 08 00 30 0c ... 30 1d 06 09 AES256 04 10 <iv>.
	if len(der) < 97 {
		return nil
	}
	p := bytes.Clone(der[4:101])
	for i := 32; i < 48; i++ { // salt
		p[i] = 0
	}
	for i := 81; i < 97; i++ { // iv
		p[i] = 0
	}
	return p
}

func TestEncryptRoundTrip(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]crypto.Signer{"rsa": rsaKey, "ecdsa": ecKey} {
		t.Run(name, func(t *testing.T) {
			pass, err := GeneratePassphrase()
			if err != nil {
				t.Fatal(err)
			}
			p, err := EncryptPKCS8PEM(key, pass)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(p, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\n")) {
				t.Fatal("not an ENCRYPTED PRIVATE KEY block")
			}
			got, err := DecryptPKCS8PEM(p, pass)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Public().(publicKeyEqualer).Equal(key.Public()) {
				t.Fatal("round trip changed the key")
			}
			if _, err := DecryptPKCS8PEM(p, []byte("nope")); err == nil {
				t.Fatal("wrong passphrase accepted")
			}
			if _, err := DecryptPKCS8PEM(p, nil); err == nil {
				t.Fatal("missing passphrase accepted")
			}
			plain, err := EncryptPKCS8PEM(key, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecryptPKCS8PEM(plain, nil); err != nil {
				t.Fatalf("unencrypted PKCS#8: %v", err)
			}
		})
	}
}

func TestDecryptRejectsGarbage(t *testing.T) {
	for name, in := range map[string]string{
		"empty":      "",
		"not pem":    "hello",
		"wrong type": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"bad asn1":   "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
		"bad pkcs8":  "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DecryptPKCS8PEM([]byte(in), []byte("x")); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestGeneratePassphrase(t *testing.T) {
	re := regexp.MustCompile(`^[a-z2-7]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		p, err := GeneratePassphrase()
		if err != nil {
			t.Fatal(err)
		}
		if !re.Match(p) {
			t.Fatalf("passphrase %q is not 12 base32 characters", p)
		}
		seen[string(p)] = true
	}
	if len(seen) != 100 {
		t.Fatal("passphrases repeat")
	}
	// The sample rows' passphrases have the same shape.
	for _, row := range sampleKeyPairs(t) {
		if !re.MatchString(row.Passphrase) {
			t.Errorf("row %s passphrase shape differs", row.ID)
		}
	}
}

// TestEncryptOracle checks that Python cryptography (what Magnum reads
// keys with) loads a key we encrypted, with the passphrase.
func TestEncryptOracle(t *testing.T) {
	python := oraclePython(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pass, err := GeneratePassphrase()
	if err != nil {
		t.Fatal(err)
	}
	p, err := EncryptPKCS8PEM(key, pass)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"key": string(p), "pass": string(pass)})
	const script = `
import json, sys
from cryptography.hazmat.primitives import serialization
d = json.load(sys.stdin)
k = serialization.load_pem_private_key(d["key"].encode(), password=d["pass"].encode())
try:
    serialization.load_pem_private_key(d["key"].encode(), password=b"wrong")
    wrong = "accepted"
except ValueError:
    wrong = "refused"
print(json.dumps({"n": str(k.private_numbers().public_numbers.n), "wrong": wrong}))
`
	var got struct{ N, Wrong string }
	if err := json.Unmarshal(runPython(t, python, script, in), &got); err != nil {
		t.Fatal(err)
	}
	if got.N != key.N.String() {
		t.Fatal("python loaded a different key")
	}
	if got.Wrong != "refused" {
		t.Fatal("python accepted a wrong passphrase")
	}
}
