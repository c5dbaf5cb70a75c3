// Which egress proxy, if any, a registry request goes through: HTTPS_PROXY for https URLs, HTTP_PROXY for http
// URLs, NO_PROXY for the exceptions, with the semantics of Go's golang.org/x/net/http/httpproxy (what CRI-O, the
// kubelet and OpenShift's operators use, so one cluster proxy configuration means the same thing everywhere):
// - upper-case names win over lower-case ones; an https URL never falls back to HTTP_PROXY;
// - a proxy value without a scheme is `http://` (`proxy.corp:3128`); the default proxy port is 80 (http) or 443;
// - NO_PROXY is a comma-separated list of `*` (never proxy), IP addresses, CIDR ranges, and domain names, the last
//   two with an optional `:port`; `example.com` matches that host and its subdomains, `.example.com` (or
//   `*.example.com`) only subdomains; matching is case-insensitive, IDNs compare in punycode;
// - `localhost` and loopback addresses are never proxied.
// Unlike Go, a malformed proxy value is an error (InvalidArgumentError naming the variable), not silently "no
// proxy", and socks5 proxies are refused: the tunnel speaks HTTP CONNECT only. Values come from the environment or
// the cluster configuration, so their size is bounded and nothing is built from them but parsed data (no regex).
// Pure apart from reading the record it is given.
import { Buffer } from 'node:buffer';
import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { InvalidArgumentError } from '../runtime/light.js';
import { loopbackRanges } from './address-policy.js';

/** Largest accepted NO_PROXY value, in bytes (OpenShift's generated lists are a few hundred bytes). */
export const maxNoProxyBytes = 16 * 1024;
/** Most entries in NO_PROXY. */
export const maxNoProxyEntries = 512;
/** Largest accepted proxy URL, in bytes. */
export const maxProxyUrlBytes = 2048;

/** One proxy to tunnel through. */
export interface ProxyEndpoint {
  /** `http:` or `https:` (TLS to the proxy itself). */
  readonly protocol: 'http:' | 'https:';
  /** Host name or IP address, without IPv6 brackets. */
  readonly hostname: string;
  readonly port: number;
  /** `Basic ...` from credentials in the URL, sent only to the proxy (Proxy-Authorization). */
  readonly authorization: string | undefined;
  /** `http://proxy.corp:3128`: never carries credentials; for messages and logs. */
  readonly display: string;
  /** Where the value came from (`HTTPS_PROXY`), for messages. */
  readonly source: string;
}

export interface ProxyConfig {
  /** Proxy for http:// URLs (HTTP_PROXY). */
  readonly http: ProxyEndpoint | undefined;
  /** Proxy for https:// URLs (HTTPS_PROXY). */
  readonly https: ProxyEndpoint | undefined;
  readonly noProxy: NoProxy;
}

/** The environment variables read, as Go's httpproxy.FromEnvironment reads them (upper-case first). */
export interface ProxyEnvironment {
  readonly HTTP_PROXY?: string | undefined;
  readonly http_proxy?: string | undefined;
  readonly HTTPS_PROXY?: string | undefined;
  readonly https_proxy?: string | undefined;
  readonly NO_PROXY?: string | undefined;
  readonly no_proxy?: string | undefined;
}

function firstSet(env: ProxyEnvironment, ...names: (keyof ProxyEnvironment)[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return [name, value];
  }
  return undefined;
}

/**
 * The proxy configuration of an environment (`process.env`), or undefined when neither HTTP_PROXY nor HTTPS_PROXY
 * is set (NO_PROXY alone changes nothing). Throws InvalidArgumentError naming the variable; its message never
 * repeats the value (it may hold proxy credentials).
 */
export function proxyConfigFromEnvironment(env: ProxyEnvironment): ProxyConfig | undefined {
  const http = firstSet(env, 'HTTP_PROXY', 'http_proxy');
  const https = firstSet(env, 'HTTPS_PROXY', 'https_proxy');
  if (http === undefined && https === undefined) return undefined;
  const noProxy = firstSet(env, 'NO_PROXY', 'no_proxy');
  return {
    http: http && parseProxyUrl(http[1], http[0]),
    https: https && parseProxyUrl(https[1], https[0]),
    noProxy: NoProxy.parse(noProxy?.[1] ?? '', noProxy?.[0] ?? 'NO_PROXY'),
  };
}

/** The proxy for `url`, or undefined to connect directly (no proxy for its scheme, or NO_PROXY matches it). */
export function proxyFor(config: ProxyConfig, url: URL): ProxyEndpoint | undefined {
  const proxy = url.protocol === 'https:' ? config.https : url.protocol === 'http:' ? config.http : undefined;
  if (proxy === undefined) return undefined;
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return config.noProxy.bypasses(url.hostname, port) ? undefined : proxy;
}

const proxySchemes = new Set(['http:', 'https:']);

/**
 * Parses one proxy value: a URL (`http://user:pass@proxy:3128`, `https://proxy`) or `host[:port]` (http assumed).
 * `source` names the variable in errors, which never repeat the value.
 */
export function parseProxyUrl(value: string, source: string): ProxyEndpoint {
  const fail = (detail: string): never => {
    throw new InvalidArgumentError(source, detail, 'argument');
  };
  const text = value.trim();
  if (Buffer.byteLength(text) > maxProxyUrlBytes) fail(`longer than ${maxProxyUrlBytes} bytes`);
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'socks5:' || url?.protocol === 'socks5h:' || url?.protocol === 'socks:')
    fail('socks proxies are not supported; give an HTTP proxy that accepts CONNECT (http:// or https://)');
  // As Go: a value that is not an http(s) URL is tried as `http://` + value (`proxy.corp:3128`).
  if (url === undefined || !proxySchemes.has(url.protocol)) {
    if (text.includes('://') && !/^https?:\/\//i.test(text))
      fail('the scheme must be http:// or https:// (a proxy that accepts HTTP CONNECT)');
    if (text.includes('://')) fail('not a proxy URL; expected http://[user:password@]host[:port]');
    try {
      url = new URL(`http://${text}`);
    } catch {
      url = undefined;
    }
  }
  if (url === undefined || url.hostname === '')
    return fail('not a proxy URL; expected http://[user:password@]host[:port] or host[:port]');
  const protocol = url.protocol as 'http:' | 'https:';
  const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
  const bracketed = url.hostname.startsWith('[');
  const hostname = bracketed ? url.hostname.slice(1, -1) : url.hostname;
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    let user: string;
    let password: string;
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      return fail('the credentials in the URL are not valid percent-encoding');
    }
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  const defaultPort = protocol === 'https:' ? 443 : 80;
  const display = `${protocol}//${url.hostname}${port === defaultPort ? '' : `:${port}`}`;
  return { protocol, hostname, port, authorization, display, source };
}

/** Lower-case, punycode (as URL.hostname has it); the input itself when it is not a valid domain. */
function asciiHost(host: string): string {
  const lower = host.toLowerCase();
  const ascii = domainToASCII(lower);
  return ascii === '' ? lower : ascii;
}

interface DomainRule {
  /** Always starts with `.`: matches hosts ending with it. */
  readonly suffix: string;
  /** Also matches the host equal to `suffix` without its dot (`example.com`, not `.example.com`). */
  readonly matchesHost: boolean;
  /** Port the rule is limited to; '' for any. */
  readonly port: string;
}

interface AddressRule {
  readonly list: BlockList;
  /** Port the rule is limited to; '' for any. */
  readonly port: string;
}

function singleAddress(address: string): BlockList {
  const list = new BlockList();
  list.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

/** `host:port` or `[v6]:port` split as Go's net.SplitHostPort would; undefined when `entry` has no port. */
function splitHostPort(entry: string): { host: string; port: string } | undefined {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0 || entry[close + 1] !== ':') return undefined;
    return { host: entry.slice(1, close), port: entry.slice(close + 2) };
  }
  const colon = entry.indexOf(':');
  if (colon < 0 || entry.indexOf(':', colon + 1) >= 0) return undefined; // none, or a bare IPv6 address
  return { host: entry.slice(0, colon), port: entry.slice(colon + 1) };
}

const loopback = (() => {
  const list = new BlockList();
  for (const range of loopbackRanges) {
    const [address = '', prefix = ''] = range.split('/');
    list.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
})();

/** A parsed NO_PROXY list (see the file comment for its semantics). */
export class NoProxy {
  private constructor(
    private readonly everything: boolean,
    /** Ranges without a port, in one list. */
    private readonly ranges: BlockList,
    private readonly addresses: readonly AddressRule[],
    private readonly domains: readonly DomainRule[],
  ) {}

  static readonly none = new NoProxy(false, new BlockList(), [], []);

  /** Parses a NO_PROXY value; `source` names it in errors. Malformed entries are ignored, as Go does. */
  static parse(value: string, source = 'NO_PROXY'): NoProxy {
    if (Buffer.byteLength(value) > maxNoProxyBytes)
      throw new InvalidArgumentError(source, `longer than ${maxNoProxyBytes} bytes`, 'argument');
    const entries = value
      .split(',')
      .map((e) => e.trim().toLowerCase())
      .filter((e) => e !== '');
    if (entries.length > maxNoProxyEntries)
      throw new InvalidArgumentError(
        source,
        `at most ${maxNoProxyEntries} entries, not ${entries.length}`,
        'argument',
      );
    if (entries.includes('*')) return new NoProxy(true, new BlockList(), [], []);
    const ranges = new BlockList();
    const addresses: AddressRule[] = [];
    const domains: DomainRule[] = [];
    for (const entry of entries) {
      const slash = entry.indexOf('/');
      if (slash >= 0) {
        const address = entry.slice(0, slash);
        const prefixText = entry.slice(slash + 1);
        const version = isIP(address);
        const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
        if (version !== 0 && prefix >= 0 && prefix <= (version === 4 ? 32 : 128)) {
          ranges.addSubnet(address, prefix, version === 4 ? 'ipv4' : 'ipv6');
          continue;
        }
      }
      const split = splitHostPort(entry);
      const host = split?.host ?? entry;
      const port = split?.port ?? '';
      if (host === '') continue; // `:80`: malformed, ignored as Go does
      if (isIP(host) !== 0) {
        if (port === '') ranges.addAddress(host, isIP(host) === 6 ? 'ipv6' : 'ipv4');
        else addresses.push({ list: singleAddress(host), port });
        continue;
      }
      const bare = host.startsWith('*.') ? host.slice(1) : host;
      if (bare === '.') continue;
      const matchesHost = !bare.startsWith('.');
      domains.push({ suffix: asciiHost(matchesHost ? `.${bare}` : bare), matchesHost, port });
    }
    return new NoProxy(false, ranges, addresses, domains);
  }

  /**
   * Whether a request to `hostname` (URL.hostname: lower-case, punycode, IPv6 in brackets) on `port` goes
   * directly: localhost, loopback, or listed.
   */
  bypasses(hostname: string, port: string): boolean {
    const host = asciiHost(
      hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname,
    );
    if (host === 'localhost') return true;
    const version = isIP(host);
    const type = version === 6 ? 'ipv6' : 'ipv4';
    if (version !== 0 && loopback.check(host, type)) return true;
    if (this.everything) return true;
    if (version !== 0) {
      if (this.ranges.check(host, type)) return true;
      if (this.addresses.some((r) => r.port === port && r.list.check(host, type))) return true;
    }
    return this.domains.some(
      (d) =>
        (d.port === '' || d.port === port) &&
        (host.endsWith(d.suffix) || (d.matchesHost && host === d.suffix.slice(1))),
    );
  }
}
