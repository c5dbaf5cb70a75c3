// Decides whether a registry redirect may be followed, so a registry named in a pod spec cannot steer the
// controller at cloud metadata, node-local or cluster-internal services (SSRF). Pure: the transport asks before
// connecting, for every redirect hop and for the first request too (then `from` is the origin: a registry the
// pod named, or for a token realm the registry that named it), so an image on 169.254.169.254 is refused like a
// redirect there (the default verdict applies; a RedirectPolicy hook decides redirects only). A registry on a
// loopback or private literal stays reachable (tests, dev, in-cluster registries) unless the admin's address policy
// denies it (address-policy.ts, judged on every hop's address, resolved names included). Limit: only literal IP
// addresses (and `localhost`) are classified here; a hostname is treated as public, since names are resolved later
// by the HTTP library (where the address policy judges what they resolve to).

/** How far an address reaches: public hosts (and every hostname) vs. addresses that must not be redirected to. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified';

export interface RedirectCandidate {
  /** URL of the first request (the registry or token realm the caller chose). */
  readonly origin: URL;
  /** URL that answered with the redirect. */
  readonly from: URL;
  /** Where the redirect points. */
  readonly to: URL;
  /** True when `to`'s host is itself configured as an insecure registry (plain http allowed). */
  readonly targetInsecure: boolean;
}

export type RedirectVerdict = { readonly allow: true } | { readonly allow: false; readonly reason: string };

/**
 * Overrides the default decision: receives the candidate and the default verdict, returns the verdict to apply.
 * For example, allow a registry on a public name to redirect to blob storage on a cluster-private address.
 */
export type RedirectPolicy = (
  candidate: RedirectCandidate,
  defaultVerdict: RedirectVerdict,
) => RedirectVerdict;

function ipv4Octets(host: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

function classOfIpv4([a = 0, b = 0]: readonly number[]): AddressClass {
  if (a === 0) return 'unspecified'; // 0.0.0.0/8: "this network"; 0.0.0.0 reaches the local host
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // 100.64.0.0/10 (CGNAT; common for cluster networks)
  return 'public';
}

/** The eight 16-bit groups of an IPv6 literal (without brackets), or undefined when it is not one. */
function ipv6Groups(host: string): number[] | undefined {
  if (!host.includes(':')) return undefined;
  let text = host;
  const v4 = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (v4 !== null) {
    // A trailing dotted quad (::ffff:1.2.3.4) is two groups.
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(v4[1] ?? '') ?? [];
    if (ipv4Octets(v4[1] ?? '') === undefined) return undefined;
    text = `${text.slice(0, v4.index + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
    return groups.some(Number.isNaN) ? undefined : groups;
  };
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (head === undefined || rest === undefined) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
}

function classOfIpv6(groups: readonly number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses reach the embedded IPv4 address.
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return classOfIpv4([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 deprecated site-local
  return 'public';
}

/** Class of a URL hostname (`127.0.0.1`, `[::1]`, `quay.io`). Hostnames other than `localhost` are public. */
export function addressClass(hostname: string): AddressClass {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  const v4 = ipv4Octets(host);
  if (v4 !== undefined) return classOfIpv4(v4);
  const v6 = ipv6Groups(host.replace(/%.*$/, ''));
  if (v6 !== undefined) return classOfIpv6(v6);
  return 'public';
}

/** Error code of a connection refused because its host name resolved to a link-local or unspecified address. */
export const addressRefusedCode = 'ETESSERA_ADDRESS_REFUSED';

const refuse = (reason: string): RedirectVerdict => ({ allow: false, reason });

/**
 * The default policy: https only (http when the target host is a configured insecure registry); never to
 * link-local or unspecified addresses; to loopback or private addresses only on the same host, or when the
 * origin itself is in the same class (a registry on 127.0.0.1 may redirect to another loopback port).
 */
export function defaultRedirectVerdict(candidate: RedirectCandidate): RedirectVerdict {
  const { origin, from, to } = candidate;
  if (to.protocol !== 'https:' && !(to.protocol === 'http:' && candidate.targetInsecure))
    return refuse(
      to.protocol === 'http:'
        ? `plain http to ${to.host}, which is not a configured insecure registry`
        : `the scheme ${to.protocol} is not supported`,
    );
  const target = addressClass(to.hostname);
  if (target === 'link-local' || target === 'unspecified')
    return refuse(`${to.hostname} is a ${target} address`);
  if (target === 'public') return { allow: true };
  const sameHost = to.hostname.toLowerCase() === from.hostname.toLowerCase();
  if (sameHost || addressClass(origin.hostname) === target) return { allow: true };
  return refuse(`${to.hostname} is a ${target} address and ${origin.hostname} is not`);
}
