// The registry's JSON budgets: roomy enough for the largest real documents (an index at its entry cap, a config
// with a long history), and a refusal over them that the pod reconciler treats as permanent.
import { describe, expect, it } from 'vitest';
import { registryErrorDetail } from './distribution-client.js';
import { RegistryError } from './errors.js';
import { classifyRegistryFailure } from './failure-class.js';
import { defaultMaxIndexEntries } from './platforms.js';
import { defaultRegistryJsonBudgets, parseRegistryJson, registryJsonBudgets } from './registry-json.js';

const digest = (i: number) => `sha256:${i.toString(16).padStart(64, '0')}`;

/** An index at the entry cap, every entry with a platform, os.features and 30 annotations. */
function largestIndex(): Buffer {
  const annotations = Object.fromEntries(
    Array.from({ length: 30 }, (_, i) => [`org.opencontainers.image.x${i}`, 'value']),
  );
  const manifests = Array.from({ length: defaultMaxIndexEntries }, (_, i) => ({
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    digest: digest(i),
    size: 1234,
    platform: { architecture: 'arm64', os: 'linux', variant: 'v8', 'os.features': ['a', 'b'] },
    annotations,
  }));
  return Buffer.from(JSON.stringify({ schemaVersion: 2, manifests }));
}

/** A Docker config with a 1,000-step history, 1,000 layers and 500 Env and Labels entries each. */
function longHistoryConfig(): Buffer {
  return Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: {
        Env: Array.from({ length: 500 }, (_, i) => `VAR_${i}=value`),
        Labels: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`label.${i}`, 'v'])),
        Healthcheck: { Test: ['CMD-SHELL', 'true'] },
      },
      rootfs: { type: 'layers', diff_ids: Array.from({ length: 1_000 }, (_, i) => digest(i)) },
      history: Array.from({ length: 1_000 }, (_, i) => ({
        created: '2024-01-01T00:00:00Z',
        created_by: `/bin/sh -c #(nop) step ${i}`,
        comment: 'buildkit.dockerfile.v0',
        empty_layer: i % 2 === 0,
      })),
    }),
  );
}

describe('registry JSON budgets', () => {
  it('accept the largest real documents', () => {
    expect(
      parseRegistryJson(largestIndex(), defaultRegistryJsonBudgets.manifest, 'index', 'bad'),
    ).toMatchObject({ schemaVersion: 2 });
    expect(
      parseRegistryJson(longHistoryConfig(), defaultRegistryJsonBudgets.config, 'config', 'bad'),
    ).toMatchObject({ architecture: 'amd64' });
    const token = Buffer.from(
      JSON.stringify({ token: 't', access_token: 't', expires_in: 300, issued_at: '2024-01-01T00:00:00Z' }),
    );
    expect(parseRegistryJson(token, defaultRegistryJsonBudgets.token, 'token', 'bad')).toMatchObject({
      expires_in: 300,
    });
  });

  it('refuse a document over budget as TOO_LARGE, which is permanent, naming the document and the limit', () => {
    const nested = Buffer.from(`${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    let refused: unknown;
    try {
      parseRegistryJson(
        nested,
        defaultRegistryJsonBudgets.config,
        'r/app:1: the image config sha256:ab',
        'bad',
      );
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RegistryError);
    expect(refused).toMatchObject({
      code: 'TESSERA_REGISTRY_TOO_LARGE',
      retryable: false,
      message:
        'r/app:1: the image config sha256:ab nests arrays and objects deeper than 32 levels, the most accepted; it was not parsed',
    });
    expect(classifyRegistryFailure(refused)).toBe('permanent');
    const wide = Buffer.from(`[${'[],'.repeat(2_000)}[]]`);
    expect(() =>
      parseRegistryJson(wide, defaultRegistryJsonBudgets.token, 'the token answer', 'bad'),
    ).toThrow('the token answer has more than 1000 JSON values');
  });

  it('call malformed JSON a bad response, with the caller’s words', () => {
    expect(() =>
      parseRegistryJson(Buffer.from('{'), defaultRegistryJsonBudgets.manifest, 'm', 'm: not JSON'),
    ).toThrow(expect.objectContaining({ code: 'TESSERA_REGISTRY_BAD_RESPONSE', message: 'm: not JSON' }));
  });

  it('can be overridden per kind, the others keeping their defaults', () => {
    const budgets = registryJsonBudgets({ token: { maxDepth: 2, maxValues: 3 } });
    expect(budgets.token).toEqual({ maxDepth: 2, maxValues: 3 });
    expect(budgets.config).toBe(defaultRegistryJsonBudgets.config);
  });

  it('give a registry error body over budget no detail instead of parsing it', () => {
    const error = { errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] };
    expect(registryErrorDetail(Buffer.from(JSON.stringify(error)))).toBe(
      ': MANIFEST_UNKNOWN manifest unknown',
    );
    const padded = { ...error, junk: Array.from({ length: 20_000 }, () => []) };
    expect(registryErrorDetail(Buffer.from(JSON.stringify(padded)))).toBe('');
  });
});
