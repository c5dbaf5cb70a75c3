// `tessera podplacement ...` commands. Imports only commander's types, the flag parsers and light constants;
// implementations load on demand. Flags without a default leave the operator's own default in force; the help
// names it from the constant the operator uses, never from a copy.
import type { Command } from 'commander';
import {
  addMetricsFlags,
  parseChoice,
  parseDuration,
  parseListenPort,
  parsePositiveCount,
} from '../cli/flags.js';
import {
  DEFAULT_LISTEN_HOST,
  DEFAULT_PROBE_PORT,
  DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
  DEFAULT_WEBHOOK_PORT,
} from '../runtime/light.js';
import { DEFAULT_OPERATOR_NAMESPACE, GLOBAL_PULL_SECRET } from './constants.js';
import { DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS } from './controller-liveness.js';
import type { ExplainFlags } from './explain-command.js';
import { DEFAULT_WORKERS, defaultInspectionSlotCaps } from './inspection-slots.js';
import type { OperatorFlags } from './operator-command.js';
import { DEFAULT_COMPONENTS, DEFAULT_TLS_MODE } from './operator/options.js';
import type { ReleaseFlags } from './release-command.js';
import { DEFAULT_INSPECTION_DEADLINE_MS, DEFAULT_RETRY_BASE_DELAY_MS } from './retry-schedule.js';

const MIB = 1024 * 1024;
/** What the inspection caps come to with the default --workers. */
const DEFAULT_CAPS = defaultInspectionSlotCaps(DEFAULT_WORKERS);

export function registerPodPlacementCommands(program: Command): void {
  const pp = program
    .command('podplacement')
    .description('architecture-aware pod placement (drop-in for the Multiarch Tuning Operator)');

  addMetricsFlags(pp.command('operator'))
    .description('run the pod placement operator (webhook + reconciler) until SIGTERM')
    .option('--kubeconfig <path>', 'kubeconfig file (default: in-cluster or $KUBECONFIG)')
    .option(
      '--namespace <ns>',
      'operator namespace (its pods are never gated)',
      process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE,
    )
    .addOption(
      pp
        .createOption(
          '--components <which>',
          `run the webhook, the controller, or both (default: ${DEFAULT_COMPONENTS})`,
        )
        .choices(['all', 'controller', 'webhook']),
    )
    .option(
      '--webhook-port <port>',
      `webhook HTTPS port, 0 = any free port (default: ${DEFAULT_WEBHOOK_PORT})`,
      parseListenPort,
    )
    .option('--webhook-host <host>', `webhook listen address (default: ${DEFAULT_LISTEN_HOST})`)
    .option(
      '--webhook-max-request-bytes <bytes>',
      `largest AdmissionReview body accepted (counted as it arrives; larger ones get 413) (default: ${DEFAULT_WEBHOOK_MAX_REQUEST_BYTES / MIB} MiB)`,
      parsePositiveCount,
    )
    .option(
      '--webhook-max-connections <n>',
      `open webhook connections at most (at the cap the longest idle or stuck one is closed for a new one) (default: ${DEFAULT_WEBHOOK_MAX_CONNECTIONS})`,
      parsePositiveCount,
    )
    .option(
      '--webhook-client-ca <file>',
      "PEM CA that verifies the API server's client certificate: its connections get their own pool and most of the in-flight memory; others are still served within the rest",
    )
    .option(
      '--webhook-url <url>',
      'reach the webhook at this URL instead of the Service (operator outside the cluster; port 0 = the bound port)',
    )
    .option(
      '--probe-port <port>',
      `health/metrics port, 0 = any free port (default: ${DEFAULT_PROBE_PORT})`,
      parseListenPort,
    )
    .addOption(
      pp
        .createOption('--tls <mode>', `webhook certificate source (default: ${DEFAULT_TLS_MODE})`)
        .choices(['self-managed', 'service-ca', 'olm']),
    )
    .option(
      '--cert-dir <dir>',
      'certificate directory (service-ca, olm: where tls.crt/tls.key are mounted)',
      '/var/run/manager/tls',
    )
    .option('--no-leader-elect', 'run the reconcilers without leader election')
    .option('--install-crds', 'install or upgrade the CRDs at start')
    .option(
      '--manage-validating-webhook',
      'create the ValidatingWebhookConfiguration at start, delete it at exit',
    )
    .option(
      '--registry-ca <file...>',
      "extra CA certificates (PEM) trusted for every registry (additionalTrustedCA bundles: only for their key's host)",
    )
    .option(
      '--trusted-ca-bundle <file>',
      "PEM bundle trusted for the egress proxy and every registry: the cluster's trusted CA bundle, as OpenShift injects it into a ConfigMap labelled config.openshift.io/inject-trusted-cabundle=true (read at start; skipped while absent or empty)",
    )
    .option(
      '--registry-deny-cidr <cidr...>',
      'address ranges registry connections never dial (repeatable or comma-separated; e.g. the pod, service and node networks). Running in a pod with its service account, 127.0.0.0/8 and ::1/128 are denied too',
    )
    .option(
      '--registry-allow-cidr <cidr...>',
      'ranges dialed even inside a --registry-deny-cidr range (the most specific range decides; link-local and unspecified addresses are always refused)',
    )
    .option(
      '--trusted-realm-host <host...>',
      "token service hosts (host or host:port) that may receive pull-secret credentials besides the registry's own origin and registrable domain",
    )
    .option(
      '--global-pull-secret-namespace <ns>',
      'namespace of the global pull secret',
      GLOBAL_PULL_SECRET.namespace,
    )
    .option('--global-pull-secret-name <name>', 'name of the global pull secret', GLOBAL_PULL_SECRET.name)
    .option('--workers <n>', 'concurrent pod reconciles', parsePositiveCount, DEFAULT_WORKERS)
    .option(
      '--retry-base-delay-ms <ms>',
      `wait before the 2nd inspection attempt, doubling each time (default: ${DEFAULT_RETRY_BASE_DELAY_MS})`,
      parseDuration('ms'),
    )
    .option(
      '--inspection-deadline-ms <ms>',
      `longest wait of a pod for its registries, over all its attempts; then it is ungated (fallback architecture if set) (default: ${DEFAULT_INSPECTION_DEADLINE_MS})`,
      parseDuration('ms'),
    )
    .option(
      '--max-inspections-per-namespace <n>',
      `pods of one namespace inspected at once (default: a quarter of --workers, at least 1: ${DEFAULT_CAPS.maxInspectionsPerNamespace} with ${DEFAULT_WORKERS} workers)`,
      parsePositiveCount,
    )
    .option(
      '--max-inspections-per-registry <n>',
      `pods inspected at once per registry host (default: half of --workers, at least 1: ${DEFAULT_CAPS.maxInspectionsPerRegistry} with ${DEFAULT_WORKERS} workers)`,
      parsePositiveCount,
    )
    .option(
      '--controller-lease-stale-after-ms <ms>',
      `webhook: when the controller's leader Lease has not been renewed for this long, admit new pods ungated until it is; 0: always gate (default: ${DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS}, ${DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS / 60_000} minutes)`,
      parseDuration('ms', { allowZero: true }),
    )
    .action(async (opts: OperatorFlags, command: Command) => {
      const [{ runOperatorCommand }, { commandLogger }] = await Promise.all([
        import('./operator-command.js'),
        import('../cli/logging.js'),
      ]);
      const { logger, settings } = commandLogger(command, { name: 'tessera-podplacement' });
      await runOperatorCommand(opts, { logger, logLevel: settings.level });
    });

  pp.command('release')
    .description(
      "remove the operator's scheduling gate from gated pods by hand, without placing them: for when the controller cannot run (refused while it holds its leader Lease, unless --force)",
    )
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)')
    .option('-n, --namespace <ns>', 'release the gated pods of this namespace')
    .option('-A, --all-namespaces', 'release the gated pods of every namespace')
    .option('-l, --selector <selector>', 'only pods matching this label selector (e.g. app=web)')
    .option('--dry-run', 'show what would be released; change nothing (server-side dry run)')
    .option('--force', 'release even while the controller holds its leader Lease')
    .option(
      '--operator-namespace <ns>',
      `the controller's namespace, where its leader Lease is (default: ${DEFAULT_OPERATOR_NAMESPACE})`,
    )
    .action(async (opts: ReleaseFlags) => {
      const { runReleaseCommand } = await import('./release-command.js');
      process.exitCode = await runReleaseCommand(opts);
    });

  pp.command('explain')
    .description(
      'show what the operator did to a pod (labels, affinity, events, timings) and what it would do to a new pod like it now: images, architectures, affinity (changes nothing)',
    )
    .argument('[pod]', 'NAMESPACE/NAME of a pod in the cluster')
    .option('-f, --file <pod.yaml>', 'a pod manifest instead of a pod in the cluster')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)')
    .option('-n, --namespace <ns>', 'namespace for a manifest without one', 'default')
    .option(
      '--registry-ca <file...>',
      "extra CA certificates (PEM) trusted for registries, besides the cluster's additionalTrustedCA",
    )
    .option(
      '--operator-namespace <ns>',
      "the operator's namespace (its pods are never gated)",
      process.env.POD_NAMESPACE ?? DEFAULT_OPERATOR_NAMESPACE,
    )
    .option('--offline', 'do not contact the cluster (configs, pull secrets and registry trust are not read)')
    .option('-o, --output <format>', 'text or json', parseChoice(['text', 'json']), 'text')
    .action(async (pod: string | undefined, opts: ExplainFlags, command: Command) => {
      const [{ runExplainCommand }, { commandLogger }, { proxyConfigFromEnvironment }] = await Promise.all([
        import('./explain-command.js'),
        import('../cli/logging.js'),
        import('../registry/index.js'),
      ]);
      // Only problems (a missing CA ConfigMap...) are logged, on stderr; the explanation goes to stdout.
      const { logger } = commandLogger(command, {
        name: 'tessera-explain',
        destination: process.stderr,
        defaultLevel: 'warn',
      });
      // The registries are reached as the operator reaches them: through HTTPS_PROXY / HTTP_PROXY / NO_PROXY.
      const proxy = proxyConfigFromEnvironment(process.env);
      process.exitCode = await runExplainCommand(pod, { ...opts, ...(proxy ? { proxy } : {}) }, logger);
    });
}
