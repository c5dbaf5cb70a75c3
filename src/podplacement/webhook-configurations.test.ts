import { describe, expect, it } from 'vitest';
import { sameWebhooks } from './cluster-config-controller.js';
import { MUTATING_WEBHOOK } from './constants.js';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from './webhook-configurations.js';

const service = { kind: 'service' as const, namespace: 'op', name: MUTATING_WEBHOOK.serviceName, port: 443 };
const selector = {
  matchExpressions: [{ key: 'multiarch.openshift.io/exclude-pod-placement', operator: 'DoesNotExist' }],
};

describe('webhook configurations', () => {
  it('gates pod creation only, fails open, and carries the namespaceSelector', () => {
    const mwc = mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, selector);
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
    );
    expect(byUrl.webhooks[0]?.['clientConfig']).toEqual({
      url: 'https://127.0.0.1:9443/add-pod-scheduling-gate',
    });
    expect(byUrl.webhooks[0]?.['namespaceSelector']).toEqual({});
    const ocp = validatingWebhookConfiguration(service, { serviceCaInjection: true });
    expect(ocp.metadata.annotations).toEqual({ 'service.beta.openshift.io/inject-cabundle': 'true' });
    expect(ocp.webhooks.map((w) => w['failurePolicy'])).toEqual(['Fail', 'Fail']);
  });

  it('compares ignoring key order, and ignoring an injected caBundle', () => {
    const desired = mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, selector);
    const reordered = JSON.parse(JSON.stringify(desired, Object.keys(desired).reverse())) as typeof desired;
    reordered.webhooks = desired.webhooks.map((w) => Object.fromEntries(Object.entries(w).reverse()));
    expect(sameWebhooks(reordered, desired)).toBe(true);
    expect(
      sameWebhooks(mutatingWebhookConfiguration(service, { caBundlePem: 'OTHER' }, selector), desired),
    ).toBe(false);
    expect(
      sameWebhooks(mutatingWebhookConfiguration(service, { caBundlePem: 'PEM' }, undefined), desired),
    ).toBe(false);
    const injected = mutatingWebhookConfiguration(
      service,
      { caBundlePem: 'INJECTED', serviceCaInjection: true },
      selector,
    );
    expect(
      sameWebhooks(injected, mutatingWebhookConfiguration(service, { serviceCaInjection: true }, selector)),
    ).toBe(true);
  });
});
