package clients

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// The simulated nodes of the fake driver (guest/drivers/fake): names, addresses
// and Nova server UUIDs derived from the cluster UUID, the nodegroup name and
// the node's index. The derivation is a contract of the fake driver, which
// every process computes the same way; the tests need it to name the server
// of a node they repair or remove.

// serverNamespace is the UUID namespace of the fake Nova server UUIDs.
var serverNamespace = uuid.MustParse("6f3e4b0a-5c1d-4e58-9a57-0b7f7e1d9c42")

// node is one simulated server of a nodegroup.
type node struct {
	Name     string // "<stack_id>-<nodegroup name>-<index>"
	ServerID string // a UUIDv5 of the node key in serverNamespace
	Address  string // an IPv4 address in 10.0.0.0/8
}

// stackID is the fake stack_id of a cluster: "kube-" and five base-36
// characters of the SHA-1 of "stack/<uuid>".
func stackID(clusterUUID string) string {
	sum := sha1.Sum([]byte("stack/" + clusterUUID))
	n := binary.BigEndian.Uint64(sum[:8])
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := []byte("kube-")
	for range 5 {
		b = append(b, digits[n%36])
		n /= 36
	}
	return string(b)
}

// fakeIP is a stable address in 10.0.0.0/8 derived from key; the last octet
// is never 0 or 255.
func fakeIP(key string) string {
	sum := sha1.Sum([]byte("ip/" + key))
	return fmt.Sprintf("10.%d.%d.%d", sum[0], sum[1], 1+int(sum[2])%254)
}

// nodeOf returns the simulated node with the given index of the nodegroup
// named ngName of the cluster clusterUUID.
func nodeOf(clusterUUID, ngName string, index int) node {
	key := fmt.Sprintf("%s/%s/%d", clusterUUID, ngName, index)
	return node{
		Name:     fmt.Sprintf("%s-%s-%d", stackID(clusterUUID), ngName, index),
		ServerID: uuid.NewSHA1(serverNamespace, []byte(key)).String(),
		Address:  fakeIP(key),
	}
}

// TestNodeOf pins the derivation to values computed independently of it
// (Python's hashlib and uuid.uuid5 over the same keys).
func TestNodeOf(t *testing.T) {
	got := nodeOf("8f1c7a52-2b1e-4d8a-9c3f-5e6d7a8b9c01", "default-worker", 1)
	want := node{
		Name:     "kube-ka43z-default-worker-1",
		ServerID: "349c11b6-f2dc-57b5-8b09-147cb756ebfa",
		Address:  "10.31.14.1",
	}
	if got != want {
		t.Errorf("nodeOf = %+v, want %+v", got, want)
	}
}
