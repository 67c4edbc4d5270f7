package capi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/certs"
)

// CloudConfig is the part of clouds.yaml that comes from the deployment
// ([capi_client] and the Keystone catalog), driver-capi.md § 6.3.
type CloudConfig struct {
	// AuthURL is the Keystone endpoint of Interface.
	AuthURL string
	// RegionName is the region of the cluster's resources.
	RegionName string
	// Interface is the endpoint interface: "public" by default
	// ([capi_client]/endpoint_type without "URL").
	Interface string
	// Insecure is [capi_client]/insecure (clouds.yaml verify = !Insecure).
	Insecure bool
	// CACert is the content of [capi_client]/ca_file ("" for none).
	CACert string
}

// AppCredential is an OpenStack application credential.
type AppCredential struct {
	// ID and Secret authenticate; Secret is never logged.
	ID     string
	Secret string
	// Name is "magnum-<uuid>-<suffix>" (or the legacy "<uuid>").
	Name string
	// UserID owns the credential.
	UserID string
}

// String implements fmt.Stringer without the secret.
func (a AppCredential) String() string {
	return fmt.Sprintf("AppCredential{ID:%q Name:%q UserID:%q}", a.ID, a.Name, a.UserID)
}

// GoString implements fmt.GoStringer without the secret.
func (a AppCredential) GoString() string { return a.String() }

// cloudsYAML is the clouds.yaml document.
type cloudsYAML struct {
	Clouds map[string]cloudEntry `json:"clouds"`
}

type cloudEntry struct {
	AuthType           string    `json:"auth_type"`
	Auth               cloudAuth `json:"auth"`
	RegionName         string    `json:"region_name,omitempty"`
	Interface          string    `json:"interface"`
	IdentityAPIVersion int       `json:"identity_api_version"`
	Verify             bool      `json:"verify"`
}

type cloudAuth struct {
	AuthURL                     string `json:"auth_url"`
	ApplicationCredentialID     string `json:"application_credential_id"`
	ApplicationCredentialSecret string `json:"application_credential_secret"`
}

// CloudConfigSecret is the identity Secret "<stack_id>-cloud-config" that
// CAPO reads through identityRef (cloud "default", keys clouds.yaml and
// cacert).
func CloudConfigSecret(namespace, stackID, clusterUUID string, cc CloudConfig, cred AppCredential) (*corev1.Secret, error) {
	iface := cc.Interface
	if iface == "" {
		iface = "public"
	}
	doc := cloudsYAML{Clouds: map[string]cloudEntry{"default": {
		AuthType: "v3applicationcredential",
		Auth: cloudAuth{
			AuthURL: cc.AuthURL, ApplicationCredentialID: cred.ID, ApplicationCredentialSecret: cred.Secret,
		},
		RegionName:         cc.RegionName,
		Interface:          iface,
		IdentityAPIVersion: 3,
		Verify:             !cc.Insecure,
	}}}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("render clouds.yaml: %w", err)
	}
	annotations := map[string]string{}
	if cred.UserID != "" {
		annotations[annotationAppCredUser] = cred.UserID
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: stackID + SuffixCloudConfig, Namespace: namespace,
			Labels:      map[string]string{LabelClusterUUID: clusterUUID},
			Annotations: annotations,
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"clouds.yaml": raw, "cacert": []byte(cc.CACert)},
	}, nil
}

// appCredentialFromSecret reads the application credential back from a
// cloud-config Secret (ok false when the Secret holds none).
func appCredentialFromSecret(s *corev1.Secret) (AppCredential, bool) {
	var doc cloudsYAML
	if err := yaml.Unmarshal(s.Data["clouds.yaml"], &doc); err != nil {
		return AppCredential{}, false
	}
	c, ok := doc.Clouds["default"]
	if !ok || c.Auth.ApplicationCredentialID == "" {
		return AppCredential{}, false
	}
	return AppCredential{
		ID: c.Auth.ApplicationCredentialID, Secret: c.Auth.ApplicationCredentialSecret,
		UserID: s.Annotations[annotationAppCredUser],
	}, true
}

// caSecretSpecs maps each CAPI cluster certificate Secret suffix to the CA
// it holds (§ 6.1). "-sa" holds Magnum's admin client certificate.
var caSecretSpecs = []struct{ suffix, key string }{
	{SuffixCA, CAKeyKubernetes},
	{SuffixEtcd, CAKeyEtcd},
	{SuffixFrontProxy, CAKeyFrontProxy},
	{SuffixSA, CAKeyAdmin},
}

// CASecrets returns the four CAPI cluster certificate Secrets: type
// cluster.x-k8s.io/secret, label cluster-name, tls.crt the certificate and
// tls.key the decrypted PKCS#8 key. CAPI uses Secrets with these names
// instead of generating CAs, so Magnum's CAs sign the cluster.
func CASecrets(namespace, stackID string, cas map[string]certs.KeyPair) ([]*corev1.Secret, error) {
	out := make([]*corev1.Secret, 0, len(caSecretSpecs))
	for _, s := range caSecretSpecs {
		kp, ok := cas[s.key]
		if !ok {
			return nil, fmt.Errorf("cluster certificate %q is missing", s.key)
		}
		key, err := kp.DecryptedKeyPEM()
		if err != nil {
			return nil, fmt.Errorf("decrypt the %s key: %w", s.key, err)
		}
		out = append(out, &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name: stackID + s.suffix, Namespace: namespace,
				Labels: map[string]string{labelClusterName: stackID},
			},
			Type: secretTypeCluster,
			Data: map[string][]byte{"tls.crt": withNewline(kp.CertPEM), "tls.key": key},
		})
	}
	return out, nil
}

// withNewline returns a copy of pem ending in a newline (Magnum stores
// certificates without one).
func withNewline(pem []byte) []byte {
	out := make([]byte, len(pem), len(pem)+1)
	copy(out, pem)
	if len(out) == 0 || out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}
