import { describe, expect, it } from 'vitest';
import {
  entriesOfPullSecret,
  parseDockerCfg,
  parseDockerConfigJson,
  type DockerConfigEntry,
} from './docker-config.js';
import { RegistryError } from './errors.js';
import {
  compileLabelGlob,
  Keyring,
  keyMatchesImage,
  labelGlobMatches,
  maxKeyringKeyLength,
  normalizeKeyringKey,
} from './keyring.js';

const entry = (key: string, username: string): DockerConfigEntry => ({
  key,
  credential: { username, password: `${username}-pw` },
});
const users = (keyring: Keyring, image: string): string[] => keyring.lookup(image).map((c) => c.username);
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('pull secret parsing', () => {
  it('reads dockerconfigjson; auth overrides username/password; empty entries are kept (kubelet)', () => {
    const doc = JSON.stringify({
      auths: {
        'quay.io': { auth: b64('robot:s3:cr:et'), username: 'ignored', password: 'ignored' },
        'registry.example.io': { username: 'u', password: 'p' },
        'empty.example.io': {},
      },
    });
    expect(parseDockerConfigJson(doc, 'ns/s')).toEqual([
      { key: 'quay.io', credential: { username: 'robot', password: 's3:cr:et' } },
      { key: 'registry.example.io', credential: { username: 'u', password: 'p' } },
      { key: 'empty.example.io', credential: { username: '', password: '' } },
    ]);
  });

  it('reads the legacy dockercfg map and both secret types', () => {
    const cfg = JSON.stringify({ 'https://index.docker.io/v1/': { auth: b64('hub:pw') } });
    expect(parseDockerCfg(cfg, 'x')).toEqual([
      { key: 'https://index.docker.io/v1/', credential: { username: 'hub', password: 'pw' } },
    ]);
    expect(
      entriesOfPullSecret({ type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(cfg) } }, 'ns/a'),
    ).toHaveLength(1);
    const json = JSON.stringify({ auths: { 'quay.io': { username: 'a', password: 'b' } } });
    expect(
      entriesOfPullSecret(
        { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(json) } },
        'ns/b',
      ),
    ).toHaveLength(1);
  });

  it.each([
    [{ type: 'Opaque', data: {} }, 'is not kubernetes.io/dockerconfigjson'],
    [{ type: 'kubernetes.io/dockerconfigjson', data: {} }, 'no data key .dockerconfigjson'],
    [
      { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{not json') } },
      'not valid JSON',
    ],
    [
      {
        type: 'kubernetes.io/dockercfg',
        data: { '.dockercfg': b64(JSON.stringify({ r: { auth: b64('nocolon') } })) },
      },
      'not base64 of user:password',
    ],
  ])('refuses a malformed secret with a clear, credential-free message', (secret, reason) => {
    let caught: unknown;
    try {
      entriesOfPullSecret(secret, 'team/pull');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RegistryError);
    expect((caught as RegistryError).code).toBe('TESSERA_REGISTRY_INVALID_PULL_SECRET');
    expect((caught as RegistryError).message).toContain('team/pull');
    expect((caught as RegistryError).message).toContain(reason);
    expect((caught as RegistryError).message).not.toContain('nocolon');
  });
});

describe('kubelet key matching', () => {
  it.each([
    ['quay.io', 'quay.io/org/app', true],
    ['*.example.io', 'registry.example.io/app', true],
    ['*.example.io', 'example.io/app', false], // label counts differ
    ['*.example.io', 'a.b.example.io/app', false], // one glob matches one label
    ['reg*.example.io', 'registry.example.io/app', true],
    ['example.*', 'example.io/app', true],
    ['registry.io:5000', 'registry.io:5000/app', true],
    ['registry.io:5000', 'registry.io/app', false],
    ['registry.io', 'registry.io:5000/app', false],
    ['quay.io/team', 'quay.io/team/app', true],
    ['quay.io/team', 'quay.io/teamx/app', true], // plain string prefix, as in the kubelet
    ['quay.io/team', 'quay.io/other/app', false],
    ['registry.io:5000/a', 'registry.io:5000/a/b', true],
    ['r?g.io', 'reg.io/x', false], // '?' starts a URL query for Go's url.Parse, so it never globs in a host
    ['r[a-c]g.io', 'rbg.io/x', true],
    ['r[a-c]g.io', 'rdg.io/x', false],
    ['[a-c]x.io', 'bx.io/x', false], // Go's url.Parse rejects a host starting with '[' that is no IPv6 literal
  ])('%s vs %s -> %s', (key, image, expected) => {
    expect(keyMatchesImage(normalizeKeyringKey(key) ?? '', image)).toBe(expected);
  });

  it('normalises keys: scheme, /v1/ and /v2/ dropped', () => {
    expect(normalizeKeyringKey('https://index.docker.io/v1/')).toBe('index.docker.io');
    expect(normalizeKeyringKey('http://quay.io/v2/team')).toBe('quay.io/team');
    expect(normalizeKeyringKey('registry.io:5000')).toBe('registry.io:5000');
  });
});

describe('Keyring', () => {
  it('orders matches most specific first (reverse key order), then the global secret', () => {
    const keyring = Keyring.of(
      [entry('quay.io', 'pod-host'), entry('quay.io/team', 'pod-team'), entry('*.io', 'pod-wild')],
      [entry('quay.io', 'global-host')],
    );
    expect(users(keyring, 'quay.io/team/app')).toEqual(['pod-team', 'pod-host', 'pod-wild', 'global-host']);
    expect(users(keyring, 'quay.io/other/app')).toEqual(['pod-host', 'pod-wild', 'global-host']);
  });

  it('keeps the kubelet order across its index (label count, last label): every matching key, reverse-sorted', () => {
    const keys = [
      '*.io',
      'quay.*',
      'quay.io',
      'quay.io/team',
      '*.*',
      'q*.io',
      '*.example.io',
      'a.quay.io',
      '*',
    ];
    const keyring = Keyring.of(keys.map((k) => entry(k, k)));
    for (const image of ['quay.io/team/app', 'quay.io/x', 'quay.dev/x', 'a.quay.io/x', 'localhost/x']) {
      const expected = [...keys]
        .sort()
        .reverse()
        .filter((k) => keyMatchesImage(k, image));
      expect(users(keyring, image), image).toEqual(expected);
      expect(keyring.match(image).complete).toBe(true);
    }
  });

  it('stops a lookup at its step budget and reports it, keeping what matched so far in order', () => {
    const reported: [string, number][] = [];
    const keyring = Keyring.of(
      [
        entry('x.io', 'exact'),
        ...Array.from({ length: 50 }, (_, i) => entry(`*${'x'.repeat(30)}y${i}*.io`, 'e')),
      ],
      [],
      { maxLookupSteps: 500, onLookupBudgetExceeded: (image, max) => reported.push([image, max]) },
    );
    const image = `${'x'.repeat(60)}.io/app`;
    expect(keyring.match(image)).toMatchObject({ complete: false, steps: 500, credentials: [] });
    expect(users(keyring, 'x.io/app')).toEqual(['exact']);
    expect(reported).toEqual([]);
    keyring.lookup(image);
    expect(reported).toEqual([[image, 500]]);
  });

  it('serves Docker Hub images with index.docker.io, docker.io and the legacy v1 URL keys', () => {
    expect(
      users(Keyring.of([entry('https://index.docker.io/v1/', 'legacy')]), 'docker.io/library/nginx'),
    ).toEqual(['legacy']);
    expect(users(Keyring.of([entry('index.docker.io', 'hub')]), 'docker.io/bitnami/redis')).toEqual(['hub']);
    expect(users(Keyring.of([entry('docker.io', 'short')]), 'docker.io/library/nginx')).toEqual(['short']);
    expect(users(Keyring.of([entry('index.docker.io', 'hub')]), 'quay.io/x/y')).toEqual([]);
  });

  it('yields nothing (anonymous) when no key matches, and fingerprints credentials', () => {
    const a = Keyring.of([entry('quay.io', 'a')]);
    const b = Keyring.of([entry('quay.io', 'b')]);
    expect(a.lookup('ghcr.io/x/y')).toEqual([]);
    expect(a.fingerprint).not.toBe(b.fingerprint);
    expect(Keyring.of([entry('quay.io', 'a')]).fingerprint).toBe(a.fingerprint);
    expect(Keyring.empty.fingerprint).toBe('anonymous');
    expect(a.fingerprint).not.toContain('a-pw');
  });
});

describe('host label globs (Go filepath.Match semantics, linear time)', () => {
  const matches = (pattern: string, label: string): boolean | undefined => {
    const tokens = compileLabelGlob(pattern);
    return tokens === undefined ? undefined : labelGlobMatches(tokens, label);
  };

  it.each([
    ['*', '', true],
    ['*', 'registry', true],
    ['reg*', 'registry', true],
    ['*try', 'registry', true],
    ['r*g*y', 'registry', true],
    ['r*x', 'registry', false],
    ['re?istry', 'registry', true],
    ['[a-c]x', 'bx', true],
    ['[^a-c]x', 'bx', false],
    ['[^a-c]x', 'dx', true],
    ['[\\]]x', ']x', true],
    ['\\*x', '*x', true],
    ['\\*x', 'ax', false],
    ['ü*', 'über', true], // by code point, as Go matches runes
    ['?ber', 'über', true],
  ])('%s vs %s -> %s', (pattern, label, expected) => {
    expect(matches(pattern, label)).toBe(expected);
  });

  it.each(['[', '[]', '[a-', '[-a]', 'x\\'])(
    'treats the malformed pattern %s as never matching',
    (pattern) => {
      expect(compileLabelGlob(pattern)).toBeUndefined();
      expect(keyMatchesImage(`${pattern}.example.io`, `${pattern}.example.io/app`)).toBe(false);
    },
  );

  it('decides a 12-star backtracking key against a 40-character label in a bounded number of steps', () => {
    // The regular expression this replaced needed ~119 s for this input (exponential backtracking).
    const pattern = `${'*a'.repeat(12)}*b`;
    const label = 'a'.repeat(40);
    const counter = { steps: 0 };
    expect(keyMatchesImage(`${pattern}.example.com`, `${label}.example.com/app`, counter)).toBe(false);
    const tokens = compileLabelGlob(pattern)?.length ?? 0;
    expect(counter.steps).toBeGreaterThan(0);
    expect(counter.steps).toBeLessThanOrEqual((label.length + 1) * (tokens + 1));
    // ...and the same key still matches where it should.
    expect(keyMatchesImage(`${pattern}.example.com`, `${'a'.repeat(39)}b.example.com/app`)).toBe(true);
  });

  it('looks a hostile secret up in bounded steps: 200 max-length wildcard keys against a long label', () => {
    const hostile = Array.from({ length: 200 }, (_, i) =>
      entry(`${'*a'.repeat(400)}*b${i}.example.com`, `u${i}`),
    );
    const keyring = Keyring.of(hostile);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 5; i++) expect(keyring.lookup(`${'a'.repeat(63)}.example.com/app`)).toEqual([]);
    // No cache grows with the patterns seen (the old pattern cache kept every compiled regular expression).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('ignores keys longer than the key budget', () => {
    const long = `${'a'.repeat(maxKeyringKeyLength)}.example.io`;
    expect(normalizeKeyringKey(long)).toBeUndefined();
    expect(Keyring.of([entry(long, 'x')]).lookup(`${long}/app`)).toEqual([]);
  });
});
