// Which CA certificates verify a registry's TLS certificate, chosen by the host a connection dials, as CRI-O does
// with /etc/docker/certs.d/<host[:port]>/: Node's roots and the process-wide CAs (the admin's --registry-ca files)
// for every host, a host-scoped bundle (OpenShift's additionalTrustedCA ConfigMap key) only for its own host. So a
// CA trusted for a team's registry cannot vouch for quay.io, and a blob redirect to a CDN or a token realm on
// another host is verified with that host's CAs, never with the registry's. Pure.

/** CA bundles (PEM) trusted only for one registry host, keyed by registryHostKey(host). */
export type HostCaCertificates = ReadonlyMap<string, readonly string[]>;

/**
 * The key a host is looked up by: `host` or `host:port` as WHATWG URL.host writes it for https (lowercase, IPv6 in
 * brackets, no `:443`), so `Registry.example:443` and `registry.example` are the same host. Undefined when `host`
 * is not a bare `host[:port]` (a path, credentials, an empty name).
 */
export function registryHostKey(host: string): string | undefined {
  if (host === '' || /[/?#@\\\s]/.test(host)) return undefined;
  try {
    const url = new URL(`https://${host}`);
    return url.hostname === '' ? undefined : url.host;
  } catch {
    return undefined;
  }
}

/**
 * The CA certificates trusted for a connection to `host` (URL.host of the URL dialed): the process-wide ones,
 * then the host's own bundles. Hosts without a bundle get the process-wide list itself (one shared trust store).
 */
export function caCertificatesForHost(
  processWide: readonly string[],
  byHost: HostCaCertificates,
  host: string,
): readonly string[] {
  const own = byHost.get(registryHostKey(host) ?? '');
  return own === undefined || own.length === 0 ? processWide : [...processWide, ...own];
}

/** Whether two host-scoped CA sets trust the same CAs for every host. */
export function sameHostCaCertificates(a: HostCaCertificates, b: HostCaCertificates): boolean {
  if (a.size !== b.size) return false;
  for (const [host, pems] of a) {
    const other = b.get(host);
    if (other === undefined || other.length !== pems.length || pems.some((p, i) => p !== other[i]))
      return false;
  }
  return true;
}
