package fake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// clock is a manual clock safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func ptr[T any](v T) *T { return &v }

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// world plays the conductor: it holds the rows and saves what the driver
// returns.
type world struct {
	t   *testing.T
	drv *fake.Driver
	st  driver.ClusterState
}

const (
	clusterUUID = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52"
	masterUUID  = "a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01"
	workerUUID  = "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012"
)

func newWorld(t *testing.T, drv *fake.Driver, labels map[string]string) *world {
	return newWorldUUID(t, drv, clusterUUID, masterUUID, workerUUID, labels)
}

func newWorldUUID(t *testing.T, drv *fake.Driver, cUUID, mUUID, wUUID string, labels map[string]string) *world {
	tmpl := magnum.ClusterTemplate{
		UUID: "tmpl-1", Name: "k8s", ImageID: ptr("img-1"), COE: ptr("kubernetes"),
		ClusterDistro: ptr("ubuntu"), ServerType: ptr("vm"), Driver: ptr("fake"),
		Labels: map[string]string{"kube_tag": "v1.30.4"},
	}
	cl := magnum.Cluster{
		UUID: cUUID, Name: "c1", ProjectID: "p1", ClusterTemplateID: tmpl.UUID,
		Labels: labels, Status: ptr(magnum.Status("CREATE_IN_PROGRESS")),
	}
	ng := func(uuid, name, role string, count int) magnum.NodeGroup {
		return magnum.NodeGroup{
			UUID: uuid, Name: name, ClusterID: cUUID, ProjectID: "p1", Role: ptr(role),
			IsDefault: ptr(true), NodeCount: ptr(count), MinNodeCount: ptr(0), ImageID: ptr("img-1"),
			Labels: labels, Status: ptr(magnum.Status("CREATE_IN_PROGRESS")),
		}
	}
	return &world{t: t, drv: drv, st: driver.ClusterState{
		Cluster: cl, Template: tmpl,
		NodeGroups: []magnum.NodeGroup{ng(mUUID, "default-master", "master", 1), ng(wUUID, "default-worker", "worker", 2)},
	}}
}

func (w *world) apply(upd driver.Update) {
	if upd.Cluster != nil {
		w.st.Cluster = *upd.Cluster
	}
	for _, ng := range upd.NodeGroups {
		i := slices.IndexFunc(w.st.NodeGroups, func(x magnum.NodeGroup) bool { return x.UUID == ng.UUID })
		if i < 0 {
			w.st.NodeGroups = append(w.st.NodeGroups, ng)
		} else {
			w.st.NodeGroups[i] = ng
		}
	}
	w.st.NodeGroups = slices.DeleteFunc(w.st.NodeGroups, func(x magnum.NodeGroup) bool {
		return slices.Contains(upd.DeletedNodeGroups, x.UUID)
	})
}

func (w *world) must(upd driver.Update, err error) driver.Update {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("driver call: %v", err)
	}
	w.apply(upd)
	return upd
}

func (w *world) poll() driver.Update {
	w.t.Helper()
	return w.must(w.drv.PollStatus(w.t.Context(), driver.AdminCredentials(), w.st))
}

func (w *world) ng(name string) magnum.NodeGroup {
	w.t.Helper()
	for _, ng := range w.st.NodeGroups {
		if ng.Name == name {
			return ng
		}
	}
	w.t.Fatalf("no nodegroup %s", name)
	return magnum.NodeGroup{}
}

func (w *world) create() {
	w.t.Helper()
	w.must(w.drv.CreateCluster(w.t.Context(), user, w.st, time.Hour))
	w.poll()
	w.wantStatus("CREATE_COMPLETE", "")
}

func (w *world) wantStatus(status, reason string) {
	w.t.Helper()
	if got := string(deref(w.st.Cluster.Status)); got != status {
		w.t.Errorf("cluster status = %s, want %s", got, status)
	}
	wantReason := "<nil>"
	if reason != "" {
		wantReason = reason
	}
	if got := str(w.st.Cluster.StatusReason); got != wantReason {
		w.t.Errorf("cluster status_reason = %s, want %s", got, wantReason)
	}
}

func (w *world) wantNodeGroup(name, status string, addrs []string) {
	w.t.Helper()
	ng := w.ng(name)
	if got := string(deref(ng.Status)); got != status {
		w.t.Errorf("nodegroup %s status = %s, want %s", name, got, status)
	}
	if addrs != nil {
		if diff := cmp.Diff(addrs, ng.NodeAddresses); diff != "" {
			w.t.Errorf("nodegroup %s node_addresses (-want +got):\n%s", name, diff)
		}
	}
}

// addrs returns the fake addresses of the given node indices.
func (w *world) addrs(ngName string, idx ...int) []string {
	ng := w.ng(ngName)
	out := []string{}
	for _, i := range idx {
		out = append(out, fake.NodeOf(w.st.Cluster, ng, i).Address)
	}
	return out
}

var user = driver.Credentials{AuthToken: "tok", UserID: "u1", ProjectID: "p1"}

func wantMagnumErr(t *testing.T, err error, status int, msg string) {
	t.Helper()
	var me *magnum.Error
	if !errors.As(err, &me) || me.Status != status || me.Message != msg {
		t.Fatalf("error = %v, want %d %q", err, status, msg)
	}
}

func TestRegistered(t *testing.T) {
	if _, err := driver.Installed(driver.Selection{}).ForTarget("vm", "ubuntu", "kubernetes"); err == nil {
		t.Error("the fake driver is selected by tuple without being enabled as a beta driver")
	}
	reg := driver.Installed(driver.Selection{EnabledBeta: []string{fake.Name}})
	if !slices.Contains(reg.Names(), fake.Name) {
		t.Fatalf("fake is not registered: %v", reg.Names())
	}
	for _, os := range []string{"ubuntu", "fedora-coreos", "flatcar", "debian", "rockylinux"} {
		d, err := reg.ForTarget("vm", os, "kubernetes")
		if err != nil || d.Name() != fake.Name {
			t.Errorf("ForTarget(vm, %s, kubernetes) = %v, %v", os, d, err)
		}
	}
	if _, err := reg.ForTarget("bm", "ubuntu", "kubernetes"); err == nil {
		t.Error("bm is provided")
	}
}

func TestCreateCluster(t *testing.T) {
	clk := newClock()
	drv := fake.New(fake.Options{Clock: clk.Now, Delay: 5 * time.Minute})
	w := newWorld(t, drv, map[string]string{"kube_tag": "v1.30.4"})

	upd := w.must(drv.CreateCluster(t.Context(), user, w.st, time.Hour))
	stack := str(w.st.Cluster.StackID)
	if !regexp.MustCompile(`^kube-[a-z0-9]{5}$`).MatchString(stack) {
		t.Errorf("stack_id = %q", stack)
	}
	if len(upd.NodeGroups) != 2 {
		t.Fatalf("create returned %d nodegroups, want 2", len(upd.NodeGroups))
	}
	for _, ng := range w.st.NodeGroups {
		if str(ng.StackID) != stack || string(deref(ng.Status)) != "CREATE_IN_PROGRESS" {
			t.Errorf("nodegroup %s stack_id=%s status=%s", ng.Name, str(ng.StackID), string(deref(ng.Status)))
		}
	}
	w.wantStatus("CREATE_IN_PROGRESS", "")

	t.Run("nothing changes before the delay", func(t *testing.T) {
		clk.Advance(5*time.Minute - time.Second)
		if upd := w.poll(); upd.Changed() {
			t.Fatalf("poll before the delay changed %+v", upd)
		}
	})
	clk.Advance(time.Second)
	w.poll()
	w.wantStatus("CREATE_COMPLETE", "")
	w.wantNodeGroup("default-master", "CREATE_COMPLETE", w.addrs("default-master", 0))
	w.wantNodeGroup("default-worker", "CREATE_COMPLETE", w.addrs("default-worker", 0, 1))
	cl := w.st.Cluster
	if !regexp.MustCompile(`^https://10\.\d+\.\d+\.\d+:6443$`).MatchString(str(cl.APIAddress)) {
		t.Errorf("api_address = %s", str(cl.APIAddress))
	}
	if str(cl.COEVersion) != "v1.30.4" || str(w.ng("default-worker").Version) != "v1.30.4" {
		t.Errorf("coe_version = %s, nodegroup version = %s", str(cl.COEVersion), str(w.ng("default-worker").Version))
	}
	if str(cl.HealthStatus) != "HEALTHY" {
		t.Errorf("health_status = %s", str(cl.HealthStatus))
	}
	wantReason := map[string]string{
		stack + "-default-master-0.Ready": "True",
		stack + "-default-worker-0.Ready": "True",
		stack + "-default-worker-1.Ready": "True",
		"api":                             "ok",
	}
	if diff := cmp.Diff(wantReason, cl.HealthStatusReason); diff != "" {
		t.Errorf("health_status_reason (-want +got):\n%s", diff)
	}
	all := append(w.addrs("default-master", 0), w.addrs("default-worker", 0, 1)...)
	if slices.Sort(all); len(slices.Compact(all)) != 3 {
		t.Errorf("node addresses are not distinct: %v", all)
	}

	t.Run("a completed cluster does not change", func(t *testing.T) {
		clk.Advance(time.Hour)
		if upd := w.poll(); upd.Changed() {
			t.Fatalf("second poll changed %+v", upd)
		}
	})
	t.Run("same cluster, same addresses", func(t *testing.T) {
		w2 := newWorld(t, fake.New(fake.Options{}), nil)
		w2.create()
		if diff := cmp.Diff(w.st.NodeGroups[1].NodeAddresses, w2.st.NodeGroups[1].NodeAddresses); diff != "" {
			t.Errorf("addresses differ between runs (-first +second):\n%s", diff)
		}
	})
}

func TestCOEVersion(t *testing.T) {
	t.Run("template kube_tag when the cluster has none", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), nil)
		w.create()
		if got := str(w.st.Cluster.COEVersion); got != "v1.30.4" {
			t.Errorf("coe_version = %s", got)
		}
	})
	t.Run("default without any kube_tag", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), nil)
		w.st.Template.Labels = nil
		w.create()
		if got := str(w.st.Cluster.COEVersion); got != "v1.31.1" {
			t.Errorf("coe_version = %s", got)
		}
	})
}

func TestUpdateCluster(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), nil)
	w.create()
	before := w.ng("default-worker").NodeAddresses
	w.st.NodeGroups[1].NodeCount = ptr(3) // saved by the conductor first
	w.must(w.drv.UpdateCluster(t.Context(), user, w.st))
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	w.wantNodeGroup("default-worker", "UPDATE_IN_PROGRESS", before)
	w.poll()
	w.wantStatus("UPDATE_COMPLETE", "")
	w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 0, 1, 2))
	w.wantNodeGroup("default-master", "CREATE_COMPLETE", nil)
	if len(w.st.Cluster.HealthStatusReason) != 5 {
		t.Errorf("health_status_reason = %v, want 4 nodes and api", w.st.Cluster.HealthStatusReason)
	}
}

func TestResizeCluster(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), nil)
	w.create()
	resize := func(ng string, count int, remove ...string) {
		t.Helper()
		w.must(w.drv.ResizeCluster(t.Context(), user, w.st, driver.Resize{NodeGroupUUID: w.ng(ng).UUID, NodeCount: count, NodesToRemove: remove}))
		w.wantStatus("UPDATE_IN_PROGRESS", "")
		w.wantNodeGroup(ng, "UPDATE_IN_PROGRESS", nil)
		if got := *w.ng(ng).NodeCount; got != count {
			t.Errorf("node_count = %d, want %d", got, count)
		}
		w.poll()
		w.wantStatus("UPDATE_COMPLETE", "")
	}
	worker := func(i int) fake.Node { return fake.NodeOf(w.st.Cluster, w.ng("default-worker"), i) }

	t.Run("grow", func(t *testing.T) {
		resize("default-worker", 4)
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 0, 1, 2, 3))
	})
	t.Run("shrink removing a server by UUID", func(t *testing.T) {
		resize("default-worker", 3, worker(1).ServerID)
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 0, 2, 3))
	})
	t.Run("shrink without nodes_to_remove drops the newest node", func(t *testing.T) {
		resize("default-worker", 2)
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 0, 2))
	})
	t.Run("same count with nodes_to_remove replaces the nodes", func(t *testing.T) {
		resize("default-worker", 2, worker(0).Name, worker(2).Address)
		// Index 3 was used before: new nodes never reuse an index.
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 4, 5))
	})
	t.Run("unknown nodes_to_remove are ignored", func(t *testing.T) {
		resize("default-worker", 1, "no-such-server")
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 4))
	})
	t.Run("to zero", func(t *testing.T) {
		resize("default-worker", 0)
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", []string{})
	})
	t.Run("master to three, nodes_to_remove ignored", func(t *testing.T) {
		master0 := fake.NodeOf(w.st.Cluster, w.ng("default-master"), 0).ServerID
		resize("default-master", 3, master0)
		w.wantNodeGroup("default-master", "UPDATE_COMPLETE", w.addrs("default-master", 0, 1, 2))
	})
	t.Run("unknown nodegroup", func(t *testing.T) {
		_, err := w.drv.ResizeCluster(t.Context(), user, w.st, driver.Resize{NodeGroupUUID: "nope", NodeCount: 1})
		if err == nil {
			t.Fatal("resize of an unknown nodegroup succeeded")
		}
	})
}

func TestValidateMaster(t *testing.T) {
	drv := fake.New(fake.Options{})
	for _, n := range []int{1, 3, 5} {
		if err := drv.ValidateMasterResize(n); err != nil {
			t.Errorf("ValidateMasterResize(%d) = %v", n, err)
		}
		if err := drv.ValidateMasterSize(n); err != nil {
			t.Errorf("ValidateMasterSize(%d) = %v", n, err)
		}
	}
	wantMagnumErr(t, drv.ValidateMasterResize(2), 400, "master nodegroup size of 2 is invalid, size cannot be an even number.")
	wantMagnumErr(t, drv.ValidateMasterSize(0), 400, "master nodegroup size of 0 is invalid, size cannot be an even number.")
}

func TestUpgradeCluster(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), map[string]string{"kube_tag": "v1.30.4", "other": "x"})
	w.create()
	labelsBefore := w.st.Cluster.Labels
	tmpl := magnum.ClusterTemplate{UUID: "tmpl-2", Name: "k8s-1.31", ImageID: ptr("img-2"), Labels: map[string]string{"kube_tag": "v1.31.2"}}
	w.must(w.drv.UpgradeCluster(t.Context(), user, w.st, driver.Upgrade{Template: tmpl, MaxBatchSize: 1}))
	w.st.Template = tmpl // the conductor looks the template up by the new id
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	if w.st.Cluster.ClusterTemplateID != "tmpl-2" || w.st.Cluster.Labels["kube_tag"] != "v1.31.2" || w.st.Cluster.Labels["other"] != "x" {
		t.Errorf("cluster after upgrade: template %s labels %v", w.st.Cluster.ClusterTemplateID, w.st.Cluster.Labels)
	}
	if labelsBefore["kube_tag"] != "v1.30.4" {
		t.Errorf("the input row's labels were modified: %v", labelsBefore)
	}
	for _, ng := range w.st.NodeGroups {
		if str(ng.ImageID) != "img-2" || ng.Labels["kube_tag"] != "v1.31.2" || string(deref(ng.Status)) != "UPDATE_IN_PROGRESS" {
			t.Errorf("nodegroup %s: image %s labels %v status %s", ng.Name, str(ng.ImageID), ng.Labels, string(deref(ng.Status)))
		}
	}
	w.poll()
	w.wantStatus("UPDATE_COMPLETE", "")
	if got := str(w.st.Cluster.COEVersion); got != "v1.31.2" {
		t.Errorf("coe_version = %s", got)
	}
	for _, ng := range w.st.NodeGroups {
		if str(ng.Version) != "v1.31.2" || string(deref(ng.Status)) != "UPDATE_COMPLETE" {
			t.Errorf("nodegroup %s: version %s status %s", ng.Name, str(ng.Version), string(deref(ng.Status)))
		}
	}

	t.Run("one nodegroup", func(t *testing.T) {
		tmpl3 := magnum.ClusterTemplate{UUID: "tmpl-3", ImageID: ptr("img-3"), Labels: map[string]string{"kube_tag": "v1.32.0"}}
		upd := w.must(w.drv.UpgradeCluster(t.Context(), user, w.st, driver.Upgrade{Template: tmpl3, NodeGroupUUID: workerUUID}))
		if len(upd.NodeGroups) != 1 || upd.NodeGroups[0].UUID != workerUUID {
			t.Fatalf("upgrade of one nodegroup returned %d nodegroups", len(upd.NodeGroups))
		}
		if str(w.ng("default-master").ImageID) != "img-2" {
			t.Errorf("master image changed")
		}
		w.poll()
		w.wantStatus("UPDATE_COMPLETE", "")
	})
}

func TestNodeGroupOperations(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), nil)
	w.create()
	stack := str(w.st.Cluster.StackID)
	gpu := magnum.NodeGroup{
		UUID: "c3e2f0e5-6b0a-4f2e-9f2d-8c5a8c2db123", Name: "gpu", ClusterID: clusterUUID, ProjectID: "p1",
		Role: ptr("worker"), IsDefault: ptr(false), NodeCount: ptr(2), MinNodeCount: ptr(1),
		Status: ptr(magnum.Status("CREATE_IN_PROGRESS")),
	}
	w.must(w.drv.CreateNodeGroup(t.Context(), user, w.st, gpu))
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	w.wantNodeGroup("gpu", "CREATE_IN_PROGRESS", nil)
	if str(w.ng("gpu").StackID) != stack {
		t.Errorf("nodegroup stack_id = %s", str(w.ng("gpu").StackID))
	}
	w.poll()
	w.wantStatus("UPDATE_COMPLETE", "")
	w.wantNodeGroup("gpu", "CREATE_COMPLETE", w.addrs("gpu", 0, 1))
	if w.st.Cluster.HealthStatusReason[stack+"-gpu-1.Ready"] != "True" {
		t.Errorf("health reason lacks the gpu nodes: %v", w.st.Cluster.HealthStatusReason)
	}

	ng := w.ng("gpu")
	ng.MaxNodeCount = ptr(5)
	w.must(w.drv.UpdateNodeGroup(t.Context(), user, w.st, ng))
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	w.wantNodeGroup("gpu", "UPDATE_IN_PROGRESS", nil)
	w.poll()
	w.wantStatus("UPDATE_COMPLETE", "")
	w.wantNodeGroup("gpu", "UPDATE_COMPLETE", w.addrs("gpu", 0, 1))
	if *w.ng("gpu").MaxNodeCount != 5 {
		t.Errorf("max_node_count not kept")
	}

	w.must(w.drv.DeleteNodeGroup(t.Context(), user, w.st, w.ng("gpu")))
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	w.wantNodeGroup("gpu", "DELETE_IN_PROGRESS", nil)
	upd := w.poll()
	if diff := cmp.Diff([]string{gpu.UUID}, upd.DeletedNodeGroups); diff != "" {
		t.Errorf("DeletedNodeGroups (-want +got):\n%s", diff)
	}
	w.wantStatus("UPDATE_COMPLETE", "")
	if len(w.st.NodeGroups) != 2 {
		t.Errorf("%d nodegroups left, want 2", len(w.st.NodeGroups))
	}
	if _, ok := w.st.Cluster.HealthStatusReason[stack+"-gpu-0.Ready"]; ok {
		t.Errorf("health reason still lists the deleted nodegroup: %v", w.st.Cluster.HealthStatusReason)
	}
}

func TestDeleteCluster(t *testing.T) {
	clk := newClock()
	w := newWorld(t, fake.New(fake.Options{Clock: clk.Now, Delay: time.Minute}), nil)
	w.must(w.drv.CreateCluster(t.Context(), user, w.st, 0))
	clk.Advance(time.Minute)
	w.poll()
	w.must(w.drv.DeleteCluster(t.Context(), user, w.st))
	w.wantStatus("DELETE_IN_PROGRESS", "")
	if w.poll().Changed() {
		t.Fatal("delete completed before the delay")
	}
	clk.Advance(time.Minute)
	w.poll()
	w.wantStatus("DELETE_COMPLETE", "")
	if w.poll().Changed() {
		t.Error("poll of a deleted cluster changed something")
	}
}

func TestDeleteWhileCreating(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), nil)
	w.must(w.drv.CreateCluster(t.Context(), user, w.st, 0))
	w.must(w.drv.DeleteCluster(t.Context(), user, w.st))
	w.poll()
	w.wantStatus("DELETE_COMPLETE", "")
}

// operations runs one operation of each kind on a completed cluster.
var operations = map[string]func(w *world) (driver.Update, error){
	fake.OpCreate: func(w *world) (driver.Update, error) {
		return w.drv.CreateCluster(w.t.Context(), user, w.st, 0)
	},
	fake.OpUpdate: func(w *world) (driver.Update, error) {
		return w.drv.UpdateCluster(w.t.Context(), user, w.st)
	},
	fake.OpDelete: func(w *world) (driver.Update, error) {
		return w.drv.DeleteCluster(w.t.Context(), user, w.st)
	},
	fake.OpResize: func(w *world) (driver.Update, error) {
		return w.drv.ResizeCluster(w.t.Context(), user, w.st, driver.Resize{NodeGroupUUID: workerUUID, NodeCount: 3})
	},
	fake.OpUpgrade: func(w *world) (driver.Update, error) {
		return w.drv.UpgradeCluster(w.t.Context(), user, w.st, driver.Upgrade{Template: w.st.Template})
	},
	fake.OpNodeGroupCreate: func(w *world) (driver.Update, error) {
		ng := magnum.NodeGroup{UUID: "ng-new", Name: "extra", ClusterID: w.st.Cluster.UUID, Role: ptr("worker"),
			IsDefault: ptr(false), NodeCount: ptr(1), Labels: w.st.Cluster.Labels}
		return w.drv.CreateNodeGroup(w.t.Context(), user, w.st, ng)
	},
	fake.OpNodeGroupUpdate: func(w *world) (driver.Update, error) {
		return w.drv.UpdateNodeGroup(w.t.Context(), user, w.st, w.ng("default-worker"))
	},
	fake.OpNodeGroupDelete: func(w *world) (driver.Update, error) {
		ng := w.ng("default-worker")
		ng.IsDefault = ptr(false) // the API refuses default nodegroups
		return w.drv.DeleteNodeGroup(w.t.Context(), user, w.st, ng)
	},
	fake.OpRotateCA: func(w *world) (driver.Update, error) {
		return w.drv.RotateCA(w.t.Context(), user, w.st)
	},
}

func TestFailureInjection(t *testing.T) {
	tests := []struct {
		op            string
		clusterStatus string
		ngName        string // nodegroup that must fail too ("" = none checked)
		ngStatus      string
	}{
		{fake.OpCreate, "CREATE_FAILED", "default-worker", "CREATE_FAILED"},
		{fake.OpUpdate, "UPDATE_FAILED", "default-worker", "UPDATE_FAILED"},
		{fake.OpDelete, "DELETE_FAILED", "", ""},
		{fake.OpResize, "UPDATE_FAILED", "default-worker", "UPDATE_FAILED"},
		{fake.OpUpgrade, "UPDATE_FAILED", "default-master", "UPDATE_FAILED"},
		{fake.OpNodeGroupCreate, "UPDATE_FAILED", "extra", "CREATE_FAILED"},
		{fake.OpNodeGroupUpdate, "UPDATE_FAILED", "default-worker", "UPDATE_FAILED"},
		{fake.OpNodeGroupDelete, "UPDATE_FAILED", "default-worker", "DELETE_FAILED"},
		{fake.OpRotateCA, "UPDATE_FAILED", "", ""},
	}
	for _, tc := range tests {
		for _, withReason := range []bool{false, true} {
			t.Run(fmt.Sprintf("fake_fail=%s reason=%t", tc.op, withReason), func(t *testing.T) {
				labels := map[string]string{"fake_fail": "other," + tc.op}
				reason := "fake driver: injected " + tc.op + " failure"
				if withReason {
					labels["fake_fail_reason"] = "Quota exceeded for instances"
					reason = labels["fake_fail_reason"]
				}
				w := newWorld(t, fake.New(fake.Options{}), labels)
				if tc.op != fake.OpCreate {
					// Create must succeed: the failure labels are added
					// afterwards, as a PATCH of labels would.
					w.st.Cluster.Labels = nil
					w.create()
					w.st.Cluster.Labels = labels
					for i := range w.st.NodeGroups {
						w.st.NodeGroups[i].Labels = labels
					}
				}
				w.must(operations[tc.op](w))
				w.poll()
				w.wantStatus(tc.clusterStatus, reason)
				if tc.ngName != "" {
					ng := w.ng(tc.ngName)
					if string(deref(ng.Status)) != tc.ngStatus || str(ng.StatusReason) != reason {
						t.Errorf("nodegroup %s: %s %q, want %s %q", ng.Name, string(deref(ng.Status)), str(ng.StatusReason), tc.ngStatus, reason)
					}
				}
				if w.poll().Changed() {
					t.Error("a failed cluster changed on the next poll")
				}
			})
		}
	}
	t.Run("labels of another operation do not fail it", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), map[string]string{"fake_fail": "delete,resize"})
		w.create()
	})
	t.Run("nodegroup labels fail only that nodegroup", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), nil)
		w.create()
		ng := magnum.NodeGroup{UUID: "ng-bad", Name: "bad", ClusterID: clusterUUID, Role: ptr("worker"), IsDefault: ptr(false),
			NodeCount: ptr(1), Labels: map[string]string{"fake_fail": "nodegroup_create", "fake_fail_reason": "no GPUs"}}
		w.must(w.drv.CreateNodeGroup(t.Context(), user, w.st, ng))
		w.poll()
		w.wantStatus("UPDATE_FAILED", "no GPUs")
		w.wantNodeGroup("bad", "CREATE_FAILED", nil)
		w.wantNodeGroup("default-worker", "CREATE_COMPLETE", nil)
	})
}

func TestErrorInjection(t *testing.T) {
	for op, run := range operations {
		t.Run("fake_error="+op, func(t *testing.T) {
			labels := map[string]string{"fake_error": op, "fake_fail_reason": "boom " + op}
			w := newWorld(t, fake.New(fake.Options{}), labels)
			upd, err := run(w)
			if err == nil || err.Error() != "boom "+op {
				t.Fatalf("error = %v, want boom %s", err, op)
			}
			if upd.Changed() {
				t.Errorf("a failed call returned changes: %+v", upd)
			}
		})
	}
}

func TestCARotation(t *testing.T) {
	w := newWorld(t, fake.New(fake.Options{}), nil)
	w.create()
	if err := w.drv.CanRotateCA(w.st); err != nil {
		t.Fatalf("CanRotateCA = %v", err)
	}
	w.must(w.drv.RotateCA(t.Context(), user, w.st))
	w.wantStatus("UPDATE_IN_PROGRESS", "")
	w.poll()
	w.wantStatus("UPDATE_COMPLETE", "")

	t.Run("refused by label", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), map[string]string{"fake_no_ca_rotation": "true"})
		w.create()
		const msg = "'rotate_ca_certificate' is not supported by this driver."
		wantMagnumErr(t, w.drv.CanRotateCA(w.st), http.StatusBadRequest, msg)
		_, err := w.drv.RotateCA(t.Context(), user, w.st)
		wantMagnumErr(t, err, http.StatusBadRequest, msg)
	})
}

func TestCredentialRotation(t *testing.T) {
	drv := fake.New(fake.Options{})
	w := newWorld(t, drv, nil)
	w.create()
	for range 2 {
		upd := w.must(drv.RotateCredential(t.Context(), user, w.st))
		if upd.Changed() {
			t.Errorf("credential rotation changed rows: %+v", upd)
		}
	}
	if got := drv.CredentialRotations(clusterUUID); got != 2 {
		t.Errorf("CredentialRotations = %d, want 2", got)
	}
	w.st.Cluster.Labels = map[string]string{"fake_no_credential_rotation": "True"}
	_, err := drv.RotateCredential(t.Context(), user, w.st)
	wantMagnumErr(t, err, http.StatusBadRequest, "Credential rotation is not supported by driver.")
}

func TestRestart(t *testing.T) {
	clk := newClock()
	opts := fake.Options{Clock: clk.Now, Delay: time.Hour}

	t.Run("a creating cluster completes on the first poll", func(t *testing.T) {
		w := newWorld(t, fake.New(opts), nil)
		w.must(w.drv.CreateCluster(t.Context(), user, w.st, 0))
		w.drv = fake.New(opts) // the process restarts
		w.poll()
		w.wantStatus("CREATE_COMPLETE", "")
		w.wantNodeGroup("default-worker", "CREATE_COMPLETE", w.addrs("default-worker", 0, 1))
	})
	t.Run("a row never seen by the driver", func(t *testing.T) {
		w := newWorld(t, fake.New(opts), nil)
		w.poll()
		w.wantStatus("CREATE_COMPLETE", "")
		if w.st.Cluster.APIAddress == nil || w.st.Cluster.HealthStatus == nil {
			t.Errorf("api_address or health not filled")
		}
	})
	t.Run("a resize completes from the stored addresses", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), nil)
		w.create()
		w.must(w.drv.ResizeCluster(t.Context(), user, w.st, driver.Resize{NodeGroupUUID: workerUUID, NodeCount: 3,
			NodesToRemove: []string{fake.NodeOf(w.st.Cluster, w.ng("default-worker"), 0).ServerID}}))
		w.poll()
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 1, 2, 3))
		// Restart, then the conductor stores a new count and updates.
		w.drv = fake.New(opts)
		w.st.NodeGroups[1].NodeCount = ptr(4)
		w.st.NodeGroups[1].Status = ptr(magnum.Status("UPDATE_IN_PROGRESS"))
		w.st.Cluster.Status = ptr(magnum.Status("UPDATE_IN_PROGRESS"))
		w.poll()
		w.wantStatus("UPDATE_COMPLETE", "")
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 1, 2, 3, 4))
		if got := len(w.drv.Nodes(w.st.Cluster, w.ng("default-worker"))); got != 4 {
			t.Errorf("Nodes = %d, want 4", got)
		}
	})
	t.Run("nodes_to_remove reaches a second process serving the same rows", func(t *testing.T) {
		api := fake.New(fake.Options{})
		w := newWorld(t, api, nil)
		w.must(api.CreateCluster(t.Context(), user, w.st, time.Hour))
		// The reconciler process completes the create and remembers the nodes.
		w.drv = fake.New(fake.Options{})
		w.poll()
		w.wantNodeGroup("default-worker", "CREATE_COMPLETE", w.addrs("default-worker", 0, 1))
		// The API process replaces node 0 with the count unchanged.
		w.must(api.ResizeCluster(t.Context(), user, w.st, driver.Resize{NodeGroupUUID: workerUUID, NodeCount: 2,
			NodesToRemove: []string{fake.NodeOf(w.st.Cluster, w.ng("default-worker"), 0).ServerID}}))
		w.wantNodeGroup("default-worker", "UPDATE_IN_PROGRESS", w.addrs("default-worker", 1))
		w.poll()
		w.wantStatus("UPDATE_COMPLETE", "")
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 1, 2))
	})
	t.Run("failure labels apply after a restart", func(t *testing.T) {
		w := newWorld(t, fake.New(opts), map[string]string{"fake_fail": "create"})
		w.poll()
		w.wantStatus("CREATE_FAILED", "fake driver: injected create failure")
	})
	t.Run("a deleting cluster completes", func(t *testing.T) {
		w := newWorld(t, fake.New(opts), nil)
		w.st.Cluster.Status = ptr(magnum.Status("DELETE_IN_PROGRESS"))
		w.poll()
		w.wantStatus("DELETE_COMPLETE", "")
	})
	t.Run("a nodegroup left in progress completes", func(t *testing.T) {
		w := newWorld(t, fake.New(fake.Options{}), nil)
		w.create()
		w.drv = fake.New(opts)
		w.st.NodeGroups[1].Status = ptr(magnum.Status("UPDATE_IN_PROGRESS"))
		upd := w.poll()
		w.wantNodeGroup("default-worker", "UPDATE_COMPLETE", w.addrs("default-worker", 0, 1))
		if upd.Cluster != nil {
			t.Errorf("the completed cluster row was rewritten")
		}
	})
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	w := newWorld(t, fake.New(fake.Options{}), nil)
	if _, err := w.drv.CreateCluster(ctx, user, w.st, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateCluster error = %v", err)
	}
	if _, err := w.drv.PollStatus(ctx, user, w.st); !errors.Is(err, context.Canceled) {
		t.Errorf("PollStatus error = %v", err)
	}
}

// TestConcurrentClusters runs full lifecycles of many clusters in parallel on
// one driver; run with -race.
func TestConcurrentClusters(t *testing.T) {
	clk := newClock()
	drv := fake.New(fake.Options{Clock: clk.Now, Delay: time.Second})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			errs <- lifecycle(t.Context(), drv, clk, i)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// lifecycle runs create → resize → nodegroup create → delete for one cluster
// and reports the first deviation. It does not use t, so that it can run in
// goroutines.
func lifecycle(ctx context.Context, drv *fake.Driver, clk *clock, i int) error {
	id := func(kind string) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", i, len(kind)) }
	w := newWorldUUID(nil, drv, id("c"), id("mm"), id("www"), nil)
	step := func(name string, call func() (driver.Update, error), want string) error {
		upd, err := call()
		if err != nil {
			return fmt.Errorf("cluster %d %s: %w", i, name, err)
		}
		w.apply(upd)
		for range 100 {
			upd, err := drv.PollStatus(ctx, driver.AdminCredentials(), w.st)
			if err != nil {
				return fmt.Errorf("cluster %d poll after %s: %w", i, name, err)
			}
			w.apply(upd)
			if string(deref(w.st.Cluster.Status)) == want {
				return nil
			}
			clk.Advance(100 * time.Millisecond)
		}
		return fmt.Errorf("cluster %d %s: status %s, want %s", i, name, string(deref(w.st.Cluster.Status)), want)
	}
	if err := step("create", func() (driver.Update, error) { return drv.CreateCluster(ctx, user, w.st, 0) }, "CREATE_COMPLETE"); err != nil {
		return err
	}
	if err := step("resize", func() (driver.Update, error) {
		return drv.ResizeCluster(ctx, user, w.st, driver.Resize{NodeGroupUUID: id("www"), NodeCount: 1 + i%4})
	}, "UPDATE_COMPLETE"); err != nil {
		return err
	}
	if got := len(w.st.NodeGroups[1].NodeAddresses); got != 1+i%4 {
		return fmt.Errorf("cluster %d: %d worker addresses, want %d", i, got, 1+i%4)
	}
	ng := magnum.NodeGroup{UUID: id("nnnn"), Name: "extra", ClusterID: id("c"), Role: ptr("worker"), IsDefault: ptr(false), NodeCount: ptr(2)}
	if err := step("nodegroup create", func() (driver.Update, error) { return drv.CreateNodeGroup(ctx, user, w.st, ng) }, "UPDATE_COMPLETE"); err != nil {
		return err
	}
	return step("delete", func() (driver.Update, error) { return drv.DeleteCluster(ctx, user, w.st) }, "DELETE_COMPLETE")
}

func deref(p *magnum.Status) magnum.Status {
	if p == nil {
		return ""
	}
	return *p
}
