import { describe, expect, it } from 'vitest';
import { caCertificatesForHost, registryHostKey, sameHostCaCertificates } from './registry-cas.js';

describe('registryHostKey', () => {
  it.each([
    ['registry.example', 'registry.example'],
    ['Registry.Example:5000', 'registry.example:5000'],
    ['registry.example:443', 'registry.example'],
    ['127.0.0.1:5000', '127.0.0.1:5000'],
    ['[::1]:5000', '[::1]:5000'],
    ['registry.example/path', undefined],
    ['user@registry.example', undefined],
    ['registry.example:99999', undefined],
    ['', undefined],
  ])('%j is looked up as %j', (host, key) => {
    expect(registryHostKey(host)).toBe(key);
  });
});

describe('caCertificatesForHost', () => {
  const processWide = ['GLOBAL'];
  const byHost = new Map([
    ['team.example', ['TEAM']],
    ['team.example:5000', ['TEAM-5000']],
  ]);

  it("gives a host's own bundle to that host only, on top of the process-wide CAs", () => {
    expect(caCertificatesForHost(processWide, byHost, 'team.example')).toEqual(['GLOBAL', 'TEAM']);
    expect(caCertificatesForHost(processWide, byHost, 'team.example:443')).toEqual(['GLOBAL', 'TEAM']);
    expect(caCertificatesForHost(processWide, byHost, 'TEAM.example:5000')).toEqual(['GLOBAL', 'TEAM-5000']);
  });

  it('never gives it to another host, another port, a subdomain or a CDN the registry redirects to', () => {
    for (const host of ['quay.io', 'team.example:5001', 'cdn.team.example', 'team.example.evil', 'example'])
      expect(caCertificatesForHost(processWide, byHost, host)).toBe(processWide);
  });
});

describe('sameHostCaCertificates', () => {
  it('compares hosts and bundles, in order', () => {
    const a = new Map([['h', ['1', '2']]]);
    expect(sameHostCaCertificates(a, new Map([['h', ['1', '2']]]))).toBe(true);
    expect(sameHostCaCertificates(a, new Map([['h', ['2', '1']]]))).toBe(false);
    expect(sameHostCaCertificates(a, new Map([['g', ['1', '2']]]))).toBe(false);
    expect(sameHostCaCertificates(a, new Map())).toBe(false);
  });
});
