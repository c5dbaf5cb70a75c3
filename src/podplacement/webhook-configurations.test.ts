import { describe, expect, it } from 'vitest';
import { decideAdmission } from './admission.js';
import type { LabelSelector } from './api/schema.js';
import { clusterConfig, pod } from './builders.js';
import { sameWebhooks } from './cluster-config-reconciler.js';
import { MUTATING_WEBHOOK } from './constants.js';
import { selectorOptsInOpenShiftNamespaces } from './pod-model.js';
import {
  CLUSTER_CONFIG_DELETE_WEBHOOK_NAME,
  mutatingWebhookConfiguration,
  systemNamespaceMatchConditions,
  validatingWebhookConfiguration,
} from './webhook-configurations.js';

const service = { kind: 'service' as const, namespace: 'op', name: MUTATING_WEBHOOK.serviceName, port: 443 };
const selector = {
  matchExpressions: [{ key: 'multiarch.openshift.io/exclude-pod-placement', operator: 'DoesNotExist' }],
};

describe('webhook configurations', () => {
  it('gates pod creation only, fails open, and carries the namespaceSelector', () => {
    const mwc = mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, selector, 'op');
    const hook = mwc.webhooks[0] ?? {};
    expect(mwc.metadata.name).toBe('pod-placement-mutating-webhook-configuration');
    expect(hook['name']).toBe('pod-placement-scheduling-gate.multiarch.openshift.io');
    expect(hook['failurePolicy']).toBe('Ignore');
    expect(hook['sideEffects']).toBe('None');
    expect(hook['namespaceSelector']).toEqual(selector);
    expect(hook['rules']).toEqual([
      {
        operations: ['CREATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ]);
    expect(hook['clientConfig']).toEqual({
      service: {
        namespace: 'op',
        name: 'pod-placement-web-hook',
        path: '/add-pod-scheduling-gate',
        port: 443,
      },
      caBundle: Buffer.from('PEM').toString('base64'),
    });
  });

  it('uses a URL for an operator outside the cluster, and the service-ca annotation on OpenShift', () => {
    const byUrl = mutatingWebhookConfiguration(
      { kind: 'url', baseUrl: 'https://127.0.0.1:9443/' },
      {},
      undefined,
      'op',
    );
    expect(byUrl.webhooks[0]?.['clientConfig']).toEqual({
      url: 'https://127.0.0.1:9443/add-pod-scheduling-gate',
    });
    expect(byUrl.webhooks[0]?.['namespaceSelector']).toEqual({});
    const ocp = validatingWebhookConfiguration(
      service,
      { serviceCaInjection: true },
      { operatorNamespace: 'op' },
    );
    expect(ocp.metadata.annotations).toEqual({ 'service.beta.openshift.io/inject-cabundle': 'true' });
  });

  it('keeps system namespaces and the operator namespace away from the webhooks, in the API server', () => {
    const conditions = systemNamespaceMatchConditions('op');
    expect(conditions.map((c) => c['expression'])).toEqual([
      '!request.namespace.startsWith("kube-")',
      '!request.namespace.startsWith("openshift-")',
      'request.namespace != "op"',
    ]);
    expect(
      mutatingWebhookConfiguration(service, {}, selector, 'op').webhooks[0]?.['matchConditions'],
    ).toEqual(conditions);
    const vwc = validatingWebhookConfiguration(service, {}, { operatorNamespace: 'op' });
    expect(vwc.webhooks.map((w) => w['matchConditions'])).toEqual([
      undefined,
      undefined,
      systemNamespaceMatchConditions('op', true),
    ]);
    // Embedded in CEL: anything but a namespace name is refused rather than quoted.
    expect(() => systemNamespaceMatchConditions('x" || true || "')).toThrow('not a valid namespace name');
  });

  it('never blocks deleting the cluster config when the webhook is down, while config writes fail closed', () => {
    const vwc = validatingWebhookConfiguration(service, {}, { operatorNamespace: 'op' });
    const summary = vwc.webhooks.map((w) => [
      w['name'],
      (w['rules'] as { operations: string[]; resources: string[] }[])[0]?.operations,
      (w['rules'] as { operations: string[]; resources: string[] }[])[0]?.resources,
      w['failurePolicy'],
    ]);
    expect(summary).toEqual([
      [
        'validate-clusterpodplacementconfig.multiarch.openshift.io',
        ['CREATE', 'UPDATE'],
        ['clusterpodplacementconfigs'],
        'Fail',
      ],
      [CLUSTER_CONFIG_DELETE_WEBHOOK_NAME, ['DELETE'], ['clusterpodplacementconfigs'], 'Ignore'],
      [
        'validate-podplacementconfig.multiarch.openshift.io',
        ['CREATE', 'UPDATE'],
        ['podplacementconfigs'],
        'Fail',
      ],
    ]);
  });

  it('compares ignoring key order, and ignoring an injected caBundle', () => {
    const desired = mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, selector, 'op');
    const reordered = JSON.parse(JSON.stringify(desired, Object.keys(desired).reverse())) as typeof desired;
    reordered.webhooks = desired.webhooks.map((w) => Object.fromEntries(Object.entries(w).reverse()));
    expect(sameWebhooks(reordered, desired)).toBe(true);
    expect(
      sameWebhooks(mutatingWebhookConfiguration(service, { caBundlePem: 'OTHER' }, selector, 'op'), desired),
    ).toBe(false);
    expect(
      sameWebhooks(mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, undefined, 'op'), desired),
    ).toBe(false);
    // A configuration written before matchConditions existed is brought up to date.
    const withoutConditions = structuredClone(desired);
    delete withoutConditions.webhooks[0]?.['matchConditions'];
    expect(sameWebhooks(withoutConditions, desired)).toBe(false);
    const injected = mutatingWebhookConfiguration(
      service,
      { caBundlePem: 'INJECTED', serviceCaInjection: true },
      selector,
      'op',
    );
    expect(
      sameWebhooks(
        injected,
        mutatingWebhookConfiguration(service, { serviceCaInjection: true }, selector, 'op'),
      ),
    ).toBe(true);
  });
});

describe('openshift-* namespaces', () => {
  const conditionNames = (namespaceSelector: LabelSelector | undefined): string[] =>
    (
      mutatingWebhookConfiguration(service, {}, namespaceSelector, 'op').webhooks[0]?.['matchConditions'] as {
        name: string;
      }[]
    ).map((c) => c.name);
  const optIn: LabelSelector = { matchLabels: { 'example.com/multiarch-placement': 'enabled' } };

  it.each<[string, LabelSelector | undefined, boolean]>([
    ['no selector (all namespaces)', undefined, false],
    ['an empty selector', {}, false],
    ['the recommended exclude label', selector, false],
    ['NotIn only', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['x'] }] }, false],
    ['a matchLabels entry', optIn, true],
    ['an In expression', { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] }, true],
    [
      'Exists next to the exclude label',
      { matchExpressions: [...selector.matchExpressions, { key: 'placement', operator: 'Exists' }] },
      true,
    ],
    [
      'namespaces named one by one',
      {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['openshift-operators', 'apps'] },
        ],
      },
      true,
    ],
  ])('%s: opted in = %s', (_what, namespaceSelector, optedIn) => {
    expect(selectorOptsInOpenShiftNamespaces(namespaceSelector)).toBe(optedIn);
    // The API server's filter follows: the openshift-* exclusion goes only with a selector that requires a label.
    expect(conditionNames(namespaceSelector)).toEqual(
      optedIn
        ? ['exclude-kube-namespaces', 'exclude-operator-namespace']
        : ['exclude-kube-namespaces', 'exclude-openshift-namespaces', 'exclude-operator-namespace'],
    );
  });

  it('the webhook itself decides alike: openshift-* pods are gated only when opted in, kube-* never', () => {
    const decide = (namespace: string, namespaceSelector: LabelSelector | undefined) =>
      decideAdmission(pod('p', namespace).withImages('r/a:1').build(), {
        namespace,
        operatorNamespace: 'op',
        clusterConfig: clusterConfig(namespaceSelector ? { namespaceSelector } : {}),
        podPlacementConfigs: [],
      });
    expect(decide('openshift-operators', selector)).toMatchObject({
      gate: false,
      ignoreReason: 'openshift-namespace',
    });
    expect(decide('openshift-operators', optIn)).toMatchObject({ gate: true, ignoreReason: undefined });
    expect(decide('kube-system', optIn)).toMatchObject({ gate: false, ignoreReason: 'kube-namespace' });
    expect(decide('op', optIn)).toMatchObject({ gate: false, ignoreReason: 'operator-namespace' });
    // A namespace that merely starts with "openshift" is a tenant's.
    expect(decide('openshiftery', selector)).toMatchObject({ gate: true });
  });

  it('validates PodPlacementConfigs in openshift-* too (they take effect there once opted in), never in kube-*', () => {
    const vwc = validatingWebhookConfiguration(service, {}, { operatorNamespace: 'op' });
    expect(vwc.webhooks[2]?.['matchConditions']).toEqual([
      { name: 'exclude-kube-namespaces', expression: '!request.namespace.startsWith("kube-")' },
      { name: 'exclude-operator-namespace', expression: 'request.namespace != "op"' },
    ]);
  });
});
