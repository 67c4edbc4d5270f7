package app

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/driver/capi"
)

// KubeClient returns a client of the Cluster API management cluster that
// [capi]/kubeconfig names (the in-cluster service account when empty).
func KubeClient(opts *config.Options) (client.Client, error) {
	var (
		cfg *rest.Config
		err error
	)
	if opts.CAPI.Kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.CAPI.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("[capi]/kubeconfig: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = kubeRequestTimeout
	}
	scheme, err := capi.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("management cluster client: %w", err)
	}
	return c, nil
}
