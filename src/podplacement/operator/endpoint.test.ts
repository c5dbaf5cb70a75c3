import { describe, expect, it } from 'vitest';
import { MUTATING_WEBHOOK } from '../constants.js';
import { knownEndpoint, resolveEndpoint, webhookServiceName } from './endpoint.js';

describe('resolveEndpoint', () => {
  it('defaults to the webhook Service in the operator namespace, port 443', () => {
    expect(resolveEndpoint(undefined, 'ops', () => 9443)).toEqual({
      kind: 'service',
      namespace: 'ops',
      name: MUTATING_WEBHOOK.serviceName,
      port: 443,
    });
  });

  it('makes a URL on port 0 follow the port the server bound', () => {
    let bound = 0;
    const endpoint = resolveEndpoint({ kind: 'url', baseUrl: 'https://127.0.0.1:0' }, 'ops', () => bound);
    bound = 40123;
    expect(endpoint).toMatchObject({ kind: 'url', baseUrl: 'https://127.0.0.1:40123' });
  });

  it('keeps a URL with a port as given', () => {
    const given = { kind: 'url', baseUrl: 'https://webhook.example:8443' } as const;
    expect(resolveEndpoint(given, 'ops', () => 1)).toBe(given);
  });
});

describe('knownEndpoint', () => {
  it('is unknown before listening for a URL on port 0', () => {
    expect(knownEndpoint({ kind: 'url', baseUrl: 'https://127.0.0.1:0' }, 'ops')).toBeUndefined();
  });

  it('is the Service or the given URL otherwise', () => {
    expect(knownEndpoint(undefined, 'ops')).toMatchObject({ kind: 'service', namespace: 'ops' });
    expect(knownEndpoint({ kind: 'url', baseUrl: 'https://127.0.0.1:9443' }, 'ops')).toMatchObject({
      baseUrl: 'https://127.0.0.1:9443',
    });
  });
});

describe('webhookServiceName', () => {
  it("is OLM's Service for the webhook Deployment under OLM (its certificate names only that one)", () => {
    const olm = { mode: 'olm', certFile: 'c', keyFile: 'k', caSecretName: 's' } as const;
    expect(webhookServiceName(olm)).toBe('pod-placement-web-hook-service');
    expect(resolveEndpoint(undefined, 'ops', () => 0, webhookServiceName(olm))).toEqual({
      kind: 'service',
      namespace: 'ops',
      name: 'pod-placement-web-hook-service',
      port: 443,
    });
  });

  it("is deploy/'s Service otherwise", () => {
    expect(webhookServiceName(undefined)).toBe(MUTATING_WEBHOOK.serviceName);
    expect(webhookServiceName({ mode: 'self-managed' })).toBe(MUTATING_WEBHOOK.serviceName);
  });
});
