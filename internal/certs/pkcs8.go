package certs

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base32"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// Magnum stores private keys as PKCS#8 PEM encrypted with
// cryptography's serialization.BestAvailableEncryption(passphrase). Every
// cryptography release Magnum 23.0.0 runs with (and the sample rows) writes
// PBES2 with PBKDF2-HMAC-SHA256, a 16-byte salt, 2048 iterations and
// AES-256-CBC with a 16-byte IV; that is what EncryptPKCS8PEM writes.
// DecryptPKCS8PEM also reads the PBKDF2 PRFs and AES key sizes older
// OpenSSL-backed releases wrote (hmacWithSHA1, AES-128/192).

var (
	oidPBES2          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACWithSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACWithSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

const (
	pemEncryptedPrivateKey = "ENCRYPTED PRIVATE KEY"
	pemPrivateKey          = "PRIVATE KEY"
	pemRSAPrivateKey       = "RSA PRIVATE KEY"
	pbkdf2Iterations       = 2048
	// maxPBKDF2Iterations bounds the work a hostile stored key can cause.
	maxPBKDF2Iterations = 10_000_000
)

// ErrWrongPassphrase is returned when a key cannot be decrypted with the
// given passphrase (or the ciphertext is corrupt; PBES2 cannot tell apart).
var ErrWrongPassphrase = errors.New("bad decrypt: wrong passphrase or corrupt key")

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

// EncryptPKCS8PEM serialises key as an "ENCRYPTED PRIVATE KEY" PEM block
// (PKCS#8, PBES2, PBKDF2-HMAC-SHA256, 2048 iterations, AES-256-CBC), the
// format Magnum writes and Python cryptography's load_pem_private_key reads.
// An empty passphrase yields an unencrypted "PRIVATE KEY" block, as Magnum's
// NoEncryption branch does.
func EncryptPKCS8PEM(key crypto.PrivateKey, passphrase []byte) ([]byte, error) {
	plain, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal PKCS#8 private key: %w", err)
	}
	if len(passphrase) == 0 {
		return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: plain}), nil
	}
	salt := make([]byte, 16)
	iv := make([]byte, aes.BlockSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("read salt: %w", err)
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("read iv: %w", err)
	}
	dk, err := pbkdf2.Key(sha256.New, string(passphrase), salt, pbkdf2Iterations, 32)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(dk)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	data := append(append([]byte{}, plain...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(data, data)

	der := derSequence(
		derSequence(
			derOID(oidPBES2),
			derSequence(
				derSequence(
					derOID(oidPBKDF2),
					derSequence(derOctetString(salt), derSmallInt(pbkdf2Iterations),
						derSequence(derOID(oidHMACWithSHA256), derNull())),
				),
				derSequence(derOID(oidAES256CBC), derOctetString(iv)),
			),
		),
		derOctetString(data),
	)
	return pem.EncodeToMemory(&pem.Block{Type: pemEncryptedPrivateKey, Bytes: der}), nil
}

// DecryptPKCS8PEM reads a private key PEM as Magnum stores it: an
// "ENCRYPTED PRIVATE KEY" (PBES2/PBKDF2/AES-CBC) decrypted with passphrase,
// or an unencrypted "PRIVATE KEY" / "RSA PRIVATE KEY" block.
func DecryptPKCS8PEM(data, passphrase []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	var der []byte
	switch block.Type {
	case pemEncryptedPrivateKey:
		if len(passphrase) == 0 {
			return nil, errors.New("private key is encrypted but no passphrase was given")
		}
		var err error
		der, err = decryptPKCS8(block.Bytes, passphrase)
		if err != nil {
			return nil, err
		}
	case pemPrivateKey:
		der = block.Bytes
	case pemRSAPrivateKey:
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse PKCS#1 private key: %w", err)
		}
		return k, nil
	default:
		return nil, fmt.Errorf("unsupported PEM block %q", block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse PKCS#8 private key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported private key type %T", k)
	}
	return s, nil
}

func decryptPKCS8(der, passphrase []byte) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, errors.New("malformed EncryptedPrivateKeyInfo")
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("unsupported key encryption %s", info.Algorithm.Algorithm)
	}
	var p pbes2Params
	if rest, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &p); err != nil || len(rest) != 0 {
		return nil, errors.New("malformed PBES2 parameters")
	}
	if !p.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("unsupported key derivation %s", p.KeyDerivationFunc.Algorithm)
	}
	var kdf pbkdf2Params
	if rest, err := asn1.Unmarshal(p.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil || len(rest) != 0 {
		return nil, errors.New("malformed PBKDF2 parameters")
	}
	if kdf.IterationCount < 1 || kdf.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("unsupported PBKDF2 iteration count %d", kdf.IterationCount)
	}
	var prf func() hash.Hash
	switch {
	case len(kdf.PRF.Algorithm) == 0 || kdf.PRF.Algorithm.Equal(oidHMACWithSHA1):
		prf = sha1.New
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA224):
		prf = sha256.New224
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA256):
		prf = sha256.New
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA384):
		prf = sha512.New384
	case kdf.PRF.Algorithm.Equal(oidHMACWithSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("unsupported PBKDF2 PRF %s", kdf.PRF.Algorithm)
	}
	var keyLen int
	switch {
	case p.EncryptionScheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case p.EncryptionScheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case p.EncryptionScheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("unsupported key cipher %s", p.EncryptionScheme.Algorithm)
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, errors.New("PBKDF2 key length does not match the cipher")
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(p.EncryptionScheme.Parameters.FullBytes, &iv); err != nil || len(rest) != 0 || len(iv) != aes.BlockSize {
		return nil, errors.New("malformed AES-CBC IV")
	}
	data := info.EncryptedData
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, ErrWrongPassphrase
	}
	dk, err := pbkdf2.Key(prf, string(passphrase), kdf.Salt, kdf.IterationCount, keyLen)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(dk)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, ErrWrongPassphrase
	}
	if !hmac.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, ErrWrongPassphrase
	}
	return plain[:len(plain)-pad], nil
}

// GeneratePassphrase returns a random passphrase as Magnum makes them
// (magnum/common/short_id.py generate_id): 12 lower-case base32 characters
// carrying 60 random bits.
func GeneratePassphrase() ([]byte, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("read random: %w", err)
	}
	// 60 random bits followed by 4 zero bits, as short_id pads them.
	b[7] &= 0xf0
	s := strings.ToLower(base32.StdEncoding.EncodeToString(b))[:12]
	return []byte(s), nil
}
