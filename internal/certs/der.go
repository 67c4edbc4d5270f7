package certs

import (
	"encoding/asn1"
	"math/big"
	"time"
)

// A minimal DER writer. The certificate layout must match the one Python
// cryptography produces for Magnum, so every element is written explicitly.

const (
	tagBoolean     = 0x01
	tagInteger     = 0x02
	tagBitString   = 0x03
	tagOctetString = 0x04
	tagNull        = 0x05
	tagOID         = 0x06
	tagUTF8String  = 0x0c
	tagUTCTime     = 0x17
	tagGeneralized = 0x18
	tagSequence    = 0x30
	tagSet         = 0x31
)

// derTLV encodes one element with a definite, minimal length.
func derTLV(tag byte, content ...[]byte) []byte {
	n := 0
	for _, c := range content {
		n += len(c)
	}
	out := make([]byte, 0, n+6)
	out = append(out, tag)
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	default:
		var l []byte
		for v := n; v > 0; v >>= 8 {
			l = append([]byte{byte(v)}, l...)
		}
		out = append(out, 0x80|byte(len(l)))
		out = append(out, l...)
	}
	for _, c := range content {
		out = append(out, c...)
	}
	return out
}

func derSequence(parts ...[]byte) []byte { return derTLV(tagSequence, parts...) }

func derSet(parts ...[]byte) []byte { return derTLV(tagSet, parts...) }

func derOctetString(b []byte) []byte { return derTLV(tagOctetString, b) }

func derNull() []byte { return []byte{tagNull, 0} }

func derBoolTrue() []byte { return []byte{tagBoolean, 1, 0xff} }

// derBitString encodes whole bytes (no unused bits).
func derBitString(b []byte) []byte { return derTLV(tagBitString, []byte{0}, b) }

func derOID(oid asn1.ObjectIdentifier) []byte {
	b, err := asn1.Marshal(oid)
	if err != nil {
		// Only constant, valid OIDs reach here.
		panic("certs: invalid OID " + oid.String())
	}
	return b
}

func derInteger(v *big.Int) []byte {
	b, err := asn1.Marshal(v)
	if err != nil {
		panic("certs: cannot encode integer")
	}
	return b
}

func derSmallInt(v int) []byte { return derInteger(big.NewInt(int64(v))) }

// derTime encodes a certificate time the RFC 5280 way (UTCTime before 2050,
// GeneralizedTime from 2050), in UTC with whole seconds.
func derTime(t time.Time) []byte {
	t = t.UTC()
	if t.Year() >= 1950 && t.Year() < 2050 {
		return derTLV(tagUTCTime, []byte(t.Format("060102150405Z")))
	}
	return derTLV(tagGeneralized, []byte(t.Format("20060102150405Z")))
}

// derNamedBits encodes a NamedBitList BIT STRING (bit 0 = most significant
// bit of the first byte) with trailing zero bits removed, as DER requires.
func derNamedBits(bits []bool) []byte {
	last := -1
	for i, b := range bits {
		if b {
			last = i
		}
	}
	if last < 0 {
		return derTLV(tagBitString, []byte{0})
	}
	nbytes := last/8 + 1
	content := make([]byte, nbytes)
	for i := 0; i <= last; i++ {
		if bits[i] {
			content[i/8] |= 0x80 >> (i % 8)
		}
	}
	unused := nbytes*8 - (last + 1)
	return derTLV(tagBitString, []byte{byte(unused)}, content)
}

// derName encodes a Name whose attributes are each their own RDN, with
// UTF8String values (cryptography's default for x509.Name([...])).
func derName(attrs ...nameAttr) []byte {
	var rdns [][]byte
	for _, a := range attrs {
		rdns = append(rdns, derSet(derSequence(derOID(a.oid), derTLV(tagUTF8String, []byte(a.value)))))
	}
	return derSequence(rdns...)
}

type nameAttr struct {
	oid   asn1.ObjectIdentifier
	value string
}

// derExtension encodes an Extension; critical=false is omitted (DEFAULT).
func derExtension(e extension) []byte {
	if e.critical {
		return derSequence(derOID(e.oid), derBoolTrue(), derOctetString(e.value))
	}
	return derSequence(derOID(e.oid), derOctetString(e.value))
}

// extension is one certificate extension with its DER-encoded value.
type extension struct {
	oid      asn1.ObjectIdentifier
	critical bool
	value    []byte
}
