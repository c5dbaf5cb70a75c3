// Hostile pull secrets (issue #10 items 3 and 13, issue #20 item 4), through the production path: the pod's
// imagePullSecrets read by PullSecretResolver (as the pod reconciler and `tessera podplacement explain` read them)
// into the Keyring the registry inspector looks credentials up in. Wildcard keys built to make matching quadratic
// (32 secrets x 200 keys against a 240-character host took 4 s a lookup before), and secrets far larger than any
// real one. Work is asserted with the keyring's deterministic step count, never with a clock.
import { describe, expect, it } from 'vitest';
import { MAX_PULL_SECRETS_PER_POD, PullSecretResolver } from '../../../src/podplacement/pull-secrets.js';
import type { Pod } from '../../../src/podplacement/pod-types.js';
import { pullSecretBudget, type PullSecretLike } from '../../../src/registry/docker-config.js';
import { DEFAULT_MAX_KEYRING_LOOKUP_STEPS, keyMatchesImage } from '../../../src/registry/keyring.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const secretWith = (auths: Record<string, unknown>): PullSecretLike => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});
const podWith = (names: readonly string[]): Pod => ({
  metadata: { namespace: 'tenant', name: 'victim' },
  spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) },
});
const signal = new AbortController().signal;

interface Harness {
  resolver: PullSecretResolver;
  skipped: [string, string][];
  overBudget: [string, string, number][];
}

function resolverOver(secrets: ReadonlyMap<string, PullSecretLike>, global?: PullSecretLike): Harness {
  const skipped: [string, string][] = [];
  const overBudget: [string, string, number][] = [];
  const resolver = new PullSecretResolver({
    getSecret: (namespace, name) => Promise.resolve(namespace === 'tenant' ? secrets.get(name) : undefined),
    globalSecret: () => global,
    onSkipped: (secret, reason) => skipped.push([secret, reason]),
    onLookupBudgetExceeded: (pod, image, maxSteps) => overBudget.push([pod, image, maxSteps]),
  });
  return { resolver, skipped, overBudget };
}

describe('hostile pull secrets through PullSecretResolver', () => {
  // 236 + '.io': 240 characters, in the reference grammar. Each key passes every cheap check (2 labels, last label
  // `io`, no literal prefix or suffix, short enough) and costs the matcher ~236 x 118 steps, without matching.
  const host = `${'a'.repeat(236)}.io`;
  const image = `${host}/team/app`;
  const evilKey = (s: number, i: number): string => `*${'a'.repeat(117)}b${s}x${i}*.io`;
  const secretNames = Array.from({ length: MAX_PULL_SECRETS_PER_POD }, (_, s) => `evil-${s}`);

  function hostileSecrets(): Map<string, PullSecretLike> {
    const secrets = new Map<string, PullSecretLike>();
    for (const [s, name] of secretNames.entries()) {
      const auths: Record<string, unknown> = {};
      for (let i = 0; i < pullSecretBudget.maxEntries - 1; i++)
        auths[evilKey(s, i)] = { auth: b64('evil:pw') };
      // The last secret also holds the registry's real credentials.
      if (s === secretNames.length - 1) auths[host] = { auth: b64('legit:pw') };
      else auths[evilKey(s, pullSecretBudget.maxEntries)] = { auth: b64('evil:pw') };
      secrets.set(name, secretWith(auths));
    }
    return secrets;
  }

  it('bounds one lookup over 32 secrets x 200 crafted keys against a 240-character host, and still finds the real credentials', async () => {
    expect(keyMatchesImage(evilKey(0, 0), image)).toBe(false); // crafted not to match: only the cost hurts
    const { resolver, skipped, overBudget } = resolverOver(
      hostileSecrets(),
      secretWith({ '*.io': { auth: b64('global:pw') } }),
    );
    const keyring = await resolver.keyringFor(podWith(secretNames), signal);
    expect(skipped).toEqual([]);
    expect(keyring.size).toBe(MAX_PULL_SECRETS_PER_POD * pullSecretBudget.maxEntries + 1);
    for (let round = 0; round < 3; round++) {
      const match = keyring.match(image);
      // The whole lookup, every secret and key included, within the budget (a key alone costs ~28,000 steps).
      expect(match.steps).toBeLessThanOrEqual(DEFAULT_MAX_KEYRING_LOOKUP_STEPS);
      expect(match.complete).toBe(false);
      // Kubelet order: the pod's exact host key first (it sorts before every wildcard key), then the global one.
      expect(match.credentials.map((c) => c.username)).toEqual(['legit', 'global']);
    }
    // What the registry inspector calls: the same answer, and the cause reported once per lookup.
    expect(keyring.lookup(image).map((c) => c.username)).toEqual(['legit', 'global']);
    expect(overBudget).toEqual([['tenant/victim', image, DEFAULT_MAX_KEYRING_LOOKUP_STEPS]]);
  });

  it("keeps other images' lookups cheap and complete: most keys are rejected without comparing a character", async () => {
    const { resolver, overBudget } = resolverOver(
      hostileSecrets(),
      secretWith({ 'quay.io': { auth: b64('global:pw') }, 'registry.example.com': { auth: b64('corp:pw') } }),
    );
    const keyring = await resolver.keyringFor(podWith(secretNames), signal);
    const keys = MAX_PULL_SECRETS_PER_POD * pullSecretBudget.maxEntries;
    // Other label counts and last labels: the index never visits the tenant's keys.
    for (const [other, users] of [
      ['registry.example.com/app', ['corp']],
      ['mirror.example.com/app', []],
    ] as const) {
      const match = keyring.match(other);
      expect(match).toMatchObject({ complete: true });
      expect(match.steps, other).toBeLessThan(100);
      expect(match.credentials.map((c) => c.username)).toEqual(users);
    }
    // Same shape as the hostile keys (`*.io`): each is refused on its length, a few steps a key.
    for (const [other, users] of [
      ['quay.io/team/app', ['global']],
      ['docker.io/library/nginx', []],
    ] as const) {
      const match = keyring.match(other);
      expect(match).toMatchObject({ complete: true });
      expect(match.steps, other).toBeLessThan(10 * keys);
      expect(match.credentials.map((c) => c.username)).toEqual(users);
    }
    expect(overBudget).toEqual([]);
  });

  it('parses each Secret object once, however many pods and reconciles use it', async () => {
    let reads = 0;
    const data = hostileSecrets().get('evil-0')?.data ?? {};
    const counted: PullSecretLike = {
      type: 'kubernetes.io/dockerconfigjson',
      get data() {
        reads++;
        return data;
      },
    };
    const { resolver } = resolverOver(new Map([['shared', counted]]));
    for (let i = 0; i < 5; i++) await resolver.keyringFor(podWith(['shared']), signal);
    expect(reads).toBe(1);
  });

  it('skips a pull secret over the byte or entry budget, naming the budget, and keeps the other secrets', async () => {
    const tooMany = Object.fromEntries(
      Array.from({ length: pullSecretBudget.maxEntries + 1 }, (_, i) => [
        `r${i}.example.io`,
        { auth: b64('u:p') },
      ]),
    );
    const tooBig = { 'quay.io': { auth: b64('u:p'), padding: 'x'.repeat(pullSecretBudget.maxBytes) } };
    const { resolver, skipped } = resolverOver(
      new Map([
        ['many', secretWith(tooMany)],
        ['big', secretWith(tooBig)],
        ['good', secretWith({ 'ghcr.io': { auth: b64('ok:pw') } })],
      ]),
      secretWith({ 'quay.io': { auth: b64('global:pw') } }),
    );
    const keyring = await resolver.keyringFor(podWith(['many', 'big', 'good']), signal);
    expect(skipped.map(([source]) => source)).toEqual(['secret tenant/many', 'secret tenant/big']);
    expect(skipped[0]?.[1]).toContain(`more than the ${pullSecretBudget.maxEntries} allowed`);
    expect(skipped[1]?.[1]).toContain(`${pullSecretBudget.maxBytes}-byte limit`);
    expect(keyring.lookup('ghcr.io/x/y').map((c) => c.username)).toEqual(['ok']);
    expect(keyring.lookup('quay.io/x/y').map((c) => c.username)).toEqual(['global']);
  });
});
