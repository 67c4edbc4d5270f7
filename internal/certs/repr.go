package certs

import (
	"encoding/asn1"
	"fmt"
	"net"
	"strings"
)

// Magnum's CertificateValidationError message embeds the Python repr of
// the refused cryptography Extension object ("Extension '<repr>' not
// allowed"). These functions reproduce that repr for the extension values
// a refusal can carry.

// otherOIDNames are cryptography's _OID_NAMES entries for the OIDs that
// appear inside extension values (extended key usages).
var otherOIDNames = map[string]string{
	"1.3.6.1.5.5.7.3.1":      "serverAuth",
	"1.3.6.1.5.5.7.3.2":      "clientAuth",
	"1.3.6.1.5.5.7.3.3":      "codeSigning",
	"1.3.6.1.5.5.7.3.4":      "emailProtection",
	"1.3.6.1.5.5.7.3.8":      "timeStamping",
	"1.3.6.1.5.5.7.3.9":      "OCSPSigning",
	"1.3.6.1.4.1.311.20.2.2": "msSmartcardLogin",
	"1.3.6.1.5.2.3.5":        "pkInitKDC",
	"2.5.29.37":              "extendedKeyUsage",
}

func oidRepr(oid asn1.ObjectIdentifier) string {
	name, ok := extensionName(oid)
	if !ok {
		name, ok = otherOIDNames[oid.String()]
	}
	if !ok {
		name = "Unknown OID"
	}
	return fmt.Sprintf("<ObjectIdentifier(oid=%s, name=%s)>", oid, name)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// extensionRepr is repr(cryptography.x509.Extension).
func extensionRepr(re requestedExtension) string {
	return fmt.Sprintf("<Extension(oid=%s, critical=%s, value=%s)>", oidRepr(re.oid), pyBool(re.critical), extensionValueRepr(re))
}

func extensionValueRepr(re requestedExtension) string {
	unrecognized := func() string {
		return fmt.Sprintf("<UnrecognizedExtension(oid=%s, value=%s)>", oidRepr(re.oid), pythonBytesRepr(re.value))
	}
	if _, known := extensionName(re.oid); !known {
		return unrecognized()
	}
	switch {
	case re.oid.Equal(oidKeyUsage):
		names := []string{"digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
			"key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"}
		parts := make([]string, len(names))
		for i, n := range names {
			v := re.keyUsage[i]
			if i >= bitEncipherOnly && !re.keyUsage[bitKeyAgreement] {
				v = false
			}
			parts[i] = n + "=" + pyBool(v)
		}
		return "<KeyUsage(" + strings.Join(parts, ", ") + ")>"
	case re.oid.Equal(oidBasicConstraints):
		pl := "None"
		if re.bcPathLen >= 0 {
			pl = fmt.Sprint(re.bcPathLen)
		}
		return fmt.Sprintf("<BasicConstraints(ca=%s, path_length=%s)>", pyBool(re.bcCA), pl)
	case re.oid.Equal(oidExtKeyUsage):
		var oids []asn1.ObjectIdentifier
		if _, err := asn1.Unmarshal(re.value, &oids); err == nil {
			parts := make([]string, len(oids))
			for i, o := range oids {
				parts[i] = oidRepr(o)
			}
			return "<ExtendedKeyUsage([" + strings.Join(parts, ", ") + "])>"
		}
	case re.oid.Equal(oidSubjectKeyID):
		var id []byte
		if _, err := asn1.Unmarshal(re.value, &id); err == nil {
			return "<SubjectKeyIdentifier(digest=" + pythonBytesRepr(id) + ")>"
		}
	case re.oid.Equal(oidOCSPNoCheck):
		return "<OCSPNoCheck()>"
	case re.oid.Equal(oidInhibitAnyPolicy):
		var n int
		if _, err := asn1.Unmarshal(re.value, &n); err == nil {
			return fmt.Sprintf("<InhibitAnyPolicy(skip_certs=%d)>", n)
		}
	case re.oid.Equal(oidSubjectAltName), re.oid.Equal(oidIssuerAltName):
		if g, ok := generalNamesRepr(re.value); ok {
			cls := "SubjectAlternativeName"
			if re.oid.Equal(oidIssuerAltName) {
				cls = "IssuerAlternativeName"
			}
			return "<" + cls + "(<GeneralNames([" + g + "])>)>"
		}
	case re.oid.Equal(oidAuthorityInfoAccess):
		if r, ok := accessDescriptionsRepr(re.value); ok {
			return "<AuthorityInformationAccess([" + r + "])>"
		}
	case re.oid.Equal(oidCRLDistributionPoints):
		if r, ok := crlDistributionPointsRepr(re.value); ok {
			return "<CRLDistributionPoints([" + r + "])>"
		}
	case re.oid.Equal(oidCertificatePolicies):
		if r, ok := certificatePoliciesRepr(re.value); ok {
			return "<CertificatePolicies([" + r + "])>"
		}
	case re.oid.Equal(oidNameConstraints):
		if r, ok := nameConstraintsRepr(re.value); ok {
			return r
		}
	case re.oid.Equal(oidAuthorityKeyID):
		var aki struct {
			ID           []byte        `asn1:"optional,tag:0"`
			Issuer       asn1.RawValue `asn1:"optional,tag:1"`
			SerialNumber asn1.RawValue `asn1:"optional,tag:2"`
		}
		if _, err := asn1.Unmarshal(re.value, &aki); err == nil && len(aki.Issuer.FullBytes) == 0 && len(aki.SerialNumber.FullBytes) == 0 {
			id := "None"
			if aki.ID != nil {
				id = pythonBytesRepr(aki.ID)
			}
			return "<AuthorityKeyIdentifier(key_identifier=" + id + ", authority_cert_issuer=None, authority_cert_serial_number=None)>"
		}
	}
	// Deviation: the reprs of the remaining forms (policy qualifiers,
	// relative names, reasons, directory names, other extension types) are
	// not reproduced; the raw value is shown instead.
	return unrecognized()
}

// generalNameRepr renders a DNS, email, URI or IP GeneralName; ok is false
// for any other kind. Inside name constraints an IP entry is a network.
func generalNameRepr(n asn1.RawValue, network bool) (string, bool) {
	if n.Class != asn1.ClassContextSpecific {
		return "", false
	}
	switch n.Tag {
	case 1:
		return "<RFC822Name(value=" + pythonStrRepr(string(n.Bytes)) + ")>", true
	case 2:
		return "<DNSName(value=" + pythonStrRepr(string(n.Bytes)) + ")>", true
	case 6:
		return "<UniformResourceIdentifier(value=" + pythonStrRepr(string(n.Bytes)) + ")>", true
	case 7:
		if network {
			half := len(n.Bytes) / 2
			if len(n.Bytes) != 8 && len(n.Bytes) != 32 {
				return "", false
			}
			ones, bits := net.IPMask(n.Bytes[half:]).Size()
			if bits == 0 {
				return "", false
			}
			ip := net.IP(n.Bytes[:half]).Mask(net.IPMask(n.Bytes[half:]))
			if !ip.Equal(net.IP(n.Bytes[:half])) {
				return "", false
			}
			return fmt.Sprintf("<IPAddress(value=%s/%d)>", ip, ones), true
		}
		if len(n.Bytes) != 4 && len(n.Bytes) != 16 {
			return "", false
		}
		return "<IPAddress(value=" + net.IP(n.Bytes).String() + ")>", true
	}
	return "", false
}

// generalNamesRepr renders a GeneralNames SEQUENCE (or, with implicit, the
// content of an implicitly tagged one) as a comma-separated list.
func generalNamesRepr(der []byte) (string, bool) {
	var names []asn1.RawValue
	if _, err := asn1.Unmarshal(der, &names); err != nil {
		return "", false
	}
	return generalNameList(names, false)
}

func generalNameList(names []asn1.RawValue, network bool) (string, bool) {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p, ok := generalNameRepr(n, network)
		if !ok {
			return "", false
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", "), true
}

// rawElements splits the content of a constructed element into elements.
func rawElements(content []byte) ([]asn1.RawValue, bool) {
	var out []asn1.RawValue
	for len(content) > 0 {
		var rv asn1.RawValue
		rest, err := asn1.Unmarshal(content, &rv)
		if err != nil {
			return nil, false
		}
		out = append(out, rv)
		content = rest
	}
	return out, true
}

var accessMethodNames = map[string]string{
	"1.3.6.1.5.5.7.48.1": "OCSP",
	"1.3.6.1.5.5.7.48.2": "caIssuers",
}

func accessDescriptionsRepr(der []byte) (string, bool) {
	var ads []struct {
		Method   asn1.ObjectIdentifier
		Location asn1.RawValue
	}
	if _, err := asn1.Unmarshal(der, &ads); err != nil {
		return "", false
	}
	parts := make([]string, 0, len(ads))
	for _, ad := range ads {
		loc, ok := generalNameRepr(ad.Location, false)
		name, known := accessMethodNames[ad.Method.String()]
		if !ok || !known {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("<AccessDescription(access_method=<ObjectIdentifier(oid=%s, name=%s)>, access_location=%s)>", ad.Method, name, loc))
	}
	return strings.Join(parts, ", "), true
}

func crlDistributionPointsRepr(der []byte) (string, bool) {
	var dps []asn1.RawValue
	if _, err := asn1.Unmarshal(der, &dps); err != nil {
		return "", false
	}
	parts := make([]string, 0, len(dps))
	for _, dp := range dps {
		// Only a distributionPoint [0] holding a fullName [0].
		inner, ok := rawElements(dp.Bytes)
		if !ok || len(inner) != 1 || inner[0].Tag != 0 || inner[0].Class != asn1.ClassContextSpecific {
			return "", false
		}
		choice, ok := rawElements(inner[0].Bytes)
		if !ok || len(choice) != 1 || choice[0].Tag != 0 || choice[0].Class != asn1.ClassContextSpecific {
			return "", false
		}
		names, ok := rawElements(choice[0].Bytes)
		if !ok {
			return "", false
		}
		list, ok := generalNameList(names, false)
		if !ok {
			return "", false
		}
		parts = append(parts, "<DistributionPoint(full_name=["+list+"], relative_name=None, reasons=None, crl_issuer=None)>")
	}
	return strings.Join(parts, ", "), true
}

func certificatePoliciesRepr(der []byte) (string, bool) {
	var pols []struct {
		ID         asn1.ObjectIdentifier
		Qualifiers asn1.RawValue `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(der, &pols); err != nil {
		return "", false
	}
	parts := make([]string, 0, len(pols))
	for _, p := range pols {
		if len(p.Qualifiers.FullBytes) != 0 {
			return "", false
		}
		parts = append(parts, "<PolicyInformation(policy_identifier="+oidRepr(p.ID)+", policy_qualifiers=None)>")
	}
	return strings.Join(parts, ", "), true
}

func nameConstraintsRepr(der []byte) (string, bool) {
	var top asn1.RawValue
	if _, err := asn1.Unmarshal(der, &top); err != nil {
		return "", false
	}
	fields, ok := rawElements(top.Bytes)
	if !ok {
		return "", false
	}
	subtrees := [2]string{"None", "None"}
	for _, f := range fields {
		if f.Class != asn1.ClassContextSpecific || f.Tag > 1 {
			return "", false
		}
		trees, ok := rawElements(f.Bytes)
		if !ok {
			return "", false
		}
		var bases []asn1.RawValue
		for _, tr := range trees {
			el, ok := rawElements(tr.Bytes)
			if !ok || len(el) != 1 {
				return "", false
			}
			bases = append(bases, el[0])
		}
		list, ok := generalNameList(bases, true)
		if !ok {
			return "", false
		}
		subtrees[f.Tag] = "[" + list + "]"
	}
	return "<NameConstraints(permitted_subtrees=" + subtrees[0] + ", excluded_subtrees=" + subtrees[1] + ")>", true
}

// pythonBytesRepr is Python's repr() of a bytes object.
func pythonBytesRepr(b []byte) string {
	quote := byte('\'')
	if strings.IndexByte(string(b), '\'') >= 0 && strings.IndexByte(string(b), '"') < 0 {
		quote = '"'
	}
	var sb strings.Builder
	sb.WriteString("b")
	sb.WriteByte(quote)
	for _, c := range b {
		switch {
		case c == quote || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte(quote)
	return sb.String()
}

// pythonStrRepr is Python's repr() of an ASCII str (IA5String values);
// other bytes are escaped as \xNN.
func pythonStrRepr(s string) string {
	r := pythonBytesRepr([]byte(s))
	return r[1:]
}
