import { describe, expect, it } from 'vitest';
import { RegistryError } from './errors.js';
import { emptyRegistryPolicy, pullSources, registryPolicyFrom, type RegistryPolicy } from './mirrors.js';
import { parseImageReference } from './reference.js';

const digest = `sha256:${'b'.repeat(64)}`;
const where = (image: string, policy: RegistryPolicy): string[] =>
  pullSources(parseImageReference(image), policy).map(
    (s) => `${s.registry}/${s.repository}${s.insecure ? ' (insecure)' : ''}`,
  );

const policy = registryPolicyFrom({
  imageDigestMirrorSets: [
    {
      spec: {
        imageDigestMirrors: [
          { source: 'quay.io/team', mirrors: ['mirror.corp:5000/team', 'backup.corp/q/team'] },
        ],
      },
    },
    {
      spec: {
        imageDigestMirrors: [
          {
            source: 'quay.io/team/locked',
            mirrors: ['mirror.corp:5000/locked'],
            mirrorSourcePolicy: 'NeverContactSource',
          },
        ],
      },
    },
  ],
  imageContentSourcePolicies: [
    {
      spec: { repositoryDigestMirrors: [{ source: 'registry.redhat.io', mirrors: ['mirror.corp:5000/rh'] }] },
    },
  ],
  imageTagMirrorSets: [
    { spec: { imageTagMirrors: [{ source: 'docker.io/library', mirrors: ['hub-cache.corp/library'] }] } },
  ],
  insecureRegistries: ['mirror.corp:5000', '*.lab.test'],
  blockedRegistries: ['blocked.example.io', 'backup.corp/q'],
});

describe('pullSources', () => {
  it('tries digest mirrors in order, skips blocked mirrors, then the source', () => {
    expect(where(`quay.io/team/app@${digest}`, policy)).toEqual([
      'mirror.corp:5000/team/app (insecure)',
      'quay.io/team/app',
    ]);
  });

  it('does not use digest mirrors for tags, nor tag mirrors for digests', () => {
    expect(where('quay.io/team/app:v1', policy)).toEqual(['quay.io/team/app']);
    expect(where('nginx:1', policy)).toEqual(['hub-cache.corp/library/nginx', 'docker.io/library/nginx']);
    expect(where(`nginx@${digest}`, policy)).toEqual(['docker.io/library/nginx']);
  });

  it('uses the most specific source and honours NeverContactSource', () => {
    expect(where(`quay.io/team/locked/x@${digest}`, policy)).toEqual([
      'mirror.corp:5000/locked/x (insecure)',
    ]);
  });

  it('treats ICSP like a digest mirror that always falls back to the source', () => {
    expect(where(`registry.redhat.io/ubi9/ubi@${digest}`, policy)).toEqual([
      'mirror.corp:5000/rh/ubi9/ubi (insecure)',
      'registry.redhat.io/ubi9/ubi',
    ]);
  });

  it('matches sources on path boundaries only', () => {
    expect(where(`quay.io/teamx/app@${digest}`, policy)).toEqual(['quay.io/teamx/app']);
  });

  it('marks wildcard insecure registries and refuses blocked ones', () => {
    expect(where('a.lab.test/x', policy)).toEqual(['a.lab.test/x (insecure)']);
    expect(where('a.lab.test:8443/x', policy)).toEqual(['a.lab.test:8443/x (insecure)']);
    expect(() => where('blocked.example.io/x', policy)).toThrow(RegistryError);
    expect(() => where('blocked.example.io/x', policy)).toThrow(/blocked registry/);
    expect(where('quay.io/x', emptyRegistryPolicy)).toEqual(['quay.io/x']);
  });

  it('fails when every candidate is blocked', () => {
    const onlyBlocked = registryPolicyFrom({
      imageDigestMirrorSets: [
        {
          spec: {
            imageDigestMirrors: [
              { source: 'quay.io', mirrors: ['bad.io'], mirrorSourcePolicy: 'NeverContactSource' },
            ],
          },
        },
      ],
      blockedRegistries: ['bad.io'],
    });
    let caught: unknown;
    try {
      where(`quay.io/a@${digest}`, onlyBlocked);
    } catch (err) {
      caught = err;
    }
    expect((caught as RegistryError).code).toBe('TESSERA_REGISTRY_BLOCKED');
  });
});
