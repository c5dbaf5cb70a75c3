// Command grpc-health-probe asks a gRPC server's standard health service (grpc.health.v1.Health/Check) whether it is
// serving, and says so in its exit status. OLM's catalog operator gives every catalog pod it starts exec probes that
// run `grpc_health_probe -addr=:50051` inside the catalog image, so the catalog images the real-node tests build
// carry this command under that name (build-binaries.sh builds it with OLM's operators, in the same `go build`).
//
//	grpc_health_probe -addr=HOST:PORT [-service=NAME] [-connect-timeout=1s] [-rpc-timeout=1s]
//
// Exit status: 0 serving; 1 bad flags; 2 the server could not be reached; 3 the Check call failed; 4 the server
// answered with a status other than SERVING. The plain-text transport only: catalog pods serve without TLS.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

const (
	exitServing     = 0
	exitFlags       = 1
	exitUnreachable = 2
	exitCheckFailed = 3
	exitNotServing  = 4
)

func main() {
	os.Exit(probe(os.Args[1:]))
}

func probe(args []string) int {
	flags := flag.NewFlagSet("grpc_health_probe", flag.ContinueOnError)
	addr := flags.String("addr", "", "address of the gRPC server, HOST:PORT or :PORT (required)")
	service := flags.String("service", "", "service name to check; empty asks about the server as a whole")
	connectTimeout := flags.Duration("connect-timeout", time.Second, "how long to wait for the connection")
	rpcTimeout := flags.Duration("rpc-timeout", time.Second, "how long to wait for the Check answer")
	if err := flags.Parse(args); err != nil {
		return exitFlags
	}
	if *addr == "" || flags.NArg() > 0 || *connectTimeout <= 0 || *rpcTimeout <= 0 {
		fmt.Fprintln(os.Stderr, "grpc_health_probe: -addr is required; timeouts must be positive; no arguments besides flags")
		return exitFlags
	}

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: %s: %v\n", *addr, err)
		return exitFlags
	}
	defer conn.Close()

	// NewClient connects lazily: connect first, so a server that is not there is told apart from a failing Check.
	connectCtx, cancelConnect := context.WithTimeout(context.Background(), *connectTimeout)
	defer cancelConnect()
	conn.Connect()
	for state := conn.GetState(); state.String() != "READY"; state = conn.GetState() {
		if !conn.WaitForStateChange(connectCtx, state) {
			fmt.Fprintf(os.Stderr, "grpc_health_probe: no connection to %s within %s (last state %s)\n", *addr, *connectTimeout, state)
			return exitUnreachable
		}
	}

	rpcCtx, cancelRPC := context.WithTimeout(context.Background(), *rpcTimeout)
	defer cancelRPC()
	answer, err := healthpb.NewHealthClient(conn).Check(rpcCtx, &healthpb.HealthCheckRequest{Service: *service})
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: health check of %s failed: %v\n", *addr, err)
		return exitCheckFailed
	}
	if answer.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: %s is %s\n", *addr, answer.GetStatus())
		return exitNotServing
	}
	fmt.Println("status: SERVING")
	return exitServing
}
