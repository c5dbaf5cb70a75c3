// Monitoring and the operand's own pods as OpenShift's monitoring stack and a cluster admin expect them, in deploy/
// and in the OLM bundle: secure metrics on every Deployment, a ServiceMonitor that sends Prometheus' token and checks
// the service CA's certificate, Prometheus' discovery grant, alerts that name no namespace and link runbooks that
// exist, the cluster-monitoring CSV annotation, and node affinity, SCC and workload-partitioning annotations on
// every pod template (the live proof is test/integration/podplacement/metrics-monitoring.test.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PROJECT_REPOSITORY_URL } from '../../src/runtime/light.js';
import { BUNDLE_METADATA } from './metadata.js';

const root = path.resolve(import.meta.dirname, '../..');
const IMAGE_ARCHITECTURES = [...BUNDLE_METADATA.architectures];

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [key: string]: unknown;
}
interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}

function docs(file: string): Obj[] {
  return parseAllDocuments(readFileSync(path.join(root, file), 'utf8'))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}
const bundleFile = (name: string): Obj => parse(readFileSync(path.join(root, 'bundle/manifests', name), 'utf8')) as Obj;

/** The components with controllers, which serve metrics. */
const OPERATOR_COMPONENTS = ['deploy/podplacement/base', 'deploy/updatestatus', 'deploy/nodepool/management'];
/** Every Deployment Tessera ships: the controllers and the console plugin's static file server. */
const DEPLOY_COMPONENTS = [...OPERATOR_COMPONENTS, 'deploy/console-plugin'];
function deployObjects(dir: string): Obj[] {
  const kustomization = parse(readFileSync(path.join(root, dir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  return kustomization.resources.flatMap((r) => docs(path.join(dir, r)));
}

function rulesOf(rule: Obj): Rule[] {
  return (rule['spec'] as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
}

describe('alerts (deploy/ and the bundle)', () => {
  const deployRule = deployObjects('deploy/podplacement/base').find((o) => o.kind === 'PrometheusRule');
  const bundleRule = bundleFile('multiarch-tuning-operator-rules_monitoring.coreos.com_v1_prometheusrule.yaml');

  it('every alert links its runbook in docs/runbooks/, under the project repository', () => {
    for (const rule of [deployRule, bundleRule]) {
      const alerts = rulesOf(rule as Obj);
      expect(alerts.map((a) => a.alert)).toContain('PodPlacementControllerDown');
      for (const a of alerts) {
        expect(a.annotations['runbook_url']).toBe(`${PROJECT_REPOSITORY_URL}/blob/main/docs/runbooks/${a.alert}.md`);
        expect(existsSync(path.join(root, 'docs/runbooks', `${a.alert}.md`)), a.alert).toBe(true);
      }
    }
  });

  it('no query names a namespace, so the rule works wherever it is installed; the bundle leaves the namespace to OLM', () => {
    for (const a of rulesOf(deployRule as Obj)) {
      expect(a.expr, a.alert).not.toMatch(/namespace\s*=/);
      expect(a.expr, a.alert).not.toContain('openshift-multiarch-tuning-operator');
      // Scoped to the operand's own scrape job instead.
      expect(a.expr, a.alert).toContain('job="pod-placement-metrics"');
    }
    expect(bundleRule.metadata.namespace).toBeUndefined();
  });
});

describe('metrics of every Deployment of deploy/', () => {
  it('are served on their own HTTPS port with authentication and authorization; probes stay plain on 8081', () => {
    for (const dir of OPERATOR_COMPONENTS)
      for (const d of deployObjects(dir).filter((o) => o.kind === 'Deployment')) {
        const c = (d['spec'] as { template: { spec: { containers: { args: string[]; ports: object[] }[] } } })
          .template.spec.containers[0];
        expect(c?.args, `${dir} ${d.metadata.name}`).toEqual(
          expect.arrayContaining(['--metrics-bind-address=:8443', '--metrics-secure']),
        );
        expect(c?.ports).toEqual(expect.arrayContaining([{ name: 'metrics', containerPort: 8443 }]));
      }
  });

  it('their service accounts may create TokenReviews and SubjectAccessReviews (the metrics filter)', () => {
    for (const dir of OPERATOR_COMPONENTS) {
      const rules = deployObjects(dir)
        .filter((o) => o.kind === 'ClusterRole')
        .flatMap((r) => r['rules'] as { apiGroups: string[]; resources: string[]; verbs: string[] }[]);
      for (const [group, resource] of [
        ['authentication.k8s.io', 'tokenreviews'],
        ['authorization.k8s.io', 'subjectaccessreviews'],
      ] as const)
        expect(
          rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes('create')),
          `${dir}: create ${resource}`,
        ).toBe(true);
    }
  });
});

describe('the OLM bundle, as OpenShift monitoring scrapes it', () => {
  const csv = bundleFile('tessera.clusterserviceversion.yaml');

  it('asks the console to enable cluster monitoring for the install namespace', () => {
    expect(csv.metadata.annotations?.['operatorframework.io/cluster-monitoring']).toBe('true');
  });

  it("ships a ServiceMonitor with Prometheus' token and the service CA, and the service CA's certificate", () => {
    const sm = bundleFile('pod-placement-metrics_monitoring.coreos.com_v1_servicemonitor.yaml');
    expect(sm.metadata.namespace).toBeUndefined();
    expect((sm['spec'] as { endpoints: unknown[] }).endpoints).toEqual([
      expect.objectContaining({
        port: 'metrics',
        scheme: 'https',
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        tlsConfig: {
          caFile: '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt',
          serverName: 'pod-placement-metrics.openshift-multiarch-tuning-operator.svc',
        },
      }),
    ]);
    const svc = bundleFile('pod-placement-metrics_v1_service.yaml');
    expect(svc.metadata.annotations).toEqual({
      'service.beta.openshift.io/serving-cert-secret-name': 'pod-placement-metrics-tls',
    });
    const deployments = (
      csv['spec'] as {
        install: {
          spec: { deployments: { name: string; spec: { template: { spec: { containers: { args: string[] }[] } } } }[] };
        };
      }
    ).install.spec.deployments.filter((d) => d.name.startsWith('pod-placement-'));
    expect(deployments).toHaveLength(2);
    for (const d of deployments)
      expect(d.spec.template.spec.containers[0]?.args).toContain('--metrics-cert-dir=/var/run/metrics/tls');
  });

  it('mounts the metrics Secret as optional, so the pods start on an OLM cluster without the service CA', () => {
    const deployments = (
      csv['spec'] as {
        install: {
          spec: {
            deployments: { name: string; spec: { template: { spec: { volumes?: Record<string, unknown>[] } } } }[];
          };
        };
      }
    ).install.spec.deployments.filter((d) => d.name.startsWith('pod-placement-'));
    expect(deployments).toHaveLength(2);
    for (const d of deployments)
      expect(d.spec.template.spec.volumes).toContainEqual({
        name: 'metrics-tls',
        secret: { secretName: 'pod-placement-metrics-tls', optional: true },
      });
  });

  it('lets openshift-monitoring/prometheus-k8s discover the targets, as bundle objects, not CSV permissions', () => {
    const binding = bundleFile('tessera-pod-placement-prometheus_rbac.authorization.k8s.io_v1_rolebinding.yaml');
    expect(binding['subjects']).toEqual([
      { kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'openshift-monitoring' },
    ]);
    const role = bundleFile('tessera-pod-placement-prometheus_rbac.authorization.k8s.io_v1_role.yaml');
    expect(role['rules']).toEqual(
      expect.arrayContaining([{ apiGroups: [''], resources: ['services', 'endpoints', 'pods'], verbs: ['get', 'list', 'watch'] }]),
    );
    const spec = csv['spec'] as {
      install: { spec: { permissions: { serviceAccountName: string }[]; clusterPermissions: { serviceAccountName: string }[] } };
    };
    const accounts = [...spec.install.spec.permissions, ...spec.install.spec.clusterPermissions].map(
      (p) => p.serviceAccountName,
    );
    expect(accounts).not.toContain('prometheus-k8s');
    const policy = bundleFile('pod-placement-metrics-from-monitoring_networking.k8s.io_v1_networkpolicy.yaml');
    expect(policy['spec']).toMatchObject({
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-monitoring' } } }],
          ports: [{ protocol: 'TCP', port: 8443 }],
        },
      ],
    });
  });
});

describe("Tessera's own pods, as the Multiarch Tuning Operator's", () => {
  const templates = (): { where: string; template: { metadata: { annotations?: Record<string, string> }; spec: { affinity?: unknown } } }[] => {
    const fromDeploy = DEPLOY_COMPONENTS.flatMap((dir) =>
      deployObjects(dir)
        .filter((o) => o.kind === 'Deployment')
        .map((d) => ({ where: `${dir} ${d.metadata.name}`, template: (d['spec'] as { template: never }).template })),
    );
    const csv = bundleFile('tessera.clusterserviceversion.yaml');
    const fromBundle = (
      csv['spec'] as { install: { spec: { deployments: { name: string; spec: { template: never } }[] } } }
    ).install.spec.deployments.map((d) => ({ where: `bundle ${d.name}`, template: d.spec.template }));
    return [...fromDeploy, ...fromBundle];
  };

  it('run only on linux nodes of the architectures the image is built for', () => {
    for (const { where, template } of templates())
      expect(template.spec.affinity, where).toMatchObject({
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'kubernetes.io/arch', operator: 'In', values: IMAGE_ARCHITECTURES },
                  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
                ],
              },
            ],
          },
        },
      });
  });

  it('ask for restricted-v2 and the management CPU set (workload partitioning)', () => {
    for (const { where, template } of templates()) {
      expect(template.metadata.annotations, where).toMatchObject({
        'openshift.io/required-scc': 'restricted-v2',
        'target.workload.openshift.io/management': '{"effect": "PreferredDuringScheduling"}',
      });
      expect(JSON.parse(template.metadata.annotations?.['target.workload.openshift.io/management'] ?? '')).toEqual({
        effect: 'PreferredDuringScheduling',
      });
    }
  });

  it('in namespaces that allow management workloads, wherever deploy/ ships the namespace', () => {
    for (const dir of DEPLOY_COMPONENTS)
      for (const ns of deployObjects(dir).filter((o) => o.kind === 'Namespace'))
        expect(ns.metadata.annotations?.['workload.openshift.io/allowed'], ns.metadata.name).toBe('management');
  });
});
