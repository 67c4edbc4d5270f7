package app

import (
	"math"
	"testing"
)

// TestPoolLimits: [database]/max_pool_size and max_overflow mean what they
// mean to SQLAlchemy's QueuePool.
func TestPoolLimits(t *testing.T) {
	for _, tc := range []struct {
		pool, overflow, open, idle int
	}{
		{5, 50, 55, 5},  // Magnum's defaults
		{10, 0, 10, 10}, // no overflow
		{5, -1, math.MaxInt32, 5},
		{0, 50, 0, 0}, // unset: db.Options' defaults
	} {
		open, idle := poolLimits(tc.pool, tc.overflow)
		if open != tc.open || idle != tc.idle {
			t.Errorf("poolLimits(%d, %d) = %d open, %d idle; want %d, %d", tc.pool, tc.overflow, open, idle, tc.open, tc.idle)
		}
	}
}
