// Command cert-manager runs, in one process, the cert-manager v1.21 control loops that issue a Certificate from a
// self-signed Issuer (what OLM v1's cert-manager webhook provider creates for a bundle's webhook Deployment) and the
// CA injector that fills `caBundle` for `cert-manager.io/inject-ca-from` on webhook configurations and CRDs.
// cert-manager's own controller and cainjector commands are separate Go modules the module proxy does not serve;
// this command uses the root module's packages instead. No leader election, webhook, ACME or other issuers: one
// copy per test cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"

	// The control loops this command runs register themselves with controllerpkg when imported.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// The loops a self-signed Issuer's Certificate goes through, from Issuer readiness to the Secret.
var controllers = []string{
	"issuers",
	"certificates-trigger",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-issuing",
	"certificates-readiness",
	"certificates-revision-manager",
	"certificaterequests-approver",
	"certificaterequests-issuer-selfsigned",
}

func main() {
	// Its own flag set: controller-runtime registers a global --kubeconfig of its own.
	flags := flag.NewFlagSet("cert-manager", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	_ = flags.Parse(os.Args[1:])
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cert-manager: --kubeconfig is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "cert-manager: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string) error {
	logf.InitLogs()
	log := zap.New(zap.UseDevMode(false))
	ctrl.SetLogger(log)
	ctx = logf.NewContext(ctx, log)

	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	group, ctx := errgroup.WithContext(ctx)
	known := controllerpkg.Known()
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("control loop %q is not registered", name)
		}
		loop, err := construct(factory)
		if err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		group.Go(func() error { return loop.Run(2, ctx) })
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())

	// The CA injector, as cert-manager's cainjector runs it (a controller-runtime manager).
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// The injector's field manager for its server-side applies is derived from the user agent.
	restConfig = util.RestConfigWithUserAgent(restConfig, "cainjector")
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, admissionregistrationv1.AddToScheme, cmapi.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		return fmt.Errorf("building the CA injector: %w", err)
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		// The kinds OLM v1 annotates with cert-manager.io/inject-ca-from (not APIServices).
		EnabledReconcilersFor: map[string]bool{
			"mutatingwebhookconfiguration":   true,
			"validatingwebhookconfiguration": true,
			"customresourcedefinition":       true,
		},
	}); err != nil {
		return fmt.Errorf("registering the CA injectors: %w", err)
	}
	group.Go(func() error { return mgr.Start(ctx) })
	return group.Wait()
}
