// The console plugin's objects, the one source of deploy/console-plugin/ (npm run generate) and of the plugin's
// part of the OLM bundle: a ServiceAccount, the Service whose annotation has the service CA issue its serving
// certificate, the Deployment that serves the plugin with it (`tessera console-plugin serve`), a NetworkPolicy
// that lets only the console's backend in, and the ConsolePlugin (console.openshift.io/v1) that tells the console
// where to fetch the plugin. OLM v0 creates no ConsolePlugin from a bundle (not among its supported bundle kinds),
// so the bundle's variant has the pods' init container apply it instead (`tessera console-plugin register`). Pure.
import { SERVICE_ACCOUNT_DIR } from '../../runtime/index.js';
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

const LABELS = { 'app.kubernetes.io/name': CONSOLE_PLUGIN_NAME, 'app.kubernetes.io/part-of': 'tessera' };

export interface ConsolePluginManifestOptions {
  readonly namespace?: string;
  /** The image that runs `tessera console-plugin serve` (kustomize's name `tessera` in deploy/). */
  readonly image: string;
  /**
   * Who creates the ConsolePlugin. 'manifest' (deploy/console-plugin, the default): it is one of the objects. 'pods'
   * (the OLM bundle, which cannot carry it): the pods' init container applies it with a token mounted into that
   * container only, granted by a ClusterRole among the objects; the server itself still holds no token.
   */
  readonly registration?: 'manifest' | 'pods';
}

/** The platforms Tessera's image is built for (hack/image/build.sh), which the pods are scheduled to. */
export const IMAGE_PLATFORMS = {
  architectures: ['amd64', 'arm64', 'ppc64le', 's390x'],
  os: 'linux',
} as const;

/** The ClusterRole (and its binding) that lets the init container apply the one ConsolePlugin. */
export const REGISTRATION_ROLE = `${CONSOLE_PLUGIN_NAME}-registration`;
/** The field manager of the init container's server-side apply. */
export const REGISTRATION_FIELD_MANAGER = 'tessera-console-plugin-register';

/** The ConsolePlugin (cluster-scoped) that points the console at the plugin's Service in `namespace`. */
export function consolePluginObject(namespace: string): Manifest {
  return {
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
  };
}

export function consolePluginManifests(options: ConsolePluginManifestOptions): Manifest[] {
  const namespace = options.namespace ?? CONSOLE_PLUGIN_NAMESPACE;
  const registersItself = options.registration === 'pods';
  const securityContext = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  };
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
            // As the other components' pods: OpenShift's restricted SCC and, with workload partitioning, the
            // management CPU set. Other clusters ignore both.
            annotations: {
              'openshift.io/required-scc': 'restricted-v2',
              'target.workload.openshift.io/management': '{"effect": "PreferredDuringScheduling"}',
            },
          },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        {
                          key: 'kubernetes.io/arch',
                          operator: 'In',
                          values: [...IMAGE_PLATFORMS.architectures],
                        },
                        { key: 'kubernetes.io/os', operator: 'In', values: [IMAGE_PLATFORMS.os] },
                      ],
                    },
                  ],
                },
              },
            },
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
                securityContext,
                volumeMounts: [{ name: 'serving-cert', mountPath: SERVING_CERT_DIR, readOnly: true }],
              },
            ],
            ...(registersItself
              ? { initContainers: [registrationContainer(options.image, securityContext)] }
              : {}),
            volumes: [
              // Optional: only OpenShift's service CA creates it, and OLM also installs the bundle elsewhere; the
              // server serves a self-signed certificate until the kubelet fills the volume.
              { name: 'serving-cert', secret: { secretName: SERVING_CERT_SECRET, optional: true } },
              ...(registersItself ? [registrationTokenVolume()] : []),
            ],
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
        // The server calls nothing; the init container that registers the plugin calls only the API server (its
        // address is the cluster's: any host, on the API server's ports). A NetworkPolicy selects pods, not
        // containers, so the server may reach those ports too; it holds no token to use there.
        ...(registersItself
          ? {
              egress: [
                {
                  ports: [
                    { port: 443, protocol: 'TCP' },
                    { port: 6443, protocol: 'TCP' },
                  ],
                },
              ],
            }
          : {}),
      },
    },
    ...(registersItself ? registrationRbac(namespace) : [consolePluginObject(namespace)]),
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

function registrationContainer(
  image: string,
  securityContext: Record<string, unknown>,
): Record<string, unknown> {
  return {
    name: 'register',
    image,
    args: ['console-plugin', 'register', '--namespace=$(POD_NAMESPACE)'],
    env: [
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=2 --max-old-space-size=48' },
    ],
    resources: { requests: { cpu: '10m', memory: '50Mi' }, limits: { memory: '128Mi' } },
    securityContext,
    volumeMounts: [{ name: 'registration-token', mountPath: SERVICE_ACCOUNT_DIR, readOnly: true }],
  };
}

/** What automountServiceAccountToken would mount, as a volume only the init container mounts. */
function registrationTokenVolume(): Record<string, unknown> {
  return {
    name: 'registration-token',
    projected: {
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  };
}

/**
 * Applying the one ConsolePlugin by name: server-side apply is a PATCH (limited to the name), and the API server
 * also checks `create`, with the object's name, when that PATCH creates the object. No `get`: nothing reads it.
 */
function registrationRbac(namespace: string): Manifest[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: REGISTRATION_ROLE, labels: { ...LABELS } },
      rules: [
        {
          apiGroups: ['console.openshift.io'],
          resources: ['consoleplugins'],
          resourceNames: [CONSOLE_PLUGIN_NAME],
          verbs: ['patch', 'create'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: REGISTRATION_ROLE, labels: { ...LABELS } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: REGISTRATION_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: CONSOLE_PLUGIN_NAME, namespace }],
    },
  ];
}
