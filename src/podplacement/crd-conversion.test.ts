// The conversion webhook settings of the ClusterPodPlacementConfig CRD: what the generated CRD names, and the merge
// patch that re-points it at a running operator (URL or Service) with the operator's CA.
import { describe, expect, it } from 'vitest';
import { CONVERSION_WEBHOOK_PATH } from './api/conversion.js';
import { podPlacementCrd } from './api/crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from './api/schema.js';
import { SERVICE_CA_INJECT_ANNOTATION } from './constants.js';
import { crdConversionPatch } from './crd-conversion.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('generated CRD conversion', () => {
  it('converts ClusterPodPlacementConfig through the operator Service with ConversionReview v1', () => {
    const spec = podPlacementCrd(CLUSTER_POD_PLACEMENT_CONFIG).spec as Record<string, unknown>;
    expect(spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          service: {
            namespace: 'openshift-multiarch-tuning-operator',
            name: 'pod-placement-web-hook',
            path: CONVERSION_WEBHOOK_PATH,
            port: 443,
          },
        },
      },
    });
  });

  it('leaves single-version kinds without conversion', () => {
    expect(podPlacementCrd(POD_PLACEMENT_CONFIG).spec).not.toHaveProperty('conversion');
  });
});

describe('crdConversionPatch', () => {
  it('points at a URL with the base64 CA and removes a Service left by the static CRD', () => {
    const patch = crdConversionPatch(
      { kind: 'url', baseUrl: 'https://127.0.0.1:9443/' },
      { caBundlePem: CA },
    );
    expect(patch).toEqual({
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: {
              url: `https://127.0.0.1:9443${CONVERSION_WEBHOOK_PATH}`,
              caBundle: Buffer.from(CA).toString('base64'),
              service: null,
            },
          },
        },
      },
    });
  });

  it('points at the Service, removes a URL, and asks the service CA to inject the bundle on OpenShift', () => {
    const patch = crdConversionPatch(
      { kind: 'service', namespace: 'ops', name: 'hook', port: 443 },
      { serviceCaInjection: true },
    );
    expect(patch.metadata).toEqual({ annotations: { [SERVICE_CA_INJECT_ANNOTATION]: 'true' } });
    const cc = (patch.spec as { conversion: { webhook: { clientConfig: Record<string, unknown> } } })
      .conversion.webhook.clientConfig;
    // No caBundle key: a merge patch must not erase the injected one.
    expect(cc).toEqual({
      service: { namespace: 'ops', name: 'hook', path: CONVERSION_WEBHOOK_PATH, port: 443 },
      url: null,
    });
  });
});
