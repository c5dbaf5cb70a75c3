// The plugin's objects fit together: the ConsolePlugin names the Service, the Service the pods and their port, the
// Service's serving-certificate annotation the Secret the pods mount where the server reads it.
import { describe, expect, it } from 'vitest';
import { CONSOLE_PLUGIN_PORT, SERVING_CERT_DIR } from './command.js';
import {
  CONSOLE_NAMESPACE,
  SERVING_CERT_ANNOTATION,
  consolePluginManifests,
  consolePluginObject,
  csvConsolePluginAnnotation,
  type Manifest,
} from './manifests.js';
import { SERVICE_ACCOUNT_DIR } from '../../runtime/index.js';
import { CONSOLE_PLUGIN_NAME } from './plugin-metadata.js';

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const byKind = (objects: Manifest[], kind: string): Any => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found).toHaveLength(1);
  return found[0] as Any;
};

describe('console plugin manifests', () => {
  const objects = consolePluginManifests({ namespace: 'ns1', image: 'registry.example/tessera@sha256:abc' });

  it('points the ConsolePlugin at the Service, which selects the pods and serves their HTTPS port', () => {
    const plugin = byKind(objects, 'ConsolePlugin');
    const service = byKind(objects, 'Service');
    const deployment = byKind(objects, 'Deployment');
    expect(plugin['apiVersion']).toBe('console.openshift.io/v1');
    expect(plugin['metadata'].name).toBe(CONSOLE_PLUGIN_NAME);
    expect(plugin['metadata'].namespace).toBeUndefined();
    expect(plugin['spec'].backend).toEqual({
      type: 'Service',
      service: { name: service['metadata'].name, namespace: 'ns1', port: CONSOLE_PLUGIN_PORT, basePath: '/' },
    });
    expect(service['spec'].ports).toEqual([
      { name: 'https', port: CONSOLE_PLUGIN_PORT, targetPort: 'https', protocol: 'TCP' },
    ]);
    const pod = deployment['spec'].template;
    expect(pod.metadata.labels).toMatchObject(service['spec'].selector);
    expect(deployment['spec'].selector.matchLabels).toEqual(service['spec'].selector);
    const container = pod.spec.containers[0];
    expect(container.ports).toEqual([{ name: 'https', containerPort: CONSOLE_PLUGIN_PORT, protocol: 'TCP' }]);
    expect(container.image).toBe('registry.example/tessera@sha256:abc');
    expect(container.args).toEqual([
      'console-plugin',
      'serve',
      `--port=${CONSOLE_PLUGIN_PORT}`,
      `--cert-dir=${SERVING_CERT_DIR}`,
    ]);
  });

  it("mounts the service CA's certificate Secret where the server reads it", () => {
    const service = byKind(objects, 'Service');
    const pod = byKind(objects, 'Deployment')['spec'].template.spec;
    const secretName = service['metadata'].annotations[SERVING_CERT_ANNOTATION];
    expect(SERVING_CERT_ANNOTATION).toBe('service.beta.openshift.io/serving-cert-secret-name');
    const volume = pod.volumes.find((v: Any) => v.secret?.secretName === secretName);
    expect(volume).toBeDefined();
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: volume.name,
      mountPath: SERVING_CERT_DIR,
      readOnly: true,
    });
  });

  it('runs without credentials or privileges, reachable only from the console, calling nothing', () => {
    const pod = byKind(objects, 'Deployment')['spec'].template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0].securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const policy = byKind(objects, 'NetworkPolicy')['spec'];
    expect(policy.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.egress).toBeUndefined();
    expect(policy.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': CONSOLE_NAMESPACE } } }],
        ports: [{ port: CONSOLE_PLUGIN_PORT, protocol: 'TCP' }],
      },
    ]);
  });

  it('names the plugin in the CSV annotation OperatorHub reads, as a JSON list', () => {
    expect(csvConsolePluginAnnotation()).toEqual({
      'console.openshift.io/plugins': JSON.stringify([byKind(objects, 'ConsolePlugin')['metadata'].name]),
    });
  });

  describe("the OLM bundle's variant, where the pods register the ConsolePlugin", () => {
    const bundled = consolePluginManifests({
      namespace: 'ns1',
      image: 'registry.example/tessera@sha256:abc',
      registration: 'pods',
    });
    const pod = byKind(bundled, 'Deployment')['spec'].template.spec;

    it('carries no ConsolePlugin, but an init container that applies the same one for its own namespace', () => {
      expect(bundled.filter((o) => o.kind === 'ConsolePlugin')).toEqual([]);
      expect(consolePluginObject('ns1')).toEqual(byKind(objects, 'ConsolePlugin'));
      const [init] = pod.initContainers;
      expect(init.image).toBe('registry.example/tessera@sha256:abc');
      expect(init.args).toEqual(['console-plugin', 'register', '--namespace=$(POD_NAMESPACE)']);
      expect(init.env).toContainEqual({
        name: 'POD_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
    });

    it('mounts a service account token into the init container only; the server still holds none', () => {
      expect(pod.automountServiceAccountToken).toBe(false);
      const [init] = pod.initContainers;
      const tokenMount = init.volumeMounts.find((m: Any) => m.mountPath === SERVICE_ACCOUNT_DIR);
      const tokenVolume = pod.volumes.find((v: Any) => v.name === tokenMount.name);
      expect(tokenVolume.projected.sources).toContainEqual({
        serviceAccountToken: { path: 'token', expirationSeconds: 3607 },
      });
      expect(pod.containers[0].volumeMounts.map((m: Any) => m.name)).not.toContain(tokenMount.name);
    });

    it('grants the service account patch and create on that one ConsolePlugin, and egress to the API server', () => {
      const role = byKind(bundled, 'ClusterRole');
      expect(role['rules']).toEqual([
        {
          apiGroups: ['console.openshift.io'],
          resources: ['consoleplugins'],
          resourceNames: [CONSOLE_PLUGIN_NAME],
          verbs: ['patch', 'create'],
        },
      ]);
      const binding = byKind(bundled, 'ClusterRoleBinding');
      expect(binding['roleRef']).toMatchObject({ kind: 'ClusterRole', name: role['metadata'].name });
      expect(binding['subjects']).toEqual([
        { kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: 'ns1' },
      ]);
      expect(byKind(bundled, 'NetworkPolicy')['spec'].egress).toEqual([
        {
          ports: [
            { port: 443, protocol: 'TCP' },
            { port: 6443, protocol: 'TCP' },
          ],
        },
      ]);
    });
  });
});
