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
    ['https://127.0.0.1:9443/token', '127.0.0.1:5000'],
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

  it('accepts an explicitly trusted realm host', () => {
    expect(
      checkRealm('https://sso.corp.test/t', 'registry.example.io', {
        ...https,
        trustedRealmHosts: ['sso.corp.test'],
      }).host,
    ).toBe('sso.corp.test');
  });
});
