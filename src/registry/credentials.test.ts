import { describe, expect, it } from 'vitest';
import { keyringFromSecrets } from './credentials.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const dockerConfigJson = (host: string, user: string): { type: string; data: Record<string, string> } => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: {
    '.dockerconfigjson': b64(JSON.stringify({ auths: { [host]: { auth: b64(`${user}:pw-${user}`) } } })),
  },
});

describe('keyringFromSecrets', () => {
  it('puts the pod secrets first, then the global pull secret', () => {
    const { keyring, problems } = keyringFromSecrets(
      [
        { source: 'team/a', secret: dockerConfigJson('quay.io', 'pod-a') },
        { source: 'team/b', secret: dockerConfigJson('quay.io', 'pod-b') },
      ],
      { source: 'openshift-config/pull-secret', secret: dockerConfigJson('quay.io', 'global') },
    );
    expect(problems).toEqual([]);
    expect(keyring.lookup('quay.io/org/app').map((c) => c.username)).toEqual(['pod-a', 'pod-b', 'global']);
  });

  it('skips unusable secrets and reports them without credentials', () => {
    const { keyring, problems } = keyringFromSecrets([
      { source: 'team/opaque', secret: { type: 'Opaque', data: { password: b64('hunter2') } } },
      { source: 'team/good', secret: dockerConfigJson('ghcr.io', 'ok') },
    ]);
    expect(keyring.lookup('ghcr.io/x/y').map((c) => c.username)).toEqual(['ok']);
    expect(problems.map((p) => p.source)).toEqual(['team/opaque']);
    expect(problems[0]?.message).not.toContain('hunter2');
  });

  it('gives a pod without secrets only the global credentials, and distinct fingerprints', () => {
    const global = { source: 'openshift-config/pull-secret', secret: dockerConfigJson('quay.io', 'global') };
    const withPod = keyringFromSecrets(
      [{ source: 'team/a', secret: dockerConfigJson('quay.io', 'pod-a') }],
      global,
    ).keyring;
    const without = keyringFromSecrets([], global).keyring;
    expect(without.lookup('quay.io/a/b').map((c) => c.username)).toEqual(['global']);
    expect(without.fingerprint).not.toBe(withPod.fingerprint);
  });
});
