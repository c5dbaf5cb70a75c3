import { describe, expect, it } from 'vitest';
import type { PullSecretLike } from '../registry/index.js';
import { pod } from './builders.js';
import { MAX_PULL_SECRETS_PER_POD, PullSecretResolver, podPullSecretNames } from './pull-secrets.js';

function dockerSecret(registry: string, username: string): PullSecretLike {
  const auths = { [registry]: { auth: Buffer.from(`${username}:pw`).toString('base64') } };
  return {
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  };
}

/** Secrets by `namespace/name`; records every read. */
function resolverWith(secrets: Record<string, PullSecretLike>) {
  const reads: string[] = [];
  const skipped: string[] = [];
  const resolver = new PullSecretResolver({
    getSecret: async (ns, name) => {
      reads.push(`${ns}/${name}`);
      return secrets[`${ns}/${name}`];
    },
    globalSecret: () => undefined,
    onSkipped: (secret) => void skipped.push(secret),
  });
  return { resolver, reads, skipped };
}

const signal = new AbortController().signal;

describe('pull secrets of a pod', () => {
  it("never reads another namespace's secret, whatever name the pod gives", async () => {
    const t = resolverWith({ 'team-b/x': dockerSecret('private.test', 'b-user') });
    const p = pod('web', 'team-a')
      .withImages('private.test/app:1')
      .withPullSecrets(
        'x',
        'team-b/x',
        '../team-b/x',
        '../../team-b/secrets/x',
        '..',
        'team-b%2Fx',
        '/api/v1/namespaces/team-b/secrets/x',
      )
      .build();
    const keyring = await t.resolver.keyringFor(p, signal);
    // Only the valid name is read, and only in the pod's own namespace (where it does not exist).
    expect(t.reads).toEqual(['team-a/x']);
    expect(keyring.lookup('private.test/app')).toEqual([]);
    expect(t.skipped).toHaveLength(7);
  });

  it('uses the secrets of its own namespace, in order, each once', async () => {
    const t = resolverWith({
      'team-a/first': dockerSecret('private.test', 'first'),
      'team-a/second': dockerSecret('private.test', 'second'),
    });
    const p = pod('web', 'team-a').withPullSecrets('first', 'second', 'first').build();
    const keyring = await t.resolver.keyringFor(p, signal);
    expect(t.reads).toEqual(['team-a/first', 'team-a/second']);
    expect(keyring.lookup('private.test/app').map((c) => c.username)).toEqual(['first', 'second']);
  });

  it(`reads at most ${MAX_PULL_SECRETS_PER_POD} names per pod`, () => {
    const many = Array.from({ length: 1000 }, (_, i) => `s-${i}`);
    const { names, skipped } = podPullSecretNames(
      pod('web', 'ns')
        .withPullSecrets(...many)
        .build(),
    );
    expect(names).toHaveLength(MAX_PULL_SECRETS_PER_POD);
    expect(skipped).toHaveLength(1000 - MAX_PULL_SECRETS_PER_POD);
  });

  it('reads nothing for a pod without a namespace', async () => {
    const t = resolverWith({});
    const p = pod('web', '').withPullSecrets('x').build();
    await t.resolver.keyringFor(p, signal);
    expect(t.reads).toEqual([]);
  });
});
