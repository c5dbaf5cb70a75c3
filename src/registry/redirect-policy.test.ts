import { describe, expect, it } from 'vitest';
import { addressClass, defaultRedirectVerdict, type RedirectCandidate } from './redirect-policy.js';

function candidate(origin: string, to: string, targetInsecure = false): RedirectCandidate {
  return { origin: new URL(origin), from: new URL(origin), to: new URL(to), targetInsecure };
}

const hostOf = (url: string): string => new URL(url).hostname;

describe('addressClass', () => {
  it.each([
    ['http://169.254.169.254/', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[febf::1]/', 'link-local'],
    ['http://[::ffff:169.254.169.254]/', 'link-local'],
    ['http://2852039166/', 'link-local'], // 169.254.169.254 written as one number
    ['http://0.0.0.0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://127.0.0.1:5000/', 'loopback'],
    ['http://127.1.2.3/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://localhost/', 'loopback'],
    ['http://api.localhost/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'private'],
    ['http://[fd00::1]/', 'private'],
    ['http://[::ffff:10.1.2.3]/', 'private'],
    ['http://172.32.0.1/', 'public'],
    ['http://8.8.8.8/', 'public'],
    ['http://[2001:db8::1]/', 'public'],
    ['http://quay.io/', 'public'],
  ])('%s is %s', (url, expected) => {
    expect(addressClass(hostOf(url))).toBe(expected);
  });
});

describe('defaultRedirectVerdict', () => {
  it('follows https redirects to public hosts (blob storage)', () => {
    expect(defaultRedirectVerdict(candidate('https://quay.io/v2/x', 'https://cdn.example.net/b')).allow).toBe(
      true,
    );
  });

  it('refuses plain http unless the target host is a configured insecure registry', () => {
    const refused = defaultRedirectVerdict(candidate('https://quay.io/v2/x', 'http://cdn.example.net/b'));
    expect(refused).toEqual({ allow: false, reason: expect.stringContaining('plain http') });
    expect(defaultRedirectVerdict(candidate('http://r.lan/v2/x', 'http://cdn.example.net/b')).allow).toBe(
      false,
    );
    expect(
      defaultRedirectVerdict(candidate('http://r.lan/v2/x', 'http://cdn.example.net/b', true)).allow,
    ).toBe(true);
    expect(defaultRedirectVerdict(candidate('https://quay.io/v2/x', 'ftp://quay.io/b')).allow).toBe(false);
  });

  it('never redirects to link-local or unspecified addresses, whatever the origin', () => {
    for (const origin of ['https://quay.io/v2/x', 'https://169.254.10.10/v2/x', 'https://127.0.0.1/v2/x']) {
      for (const to of ['https://169.254.169.254/latest', 'https://[fe80::1]/', 'https://0.0.0.0/']) {
        expect(defaultRedirectVerdict(candidate(origin, to, true)).allow).toBe(false);
      }
    }
  });

  it('refuses loopback and private targets unless the origin is of the same class', () => {
    const publicOrigin = 'https://quay.io/v2/x';
    expect(defaultRedirectVerdict(candidate(publicOrigin, 'https://127.0.0.1:8080/')).allow).toBe(false);
    expect(defaultRedirectVerdict(candidate(publicOrigin, 'https://localhost/')).allow).toBe(false);
    expect(defaultRedirectVerdict(candidate(publicOrigin, 'https://10.0.0.7/')).allow).toBe(false);
    expect(defaultRedirectVerdict(candidate(publicOrigin, 'https://[fd00::7]/')).allow).toBe(false);
    // A registry on loopback may use another loopback port; a private one other private hosts.
    expect(
      defaultRedirectVerdict(candidate('https://127.0.0.1:5000/', 'https://127.0.0.1:6000/')).allow,
    ).toBe(true);
    expect(defaultRedirectVerdict(candidate('https://127.0.0.1:5000/', 'https://[::1]:6000/')).allow).toBe(
      true,
    );
    expect(defaultRedirectVerdict(candidate('https://10.0.0.1/', 'https://192.168.0.9/')).allow).toBe(true);
    // ...but not cross over to the other class.
    expect(defaultRedirectVerdict(candidate('https://127.0.0.1:5000/', 'https://10.0.0.1/')).allow).toBe(
      false,
    );
    expect(defaultRedirectVerdict(candidate('https://10.0.0.1/', 'https://127.0.0.1:9090/')).allow).toBe(
      false,
    );
  });
});
