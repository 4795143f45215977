// Command etcd runs a single-member embedded etcd (go.etcd.io/etcd/server/v3/embed) for the
// kubesched e2e control plane. It takes the few flags the test harness needs (named as the real
// etcd names them, so the harness can also run an envtest etcd binary), logs only warnings and
// errors, warns about applies slower than 300ms, and exits cleanly (closing the server and its
// data files) on SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func parseURLs(flagName, value string) []url.URL {
	var urls []url.URL
	for _, s := range strings.Split(value, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "etcd: invalid --%s %q: %v\n", flagName, s, err)
			os.Exit(2)
		}
		urls = append(urls, *u)
	}
	if len(urls) == 0 {
		fmt.Fprintf(os.Stderr, "etcd: --%s must not be empty\n", flagName)
		os.Exit(2)
	}
	return urls
}

func main() {
	var (
		name            = flag.String("name", "kubesched", "member name")
		dataDir         = flag.String("data-dir", "default.etcd", "path to the data directory")
		clientURLs      = flag.String("listen-client-urls", "http://127.0.0.1:2379", "comma-separated URLs to serve clients on (also advertised)")
		advertiseClient = flag.String("advertise-client-urls", "", "comma-separated client URLs to advertise (default: --listen-client-urls)")
		peerURLs        = flag.String("listen-peer-urls", "http://127.0.0.1:2380", "comma-separated URLs to listen on for peer traffic")
		advertisePeer   = flag.String("initial-advertise-peer-urls", "", "comma-separated peer URLs to advertise (default: --listen-peer-urls)")
		initialCluster  = flag.String("initial-cluster", "", "initial cluster configuration (default: <name>=<first advertised peer URL>)")
		logLevel        = flag.String("log-level", "warn", "log level: debug, info, warn, error, panic or fatal")
		warnApply       = flag.Duration("warning-apply-duration", 300*time.Millisecond, "log a warning when applying a request takes longer than this")
		warnUnary       = flag.Duration("warning-unary-request-duration", 300*time.Millisecond, "log a warning when a unary request takes longer than this")
		noFsync         = flag.Bool("unsafe-no-fsync", false, "disable fsync (faster, loses data on a machine crash; fine for tests)")
		quotaBytes      = flag.Int64("quota-backend-bytes", 0, "backend size quota in bytes (0 = etcd default)")
		startTimeout    = flag.Duration("start-timeout", 60*time.Second, "how long to wait for the server to become ready")
	)
	flag.Parse()

	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = parseURLs("listen-client-urls", *clientURLs)
	if *advertiseClient == "" {
		cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	} else {
		cfg.AdvertiseClientUrls = parseURLs("advertise-client-urls", *advertiseClient)
	}
	cfg.ListenPeerUrls = parseURLs("listen-peer-urls", *peerURLs)
	if *advertisePeer == "" {
		cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	} else {
		cfg.AdvertisePeerUrls = parseURLs("initial-advertise-peer-urls", *advertisePeer)
	}
	if *initialCluster == "" {
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	} else {
		cfg.InitialCluster = *initialCluster
	}
	cfg.Logger = "zap"
	cfg.LogLevel = *logLevel
	cfg.LogOutputs = []string{"stderr"}
	cfg.WarningApplyDuration = *warnApply
	cfg.ExperimentalWarningApplyDuration = *warnApply //nolint:staticcheck // kept in step with WarningApplyDuration
	// embed.NewConfig leaves this at 0 (only etcd's own flag parsing defaults it to 300ms), and
	// 0 makes etcd log every gRPC request as a slow "request stats" warning.
	cfg.WarningUnaryRequestDuration = *warnUnary
	cfg.ExperimentalWarningUnaryRequestDuration = *warnUnary //nolint:staticcheck // kept in step
	cfg.UnsafeNoFsync = *noFsync
	if *quotaBytes > 0 {
		cfg.QuotaBackendBytes = *quotaBytes
	}

	// Register for signals before starting, so a SIGTERM during startup is not lost.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		os.Exit(1)
	}

	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(*startTimeout):
		e.Server.Stop()
		e.Close()
		fmt.Fprintf(os.Stderr, "etcd: server not ready after %s\n", *startTimeout)
		os.Exit(1)
	case sig := <-sigs:
		e.Close()
		fmt.Fprintf(os.Stderr, "etcd: got %s during startup, stopped\n", sig)
		return
	}
	fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", *clientURLs)

	select {
	case sig := <-sigs:
		fmt.Fprintf(os.Stderr, "etcd: got %s, shutting down\n", sig)
		e.Close()
	case err := <-e.Err():
		e.Close()
		fmt.Fprintf(os.Stderr, "etcd: server error: %v\n", err)
		os.Exit(1)
	case <-e.Server.StopNotify():
		e.Close()
		fmt.Fprintln(os.Stderr, "etcd: server stopped")
		os.Exit(1)
	}
}
