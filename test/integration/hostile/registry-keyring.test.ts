// Hostile pull secrets (issue #10 items 3 and 13): wildcard keys built to make a backtracking matcher take
// minutes, and secrets far larger than any real one. The keyring is built exactly as the pod reconciler builds it
// (keyringFromSecrets over Secret-shaped objects); the event loop must stay responsive throughout, and an
// oversized secret is skipped with a reason naming the budget.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { keyringFromSecrets } from '../../../src/registry/credentials.js';
import { pullSecretBudget } from '../../../src/registry/docker-config.js';
import { keyMatchesImage } from '../../../src/registry/keyring.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const secretWith = (auths: Record<string, unknown>) => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});

describe('hostile pull secrets', () => {
  it('matches 12-star backtracking keys against 40-character labels without stalling the event loop', async () => {
    // Before: 8 stars blocked the loop 3.4 s, 10 stars 27 s, 12 stars 119 s, per lookup.
    const evilKey = (stars: number, i: number): string => `${'*a'.repeat(stars)}*b${i}.example.com`;
    const auths = Object.fromEntries(
      Array.from({ length: pullSecretBudget.maxEntries }, (_, i) => [evilKey(12, i), { auth: b64('u:p') }]),
    );
    const { keyring, problems } = keyringFromSecrets([{ source: 'tenant/evil', secret: secretWith(auths) }]);
    expect(problems).toEqual([]);
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const images = Array.from({ length: 20 }, (_, i) => `${'a'.repeat(40)}.example.com/app${i}`);
    for (const image of images) {
      expect(keyring.lookup(image)).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve)); // let the histogram sample between lookups
    }
    histogram.disable();
    // Generous: a loaded 2-core machine stalls for tens of ms; the old matcher stalled for minutes.
    expect(histogram.max / 1e6).toBeLessThan(2_000);
    // And the bound is structural, not luck: the step count is polynomial in the sizes.
    const counter = { steps: 0 };
    keyMatchesImage(evilKey(12, 0), `${'a'.repeat(40)}.example.com/app`, counter);
    expect(counter.steps).toBeLessThanOrEqual(41 * 28);
  });

  it('skips a pull secret over the byte or entry budget, naming the budget, and keeps the other secrets', () => {
    const tooMany = Object.fromEntries(
      Array.from({ length: pullSecretBudget.maxEntries + 1 }, (_, i) => [
        `r${i}.example.io`,
        { auth: b64('u:p') },
      ]),
    );
    const tooBig = { 'quay.io': { auth: b64('u:p'), padding: 'x'.repeat(pullSecretBudget.maxBytes) } };
    const { keyring, problems } = keyringFromSecrets(
      [
        { source: 'tenant/many', secret: secretWith(tooMany) },
        { source: 'tenant/big', secret: secretWith(tooBig) },
        { source: 'tenant/good', secret: secretWith({ 'ghcr.io': { auth: b64('ok:pw') } }) },
      ],
      {
        source: 'openshift-config/pull-secret',
        secret: secretWith({ 'quay.io': { auth: b64('global:pw') } }),
      },
    );
    expect(problems.map((p) => p.source)).toEqual(['tenant/many', 'tenant/big']);
    expect(problems[0]?.message).toContain(`more than the ${pullSecretBudget.maxEntries} allowed`);
    expect(problems[1]?.message).toContain(`${pullSecretBudget.maxBytes}-byte limit`);
    expect(keyring.lookup('ghcr.io/x/y').map((c) => c.username)).toEqual(['ok']);
    expect(keyring.lookup('quay.io/x/y').map((c) => c.username)).toEqual(['global']);
  });
});
