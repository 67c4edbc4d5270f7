package conductor

import (
	"strconv"

	"context"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"sync"

	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// A cluster create validates up to seven OpenStack resources (the flavors'
// root disks, then the image, the flavors again, the networks, the subnet
// and the keypair), one after the other in Magnum. They are independent
// reads, so lookups runs them all at once and the validation then reads
// the answers in Magnum's order: the same error wins, and a resource named
// twice is asked for once.

// lookupKey names one OpenStack read.
type lookupKey struct {
	kind  lookupKind
	ident string
}

type lookupKind uint8

const (
	lookupImage lookupKind = iota
	lookupFlavor
	lookupKeypair
	lookupExternalNetwork
	lookupFixedNetwork
	lookupFixedSubnet
)

// lookupCall is one read, started once; done closes when v and err are
// set.
type lookupCall struct {
	done chan struct{}
	v    any
	err  error
}

// lookups is an OpenStack that answers each distinct read once, within one
// request: the first caller (or prefetch) starts it, later callers wait for
// its answer.
type lookups struct {
	os OpenStack
	mu sync.Mutex
	m  map[lookupKey]*lookupCall
}

var _ OpenStack = (*lookups)(nil)

func newLookups(os OpenStack) *lookups {
	return &lookups{os: os, m: map[lookupKey]*lookupCall{}}
}

// start returns the call for k, starting it in a goroutine if it is new.
func (l *lookups) start(ctx context.Context, k lookupKey) *lookupCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.m[k]; ok {
		return c
	}
	c := &lookupCall{done: make(chan struct{})}
	l.m[k] = c
	go func() {
		defer close(c.done)
		c.v, c.err = l.read(ctx, k)
	}()
	return c
}

// prefetch starts every read of keys; it does not wait.
func (l *lookups) prefetch(ctx context.Context, keys []lookupKey) {
	for _, k := range keys {
		l.start(ctx, k)
	}
}

// get returns the answer to k, starting the read if needed.
func (l *lookups) get(ctx context.Context, k lookupKey) (any, error) {
	c := l.start(ctx, k)
	select {
	case <-c.done:
		return c.v, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *lookups) read(ctx context.Context, k lookupKey) (any, error) {
	switch k.kind {
	case lookupImage:
		return l.os.Image(ctx, k.ident)
	case lookupFlavor:
		return l.os.Flavor(ctx, k.ident)
	case lookupKeypair:
		return l.os.Keypair(ctx, k.ident)
	case lookupExternalNetwork:
		return l.os.ExternalNetwork(ctx, k.ident)
	case lookupFixedNetwork:
		return l.os.FixedNetwork(ctx, k.ident)
	default:
		return l.os.FixedSubnet(ctx, k.ident)
	}
}

// typed returns the answer to k as a T (the zero T with the error).
func typed[T any](l *lookups, ctx context.Context, k lookupKey) (T, error) {
	v, err := l.get(ctx, k)
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

func (l *lookups) Image(ctx context.Context, ident string) (openstack.Image, error) {
	return typed[openstack.Image](l, ctx, lookupKey{lookupImage, ident})
}

func (l *lookups) Flavor(ctx context.Context, ident string) (openstack.Flavor, error) {
	return typed[openstack.Flavor](l, ctx, lookupKey{lookupFlavor, ident})
}

func (l *lookups) Keypair(ctx context.Context, name string) (openstack.Keypair, error) {
	return typed[openstack.Keypair](l, ctx, lookupKey{lookupKeypair, name})
}

func (l *lookups) ExternalNetwork(ctx context.Context, ident string) (openstack.Network, error) {
	return typed[openstack.Network](l, ctx, lookupKey{lookupExternalNetwork, ident})
}

func (l *lookups) FixedNetwork(ctx context.Context, ident string) (openstack.Network, error) {
	return typed[openstack.Network](l, ctx, lookupKey{lookupFixedNetwork, ident})
}

func (l *lookups) FixedSubnet(ctx context.Context, ident string) (openstack.Subnet, error) {
	return typed[openstack.Subnet](l, ctx, lookupKey{lookupFixedSubnet, ident})
}

// clFlavorName is the name a flavor check looks up: a null flavor is
// looked up as "None", as in Magnum.
func clFlavorName(f *string) string {
	if f == nil {
		return "None"
	}
	return *f
}

// pick is the cluster's value when set, else the template's.
func pick(own, tmpl *string) *string {
	if own != nil && *own != "" {
		return own
	}
	return tmpl
}

// clCreateLookups lists the reads of a cluster create's validation
// (clCheckFlavors, then clValidateResources), to be started together.
func clCreateLookups(t *magnum.ClusterTemplate, cl *magnum.Cluster) []lookupKey {
	var keys []lookupKey
	add := func(kind lookupKind, ident *string) {
		if ident != nil {
			keys = append(keys, lookupKey{kind, *ident})
		}
	}
	if boot, err := strconv.Atoi(cl.Labels["boot_volume_size"]); err != nil || boot <= 0 {
		for _, f := range []*string{cl.FlavorID, cl.MasterFlavorID} {
			name := clFlavorName(f)
			add(lookupFlavor, &name)
		}
	}
	add(lookupImage, t.ImageID)
	add(lookupFlavor, pick(cl.FlavorID, t.FlavorID))
	add(lookupFlavor, pick(cl.MasterFlavorID, t.MasterFlavorID))
	add(lookupExternalNetwork, t.ExternalNetworkID)
	add(lookupFixedNetwork, pick(cl.FixedNetwork, t.FixedNetwork))
	add(lookupFixedSubnet, pick(cl.FixedSubnet, t.FixedSubnet))
	if cl.Keypair != nil && *cl.Keypair != "" {
		add(lookupKeypair, cl.Keypair)
	}
	return keys
}
