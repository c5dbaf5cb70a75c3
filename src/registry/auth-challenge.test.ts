import { describe, expect, it } from 'vitest';
import { checkRealm, parseAuthChallenges, preferredChallenge } from './auth-challenge.js';
import { RegistryError } from './errors.js';

describe('parseAuthChallenges', () => {
  it('reads Bearer parameters, quoted values with commas and escapes', () => {
    const header =
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull,push",error="a\\"b"';
    expect(parseAuthChallenges(header)).toEqual([
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.docker.io/token',
          service: 'registry.docker.io',
          scope: 'repository:library/nginx:pull,push',
          error: 'a"b',
        },
      },
    ]);
  });

  it('splits several challenges and prefers Bearer over Basic', () => {
    const header = 'Basic realm="Registry Realm", Bearer realm="https://r.example.io/token",service=r';
    expect(parseAuthChallenges(header).map((c) => c.scheme)).toEqual(['basic', 'bearer']);
    expect(preferredChallenge(header)?.params).toEqual({ realm: 'https://r.example.io/token', service: 'r' });
    expect(preferredChallenge('Basic realm="x"')?.scheme).toBe('basic');
    expect(preferredChallenge('Negotiate abc')).toBeUndefined();
    expect(preferredChallenge(undefined)).toBeUndefined();
  });
});

describe('checkRealm', () => {
  const https = { registryIsHttps: true };
  it.each([
    ['https://auth.docker.io/token', 'registry-1.docker.io'],
    ['https://quay.io/v2/auth', 'quay.io'],
    ['https://127.0.0.1:5000/token', '127.0.0.1:5000'],
    ['https://registry.local:5000/token', 'registry.local:5000'],
    ['https://foo.azurecr.io/oauth2/token', 'foo.azurecr.io'],
    ['https://registry.example.io:8443/t', 'registry.example.io'],
    ['https://gitlab.example.com/jwt/auth', 'registry.example.com'],
    ['https://auth.shop.co.uk/token', 'registry.shop.co.uk'],
  ])('accepts %s for %s', (realm, registry) => {
    expect(checkRealm(realm, registry, https).href).toBe(new URL(realm).href);
  });

  it.each([
    ['https://token.attacker.test/t', '127.0.0.1:5000', 'unrelated host'],
    ['https://auth.evil.io/token', 'registry-1.docker.io', 'unrelated host'],
    ['https://localhost:1/token', '127.0.0.1:5000', 'unrelated host'],
    ['https://evil.co.uk/token', 'registry.shop.co.uk', 'unrelated host'],
    // Same IP, another port: another service (issue #10 item 17).
    ['https://127.0.0.1:9443/token', '127.0.0.1:5000', 'same address on another port'],
    ['https://[::1]:9443/token', '[::1]:5000', 'same address on another port'],
    // Public suffixes and multi-tenant registry domains are no common owner.
    ['https://evil.azurecr.io/token', 'victim.azurecr.io', 'unrelated host'],
    ['https://evil.s3.amazonaws.com/token', 'victim.s3.amazonaws.com', 'unrelated host'],
    [
      'https://456.dkr.ecr.us-east-1.amazonaws.com/t',
      '123.dkr.ecr.us-east-1.amazonaws.com',
      'unrelated host',
    ],
    ['https://evil.github.io/token', 'victim.github.io', 'unrelated host'],
    // Names under a suffix the Public Suffix List does not know only count as their own origin.
    ['https://evil.ns.svc.cluster.local/t', 'registry.other.svc.cluster.local', 'unrelated host'],
    ['https://registry.local:6000/token', 'registry.local:5000', 'same address on another port'],
    ['http://quay.io/token', 'quay.io', 'plain http'],
    ['ftp://quay.io/token', 'quay.io', 'scheme'],
    ['not a url', 'quay.io', 'not a URL'],
  ])('refuses %s for %s', (realm, registry, reason) => {
    let caught: unknown;
    try {
      checkRealm(realm, registry, https);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RegistryError);
    expect((caught as RegistryError).code).toBe('TESSERA_REGISTRY_UNTRUSTED_REALM');
    expect((caught as RegistryError).message).toContain(reason);
  });

  it('lets any realm issue an anonymous token (no credentials leave), but never over plain http for https', () => {
    const anonymous = { ...https, sendsCredentials: false };
    expect(checkRealm('https://127.0.0.1:9443/t', '127.0.0.1:5000', anonymous).port).toBe('9443');
    expect(() => checkRealm('http://127.0.0.1:9443/t', '127.0.0.1:5000', anonymous)).toThrow(/plain http/);
  });

  it('keeps registry-sent parameter names as plain data (no prototype pollution)', () => {
    const [challenge] = parseAuthChallenges('Bearer __proto__="x",constructor="y",realm="https://r/t"');
    expect(challenge?.params.realm).toBe('https://r/t');
    expect(challenge?.params.__proto__).toBe('x');
    expect(Object.getPrototypeOf(challenge?.params)).toBeNull();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('accepts an explicitly trusted realm host', () => {
    expect(
      checkRealm('https://sso.corp.test/t', 'registry.example.io', {
        ...https,
        trustedRealmHosts: ['sso.corp.test'],
      }).host,
    ).toBe('sso.corp.test');
  });
});
