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

/** Secrets by `namespace/name`, and the global pull secret; records every read and every skipped secret. */
function resolverWith(secrets: Record<string, PullSecretLike>, globalSecret?: PullSecretLike) {
  const reads: string[] = [];
  const skipped: string[] = [];
  const resolver = new PullSecretResolver({
    getSecret: async (ns, name) => {
      reads.push(`${ns}/${name}`);
      return secrets[`${ns}/${name}`];
    },
    globalSecret: () => globalSecret,
    onSkipped: (secret, reason) => void skipped.push(`${secret}: ${reason}`),
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

  it('tries its own secrets first, then the global pull secret', async () => {
    const t = resolverWith(
      {
        'team-a/first': dockerSecret('private.test', 'first'),
        'team-a/second': dockerSecret('private.test', 'second'),
      },
      dockerSecret('private.test', 'global'),
    );
    const p = pod('web', 'team-a').withPullSecrets('first', 'second').build();
    const keyring = await t.resolver.keyringFor(p, signal);
    expect(keyring.lookup('private.test/app').map((c) => c.username)).toEqual(['first', 'second', 'global']);
  });

  it('gives a pod without secrets only the global credentials, under another fingerprint', async () => {
    const t = resolverWith(
      { 'team-a/own': dockerSecret('private.test', 'own') },
      dockerSecret('private.test', 'global'),
    );
    const without = await t.resolver.keyringFor(pod('web', 'team-a').build(), signal);
    const withOwn = await t.resolver.keyringFor(pod('api', 'team-a').withPullSecrets('own').build(), signal);
    expect(without.lookup('private.test/app').map((c) => c.username)).toEqual(['global']);
    // The inspection cache keys results by fingerprint: a pod without the secret never gets a result made with it.
    expect(without.fingerprint).not.toBe(withOwn.fingerprint);
  });

  it('skips a secret it cannot use, names it without its content, and uses the others', async () => {
    const t = resolverWith({
      'team-a/opaque': { type: 'Opaque', data: { password: Buffer.from('hunter2').toString('base64') } },
      'team-a/good': dockerSecret('private.test', 'ok'),
    });
    const p = pod('web', 'team-a').withPullSecrets('opaque', 'good').build();
    const keyring = await t.resolver.keyringFor(p, signal);
    expect(keyring.lookup('private.test/app').map((c) => c.username)).toEqual(['ok']);
    expect(t.skipped).toHaveLength(1);
    expect(t.skipped[0]).toContain('secret team-a/opaque');
    expect(t.skipped.join('\n')).not.toContain('hunter2');
    expect(t.skipped.join('\n')).not.toContain(Buffer.from('hunter2').toString('base64'));
  });

  it('uses none of a secret whose one auth field is malformed', async () => {
    const auths = {
      'private.test': { auth: Buffer.from('u:p').toString('base64') },
      'other.test': { auth: 'dTpw*A==' },
    };
    const t = resolverWith({
      'team-a/pull': {
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
      },
    });
    const keyring = await t.resolver.keyringFor(pod('web', 'team-a').withPullSecrets('pull').build(), signal);
    expect(keyring.lookup('private.test/app')).toEqual([]);
    expect(t.skipped).toEqual([expect.stringContaining('secret team-a/pull: ')]);
  });

  it('reads nothing for a pod without a namespace', async () => {
    const t = resolverWith({});
    const p = pod('web', '').withPullSecrets('x').build();
    await t.resolver.keyringFor(p, signal);
    expect(t.reads).toEqual([]);
  });
});
