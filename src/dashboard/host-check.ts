// Which Host headers the dashboard answers: only the loopback names with its own port. A web page on another
// origin that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own name as Host and is refused, so it
// can never read the dashboard's data through the victim's browser. Pure.

/** The Host values the server on `port` accepts: localhost, 127.0.0.1 and [::1], each with the port. */
export function allowedHosts(port: number): ReadonlySet<string> {
  return new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);
}

/** True when `host` (the request's Host header) names this loopback server; case-insensitive like DNS names. */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  if (host === undefined || host.length > 64) return false;
  return allowedHosts(port).has(host.toLowerCase());
}
