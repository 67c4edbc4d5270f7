// Command etcd is the etcd server of go.etcd.io/etcd/server/v3, built here
// because the test Kubernetes API (internal/testutil/kubetest) needs one and
// only the Go module proxy is reachable; scripts/ci/kube-apiserver.sh builds it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
