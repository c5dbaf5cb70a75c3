// The console plugin's objects, the one source of deploy/console-plugin/ (npm run generate) and of the plugin's
// part of the OLM bundle: a ServiceAccount, the Service whose annotation has the service CA issue its serving
// certificate, the Deployment that serves the plugin with it (`tessera console-plugin serve`), a NetworkPolicy
// that lets only the console's backend in and nothing out, and the ConsolePlugin (console.openshift.io/v1) that
// tells the console where to fetch the plugin. Pure.
import { CONSOLE_PLUGIN_PORT, SERVING_CERT_DIR } from './command.js';
import { CONSOLE_PLUGIN_NAME } from './plugin-metadata.js';

/** The namespace the plugin runs in by default: the pod placement operator's. */
export const CONSOLE_PLUGIN_NAMESPACE = 'openshift-multiarch-tuning-operator';
/** The Secret the service CA writes the certificate into (named by the Service's annotation). */
export const SERVING_CERT_SECRET = `${CONSOLE_PLUGIN_NAME}-cert`;
/** The annotation that has OpenShift's service CA issue a certificate for the Service into a Secret. */
export const SERVING_CERT_ANNOTATION = 'service.beta.openshift.io/serving-cert-secret-name';
/** Where the console's backend, which fetches plugins, runs. */
export const CONSOLE_NAMESPACE = 'openshift-console';

export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
};

export interface ConsolePluginManifestOptions {
  readonly namespace?: string;
  /** The image that runs `tessera console-plugin serve` (kustomize's name `tessera` in deploy/). */
  readonly image: string;
}

const LABELS = { 'app.kubernetes.io/name': CONSOLE_PLUGIN_NAME, 'app.kubernetes.io/part-of': 'tessera' };

export function consolePluginManifests(options: ConsolePluginManifestOptions): Manifest[] {
  const namespace = options.namespace ?? CONSOLE_PLUGIN_NAMESPACE;
  const meta = (extra: Record<string, unknown> = {}) => ({
    name: CONSOLE_PLUGIN_NAME,
    namespace,
    labels: { ...LABELS },
    ...extra,
  });
  const probe = {
    httpGet: { path: '/plugin-manifest.json', port: 'https', scheme: 'HTTPS' },
    periodSeconds: 10,
  };
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: meta(),
      // The server reads no API: its pods carry no token.
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta({ annotations: { [SERVING_CERT_ANNOTATION]: SERVING_CERT_SECRET } }),
      spec: {
        selector: { ...LABELS },
        ports: [{ name: 'https', port: CONSOLE_PLUGIN_PORT, targetPort: 'https', protocol: 'TCP' }],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(),
      spec: {
        replicas: 2,
        selector: { matchLabels: { ...LABELS } },
        template: {
          metadata: {
            labels: { ...LABELS },
            annotations: { 'openshift.io/required-scc': 'restricted-v2' },
          },
          spec: {
            serviceAccountName: CONSOLE_PLUGIN_NAME,
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'console-plugin',
                image: options.image,
                args: [
                  'console-plugin',
                  'serve',
                  `--port=${CONSOLE_PLUGIN_PORT}`,
                  `--cert-dir=${SERVING_CERT_DIR}`,
                ],
                // About 1 MB of files held in memory: a small heap is plenty.
                env: [{ name: 'NODE_OPTIONS', value: '--max-semi-space-size=2 --max-old-space-size=48' }],
                ports: [{ name: 'https', containerPort: CONSOLE_PLUGIN_PORT, protocol: 'TCP' }],
                readinessProbe: probe,
                livenessProbe: { ...probe, initialDelaySeconds: 10 },
                resources: { requests: { cpu: '10m', memory: '50Mi' }, limits: { memory: '128Mi' } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [{ name: 'serving-cert', mountPath: SERVING_CERT_DIR, readOnly: true }],
              },
            ],
            volumes: [{ name: 'serving-cert', secret: { secretName: SERVING_CERT_SECRET } }],
          },
        },
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta(),
      spec: {
        podSelector: { matchLabels: { ...LABELS } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [
              { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': CONSOLE_NAMESPACE } } },
            ],
            ports: [{ port: CONSOLE_PLUGIN_PORT, protocol: 'TCP' }],
          },
        ],
        // No egress rule: the server calls nothing.
      },
    },
    {
      apiVersion: 'console.openshift.io/v1',
      kind: 'ConsolePlugin',
      metadata: { name: CONSOLE_PLUGIN_NAME, labels: { ...LABELS } },
      spec: {
        displayName: 'Tessera',
        backend: {
          type: 'Service',
          service: { name: CONSOLE_PLUGIN_NAME, namespace, port: CONSOLE_PLUGIN_PORT, basePath: '/' },
        },
        // The plugin calls only the API server, through the console's own proxy: no proxy of its own.
      },
    },
  ];
}

/** The CSV annotation that makes OperatorHub offer to enable the plugin on install (a JSON list of names). */
export const CSV_PLUGINS_ANNOTATION = 'console.openshift.io/plugins';

/**
 * The CSV's annotation naming the plugin. For the bundle to carry it, the bundle must also make the ConsolePlugin
 * exist: OLM v0 creates no ConsolePlugin from a bundle (its supported bundle kinds do not include it), so an
 * operator component has to create it at run time.
 */
export function csvConsolePluginAnnotation(): Record<string, string> {
  return { [CSV_PLUGINS_ANNOTATION]: JSON.stringify([CONSOLE_PLUGIN_NAME]) };
}
