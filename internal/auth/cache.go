package auth

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// tokenKey is the cache key of a token: its SHA-256, so that the cache never
// holds a usable token.
type tokenKey [sha256.Size]byte

func keyOf(token string) tokenKey { return sha256.Sum256([]byte(token)) }

// cacheEntry is one validation result: either an identity (rc, without the
// per-request RequestID and AuthToken) or a rejection (err).
type cacheEntry struct {
	key     tokenKey
	rc      *magnum.RequestContext
	err     error
	until   time.Time // end of the cache entry
	expires time.Time // the token's expires_at (zero for rejections)
}

// tokenCache is a bounded LRU of validation results, safe for concurrent use.
type tokenCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // front = most recently used; values are *cacheEntry
	items map[tokenKey]*list.Element
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, ll: list.New(), items: make(map[tokenKey]*list.Element)}
}

// get returns the entry for key if it is still valid at now; an entry that
// ended is removed.
func (c *tokenCache) get(key tokenKey, now time.Time) (*cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.until) {
		c.ll.Remove(el)
		delete(c.items, key)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e, true
}

// put stores e, evicting the least recently used entries beyond max.
func (c *tokenCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[e.key]; ok {
		el.Value = e
		c.ll.MoveToFront(el)
		return
	}
	c.items[e.key] = c.ll.PushFront(e)
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// len returns the number of entries (tests).
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// flight deduplicates concurrent validations of the same token.
type flight struct {
	mu    sync.Mutex
	calls map[tokenKey]*call
}

type call struct {
	done chan struct{}
	rc   *magnum.RequestContext
	exp  time.Time
	err  error
}

// do runs fn once for all concurrent callers with the same key.
func (f *flight) do(key tokenKey, fn func() (*magnum.RequestContext, time.Time, error)) (*magnum.RequestContext, time.Time, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[tokenKey]*call)
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.rc, c.exp, c.err
	}
	c := &call{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()

	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	// Waiters see an error, not an empty identity, should fn panic.
	c.err = unavailable("validation aborted", nil)
	c.rc, c.exp, c.err = fn()
	return c.rc, c.exp, c.err
}
