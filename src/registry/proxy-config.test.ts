import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../runtime/light.js';
import {
  maxNoProxyBytes,
  maxNoProxyEntries,
  NoProxy,
  parseProxyUrl,
  proxyConfigFromEnvironment,
  proxyFor,
} from './proxy-config.js';

describe('NO_PROXY matching (Go httpproxy semantics)', () => {
  // [NO_PROXY, request URL, bypasses the proxy]
  const cases: [string, string, boolean][] = [
    // localhost and loopback are never proxied, whatever the list says
    ['', 'https://localhost:5000/v2/', true],
    ['', 'https://127.0.0.1/v2/', true],
    ['', 'https://127.8.9.10/v2/', true],
    ['', 'https://[::1]:5000/v2/', true],
    ['', 'https://[::ffff:127.0.0.1]/v2/', true],
    ['', 'https://quay.io/v2/', false],
    // `*` anywhere: nothing is proxied
    ['*', 'https://quay.io/v2/', true],
    ['quay.io, *', 'https://registry.example/v2/', true],
    // domain names: the host and its subdomains
    ['example.com', 'https://example.com/v2/', true],
    ['example.com', 'https://registry.example.com/v2/', true],
    ['example.com', 'https://notexample.com/v2/', false],
    ['example.com', 'https://example.com.evil/v2/', false],
    // a leading dot or `*.`: subdomains only
    ['.example.com', 'https://example.com/v2/', false],
    ['.example.com', 'https://a.example.com/v2/', true],
    ['*.example.com', 'https://example.com/v2/', false],
    ['*.example.com', 'https://a.b.example.com/v2/', true],
    // case-insensitive, spaces around entries, empty entries
    [' , EXAMPLE.Com ,, ', 'https://Registry.Example.COM/v2/', true],
    // domain with a port: only that port (the URL's default port counts)
    ['example.com:5000', 'https://example.com:5000/v2/', true],
    ['example.com:5000', 'https://example.com/v2/', false],
    ['example.com:443', 'https://example.com/v2/', true],
    ['example.com:80', 'http://example.com/v2/', true],
    // IP addresses and CIDR ranges
    ['10.1.2.3', 'https://10.1.2.3/v2/', true],
    ['10.1.2.3', 'https://10.1.2.4/v2/', false],
    ['10.0.0.0/8', 'https://10.200.0.1:5000/v2/', true],
    ['10.0.0.0/8', 'https://11.0.0.1/v2/', false],
    ['10.1.2.3:5000', 'https://10.1.2.3:5000/v2/', true],
    ['10.1.2.3:5000', 'https://10.1.2.3/v2/', false],
    ['fd00::/8', 'https://[fd12::1]/v2/', true],
    ['[fd00::1]:5000', 'https://[fd00::1]:5000/v2/', true],
    ['[fd00::1]:5000', 'https://[fd00::1]/v2/', false],
    ['fd00::1', 'https://[fd00::1]:8443/v2/', true],
    // an IPv4 entry covers the IPv4-mapped IPv6 form of the address
    ['192.0.2.0/24', 'https://[::ffff:192.0.2.7]/v2/', true],
    // a CIDR range does not match names, even names that look like its addresses
    ['10.0.0.0/8', 'https://10.example/v2/', false],
    // IDNs compare in punycode, whichever form either side uses
    ['bücher.example', 'https://xn--bcher-kva.example/v2/', true],
    ['xn--bcher-kva.example', 'https://bücher.example/v2/', true],
    // malformed entries are ignored, as Go does
    [':5000, /8, 10.0.0.0/99', 'https://10.0.0.1/v2/', false],
    // OpenShift's generated noProxy list
    [
      '.cluster.local,.svc,10.128.0.0/14,127.0.0.1,172.30.0.0/16,api-int.ocp.example.com,localhost',
      'https://image-registry.openshift-image-registry.svc:5000/v2/',
      true,
    ],
    [
      '.cluster.local,.svc,10.128.0.0/14,127.0.0.1,172.30.0.0/16,api-int.ocp.example.com,localhost',
      'https://quay.io/v2/',
      false,
    ],
  ];
  it.each(cases)('NO_PROXY=%j, %s: direct %s', (noProxy, url, direct) => {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    expect(NoProxy.parse(noProxy).bypasses(u.hostname, port)).toBe(direct);
  });

  it('refuses a list over its budget before parsing it, naming the variable', () => {
    const long = 'a'.repeat(maxNoProxyBytes + 1);
    expect(() => NoProxy.parse(long, 'no_proxy')).toThrow(/no_proxy: longer than 16384 bytes/);
    const many = Array.from({ length: maxNoProxyEntries + 1 }, (_, i) => `h${i}.example`).join(',');
    expect(() => NoProxy.parse(many)).toThrow(InvalidArgumentError);
    expect(() => NoProxy.parse(many)).toThrow(/at most 512 entries, not 513/);
  });

  it('treats entries as data: regex and glob characters match only themselves', () => {
    const list = NoProxy.parse('.*, (a+)+$, [a-z].example');
    expect(list.bypasses('quay.io', '443')).toBe(false);
    expect(list.bypasses('x.example', '443')).toBe(false);
  });
});

describe('proxy URLs', () => {
  it('parses the forms Go accepts: scheme-less host:port is http, default ports 80 and 443', () => {
    expect(parseProxyUrl('proxy.corp:3128', 'HTTPS_PROXY')).toMatchObject({
      protocol: 'http:',
      hostname: 'proxy.corp',
      port: 3128,
      authorization: undefined,
      display: 'http://proxy.corp:3128',
      source: 'HTTPS_PROXY',
    });
    expect(parseProxyUrl('http://proxy.corp', 'HTTP_PROXY')).toMatchObject({ port: 80 });
    expect(parseProxyUrl('https://proxy.corp/', 'HTTPS_PROXY')).toMatchObject({
      protocol: 'https:',
      port: 443,
      display: 'https://proxy.corp',
    });
    expect(parseProxyUrl('10.0.0.5:3128', 'HTTPS_PROXY')).toMatchObject({ hostname: '10.0.0.5', port: 3128 });
    expect(parseProxyUrl('http://[fd00::5]:3128', 'HTTPS_PROXY')).toMatchObject({
      hostname: 'fd00::5',
      display: 'http://[fd00::5]:3128',
    });
  });

  it('turns credentials in the URL into Proxy-Authorization and keeps them out of the display form', () => {
    const proxy = parseProxyUrl('http://us%40er:p%3Ass@proxy.corp:3128', 'HTTPS_PROXY');
    expect(proxy.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(proxy.display).toBe('http://proxy.corp:3128');
    expect(JSON.stringify(proxy.display)).not.toContain('p%3Ass');
  });

  it.each([
    ['socks5', 'socks5://proxy.corp:1080', /socks proxies are not supported/],
    ['ftp', 'ftp://proxy.corp', /scheme must be http:\/\/ or https:\/\//],
    ['no host', 'http://', /not a proxy URL/],
    ['unparsable', 'http://user:secret@[bad', /not a proxy URL/],
    ['3000 bytes', 'x'.repeat(3000), /longer than 2048 bytes/],
  ])('refuses %s with a message that does not repeat the value', (_label, value, message) => {
    let error: unknown;
    try {
      parseProxyUrl(value, 'HTTPS_PROXY');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^invalid value for HTTPS_PROXY: /);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret');
  });
});

describe('proxy configuration from the environment', () => {
  it('is undefined without HTTP_PROXY and HTTPS_PROXY, even with NO_PROXY', () => {
    expect(proxyConfigFromEnvironment({})).toBeUndefined();
    expect(proxyConfigFromEnvironment({ NO_PROXY: '*', HTTPS_PROXY: '' })).toBeUndefined();
  });

  it('prefers upper-case names and never uses HTTP_PROXY for https URLs', () => {
    const config = proxyConfigFromEnvironment({
      HTTP_PROXY: 'http://upper-http:3128',
      http_proxy: 'http://lower-http:3128',
      https_proxy: 'http://lower-https:3128',
      no_proxy: 'internal.example',
    });
    expect(config?.http?.hostname).toBe('upper-http');
    expect(config?.https?.hostname).toBe('lower-https');
    expect(config?.https?.source).toBe('https_proxy');
    const onlyHttp = proxyConfigFromEnvironment({ HTTP_PROXY: 'http://p:3128' });
    expect(onlyHttp && proxyFor(onlyHttp, new URL('https://quay.io/v2/'))).toBeUndefined();
    expect(onlyHttp && proxyFor(onlyHttp, new URL('http://registry.example:5000/v2/'))?.hostname).toBe('p');
    expect(config && proxyFor(config, new URL('https://a.internal.example/v2/'))).toBeUndefined();
    expect(config && proxyFor(config, new URL('https://quay.io/v2/'))?.hostname).toBe('lower-https');
  });

  it('names the variable a malformed value came from', () => {
    expect(() => proxyConfigFromEnvironment({ https_proxy: 'socks5://p:1080' })).toThrow(
      /invalid value for https_proxy/,
    );
  });
});
