package fake

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// maxRecoveredIndex bounds the search for node indices when memberships are
// recovered from node_addresses after a restart.
const maxRecoveredIndex = 4096

// serverNamespace is the UUID namespace of the fake Nova server UUIDs.
var serverNamespace = uuid.MustParse("6f3e4b0a-5c1d-4e58-9a57-0b7f7e1d9c42")

// Node is one simulated server of a nodegroup.
type Node struct {
	// Index is the node's position in its nodegroup; removed indices are
	// never reused while the process runs.
	Index int
	// Name is "<stack_id>-<nodegroup name>-<index>".
	Name string
	// ServerID is a fake Nova server UUID.
	ServerID string
	// Address is a fake IPv4 address in 10.0.0.0/8.
	Address string
}

// stackID derives the fake stack_id of a cluster: "kube-" and five
// lowercase base-36 characters, like the CAPI driver's generated names.
func stackID(clusterUUID string) string {
	sum := sha1.Sum([]byte("stack/" + clusterUUID))
	n := binary.BigEndian.Uint64(sum[:8])
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	b.WriteString("kube-")
	for range 5 {
		b.WriteByte(digits[n%36])
		n /= 36
	}
	return b.String()
}

// fakeIP derives a stable address in 10.0.0.0/8 from key; the last octet is
// never 0 or 255.
func fakeIP(key string) string {
	sum := sha1.Sum([]byte("ip/" + key))
	return fmt.Sprintf("10.%d.%d.%d", sum[0], sum[1], 1+int(sum[2])%254)
}

func nodeKey(clusterUUID, ngName string, index int) string {
	return fmt.Sprintf("%s/%s/%d", clusterUUID, ngName, index)
}

// NodeOf returns the simulated node with the given index of a nodegroup.
func NodeOf(cl magnum.Cluster, ng magnum.NodeGroup, index int) Node {
	key := nodeKey(cl.UUID, ng.Name, index)
	return Node{
		Index:    index,
		Name:     fmt.Sprintf("%s-%s-%d", stackID(cl.UUID), ng.Name, index),
		ServerID: uuid.NewSHA1(serverNamespace, []byte(key)).String(),
		Address:  fakeIP(key),
	}
}

// apiAddress is the cluster's fake API endpoint.
func apiAddress(clusterUUID string) string {
	return "https://" + fakeIP(clusterUUID+"/api") + ":6443"
}

// recoverIndices finds the node indices of a nodegroup from its
// node_addresses (after a restart), or 0..node_count-1 when it has none.
func recoverIndices(cl magnum.Cluster, ng magnum.NodeGroup) []int {
	if len(ng.NodeAddresses) == 0 {
		return seq(0, intValue(ng.NodeCount))
	}
	want := make(map[string]bool, len(ng.NodeAddresses))
	for _, a := range ng.NodeAddresses {
		want[a] = true
	}
	var out []int
	for i := 0; i < maxRecoveredIndex && len(out) < len(want); i++ {
		if want[fakeIP(nodeKey(cl.UUID, ng.Name, i))] {
			out = append(out, i)
		}
	}
	return out
}

// resizeIndices removes the nodes matched by toRemove (server UUID, name or
// address), then adds new indices after the highest one ever used (next) or
// drops the highest indices until count nodes remain. It returns the new
// membership and the new next index.
func resizeIndices(cl magnum.Cluster, ng magnum.NodeGroup, current []int, next, count int, toRemove []string) ([]int, int) {
	out := make([]int, 0, len(current))
	for _, i := range current {
		n := NodeOf(cl, ng, i)
		if slices.ContainsFunc(toRemove, func(r string) bool {
			r = strings.TrimSpace(r)
			return r == n.ServerID || r == n.Name || r == n.Address
		}) {
			continue
		}
		out = append(out, i)
	}
	if len(current) > 0 && current[len(current)-1]+1 > next {
		next = current[len(current)-1] + 1
	}
	for len(out) < count {
		out = append(out, next)
		next++
	}
	if count >= 0 && len(out) > count {
		out = out[:count]
	}
	return out, next
}

func addresses(cl magnum.Cluster, ng magnum.NodeGroup, indices []int) []string {
	out := make([]string, len(indices))
	for k, i := range indices {
		out[k] = NodeOf(cl, ng, i).Address
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func intValue(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
