package magnum

import "testing"

// The row types are plain data; this guards the conventions the db
// package relies on: nil JSON fields mean NULL, pointers mean nullable.
func TestRowTypesZeroValues(t *testing.T) {
	var c Cluster
	if c.Labels != nil || c.HealthStatusReason != nil || c.UpdatedAt != nil || c.Status != nil {
		t.Fatalf("zero Cluster has non-nil nullable fields: %+v", c)
	}
	var ng NodeGroup
	if ng.NodeAddresses != nil || ng.NodeTaints != nil || ng.NodeLabels != nil || ng.IsDefault != nil {
		t.Fatalf("zero NodeGroup has non-nil nullable fields: %+v", ng)
	}
	taint := NodeTaint{"key": "k", "value": "v", "effect": "NoSchedule"}
	if taint["effect"] != "NoSchedule" {
		t.Fatalf("NodeTaint lost a key: %v", taint)
	}
}
